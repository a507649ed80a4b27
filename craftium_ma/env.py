"""PettingZoo environments over the lock-step engine.

CraftiumParallelEnv is the ParallelEnv; raw_env/env give the AEC form through
PettingZoo's own conversion. Processes start at the first reset(), so an env
that was never reset pickles, and every copy starts its own server and clients.
"""

from __future__ import annotations

import importlib
import ipaddress
import math
import numbers
import os
import re
import warnings
from collections import deque

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .humans import NAME as PLAYER_NAME, HumanLogin, human_names, login_address
from .launcher import LaunchConfig
from .lockstep import AgentAction, LockstepSession
from .protocol import KEY_BITS, KEYS
from .tasks import Task, TaskError, find_task, load_task


def _is_int(value) -> bool:
    """An int, numpy's too, but not a bool (True would pass as 1)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _positive_int(name: str, value) -> int:
    if not _is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def _cpu_list(cpus) -> tuple[int, ...]:
    """cpus=: None (no pinning) or distinct CPUs this process may run on."""
    if cpus is None:
        return ()
    allowed = os.sched_getaffinity(0)
    listed = list(cpus) if isinstance(cpus, (list, tuple, range)) else None
    if (not listed or not all(_is_int(c) for c in listed) or len(set(listed)) != len(listed)
            or not set(listed) <= allowed):
        raise ValueError(f"cpus must be None or distinct CPUs this process may run on "
                         f"(os.sched_getaffinity(0): {sorted(allowed)}), got {cpus!r}")
    return tuple(int(c) for c in listed)


def _frame_size(obs_size) -> tuple[int, int]:
    if _is_int(obs_size):
        obs_size = (obs_size, obs_size)
    if (not isinstance(obs_size, (tuple, list, np.ndarray)) or len(obs_size) != 2
            or not all(_is_int(v) for v in obs_size)):
        raise TypeError(f"obs_size must be an int or (height, width) of ints, "
                        f"got {type(obs_size).__name__} {obs_size!r}")
    height, width = (int(v) for v in obs_size)
    if not (8 <= height <= 4096 and 8 <= width <= 4096):
        raise ValueError(f"obs_size {obs_size!r} is out of range (8 to 4096 pixels a side)")
    return height, width


class CraftiumParallelEnv(ParallelEnv):
    """Agents agent_0 .. agent_{n-1} act together in one Luanti world.

    Observations are the agents' first-person RGB frames (H x W x 3 uint8).
    infos[agent] holds the engine's position, yaw, pitch and hp of the agent's
    player, the chat it heard since the last step, plus whatever the task sets
    from Lua. humans= lets people join the world with a client (docs/humans.md).
    """

    metadata = {"name": "craftium_ma", "render_modes": ["rgb_array", "human"],
                "is_parallelizable": True, "render_fps": 20}

    def __init__(self, task: str | None = None, *, task_dir: str | os.PathLike | None = None,
                 num_agents: int | None = None, max_cycles: int | None = None,
                 obs_size: int | tuple[int, int] | None = None, frameskip: int = 1,
                 render_mode: str | None = None, action_space: str = "discrete",
                 task_options: dict | None = None, frame_dtime: float = 0.05,
                 timeout: float = 60.0, pipelined: bool = False, humans=None,
                 bind_address: str = "127.0.0.1", cpus=None):
        if task is not None and task_dir is not None:
            raise ValueError(f"give a task id or task_dir=, not both (got {task!r} and "
                             f"task_dir={str(task_dir)!r})")
        if task_dir is not None:
            self.task: Task = load_task(task_dir)
        elif task is not None:
            self.task = find_task(task)
        else:
            raise TaskError("give a task id (see craftium_ma.tasks()) or task_dir=")
        t = self.task
        n = t.default_agents if num_agents is None else num_agents
        if not _is_int(n):
            raise TypeError(f"num_agents must be an int, got {type(n).__name__} {n!r}")
        if not t.min_agents <= n <= t.max_agents:
            raise ValueError(f"num_agents={num_agents!r}: task {t.id!r} takes "
                             f"{t.min_agents} to {t.max_agents} agents")
        n = int(n)
        self.max_cycles = _positive_int("max_cycles", t.max_cycles if max_cycles is None
                                        else max_cycles)
        frameskip = _positive_int("frameskip", frameskip)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if action_space not in ("discrete", "full"):
            raise ValueError(f"action_space must be 'discrete' or 'full', got {action_space!r}")
        self.obs_size = _frame_size(t.obs_size if obs_size is None else obs_size)
        self.frameskip = frameskip
        self.pipelined = bool(pipelined)
        self.render_mode = render_mode
        self.action_mode = action_space
        undeclared = t.undeclared_options(task_options or {}, "task_options")
        if undeclared:
            raise ValueError(undeclared)
        self.task_options = dict(task_options or {})
        self.frame_dtime = frame_dtime
        self.timeout = timeout
        self.metadata = dict(self.metadata, name=t.env_id)

        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.humans = human_names(humans)
        try:
            self.bind_address = str(ipaddress.ip_address(bind_address))
        except ValueError:
            raise ValueError(f"bind_address must be an IP address to listen on, got "
                             f"{bind_address!r}") from None
        self.cpus = _cpu_list(cpus)
        self._chat_outbox = deque()  # {"from", "text"} for the server to say next tick
        self._world_events = deque()
        self._humans_state = {h: _human_state({}) for h in self.humans}
        self.agents = []
        obs_space = spaces.Box(0, 255, (*self.obs_size, 3), np.uint8)
        self._observation_spaces = {a: obs_space for a in self.possible_agents}
        self._action_spaces = {a: self._make_action_space() for a in self.possible_agents}
        size = t.state_size(n)
        if size:
            self.state_space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._session: LockstepSession | None = None
        self._closed = False
        self._frames: dict[str, np.ndarray] = {}
        self._state = None
        self._cycles = 0
        self._seeds = np.random.default_rng()  # episode seeds of resets without one
        self._window = None

    def _make_action_space(self) -> spaces.Space:
        if self.action_mode == "discrete":
            return spaces.Discrete(len(self.task.actions))
        return spaces.Dict({**{k: spaces.Discrete(2) for k in KEYS},
                            "mouse": spaces.Box(-1.0, 1.0, (2,), np.float32)})

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_spaces[agent]

    # -- episode -----------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None):
        # only a warning: PettingZoo's API test resets with options of its own
        undeclared = self.task.undeclared_options(options or {}, "reset(options=...)")
        if undeclared:
            warnings.warn(undeclared, stacklevel=2)
        restarted = self._session is not None and self._session.fault is not None
        if restarted:
            warnings.warn(f"craftium-ma: restarting the engine processes of {self.task.id!r}, "
                          f"whose last call failed: {self._session.fault}", RuntimeWarning,
                          stacklevel=2)
            self._session.close()
            self._session = None
        task_options = {**self.task.options, **self.task_options, **(options or {})}
        # Gymnasium's convention: a seed also fixes the episodes reset without one after it
        if seed is not None:
            seed = int(seed) % 2**31
            self._seeds = np.random.default_rng(seed)
        else:
            seed = int(self._seeds.integers(2**31))
        task_options = self._episode_options(task_options, seed)
        if self._session is None:
            self._session = LockstepSession(self.launch_config(), self.frameskip, self.pipelined,
                                            chat_outbox=self._chat_outbox)
            # The first reset of new engine processes is a warm-up: it waits for the task
            # area to load and does not show (its episode can differ from later ones in a
            # few pixels), so that every episode is one of a used env (docs/environments.md)
            self._session.reset(0, task_options, self.possible_agents, max_cycles=self.max_cycles)
        observations, result = self._session.reset(seed, task_options, self.possible_agents,
                                                   max_cycles=self.max_cycles)
        self.agents = list(self.possible_agents)
        self._cycles = 0
        self._frames = {a: o.frame for a, o in observations.items()}
        self._state = self._checked_state(result.get("state"))
        lua = result["agents"]
        heard = self._take_world_news()
        return dict(self._frames), {a: dict(self._info(o, lua[a]), engine_restarted=restarted,
                                            chat=heard[a])
                                    for a, o in observations.items()}

    def _episode_options(self, task_options: dict, seed: int) -> dict:
        """The options Lua gets for the episode of this seed; a task's env class may draw
        more from them (craftium_ma.envs.xland_v0 draws its world)."""
        return task_options

    def step(self, actions: dict):
        engine_actions = self._engine_actions(actions)
        if not engine_actions:
            # Nothing left to step. SuperSuit's black_death_v3 (3.11) relies on this: it
            # only ends an episode after one more step on an env without agents.
            return {}, {}, {}, {}, {}
        return self._step_result(*self._session.step(engine_actions))

    def _engine_actions(self, actions: dict) -> dict[str, AgentAction]:
        """step()'s actions checked and turned into the engine's, for the live agents."""
        if self._session is None:
            if self._closed:
                raise RuntimeError("step() after close(): the env is closed; reset() starts "
                                   "it again")
            raise RuntimeError("step() before reset(): call reset() first")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict {{agent: action}}, got "
                            f"{type(actions).__name__}")
        if not self.agents:
            return {}
        unknown = set(actions) - set(self.possible_agents)
        if unknown:
            raise ValueError(f"actions for unknown agents {sorted(unknown)}; agents are {self.possible_agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"no action for live agents {missing}")
        return {a: self._engine_action(a, actions[a]) for a in self.agents}

    def _step_result(self, observations: dict, result: dict):
        """step()'s return value from the engine's answer to the step."""
        self._cycles += 1
        self._frames.update({a: o.frame for a, o in observations.items()})
        self._state = self._checked_state(result.get("state"))
        lua = result["agents"]
        out_of_time = self._cycles >= self.max_cycles
        rewards = {a: float(lua[a]["reward"]) for a in self.agents}
        terminations = {a: bool(lua[a]["terminated"]) for a in self.agents}
        truncations = {a: bool(lua[a]["truncated"]) or out_of_time for a in self.agents}
        heard = self._take_world_news()
        infos = {a: dict(self._info(observations[a], lua[a]), chat=heard[a]) for a in self.agents}
        obs = {a: observations[a].frame for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def _engine_action(self, agent, action) -> AgentAction:
        space = self._action_spaces[agent]
        if not space.contains(action):
            raise ValueError(f"action {action!r} for {agent} is outside its action space "
                             f"{space}{_why_outside(space, action)}")
        if self.action_mode == "discrete":
            a = self.task.actions[int(action)]
            return AgentAction(a.keys, a.dx, a.dy)
        keys = sum(KEY_BITS[k] for k in KEYS if action[k])
        dx, dy = (float(v) for v in action["mouse"])
        return AgentAction(keys, dx, dy)

    @staticmethod
    def _info(observation, lua_result) -> dict:
        lua_info = lua_result.get("info") or {}
        return {"position": observation.position, "yaw": observation.yaw,
                "pitch": observation.pitch, "hp": lua_result["hp"],
                **(lua_info if isinstance(lua_info, dict) else {})}

    def _checked_state(self, values) -> np.ndarray | None:
        """The state vector Lua returned, checked against the manifest's size."""
        values = np.asarray(values or [], np.float32)
        expected = self.state_space.shape[0] if hasattr(self, "state_space") else 0
        if values.ndim != 1 or values.size != expected:
            t = self.task
            raise TaskError(
                f"task {t.id!r}: its Lua state vector has {values.size} values, its manifest "
                f"says {expected} (state = {{ shared = {t.state_shared}, per_agent = "
                f"{t.state_per_agent} }} with {len(self.possible_agents)} agents, in "
                f"{t.directory / 'task.toml'})")
        return values if expected else None

    def state(self) -> np.ndarray:
        if not hasattr(self, "state_space"):
            raise NotImplementedError(f"task {self.task.id!r} provides no global state")
        if self._state is None:
            raise RuntimeError("state() before reset(): call reset() first")
        return self._state.copy()

    # -- humans and chat (docs/humans.md) ---------------------------------------------

    def human_login(self, name: str) -> HumanLogin:
        """Address, port, name and password with which the human `name` joins; the
        password is new at every start of the engine processes (the first reset)."""
        if name not in self.humans:
            raise ValueError(f"{name!r} is not a human of this env; its humans are "
                             f"{', '.join(self.humans) or 'none (pass humans=...)'}")
        if self._session is None:
            raise RuntimeError("human_login() before reset(): the server starts at the "
                               "first reset")
        p = self._session.processes
        return HumanLogin(login_address(self.bind_address), p.port, name, p.password(name),
                          p.password_file(name))

    def post_chat(self, text: str, sender: str = "viewer"):
        """Say text in-game as sender (a human, the viewer), at the next step; it
        reaches that step's infos[agent]["chat"] of every agent, or of agent_k alone
        when it starts with "@agent_k". Safe to call from another thread."""
        _check_chat_text(text)
        if not isinstance(sender, str) or not PLAYER_NAME.fullmatch(sender):
            raise ValueError(f"sender must be a name of 1 to 19 of A-Z a-z 0-9 _ -, got "
                             f"{sender!r}")
        if sender in self.possible_agents:
            raise ValueError(f"sender {sender!r} is an agent: env.say({sender!r}, text) "
                             "speaks for it")
        self._chat_outbox.append({"from": sender, "text": text})

    def say(self, agent: str, text: str):
        """The agent's player says text in the in-game chat at the next step; the
        other agents hear it as they hear a human (see post_chat)."""
        if agent not in self.possible_agents:
            raise ValueError(f"say(): unknown agent {agent!r}; agents are {self.possible_agents}")
        _check_chat_text(text)
        self._chat_outbox.append({"from": agent, "text": text})

    def world_events(self) -> list[dict]:
        """What happened in the world since the last call, in order: chat
        ({"type": "chat", "from", "to" (an agent, or None for all), "text", "step"}),
        humans joining and leaving ({"type": "human_joined" | "human_left", "name"})."""
        return [self._world_events.popleft() for _ in range(len(self._world_events))]

    def humans_state(self) -> dict[str, dict]:
        """Each human's position [x, y, z], yaw (degrees), hp, score in the episode
        and whether connected, as of the last step (position and yaw are None until
        it first joined)."""
        return {h: dict(s) for h, s in self._humans_state.items()}

    def _take_world_news(self) -> dict[str, list[dict]]:
        """Take what the ticks since the last call reported of the world: queue its
        events, update humans_state(), and return each agent's chat."""
        heard = {a: [] for a in self.possible_agents}
        news, self._session.world_news = self._session.world_news, []
        for part in news:
            for event in part.get("events") or []:
                self._world_events.append({"type": event["type"], "name": event["name"]})
            for message in part.get("heard") or []:
                to, text = self._addressee(message["text"])
                sender = message["from"]
                self._world_events.append({"type": "chat", "from": sender, "to": to,
                                           "text": text, "step": self._cycles})
                for agent in [to] if to else self.possible_agents:
                    if agent != sender:
                        heard[agent].append({"from": sender, "text": text, "step": self._cycles})
            if part.get("humans"):
                self._humans_state = {h: _human_state(part["humans"].get(h) or {})
                                      for h in self.humans}
        return heard

    def _addressee(self, text: str) -> tuple[str | None, str]:
        """(agent_k, the rest) for "@agent_k rest"; (None, text) otherwise."""
        m = _ADDRESSED.match(text)
        if m and m[1] in self.possible_agents:
            return m[1], m[2]
        return None, text

    # -- rendering ---------------------------------------------------------------------

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        mosaic = self._mosaic()
        if self.render_mode == "rgb_array":
            return mosaic
        self._show(mosaic)
        return None

    def _mosaic(self) -> np.ndarray:
        blank = np.zeros((*self.obs_size, 3), np.uint8)
        return mosaic([self._frames.get(a, blank) for a in self.possible_agents])

    def _show(self, mosaic: np.ndarray):
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            if self._window is None:
                gymnasium.logger.warn("render_mode='human' needs a display; none found, not showing")
                self._window = False
            return
        try:
            import pygame
        except ImportError:
            raise ImportError("render_mode='human' needs pygame: pip install pygame") from None
        if not self._window:
            pygame.init()
            self._window = pygame.display.set_mode(mosaic.shape[1::-1])
        pygame.event.pump()
        self._window.blit(pygame.surfarray.make_surface(mosaic.swapaxes(0, 1)), (0, 0))
        pygame.display.flip()

    # -- lifecycle ---------------------------------------------------------------------

    def launch_config(self) -> LaunchConfig:
        """What the engine processes of this env are started with."""
        return LaunchConfig(
            agents=list(self.possible_agents), obs_size=self.obs_size, mods=[self.task.mod],
            frame_dtime=self.frame_dtime, timeout=self.timeout,
            turn_degrees=self.task.turn_degrees,
            server_settings={**self.task.server_settings, **self.task.bridge_settings()},
            client_settings=self.task.client_settings, world_template=self.task.world_template,
            humans=list(self.humans), bind_address=self.bind_address, cpus=self.cpus)

    def engine_pids(self) -> dict[str, int]:
        """Process ids of the running Luanti server ("server") and each agent's
        client; empty before the first reset and after close()."""
        return self._session.pids if self._session is not None else {}

    def close(self):
        """Stop the engine processes and remove their files. Safe to call again."""
        if self._session is not None:
            self._session.close()
            self._session = None
            self._closed = True
            self._humans_state = {h: dict(s, connected=False) for h, s in self._humans_state.items()}
        self.agents = []
        if self._window:
            import pygame
            pygame.display.quit()
        self._window = None

    def __getstate__(self):
        """A copy carries the configuration only; it starts its own processes."""
        return dict(self.__dict__, _session=None, _closed=False, _frames={}, _window=None,
                    agents=[], _seeds=None, _chat_outbox=deque(), _world_events=deque())

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._seeds = np.random.default_rng()  # copies must not share episode seeds


