"""A paced runner: steps an env with a policy, paused, single-stepped and steered from
other threads (the live viewer), publishing what happens on an EventBus.

The env is lock-step, so while the runner is paused no env step is sent and the game
server does not tick: game time truly stops, and so do the humans in the world.
"""

from __future__ import annotations

import logging
import math
import numbers
import threading
import time
from dataclasses import asdict, dataclass, field
from collections.abc import Callable

import numpy as np

from .events import EVENT_TYPES, EventBus, Subscriber
from .validate import positive_int

log = logging.getLogger(__name__)

Policy = Callable[[str, object, dict], object]

REALTIME_RATE = 20.0  # steps/s of a realtime server (frame_dtime 0.05); slower() from None
MIN_TICK_RATE, MAX_TICK_RATE = 0.1, 10_000.0
# A paced run more than this late drops the missed ticks instead of rushing through them
MAX_LAG_S = 0.25
WAIT_POLL_S = 0.5  # how often a waiting runner or caller looks again (stop, run ended)
PAUSE_TIMEOUT_S = 120.0  # pause() waits at most this long for the step in flight


@dataclass(frozen=True)
class Snapshot:
    """The state of a run, as GET /api/state serves it."""

    step: int
    episode: int
    episode_step: int  # env steps of the episode so far
    status: str  # "idle" (never run), "starting" (the first reset), "running", "paused", "ended"
    tick_rate: float | None
    agents: dict = field(default_factory=dict)  # agent -> position, yaw, hp, return, done
    humans: dict = field(default_factory=dict)  # name -> env.humans_state()'s record
    task_state: list | None = None  # env.state(), where the task has one
    episode_returns: list = field(default_factory=list)  # one {agent: return} per episode
    reason: str | None = None  # why the run ended

    def to_dict(self) -> dict:
        return asdict(self)


def _checked_rate(rate) -> float | None:
    if rate is None:
        return None
    if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not math.isfinite(rate):
        raise TypeError(f"tick_rate must be None or a number of steps per second, got "
                        f"{type(rate).__name__} {rate!r}")
    if not MIN_TICK_RATE <= rate <= MAX_TICK_RATE:
        raise ValueError(f"tick_rate {rate!r} is out of range ({MIN_TICK_RATE} to "
                         f"{MAX_TICK_RATE:g} steps per second, or None: as fast as possible)")
    return float(rate)


def _policies(policy, agents: list[str]) -> dict[str, Policy]:
    if isinstance(policy, dict):
        missing = [a for a in agents if a not in policy]
        if missing:
            raise ValueError(f"the policy dict has no policy for {missing}; agents are {agents}")
        bad = [a for a in agents if not callable(policy[a])]
        if bad:
            raise TypeError(f"the policies of {bad} are not callable")
        return {a: policy[a] for a in agents}
    if not callable(policy):
        raise TypeError(f"policy must be a callable (agent, observation, info) -> action or a "
                        f"dict of them by agent, got {type(policy).__name__}")
    return {a: policy for a in agents}


