"""The event stream of a run: an ordered bus, a JSONL log of it, and replay.

Every subscriber sees every event in the same order (the order of `Event.seq`), even
when events are published from several threads or from inside a subscriber. A
subscriber that raises is logged and skipped; the others and the publisher go on.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator

import numpy as np

log = logging.getLogger(__name__)

# type -> what its data holds (docs/humans.md, "Events and replay")
EVENT_TYPES = {
    "run_started": "task, agents, humans, tick_rate, max_steps, episodes",
    "run_ended": "reason ('max_steps', 'episodes', 'stopped' or 'error'), step, episode, error",
    "paused": "step",
    "resumed": "step",
    "step": "step, episode, rewards, terminations, truncations (by agent)",
    "episode_ended": "episode, length, returns (by agent), team_returns (by team), "
                     "human_scores",
    "chat": "from, to (an agent or None), text, step",
    "human_joined": "name",
    "human_left": "name",
    "control": "command (pause, resume, step, stop, faster, slower, tick_rate), "
               "source, and the command's arguments",
}


@dataclass(frozen=True)
class Event:
    """One event: its type, its data, its place in the stream and its wall time."""

    type: str
    data: dict = field(default_factory=dict)
    seq: int = 0
    time: float = 0.0

    def to_dict(self) -> dict:
        return {"seq": self.seq, "time": self.time, "type": self.type, "data": self.data}

    @classmethod
    def from_dict(cls, record: dict) -> Event:
        return cls(type=record["type"], data=record["data"], seq=record["seq"],
                   time=record["time"])


Subscriber = Callable[[Event], object]


class EventBus:
    """Delivers each published event to the subscribers, in order of subscription."""

    def __init__(self):
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()
        self._pending: deque[Event] = deque()
        self._delivering = False
        self._seq = itertools.count()

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call fn(event) for every event from now on; returns a function that unsubscribes."""
        if not callable(fn):
            raise TypeError(f"a subscriber must be callable, got {type(fn).__name__} {fn!r}")
        with self._lock:
            self._subscribers.append(fn)
        return lambda: self.unsubscribe(fn)

    def unsubscribe(self, fn: Subscriber):
        with self._lock:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

    def publish(self, type: str, **data) -> Event:
        """Make an event and deliver it to every subscriber; returns the event.

        An event published by a subscriber is delivered after the one being delivered,
        so that every subscriber sees the same order."""
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}; the types are {sorted(EVENT_TYPES)}")
        with self._lock:
            event = Event(type, data, next(self._seq), time.time())
            self._pending.append(event)
            if not self._delivering:
                self._delivering = True
                try:
                    while self._pending:
                        pending = self._pending.popleft()
                        for fn in list(self._subscribers):
                            self._deliver(fn, pending)
                finally:
                    self._delivering = False
        return event

    @staticmethod
    def _deliver(fn: Subscriber, event: Event):
        try:
            fn(event)
        except Exception:
            log.exception("craftium-ma: event subscriber %r raised on %s event %d; skipped it",
                          fn, event.type, event.seq)


def _plain(value):
    """JSON for numpy values in event data."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"event data of type {type(value).__name__} is not JSON: {value!r}")


class EventLog:
    """A subscriber that writes every event as one JSON line (flushed at once)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._file = open(self.path, "w", encoding="utf-8")
        self._lock = threading.Lock()

    def __call__(self, event: Event):
        line = json.dumps(event.to_dict(), default=_plain)
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")
                self._file.flush()

    def close(self):
        with self._lock:
            self._file.close()


def replay(path: str | os.PathLike) -> Iterator[Event]:
    """The events of a JSONL log written by EventLog (`serve --log`), in order."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield Event.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{number}: not an event record ({e})") from None