_ADDRESSED = re.compile(r"@(\S+)\s*(.*)", re.S)


def _check_chat_text(text):
    if not isinstance(text, str):
        raise TypeError(f"chat text must be a str, got {type(text).__name__} {text!r}")
    if not text.strip() or "\n" in text or "\r" in text:
        raise ValueError(f"chat text must be one line that is not blank, got {text!r}")


def _human_state(lua: dict) -> dict:
    """A human's state as the bridge mod reports it, typed for Python."""
    position, yaw = lua.get("position"), lua.get("yaw")
    return {"position": [float(v) for v in position] if position else None,
            "yaw": float(yaw) if yaw is not None else None, "hp": int(lua.get("hp", 0)),
            "score": float(lua.get("score", 0)), "connected": bool(lua.get("connected", False))}


def mosaic_columns(n: int) -> int:
    """Columns of the near-square grid of n frames."""
    return math.ceil(math.sqrt(n))


def mosaic(frames: list[np.ndarray]) -> np.ndarray:
    """The frames (all of one size) tiled row by row in a near-square grid (render()'s,
    the viewer's)."""
    h, w, c = frames[0].shape
    cols = mosaic_columns(len(frames))
    grid = np.zeros((math.ceil(len(frames) / cols) * h, cols * w, c), np.uint8)
    for i, frame in enumerate(frames):
        r, col = divmod(i, cols)
        grid[r * h:(r + 1) * h, col * w:(col + 1) * w] = frame
    return grid


