"""What the world tells Python besides the step's results: chat said in-game, humans
joining and leaving, and the humans' state (docs/humans.md).

WorldNews keeps an env's side of it: the chat to say at the next tick (the outbox the
engine session sends from), the world events not yet taken, and each human's state.
"""

from __future__ import annotations

import re
from collections import deque

from .humans import NAME as PLAYER_NAME

_ADDRESSED = re.compile(r"@(\S+)\s*(.*)", re.S)


def check_chat_text(text):
    """TypeError or ValueError unless `text` is one line that is not blank."""
    if not isinstance(text, str):
        raise TypeError(f"chat text must be a str, got {type(text).__name__} {text!r}")
    if not text.strip() or "\n" in text or "\r" in text:
        raise ValueError(f"chat text must be one line that is not blank, got {text!r}")


def human_state(lua: dict) -> dict:
    """A human's state as the bridge mod reports it, typed for Python."""
    position, yaw = lua.get("position"), lua.get("yaw")
    return {"position": [float(v) for v in position] if position else None,
            "yaw": float(yaw) if yaw is not None else None, "hp": int(lua.get("hp", 0)),
            "score": float(lua.get("score", 0)), "connected": bool(lua.get("connected", False))}


class WorldNews:
    """The chat and human news of one env with `agents` and `humans`."""

    def __init__(self, agents: list[str], humans: list[str]):
        self.agents, self.humans = list(agents), list(humans)
        self.outbox: deque[dict] = deque()  # {"from", "text"} for the server to say next tick
        self._events: deque[dict] = deque()
        self._humans = {h: human_state({}) for h in self.humans}

    def post(self, text: str, sender: str):
        """Queue `text` said by `sender`, who is not an agent (a human, the viewer)."""
        check_chat_text(text)
        if not isinstance(sender, str) or not PLAYER_NAME.fullmatch(sender):
            raise ValueError(f"sender must be a name of 1 to 19 of A-Z a-z 0-9 _ -, got "
                             f"{sender!r}")
        if sender in self.agents:
            raise ValueError(f"sender {sender!r} is an agent: env.say({sender!r}, text) "
                             "speaks for it")
        self.outbox.append({"from": sender, "text": text})

    def say(self, agent: str, text: str):
        """Queue `text` said by the agent's player."""
        if agent not in self.agents:
            raise ValueError(f"say(): unknown agent {agent!r}; agents are {self.agents}")
        check_chat_text(text)
        self.outbox.append({"from": agent, "text": text})

    def take(self, news: list[dict], step: int) -> dict[str, list[dict]]:
        """Take the "world" parts of the ticks since the last call: queue their events,
        update the humans' state, and return each agent's chat heard."""
        heard = {a: [] for a in self.agents}
        for part in news:
            for event in part.get("events") or []:
                self._events.append({"type": event["type"], "name": event["name"]})
            for message in part.get("heard") or []:
                to, text = self._addressee(message["text"])
                sender = message["from"]
                self._events.append({"type": "chat", "from": sender, "to": to, "text": text,
                                     "step": step})
                for agent in [to] if to else self.agents:
                    if agent != sender:
                        heard[agent].append({"from": sender, "text": text, "step": step})
            if part.get("humans"):
                self._humans = {h: human_state(part["humans"].get(h) or {}) for h in self.humans}
        return heard

    def events(self) -> list[dict]:
        """The events since the last call, in order (taken: the next call has new ones)."""
        return [self._events.popleft() for _ in range(len(self._events))]

    def humans_state(self) -> dict[str, dict]:
        return {h: dict(s) for h, s in self._humans.items()}

    def disconnected(self):
        """Every human is marked not connected (the engine processes stopped)."""
        self._humans = {h: dict(s, connected=False) for h, s in self._humans.items()}

    def _addressee(self, text: str) -> tuple[str | None, str]:
        """(agent_k, the rest) for "@agent_k rest"; (None, text) otherwise."""
        m = _ADDRESSED.match(text)
        if m and m[1] in self.agents:
            return m[1], m[2]
        return None, text

    def __getstate__(self):
        """A copy starts with no news queued (it has its own engine processes)."""
        return dict(self.__dict__, outbox=deque(), _events=deque())