def _plain(value):
    """Numbers, tuples and dicts of the env's infos as JSON-ready values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (np.ndarray, tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class Runner:
    """Runs `env` with `policy` at `tick_rate` env steps per second (None: as fast as
    possible). Every method may be called from any thread while run() runs in one."""

    def __init__(self, env, policy, tick_rate: float | None = None, *, seed: int | None = None,
                 bus: EventBus | None = None):
        self.env = env
        self._policies = _policies(policy, list(env.possible_agents))
        self.seed = seed
        self.bus = bus if bus is not None else EventBus()
        self._cond = threading.Condition()
        self._tick_rate = _checked_rate(tick_rate)
        self._paused = False
        self._paused_announced = False
        self._pending_steps = 0
        self._stop_requested = False
        self._in_step = False
        self._thread: int | None = None  # the thread in run()
        self._deadline: float | None = None  # monotonic time of the next paced step
        self._step_count = 0
        self._status = "idle"
        self._reason: str | None = None
        self._episode = 0
        self._episode_steps = 0
        self._returns = {a: 0.0 for a in env.possible_agents}
        self._episode_returns: list[dict] = []
        self._agents_state: dict = {}
        self._humans_state: dict = {}
        self._task_state: list | None = None
        self._frames: dict[str, np.ndarray] = {}
        self._frame_id = 0
        self.human_logins: dict = {}  # name -> env.human_login(name), after run() starts

    # -- what the viewer reads -----------------------------------------------------------

    @property
    def step_count(self) -> int:
        """Env steps run so far (over all runs and episodes)."""
        return self._step_count

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def tick_rate(self) -> float | None:
        return self._tick_rate

    @property
    def reason(self) -> str | None:
        """Why the last run ended ('max_steps', 'episodes', 'stopped' or 'error')."""
        return self._reason

    def snapshot(self) -> Snapshot:
        with self._cond:
            # "paused" once the loop has taken the pause in, after the step in flight: no
            # step of the run follows it until a resume or a single step
            paused = self._paused and self._paused_announced
            status = "paused" if paused and self._status == "running" else self._status
            return Snapshot(step=self._step_count, episode=self._episode,
                            episode_step=self._episode_steps, status=status,
                            tick_rate=self._tick_rate,
                            agents={a: dict(s) for a, s in self._agents_state.items()},
                            humans={h: dict(s) for h, s in self._humans_state.items()},
                            task_state=self._task_state,
                            episode_returns=[dict(r) for r in self._episode_returns],
                            reason=self._reason)

    def frames(self) -> tuple[int, dict[str, np.ndarray]]:
        """(a number that changes with every new set of frames, {agent: latest frame})."""
        with self._cond:
            return self._frame_id, dict(self._frames)

    def subscribe(self, fn: Subscriber):
        """Call fn(event) for every event of this runner; returns the unsubscribe function."""
        return self.bus.subscribe(fn)

    # -- control (any thread) ------------------------------------------------------------

    def pause(self, source: str = "api"):
        """Stop stepping; returns once the step in flight (if any) is done."""
        self.bus.publish("control", command="pause", source=source)
        with self._cond:
            self._paused = True
            self._cond.notify_all()
            self._wait(lambda: self._paused_announced and not self._in_step, PAUSE_TIMEOUT_S)

    def resume(self, source: str = "api"):
        self.bus.publish("control", command="resume", source=source)
        with self._cond:
            self._paused = False
            self._pending_steps = 0
            self._cond.notify_all()

    def step(self, n: int = 1, source: str = "api"):
        """Run exactly n env steps, then stay paused (a running runner pauses first).
        Returns when they are done, or at once before run() or from a subscriber."""
        n = positive_int("n (the number of steps)", n)
        self.bus.publish("control", command="step", n=n, source=source)
        with self._cond:
            self._paused = True
            self._pending_steps += n
            self._cond.notify_all()
            self._wait(lambda: self._pending_steps == 0 and not self._in_step, None)

    def stop(self, source: str = "api"):
        """End the run after the step in flight; run() returns 'stopped'."""
        self.bus.publish("control", command="stop", source=source)
        with self._cond:
            self._stop_requested = True
            self._cond.notify_all()

    def set_tick_rate(self, rate: float | None, source: str = "api"):
        rate = _checked_rate(rate)
        self.bus.publish("control", command="tick_rate", tick_rate=rate, source=source)
        self._set_rate(rate)

    def faster(self, source: str = "api"):
        """Double the tick rate (an unpaced runner stays unpaced)."""
        self.bus.publish("control", command="faster", source=source)
        with self._cond:
            rate = self._tick_rate
        if rate is not None:
            self._set_rate(min(rate * 2, MAX_TICK_RATE))

    def slower(self, source: str = "api"):
        """Halve the tick rate; an unpaced runner goes to the realtime rate (20 steps/s)."""
        self.bus.publish("control", command="slower", source=source)
        with self._cond:
            rate = self._tick_rate
        self._set_rate(REALTIME_RATE if rate is None else max(rate / 2, MIN_TICK_RATE))

    def _set_rate(self, rate: float | None):
        with self._cond:
            self._tick_rate = rate
            self._deadline = None  # a new schedule from the next step on
            self._cond.notify_all()

    def post_chat(self, text: str, to: str | None = None, sender: str = "viewer"):
        """Say `text` to every agent, or to agent `to`, as `sender` (env.post_chat): it
        goes into the world with the next env step and on to env.chat() (the infos the
        runner's policies get carry it as "chat")."""
        if to is not None and to not in self.env.possible_agents:
            raise ValueError(f"chat to unknown agent {to!r}; agents are "
                             f"{list(self.env.possible_agents)}")
        if not isinstance(text, str):
            raise TypeError(f"chat text must be a str, got {type(text).__name__} {text!r}")
        self.env.post_chat(text if to is None else f"@{to} {text}", sender=sender)

    def _wait(self, done: Callable[[], bool], timeout: float | None):
        """Wait (holding self._cond) until done(), the run ends, or timeout. Returns at
        once when called from the runner's own thread (a subscriber) or before run()."""
        if self._thread is None or self._thread == threading.get_ident():
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        while not done() and self._thread is not None:
            left = (WAIT_POLL_S if deadline is None
                    else min(WAIT_POLL_S, deadline - time.monotonic()))
            if left <= 0:
                raise TimeoutError(f"the runner did not reach a step boundary in {timeout} s")
            self._cond.wait(left)

    # -- the loop ------------------------------------------------------------------------

    def run(self, max_steps: int | None = None, episodes: int | None = None) -> str:
        """Step until max_steps env steps or `episodes` episodes are done, or stop();
        returns the reason. Episodes reset automatically."""
        max_steps = positive_int("max_steps", max_steps, optional=True)
        episodes = positive_int("episodes", episodes, optional=True)
        with self._cond:
            if self._thread is not None:
                raise RuntimeError("this runner is already running")
            self._thread = threading.get_ident()
            self._stop_requested = False
            self._status = "starting"
            self._reason = None
            self._paused_announced = False
        steps = finished = 0
        reason = error = None
        try:
            observations, infos = self._reset(self.seed)
            with self._cond:
                self._status = "running"
            self.bus.publish("run_started", task=self.env.task.id,
                             agents=list(self.env.possible_agents),
                             humans=list(self.env.humans), tick_rate=self._tick_rate,
                             max_steps=max_steps, episodes=episodes)
            while reason is None:
                if not self._next_tick():
                    reason = "stopped"
                    break
                try:  # a step, and the reset after it when it ended the episode
                    observations, infos, done = self._step(observations, infos)
                    steps += 1
                    finished += done
                    if episodes is not None and finished >= episodes:
                        reason = "episodes"
                    elif max_steps is not None and steps >= max_steps:
                        reason = "max_steps"
                    elif done:
                        observations, infos = self._reset(None)
                finally:
                    with self._cond:
                        self._in_step = False
                        self._cond.notify_all()
        except BaseException as e:
            reason, error = "error", f"{type(e).__name__}: {e}"
            raise
        finally:
            with self._cond:
                self._thread = None
                self._status = "ended"
                self._reason = reason
                self._pending_steps = 0
                self._cond.notify_all()
            self.bus.publish("run_ended", reason=reason, step=self._step_count,
                             episode=self._episode, error=error)
        return reason

    def _next_tick(self) -> bool:
        """Wait until the next step is due; False when the run is to stop."""
        while True:
            announce = None
            with self._cond:
                if self._stop_requested:
                    return False
                if self._paused != self._paused_announced:
                    announce = "paused" if self._paused else "resumed"
                    self._paused_announced = self._paused
                    self._deadline = None
                    self._cond.notify_all()
                elif self._paused:
                    if self._pending_steps:
                        self._pending_steps -= 1
                        self._in_step = True
                        return True
                    self._cond.wait(WAIT_POLL_S)
                    continue
                elif self._due():
                    self._in_step = True
                    return True
            if announce:
                self.bus.publish(announce, step=self._step_count)

    def _due(self) -> bool:
        """(Holding self._cond) True when a paced or unpaced step is due now; otherwise
        waits toward the deadline and returns False."""
        if self._tick_rate is None:
            return True
        now = time.monotonic()
        if self._deadline is None or now - self._deadline > MAX_LAG_S:
            self._deadline = now
        if now < self._deadline:
            self._cond.wait(self._deadline - now)
            return False
        self._deadline += 1.0 / self._tick_rate  # the fixed schedule: no drift
        return True

    def _reset(self, seed):
        observations, infos = self._with_chat(*self.env.reset(seed=seed))
        # new engine processes (the first reset, a restart after a fault) mean new passwords
        self.human_logins = {h: self.env.human_login(h) for h in self.env.humans}
        with self._cond:
            self._returns = {a: 0.0 for a in self.env.possible_agents}
            self._episode_steps = 0
        self._record(observations, infos, set())
        return observations, infos

    def _step(self, observations, infos):
        env = self.env
        actions = {a: self._policies[a](a, observations[a], infos[a]) for a in env.agents}
        new_obs, rewards, terminations, truncations, new_infos = env.step(actions)
        new_infos = self._with_chat(new_obs, new_infos)[1]
        with self._cond:
            self._step_count += 1
            self._episode_steps += 1
            for a, r in rewards.items():
                self._returns[a] += float(r)
        observations, infos = {**observations, **new_obs}, {**infos, **new_infos}
        ended = {a for a in env.possible_agents if a not in env.agents}
        self._record(new_obs, new_infos, ended)
        self.bus.publish("step", step=self._step_count, episode=self._episode,
                         rewards={a: float(r) for a, r in rewards.items()},
                         terminations={a: bool(t) for a, t in terminations.items()},
                         truncations={a: bool(t) for a, t in truncations.items()})
        for event in env.world_events():
            kind = event.pop("type")  # a fresh dict of plain values
            if kind in EVENT_TYPES:
                self.bus.publish(kind, **event)
            else:
                log.warning("craftium-ma: skipped a world event of unknown type %r", kind)
        done = not env.agents
        if done:
            self._end_episode(infos)
        return observations, infos, done

    def _with_chat(self, observations, infos):
        """The infos a policy gets: the env's, with "chat", what the agent heard (env.chat())."""
        heard = self.env.chat()
        return observations, {a: {**info, "chat": heard[a]} for a, info in infos.items()}

    def _end_episode(self, infos):
        with self._cond:
            returns = dict(self._returns)
            self._episode_returns.append(returns)
            episode, self._episode = self._episode, self._episode + 1
            length, self._episode_steps = self._episode_steps, 0
            humans = {h: s.get("score") for h, s in self._humans_state.items()}
        teams: dict[str, float] = {}
        for agent, value in returns.items():
            team = str(infos.get(agent, {}).get("team", "all"))
            teams[team] = teams.get(team, 0.0) + value
        self.bus.publish("episode_ended", episode=episode, length=length,
                         returns=returns, team_returns=teams, human_scores=humans)

    def _record(self, observations, infos, ended: set):
        """Keep what the snapshot and the viewer show (in the runner's thread, which
        alone touches the env)."""
        env = self.env
        humans = env.humans_state()
        task_state = _plain(env.state()) if hasattr(env, "state_space") else None
        frames = env.last_frames  # whatever observations= selects
        with self._cond:
            for a, info in infos.items():
                self._agents_state[a] = {"position": _plain(info["position"]),
                                         "yaw": float(info["yaw"]), "hp": float(info["hp"]),
                                         "return": self._returns[a], "done": a in ended}
            self._humans_state = humans  # copies already
            self._task_state = task_state
            # read-only arrays over the received bytes
            self._frames.update((a, frames[a]) for a in observations)
            self._frame_id += 1