def _why_outside(space: spaces.Space, action) -> str:
    """What about an action outside the space is wrong, where it can be said."""
    if isinstance(space, spaces.Discrete):
        shape = np.shape(action)
        if shape != ():
            return f": it has shape {shape}, the space takes one int"
        if not _is_int(action):
            return f": it is a {type(action).__name__}, the space takes an int"
        return f": it takes 0 to {space.n - 1}"
    if not isinstance(action, dict):
        return f": it is a {type(action).__name__}, the space takes a dict"
    missing, extra = set(space.spaces) - set(action), set(action) - set(space.spaces)
    if missing or extra:
        return f": keys missing {sorted(missing)}, unknown {sorted(extra, key=str)}"
    for key, sub in space.spaces.items():
        if not sub.contains(action[key]):
            if isinstance(sub, spaces.Box) and np.shape(action[key]) != sub.shape:
                return f": {key!r} has shape {np.shape(action[key])}, the space takes {sub.shape}"
            return f": {key!r} is outside {sub}"
    return ""


def parallel_env(task: str | None = None, **kwargs) -> CraftiumParallelEnv:
    """The task as a PettingZoo ParallelEnv (see CraftiumParallelEnv for kwargs); a task
    whose manifest names an env class (env_class = "module:Class") gets that subclass."""
    return _env_class(task, kwargs.get("task_dir"))(task, **kwargs)


