"""Lock-step stepping of one environment's server and agent clients.

A step sends every agent its action first, then the server its tick, then
gathers: the clients run their frames concurrently and the server's tick waits
for every client's barrier marker. Each client draws its frame after the
server finished the tick, or, pipelined, while the server runs it: then what
the tick changed shows in the next step's frame. A client whose frames nobody
looks at (its agent observes only what the task declares, or is a bot that needs
no pixels) draws none of its steps. See docs/engine.md.

A call that fails (an engine process died or stopped answering, a Lua error,
an interrupt) leaves the session broken: its sockets and processes are in an
unknown state, and `fault` says what happened. Later steps refuse to run; the
env replaces a broken session at its next reset.
"""

from __future__ import annotations

import functools
import os
import time
import weakref
from collections import deque
from dataclasses import dataclass

import zmq

from . import protocol
from .build import find_engine
from .launcher import EngineProcesses, LaunchConfig, process_title
from .protocol import AgentTimeoutError, EngineError, Observation, ProtocolError

POLL_SLICE_MS = 100


@dataclass
class AgentAction:
    keys: int = 0  # bitmask over protocol.KEYS
    dx: float = 0.0  # camera turn right, in [-1, 1]
    dy: float = 0.0  # camera turn down, in [-1, 1]


NOOP = AgentAction()


