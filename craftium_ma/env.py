"""PettingZoo environments over the lock-step engine.

CraftiumParallelEnv is the ParallelEnv; raw_env/env give the AEC form through
PettingZoo's own conversion. Processes start at the first reset(), so an env
that was never reset pickles, and every copy starts its own server and clients.
"""

from __future__ import annotations

import math
import os
import warnings

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .launcher import LaunchConfig
from .lockstep import AgentAction, LockstepSession
from .protocol import KEY_BITS, KEYS
from .tasks import Task, TaskError, find_task, load_task


def _frame_size(obs_size) -> tuple[int, int]:
    if isinstance(obs_size, int):
        obs_size = (obs_size, obs_size)
    try:
        height, width = (int(v) for v in obs_size)
    except (TypeError, ValueError):
        raise ValueError(f"obs_size must be an int or (height, width), got {obs_size!r}") from None
    if not (8 <= height <= 4096 and 8 <= width <= 4096):
        raise ValueError(f"obs_size {obs_size!r} is out of range (8 to 4096 pixels a side)")
    return height, width


class CraftiumParallelEnv(ParallelEnv):
    """Agents agent_0 .. agent_{n-1} act together in one Luanti world.

    Observations are the agents' first-person RGB frames (H x W x 3 uint8).
    infos[agent] holds the engine's position, yaw, pitch and hp of the agent's
    player plus whatever the task sets from Lua.
    """

    metadata = {"name": "craftium_ma", "render_modes": ["rgb_array", "human"],
                "is_parallelizable": True, "render_fps": 20}

    def __init__(self, task: str | None = None, *, task_dir: str | os.PathLike | None = None,
                 num_agents: int | None = None, max_cycles: int | None = None,
                 obs_size: int | tuple[int, int] | None = None, frameskip: int = 1,
                 render_mode: str | None = None, action_space: str = "discrete",
                 task_options: dict | None = None, frame_dtime: float = 0.05,
                 timeout: float = 60.0, pipelined: bool = False):
        if task_dir is not None:
            self.task: Task = load_task(task_dir)
        elif task is not None:
            self.task = find_task(task)
        else:
            raise TaskError("give a task id (see craftium_ma.tasks()) or task_dir=")
        t = self.task
        n = t.default_agents if num_agents is None else num_agents
        if not isinstance(n, int) or not t.min_agents <= n <= t.max_agents:
            raise ValueError(f"num_agents={num_agents!r}: task {t.id!r} takes "
                             f"{t.min_agents} to {t.max_agents} agents")
        self.max_cycles = t.max_cycles if max_cycles is None else max_cycles
        if not isinstance(self.max_cycles, int) or self.max_cycles < 1:
            raise ValueError(f"max_cycles must be a positive int, got {max_cycles!r}")
        if not isinstance(frameskip, int) or frameskip < 1:
            raise ValueError(f"frameskip must be a positive int, got {frameskip!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if action_space not in ("discrete", "full"):
            raise ValueError(f"action_space must be 'discrete' or 'full', got {action_space!r}")
        self.obs_size = _frame_size(t.obs_size if obs_size is None else obs_size)
        self.frameskip = frameskip
        self.pipelined = bool(pipelined)
        self.render_mode = render_mode
        self.action_mode = action_space
        self.task_options = dict(task_options or {})
        self.frame_dtime = frame_dtime
        self.timeout = timeout
        self.metadata = dict(self.metadata, name=t.env_id)

        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.agents = []
        obs_space = spaces.Box(0, 255, (*self.obs_size, 3), np.uint8)
        self._observation_spaces = {a: obs_space for a in self.possible_agents}
        self._action_spaces = {a: self._make_action_space() for a in self.possible_agents}
        size = t.state_size(n)
        if size:
            self.state_space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._session: LockstepSession | None = None
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
        restarted = self._session is not None and self._session.fault is not None
        if restarted:
            warnings.warn(f"craftium-ma: restarting the engine processes of {self.task.id!r}, "
                          f"whose last call failed: {self._session.fault}", RuntimeWarning,
                          stacklevel=2)
            self._session.close()
            self._session = None
        task_options = {**self.task.options, **self.task_options, **(options or {})}
        if self._session is None:
            self._session = LockstepSession(self.launch_config(), self.frameskip, self.pipelined)
            # The first reset of new engine processes is a warm-up: it waits for the task
            # area to load and does not show (its episode can differ from later ones in a
            # few pixels), so that every episode is one of a used env (docs/environments.md)
            self._session.reset(0, task_options, self.possible_agents, max_cycles=self.max_cycles)
        # Gymnasium's convention: a seed also fixes the episodes reset without one after it
        if seed is not None:
            seed = int(seed) % 2**31
            self._seeds = np.random.default_rng(seed)
        else:
            seed = int(self._seeds.integers(2**31))
        observations, result = self._session.reset(seed, task_options, self.possible_agents,
                                                   max_cycles=self.max_cycles)
        self.agents = list(self.possible_agents)
        self._cycles = 0
        self._frames = {a: o.frame for a, o in observations.items()}
        self._state = result.get("state")
        lua = result["agents"]
        return dict(self._frames), {a: dict(self._info(o, lua[a]), engine_restarted=restarted)
                                    for a, o in observations.items()}

    def step(self, actions: dict):
        if self._session is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if not self.agents:
            # Nothing left to step. SuperSuit's black_death_v3 (3.11) relies on this: it
            # only ends an episode after one more step on an env without agents.
            return {}, {}, {}, {}, {}
        unknown = set(actions) - set(self.possible_agents)
        if unknown:
            raise ValueError(f"actions for unknown agents {sorted(unknown)}; agents are {self.possible_agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"no action for live agents {missing}")
        engine_actions = {a: self._engine_action(a, actions[a]) for a in self.agents}

        observations, result = self._session.step(engine_actions)
        self._cycles += 1
        self._frames.update({a: o.frame for a, o in observations.items()})
        self._state = result.get("state")
        lua = result["agents"]
        out_of_time = self._cycles >= self.max_cycles
        rewards = {a: float(lua[a]["reward"]) for a in self.agents}
        terminations = {a: bool(lua[a]["terminated"]) for a in self.agents}
        truncations = {a: bool(lua[a]["truncated"]) or out_of_time for a in self.agents}
        infos = {a: self._info(observations[a], lua[a]) for a in self.agents}
        obs = {a: observations[a].frame for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def _engine_action(self, agent, action) -> AgentAction:
        space = self._action_spaces[agent]
        if not space.contains(action):
            raise ValueError(f"action {action!r} for {agent} is outside its action space {space}")
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

    def state(self) -> np.ndarray:
        if not hasattr(self, "state_space"):
            raise NotImplementedError(f"task {self.task.id!r} provides no global state")
        state = np.zeros(self.state_space.shape, np.float32)
        values = np.asarray(self._state or [], np.float32)[: state.size]
        state[: values.size] = values
        return state

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
        h, w = self.obs_size
        n = len(self.possible_agents)
        cols = math.ceil(math.sqrt(n))
        rows = math.ceil(n / cols)
        mosaic = np.zeros((rows * h, cols * w, 3), np.uint8)
        for i, agent in enumerate(self.possible_agents):
            if agent in self._frames:
                r, c = divmod(i, cols)
                mosaic[r * h:(r + 1) * h, c * w:(c + 1) * w] = self._frames[agent]
        return mosaic

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
            server_settings=self.task.server_settings, client_settings=self.task.client_settings,
            world_template=self.task.world_template)

    def engine_pids(self) -> dict[str, int]:
        """Process ids of the running Luanti server ("server") and each agent's
        client; empty before the first reset and after close()."""
        return self._session.pids if self._session is not None else {}

    def close(self):
        """Stop the engine processes and remove their files. Safe to call again."""
        if self._session is not None:
            self._session.close()
            self._session = None
        self.agents = []
        if self._window:
            import pygame
            pygame.display.quit()
        self._window = None

    def __getstate__(self):
        """A copy carries the configuration only; it starts its own processes."""
        return dict(self.__dict__, _session=None, _frames={}, _window=None, agents=[],
                    _seeds=None)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._seeds = np.random.default_rng()  # copies must not share episode seeds


def parallel_env(task: str | None = None, **kwargs) -> CraftiumParallelEnv:
    """The task as a PettingZoo ParallelEnv (see CraftiumParallelEnv for kwargs)."""
    return CraftiumParallelEnv(task, **kwargs)


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