def _env_class(task, task_dir) -> type[CraftiumParallelEnv]:
    """The manifest's env class; CraftiumParallelEnv where there is none, or where the task
    cannot be loaded (its constructor then says why)."""
    try:
        spec = load_task(task_dir) if task_dir is not None else find_task(task)
    except (TaskError, TypeError):
        return CraftiumParallelEnv
    if task is not None and task_dir is not None or spec.env_class is None:
        return CraftiumParallelEnv
    module, _, name = spec.env_class.partition(":")
    return getattr(importlib.import_module(module), name)


def raw_env(task: str | None = None, **kwargs):
    """The task as an AEC env, converted from the parallel one."""
    return parallel_to_aec_wrapper(parallel_env(task, **kwargs))


def env(task: str | None = None, **kwargs):
    """The task as an AEC env with PettingZoo's usual wrappers (order enforcing)."""
    return OrderEnforcingWrapper(raw_env(task, **kwargs))


def task_module(task_id: str):
    """env, parallel_env and raw_env of one task, for its craftium_ma.envs module."""
    def _env(**kwargs):
        return env(task_id, **kwargs)

    def _parallel_env(**kwargs):
        return parallel_env(task_id, **kwargs)

    def _raw_env(**kwargs):
        return raw_env(task_id, **kwargs)

    for f, base in ((_env, env), (_parallel_env, parallel_env), (_raw_env, raw_env)):
        f.__doc__ = f"{base.__doc__} Task: {task_id}."
    return _env, _parallel_env, _raw_env