def _breaks_on_failure(method):
    """A session method that leaves the session broken when it fails (see the module doc)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self._check_usable()
        try:
            return method(self, *args, **kwargs)
        except BaseException as e:
            self.fault = f"{type(e).__name__}: {e}"
            raise
    return wrapper


class LockstepSession:
    """A started server plus agent clients, stepped together."""

    def __init__(self, config: LaunchConfig, frameskip: int = 1, pipelined: bool = False,
                 chat_outbox: deque | None = None, drawn=None):
        self.config = config
        self.frameskip = frameskip
        self.pipelined = pipelined
        # the agents whose steps' frames someone looks at (None: every agent's); the
        # others' clients draw only a reset's last frame
        self.drawn = frozenset(config.agents if drawn is None else drawn)
        self.step_count = 0
        # chat for the server to say in-game at the next tick ({"from", "text"}; another
        # thread may add to it), and the "world" part of each tick's result until taken
        self.chat_outbox = deque() if chat_outbox is None else chat_outbox
        self.world_news: list[dict] = []
        self.fault: str | None = None  # what broke the session, see the module doc
        self._map_sent = False  # the server has sent each agent all the map in its range
        self._in_flight: list[str] = []  # agents of the step sent and not yet received
        self._sent_at = 0.0
        self._taken: dict[zmq.Socket, list[bytes]] = {}  # replies read before receive_step()
        self._awaited: set[zmq.Socket] = set()  # the sockets send_step() returned
        self._context = zmq.Context()
        self._sockets: list[zmq.Socket] = []
        # a session dropped without close() closes its sockets and context too
        self._finalizer = weakref.finalize(self, _close_zmq, self._context, self._sockets)
        # ZeroMQ's I/O thread runs SCHED_BATCH: woken by a send, it does not preempt
        # this thread, which goes on sending to the other agents (docs/benchmarks.md)
        self._context.set(zmq.THREAD_SCHED_POLICY, os.SCHED_BATCH)
        self._processes = EngineProcesses(config, find_engine())
        try:
            self._processes.start_server()
            self._control = self._socket(self._processes.control_endpoint)
            self._control_request("status")
            self._processes.start_clients()
            self._agents = {a: self._socket(e) for a, e in self._processes.agent_endpoints.items()}
            self._wait_for_players()
        except BaseException:
            self.close()
            raise

    @property
    def directory(self):
        return self._processes.dir

    @property
    def pids(self) -> dict[str, int]:
        return self._processes.pids

    @property
    def processes(self) -> EngineProcesses:
        return self._processes

    def _socket(self, endpoint: str) -> zmq.Socket:
        s = self._context.socket(zmq.REQ)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(endpoint)
        self._sockets.append(s)
        return s

    def _receive(self, sock: zmq.Socket, process: str) -> list[bytes]:
        """Wait for a reply of `process` ("server" or an agent), checking that the
        engine processes are alive."""
        taken = self._taken.pop(sock, None)
        if taken is not None:
            return taken
        deadline = time.monotonic() + self.config.timeout
        while not sock.poll(POLL_SLICE_MS):
            self._processes.check_alive()
            if time.monotonic() > deadline:
                raise self._no_answer(process)
        return sock.recv_multipart()

    def _no_answer(self, process: str) -> TimeoutError:
        return TimeoutError(f"no answer from the {process_title(process)} within "
                            f"{self.config.timeout:.0f} s:\n{self._processes.log_tail(process)}")

    def _control_request(self, cmd: str, **fields) -> dict:
        self._control.send(protocol.encode_control(cmd, **fields))
        return self._reply_of_server()

    def _reply_of_server(self) -> dict:
        reply = self._receive(self._control, "server")[0]
        try:
            return protocol.decode_control(reply)
        except EngineError as e:
            raise EngineError(self._processes.server_error(str(e))) from None
        except AgentTimeoutError as e:
            raise TimeoutError(f"{e}:\n{self._processes.log_tail(e.agent)}") from None

    def _wait_for_players(self):
        deadline = time.monotonic() + self.config.timeout
        while True:
            joined = set(self._control_request("status")["players"])
            if joined >= set(self._agents):
                return
            if time.monotonic() > deadline:
                missing = sorted(set(self._agents) - joined)
                raise TimeoutError(f"agents {missing} did not join the server within "
                                   f"{self.config.timeout:.0f} s:\n"
                                   f"{self._processes.log_tail(missing[0])}")
            self._processes.check_alive()
            time.sleep(0.02)

    def _gather(self, agents) -> dict[str, Observation]:
        observations = {}
        for agent in agents:
            try:
                observations[agent] = protocol.decode_observation(
                    self._receive(self._agents[agent], agent))
            except EngineError as e:
                raise EngineError(f"{agent}: {e}") from None
        return observations

    def _check_usable(self):
        if self._context is None:
            raise RuntimeError("the engine session is closed")
        if self.fault is not None:
            raise RuntimeError("the engine session broke in an earlier call "
                               f"({self.fault.splitlines()[0]}); "
                               "start a new one (env.reset() does)")

    @_breaks_on_failure
    def reset(self, seed: int, options: dict, agents: list[str], max_cycles: int | None = None):
        """Soft reset through the Lua reset hooks; waits until every agent's world is
        loaded. The engine starts the episode as a fresh one would (docs/environments.md).

        Returns (observations, lua_results of the reset)."""
        self.step_count += 1
        result = self._control_request("reset", step=self.step_count, agents=agents,
                                       seed=seed, options=options,
                                       max_cycles=max_cycles)["result"]
        for agent in agents:
            self._agents[agent].send(protocol.encode_request(protocol.OBSERVE, self.step_count,
                                                             flags=protocol.NOT_DRAWN))
        self._gather(agents)
        # Zero-time steps until the world is ready (the task area generated, the
        # map in range sent and meshed, the last episode's other blocks dropped);
        # at least one, so that the look direction set by the reset reaches the
        # camera before the frame. Frames before the drop cannot be the reset's.
        deadline = time.monotonic() + self.config.timeout
        self._map_sent = blocks_dropped = False
        ticks = 0
        while True:
            drop = self._map_sent and not blocks_dropped
            flags = (protocol.DROP_UNSENT_BLOCKS if drop
                     else 0 if blocks_dropped else protocol.NOT_DRAWN)
            observations, tick = self.step({a: NOOP for a in agents}, frames=0, flags=flags)
            blocks_dropped |= drop
            ticks += 1
            if result.get("loading") and not tick.get("loading"):
                result = tick  # the reset waited for the task area and ran in this tick
            if (all(o.ready for o in observations.values()) and not result.get("loading")
                    and self._map_sent and blocks_dropped):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(self._loading_report(observations, result, ticks,
                                                        blocks_dropped))
        return observations, dict(result, state=tick.get("state"),
                                  observations=tick.get("observations"))

    def _loading_report(self, observations: dict[str, protocol.Observation], result: dict,
                        ticks: int, blocks_dropped: bool) -> str:
        """Why a reset's world did not load in time: what it still waited for, where
        the agents whose clients lacked their map stood, and the engines' log tails."""
        slow = [a for a, o in observations.items() if not o.ready]
        waits = [f"the map at {a}'s feet, its objects and meshes on its client (at "
                 + ", ".join(f"{c:.1f}" for c in observations[a].position) + ")" for a in slow]
        if not self._map_sent:
            waits.append("the server's map send to every agent (map_sent)")
        elif not blocks_dropped:
            waits.append("the clients' drop of the map blocks the server did not send")
        if result.get("loading"):
            waits.append("the task area (the reset has not run)")
        names = ["server", *slow[:1]]
        return (f"the reset's world did not load within {self.config.timeout:.0f} s "
                f"({ticks} zero-time ticks); waiting for: "
                + "; ".join(waits) + "\n" + "".join(self._processes.log_tail(n) for n in names))

    def step(self, actions: dict[str, AgentAction], frames: int | None = None, flags: int = 0):
        """One lock-step: every agent in `actions` acts, the server ticks once.
        A zero-time step (a reset's) is always strict: its frame shows what the
        reset loaded.

        Returns (observations, lua_results)."""
        self.send_step(actions, frames, flags)
        return self.receive_step()

    @_breaks_on_failure
    def send_step(self, actions: dict[str, AgentAction], frames: int | None = None,
                  flags: int = 0) -> list[zmq.Socket]:
        """The first half of step(): sends the actions and the tick, waits for nothing.

        Returns the sockets to watch for the step's answer (a caller driving many
        sessions polls them together): the agents', and, pipelined, the server's. In a
        strict step the server replies before its done marker reaches the clients, so
        its reply is in by the time their frames are. Once each socket returned has a
        message, receive_step() does not wait."""
        frames = self.frameskip if frames is None else frames
        pipelined = self.pipelined and frames > 0
        if pipelined:
            flags |= protocol.PIPELINED
        self.step_count += 1
        for agent, a in actions.items():
            undrawn = protocol.NOT_DRAWN if agent not in self.drawn and frames > 0 else 0
            self._agents[agent].send(protocol.encode_request(
                protocol.ACT, self.step_count, a.keys, frames, a.dx, a.dy, flags | undrawn))
        chat = [self.chat_outbox.popleft() for _ in range(len(self.chat_outbox))]
        self._control.send(protocol.encode_control(
            "tick", step=self.step_count, agents=list(actions),
            dtime=frames * self.config.frame_dtime, **({"chat": chat} if chat else {})))
        self._in_flight = list(actions)
        self._sent_at = time.monotonic()
        agents = [self._agents[a] for a in actions]
        sockets = [self._control, *agents] if pipelined else agents
        self._awaited = set(sockets)
        return sockets

    @property
    def answered(self) -> bool:
        """Every socket send_step() returned has its reply read (by take_reply() or
        check_in_flight()): receive_step() does not wait."""
        return self._taken.keys() >= self._awaited

    @_breaks_on_failure
    def receive_step(self):
        """The second half of step(): (observations, lua_results) of the step sent."""
        reply = self._reply_of_server()
        self._map_sent = reply.get("map_sent", True)
        if "world" in reply["result"]:  # chat heard, humans (mods/craftium_ma/humans.lua)
            self.world_news.append(reply["result"]["world"])
        return self._gather(self._in_flight), reply["result"]

    @_breaks_on_failure
    def take_reply(self, sock: zmq.Socket):
        """Reads the reply that has come on one of send_step()'s sockets, for
        receive_step(): a caller polling the sockets itself keeps them quiet so. A
        reply check_in_flight() read already is not read again."""
        if sock not in self._taken:
            self._taken[sock] = sock.recv_multipart()

    @_breaks_on_failure
    def check_in_flight(self):
        """For a caller that polls send_step()'s sockets itself: raises what
        receive_step()'s wait would when an engine process died, the server answered
        with an error (a Lua error in the tick, after which the agents wait for a tick
        that never ends), or the step is not answered within the timeout. It reads
        the server's reply if it has come: see `answered` after it."""
        self._processes.check_alive()
        if self._control not in self._taken and self._control.poll(0):
            self._taken[self._control] = self._control.recv_multipart()
        if self._control in self._taken:
            try:
                protocol.decode_control(self._taken[self._control][0])
            except (ProtocolError, EngineError, AgentTimeoutError):
                self._reply_of_server()  # raises the server's error, with its log
        if time.monotonic() - self._sent_at > self.config.timeout:
            waiting = [p for p, s in (("server", self._control),
                                      *((a, self._agents[a]) for a in self._in_flight))
                       if s not in self._taken and not s.poll(0)]
            raise self._no_answer(waiting[0] if waiting else "server")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Stop the processes and remove every file; safe to call twice."""
        if self._context is None:
            return
        self._processes.close()
        self._finalizer()
        self._context = None


def _close_zmq(context: zmq.Context, sockets: list[zmq.Socket]):
    for s in sockets:
        s.close(linger=0)
    context.term()
