"""A pool of environments stepped from one Python thread, as a Gymnasium VectorEnv.

Every env of the pool is a CraftiumParallelEnv whose engine processes run on
their own; the pool drives each through the public split step of
craftium_ma.contract: it sends each env's step and waits on the sockets of
every env in flight with one ZeroMQ poller, reading an env's answer as soon as
all of its sockets have one. No worker processes, no
pickling, one copy of each frame (into the batch). Resets run in threads (an
env's reset is many small lock-steps, mostly waiting), which also starts the
engine processes of all envs at once. See docs/vector.md.

Rows are agents: row e * num_agents + i is agent i of env e.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import gymnasium
import numpy as np
import zmq
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, iterate

from .contract import SplitStepEnv
from .cpus import share_out
from .lockstep import POLL_SLICE_MS
from .make import parallel_env
from .observations import empty_batch, set_row
from .validate import cpu_list, is_int, positive_int, seeds_per_env


class _Result:
    """One env's rows of a step or a reset, until recv() hands them out."""
    __slots__ = ("observations", "rewards", "terminations", "truncations", "infos")

    def __init__(self, observations, rewards, terminations, truncations, infos):
        self.observations = observations  # {agent: observation} of the rows that are active
        self.rewards, self.terminations, self.truncations = rewards, terminations, truncations
        self.infos = infos  # {agent: info dict}


class CraftiumVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` copies of a task, every agent one row; see vector_env()."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, task, num_envs: int, *, batch_size: int | None = None,
                 seed=None, cpu_affinity=True, **env_kwargs):
        num_envs = positive_int("num_envs (environments in the pool)", num_envs)
        batch_size = num_envs if batch_size is None else batch_size
        if not is_int(batch_size) or not 1 <= batch_size <= num_envs:
            raise ValueError(f"batch_size must be an int in 1..num_envs={num_envs}, "
                             f"got {batch_size!r}")
        if "cpus" in env_kwargs:
            raise ValueError("the pool pins its envs itself: give it cpu_affinity= (True, False "
                             "or the CPUs to share out), not cpus=")
        cpus = cpus_per_env(cpu_affinity, num_envs)
        # a task's id, or a scenario (craftium_ma.Scenario), which makes its own envs
        make = task.make_env if hasattr(task, "make_env") else functools.partial(parallel_env,
                                                                                  task)
        self.envs: list[SplitStepEnv] = [make(cpus=cpus[e], **env_kwargs)
                                         for e in range(num_envs)]
        self.batch_size = int(batch_size)
        self._first_seeds = seeds_per_env(seed, num_envs, "seed")
        first = self.envs[0]
        self.agents = list(first.possible_agents)
        self.num_agents = len(self.agents)
        self.num_envs = num_envs * self.num_agents  # Gymnasium's num_envs: rows
        self.single_observation_space = first.observation_space(self.agents[0])
        self.single_action_space = first.action_space(self.agents[0])
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = dict(self.metadata, name=first.metadata["name"])
        self.render_mode = None
        if hasattr(first, "state_space"):
            self.state_space = first.state_space

        n = num_envs
        self._started = False  # the first reset (of the constructor's seeds) happened
        self._ended = [True] * n  # the env's episode is over: its next send resets it
        self._flight: list[str | None] = [None] * n  # "step" or "reset" while in flight
        self._resets: dict[int, Future] = {}
        self._ready: deque[int] = deque()
        self._results: list[_Result | None] = [None] * n
        self._poller = zmq.Poller()
        self._next_check = 0.0  # when _wait next checks the envs in flight
        self._socket_env: dict[zmq.Socket, int] = {}  # the sockets the poller watches
        self._watched: dict[int, list[zmq.Socket]] = {}  # each env's
        # reset threads write a byte here when they finish: the poller wakes on it
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        self._poller.register(self._wake_read, zmq.POLLIN)
        self._threads = ThreadPoolExecutor(max_workers=n, thread_name_prefix="craftium-ma-reset")
        # step()'s infos["env_id"] and ["agent_id"], and the masks of the keys every row
        # has: read-only arrays shared by all steps
        self._env_of_row = np.repeat(np.arange(n), self.num_agents)
        self._agent_of_row = np.arange(self.num_envs) % self.num_agents
        self._every_row = np.ones(self.num_envs, bool)
        for shared in (self._env_of_row, self._agent_of_row, self._every_row):
            shared.flags.writeable = False
        #: seconds spent in the envs' calls of the split step and waiting on their sockets:
        #: the rest of the pool's calls is its own Python (benchmarks/measure.py)
        self.env_seconds = 0.0

    # -- Gymnasium's face ----------------------------------------------------------------

    def reset(self, *, seed=None, options: dict | None = None):
        """Resets every env (or those of options["reset_mask"]) at once and waits for them.
        `seed`: None, an int (env e gets seed + e) or one seed per env."""
        self._check_idle("reset()")
        options = dict(options or {})
        mask = self._env_mask(options.pop("reset_mask", None))
        seeds = seeds_per_env(seed, len(self.envs), "reset(seed=...)")
        if seed is None and not self._started:
            seeds = self._first_seeds
        envs = [e for e in range(len(self.envs)) if mask[e]]
        for e in envs:
            self._start_reset(e, seeds[e], options)
        self._started = True
        self._wait(len(envs))
        done = {self._ready.popleft() for _ in envs}
        obs, _, _, _, infos = self._assemble(range(len(self.envs)), done)
        return obs, infos

    def step(self, actions):
        """send() to every env, then waits for all of them (rows in env order)."""
        self._check_idle("step()")
        if not self._started:
            raise RuntimeError("step() before reset(): call reset() first")
        everyone = range(len(self.envs))
        self._send(everyone, self._actions_per_row(actions, self.num_envs))
        self._wait(len(self.envs))
        self._ready.clear()
        return self._assemble(everyone, everyone)

    def state(self) -> np.ndarray:
        """Every env's global state, stacked: (len(envs), state size)."""
        return np.stack([env.state() for env in self.envs])

    def close_extras(self, **kwargs):
        """Waits for resets in flight, then closes every env's engine processes."""
        if not hasattr(self, "_threads"):
            return  # the constructor failed before it started anything
        for future in self._resets.values():
            future.exception()  # a reset returns or fails within the env's timeout
        self._threads.shutdown(wait=True)
        for env in self.envs:
            env.close()
        if self._wake_read is not None:
            os.close(self._wake_read)
            os.close(self._wake_write)
            self._wake_read = self._wake_write = None

    # -- the async face (EnvPool's) ------------------------------------------------------

    def async_reset(self):
        """Starts resetting every env; recv() returns them as they finish."""
        self._check_idle("async_reset()")
        seeds = self._first_seeds if not self._started else [None] * len(self.envs)
        for e in range(len(self.envs)):
            self._start_reset(e, seeds[e], {})
        self._started = True

    def send(self, actions, env_ids=None):
        """Starts a step of each env in `env_ids` (all by default) with `actions`, one
        per row of those envs in that order. An env whose episode is over is reset
        instead (its actions are ignored), and so are the rows of inactive agents."""
        env_ids = self._env_ids(env_ids)
        self._send(env_ids, self._actions_per_row(actions, len(env_ids) * self.num_agents))

    def _send(self, env_ids, per_row: list):
        """send() to envs known to be idle, with one action per row of them."""
        n = self.num_agents
        steps = []
        for k, e in enumerate(env_ids):
            if self._ended[e]:
                continue
            env = self.envs[e]
            given = dict(zip(self.agents, per_row[k * n:(k + 1) * n]))
            actions = given if len(env.agents) == n else {a: given[a] for a in env.agents}
            try:  # every env's actions are checked before any is sent
                self._timed(env.check_actions, actions)
            except ValueError as error:
                agent = next(a for a in env.agents if not env.action_space(a).contains(given[a]))
                row = e * n + self.agents.index(agent)
                raise ValueError(f"row {row} (env {e}, {agent}): {error}") from None
            steps.append((e, actions))
        for e in env_ids:
            if self._ended[e]:
                self._start_reset(e, None, {})
        for e, actions in steps:
            self._flight[e] = "step"
            try:
                sockets = self._timed(self.envs[e].send, actions)
            except Exception:
                self._fault(e)
                continue
            if self._watched.get(e) != sockets:  # a new session: watch its sockets
                self._unwatch(e)
                self._watched[e] = sockets
                for s in sockets:
                    self._socket_env[s] = e
                    self._poller.register(s, zmq.POLLIN)

    def recv(self):
        """(observations, rewards, terminations, truncations, infos) of the rows of the
        first batch_size envs to finish; infos["env_id"] says which env each row is of."""
        waiting = sum(f is not None for f in self._flight) + len(self._ready)
        if waiting == 0:
            raise RuntimeError("recv() with nothing sent: call send() or async_reset() first")
        if waiting < self.batch_size:
            raise RuntimeError(f"recv() returns batch_size={self.batch_size} envs, but only "
                               f"{waiting} are in flight; send() to more envs first")
        self._wait(self.batch_size)
        envs = [self._ready.popleft() for _ in range(self.batch_size)]
        return self._assemble(envs, envs)

    # -- inside ----------------------------------------------------------------------------

    def _start_reset(self, e: int, seed, options: dict):
        self._unwatch(e)  # the reset thread uses the sockets (and may replace them)
        self._flight[e] = "reset"
        self._ended[e] = False
        future = self._resets[e] = self._threads.submit(self._reset_env, self.envs[e], seed,
                                                         options)
        future.add_done_callback(self._wake)  # called once the future is done

    def _wake(self, _future):
        os.write(self._wake_write, b"x")

    def _reset_env(self, env: SplitStepEnv, seed, options: dict):
        """In a reset thread; a reset that breaks the engine session is tried once more,
        on new engine processes."""
        try:
            return env.reset(seed=seed, options=options or None)
        except Exception:
            if env.fault is None:
                raise
            return env.reset(seed=seed, options=options or None)

    def _wait(self, count: int):
        """Until `count` envs have results ready; every wait has the envs' timeouts."""
        while len(self._ready) < count:
            events = self._timed(self._poller.poll, POLL_SLICE_MS)
            if not events or time.monotonic() > self._next_check:
                self._check_in_flight()  # also while other envs keep answering
                self._next_check = time.monotonic() + POLL_SLICE_MS / 1000
            for sock, _ in events:
                if sock == self._wake_read:
                    self._collect_resets()
                    continue
                e = self._socket_env.get(sock)
                if e is None or self._flight[e] != "step":
                    continue  # of an env that failed or finished in this round of events
                env = self.envs[e]
                try:
                    self._timed(env.take_reply, sock)
                except Exception:
                    self._fault(e)
                    continue
                if env.answered:
                    self._receive(e)

    def _timed(self, call, *args):
        """call(*args), its time counted to env_seconds (the envs' share of the pool's)."""
        started = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.env_seconds += time.perf_counter() - started

    def _receive(self, e: int):
        env = self.envs[e]
        try:
            result = self._timed(env.recv)
        except Exception:
            self._fault(e)
            return
        self._finish(e, _Result(*result))
        self._ended[e] = not env.agents

    def _collect_resets(self):
        try:
            os.read(self._wake_read, 4096)
        except BlockingIOError:
            pass
        failed = None
        for e in [e for e, f in self._resets.items() if f.done()]:
            try:
                observations, infos = self._resets.pop(e).result()
            except Exception as error:  # raised once the other resets are taken
                self._flight[e], self._ended[e] = None, True  # the next send tries again
                failed = failed or error
                continue
            zero = dict.fromkeys(observations, 0.0)
            no = dict.fromkeys(observations, False)
            self._finish(e, _Result(observations, zero, no, no, infos))
        if failed is not None:
            raise failed

    def _check_in_flight(self):
        for e, flight in enumerate(self._flight):
            if flight == "step":
                env = self.envs[e]
                try:
                    self._timed(env.check_in_flight)
                except Exception:
                    self._fault(e)
                    continue
                if env.answered:  # the check read the last reply, which the poll missed
                    self._receive(e)

    def _fault(self, e: int):
        """The engine of env e failed in a step: its rows are truncated, marked
        engine_restarted, and its next send restarts it (env.reset does)."""
        env = self.envs[e]
        if env.fault is None:
            raise  # (called in an except block) not the engine's failure: raised as it is
        warnings.warn(f"craftium-ma: env {e} of the pool failed ({env.fault.splitlines()[0]}); "
                      "its episode is truncated and the next step restarts it", RuntimeWarning,
                      stacklevel=3)
        self._unwatch(e)
        self._finish(e, _Result(*env.fault_result()))
        self._ended[e] = True

    def _unwatch(self, e: int):
        for s in self._watched.pop(e, []):
            del self._socket_env[s]
            self._poller.unregister(s)

    def _finish(self, e: int, result: _Result):
        self._flight[e] = None
        self._results[e] = result
        self._ready.append(e)

    def _assemble(self, envs, fresh):
        """The rows of `envs` in that order; the envs in `fresh` give their new
        results, the others (a masked reset's) their live agents' last observations."""
        n = self.num_agents
        rows = len(envs) * n
        obs = empty_batch(self.single_observation_space, rows)
        rewards, active = np.zeros(rows), np.zeros(rows, bool)
        terminations, truncations = np.zeros(rows, bool), np.zeros(rows, bool)
        live, infos = [], []
        for k, e in enumerate(envs):
            if e in fresh:
                result, self._results[e] = self._results[e], None
                given = result.observations
            else:  # its live agents' last observations, no flags, no infos
                result, env = None, self.envs[e]
                last = env.last_observations
                given = {a: last[a] for a in env.agents}
            for i, agent in enumerate(self.agents):
                row = k * n + i
                if agent not in given:  # inactive: zero observation, reward 0, no flags, no infos
                    continue
                set_row(obs, row, given[agent])
                active[row] = True
                if result is not None:
                    live.append(row)
                    rewards[row] = result.rewards[agent]
                    terminations[row] = result.terminations[agent]
                    truncations[row] = result.truncations[agent]
                    infos.append(result.infos[agent])
        every = self._every_row[:rows]
        every_env = isinstance(envs, range)  # step() and reset(): range(len(self.envs))
        env_id = self._env_of_row if every_env else np.repeat(envs, n)
        vector_infos = {"env_id": env_id, "_env_id": every,
                        "agent_id": self._agent_of_row[:rows], "_agent_id": every,
                        "active": active, "_active": every}
        vector_infos.update(_batched_infos(live, infos, every))
        return obs, rewards, terminations, truncations, vector_infos

    def _actions_per_row(self, actions, rows: int) -> list:
        space = self.single_action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            array = np.asarray(actions)
            if array.shape != (rows,):
                raise ValueError(f"actions must have shape ({rows},), one per row of the envs "
                                 f"sent to, got shape {array.shape}")
            if array.dtype.kind not in "iu":
                raise ValueError(f"actions must be integers (the action space is {space}), "
                                 f"got dtype {array.dtype}")
            return array.tolist()
        try:  # each row's action is checked against the space by the env
            per_row = list(iterate(batch_space(space, rows), actions))
        except (TypeError, KeyError, ValueError, AttributeError, IndexError) as error:
            per_row, why = [], f" ({type(error).__name__}: {error})"
        else:
            why = ""
        if len(per_row) != rows:
            raise ValueError(f"actions must be a batch of {rows} actions of single_action_space, "
                             f"one per row of the envs sent to, got {type(actions).__name__}{why}")
        return per_row

    def _env_ids(self, env_ids) -> list[int]:
        ids = (list(range(len(self.envs))) if env_ids is None
               else np.asarray(env_ids).reshape(-1).tolist())  # numpy ints as ints
        bad = [e for e in ids if not is_int(e) or not 0 <= e < len(self.envs)]
        if bad:
            raise ValueError(f"env_ids {bad} are not envs of the pool (0..{len(self.envs) - 1})")
        if len(set(ids)) != len(ids):
            raise ValueError(f"env_ids {ids} name an env twice")
        busy = [e for e in ids if self._flight[e] is not None or e in self._ready]
        if busy:
            raise RuntimeError(f"send() to envs {busy}, which are in flight: recv() their "
                               "results first")
        if not self._started:
            raise RuntimeError("send() before reset(): call reset() or async_reset() first")
        return ids

    def _env_mask(self, mask) -> list[bool]:
        m = len(self.envs)
        if mask is None:
            return [True] * m
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape not in ((m,), (self.num_envs,)):
            raise ValueError(f"reset_mask must be a bool array of one value per env ({m},) "
                             f"or per row ({self.num_envs},), got {mask.dtype} {mask.shape}")
        if mask.shape != (m,):
            per_env = mask.reshape(m, self.num_agents)
            if (per_env != per_env[:, :1]).any():
                raise ValueError("reset_mask per row must be the same for all rows of an env")
            mask = per_env[:, 0]
        return mask.tolist()

    def _check_idle(self, what: str):
        if self.closed:
            raise RuntimeError(f"{what} on a closed pool")
        busy = [e for e, f in enumerate(self._flight) if f is not None] + list(self._ready)
        if busy:
            raise RuntimeError(f"{what} while envs {sorted(busy)} are in flight: recv() them first")


def cpus_per_env(cpu_affinity, num_envs: int) -> list:
    """Each env's cpus= (None: not pinned) for the pool's cpu_affinity=: True shares out
    the CPUs this process may use, a list shares out those CPUs (craftium_ma.cpus)."""
    if cpu_affinity is False:
        return [None] * num_envs
    if cpu_affinity is True:
        return share_out(sorted(os.sched_getaffinity(0)), num_envs)
    try:
        cpus = cpu_list(cpu_affinity) if cpu_affinity is not None else ()
    except ValueError:
        cpus = ()
    if not cpus:
        raise ValueError(f"cpu_affinity must be True, False or a list of distinct CPUs this "
                         f"process may run on ({sorted(os.sched_getaffinity(0))}), got "
                         f"{cpu_affinity!r}")
    return share_out(cpus, num_envs)


def _batched_infos(rows_given: list[int], infos: list[dict], every: np.ndarray) -> dict:
    """Per-agent info dicts as Gymnasium's dict of arrays, each key with its mask "_key"
    (`every`, the read-only mask of all rows, for a key every row has): numbers, bools
    and tuples of numbers (position) in numeric arrays, anything else in object arrays."""
    out = {}
    rows = len(every)
    keys = list(infos[0]) if infos else []
    if len(infos) == rows and all(list(info) == keys for info in infos):
        # the common case: every row has the same keys (in the same order)
        for key, values in zip(keys, zip(*(info.values() for info in infos))):
            out[key], out["_" + key] = _array_of(values), every
        return out
    for key in dict.fromkeys(key for info in infos for key in info):
        where = [row for row, info in zip(rows_given, infos) if key in info]
        given = _array_of([info[key] for info in infos if key in info])
        array = np.zeros((rows, *given.shape[1:]), given.dtype)
        if given.dtype == object:
            array[:] = None
        array[where] = given
        mask = np.zeros(rows, bool)
        mask[where] = True
        out[key], out["_" + key] = array, mask
    return out


def _array_of(values) -> np.ndarray:
    """Numbers, bools and tuples of numbers in a numeric array; lists, strings, dicts
    and values of different shapes in an object array (one element per row)."""
    if not isinstance(values[0], (list, dict, str)):
        try:
            array = np.asarray(values)
        except ValueError:  # values of different shapes
            array = None
        if array is not None and array.dtype.kind in "biuf":
            return array
    array = np.empty(len(values), object)
    for i, value in enumerate(values):
        array[i] = value
    return array


def vector_env(task, num_envs: int, *, batch_size: int | None = None, seed=None,
               cpu_affinity=True, **env_kwargs) -> CraftiumVectorEnv:
    """`num_envs` envs of `task` (a task's id, or a craftium_ma.Scenario: its focal players)
    in one pool, as a gymnasium.vector.VectorEnv whose rows are agents (row
    e * num_agents + i is agent i of env e). `seed`: an int (env e gets
    seed + e) or one per env; `cpu_affinity`: pin each env's engine processes to its share
    of the CPUs (True: those this process may use; or a list of CPUs; False: no pinning);
    `env_kwargs` are parallel_env's. See docs/vector.md."""
    return CraftiumVectorEnv(task, num_envs, batch_size=batch_size, seed=seed,
                             cpu_affinity=cpu_affinity, **env_kwargs)
