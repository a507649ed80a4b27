"""Ray RLlib (new API stack, Ray 2.60) adapter for craftium-ma tasks.

    from craftium_ma.integrations.rllib import ppo_config
    config = ppo_config("small_room", num_env_runners=2, num_agents=2, max_cycles=100)
    algo = config.build_algo()
    print(algo.train()["env_runners"]["num_env_steps_sampled"])

`register_task()` registers a task with RLlib's env registry under a name and returns the
name; `ppo_config()` does that and builds a PPOConfig with one RLModule for all agents
(policies="shared", parameter sharing), one per team (policies="per_team": each agent maps
to its team's, `env.team_of(agent)`, known before any reset) or one per agent
(policies="per_agent"). RLlib reports each module's returns
(result["env_runners"]["module_episode_returns_mean"][module]): per team, the team's.

Self-play (docs/scaling.md#self-play): ppo_config(..., policies="per_team", self_play_every=k)
trains the first team's module alone; every other team plays a frozen snapshot of it,
refreshed every k iterations (FrozenOpponents).

Processes. RLlib builds the env inside each EnvRunner actor (a separate Ray worker process,
on whichever node Ray placed it). A craftium-ma env starts its Luanti server and clients at
its first reset, in a private temporary directory and on a free port of that node, so every
EnvRunner -- and every sub-env of an EnvRunner (`num_envs_per_env_runner`) -- runs its own
engine processes, and instances never collide. `EnvRunner.stop()` (called by `algo.stop()`)
closes the envs, which stops their engine processes; if the worker process dies instead, the
env's reaper removes them.

Seeds. Each env gets a seed stream of its own, derived from `(env_config["seed"],
worker_index, vector_index, instance)` (`instance` numbers the envs built in one process:
RLlib's new stack hands the same EnvContext, vector_index 0, to all sub-envs of a runner).
A `reset(seed=s)` from RLlib (its `config.debugging(seed=...)` plus the worker index, or the
env checker's fixed 42) re-seeds the stream with `s` mixed in, so envs stay distinct; each
episode's seed is then drawn from the stream. Without `env_config["seed"]` the streams start
from fresh entropy.

Observations. RLlib's default CNN encoder feeds the observations to torch's Conv2d as they
come, so uint8 frames fail there. With `scale_obs=True` (the default) the env returns
float32 frames in [0, 1] (space `Box(0, 1, (H, W, 3), float32)`); `scale_obs=False` keeps
uint8 frames for RLModules that convert themselves. The engine renders at `obs_size`
directly, so no resize is needed: RLlib's default conv filters exist for 42x42, 64x64, 84x84
and 96x96 frames (`obs_size=64` is the tasks' default); any other size needs `conv_filters`.
"""

from __future__ import annotations

import collections
import functools
import os
import secrets
import socket
import time

import numpy as np
from gymnasium import spaces

try:
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.tune.registry import register_env
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "craftium_ma.integrations.rllib needs Ray RLlib: pip install 'craftium-ma[rllib]' "
        f"(ray[rllib] and torch); importing it failed with: {e}") from e

from ..env import CraftiumParallelEnv
from ..make import parallel_env
from ..validate import positive_int

#: RLlib's built-in conv filter stacks (ray.rllib.models.utils.get_filter_config) cover these.
DEFAULT_CONV_SIZES = ((42, 42), (64, 64), (84, 84), (96, 96))
#: The module id of the shared policy in ppo_config().
SHARED_MODULE = "shared"
# Options of the adapter itself, taken out of env_config before the rest goes to the env.
ADAPTER_KEYS = ("seed", "scale_obs")

_instances = collections.Counter()  # envs built in this process, by worker index


class CraftiumMultiAgentEnv(MultiAgentEnv):
    """A craftium-ma ParallelEnv as an RLlib MultiAgentEnv.

    Like RLlib's ParallelPettingZooEnv, but it does not reset the env in its constructor
    (RLlib builds envs to read their spaces; the engine starts at the first reset), it ends
    the episode (`__all__`) exactly when the last agent is done, even when agents finish
    in the same step differently (one terminated, one truncated), it can scale frames to
    float32, and it draws per-env episode seeds (see the module docstring).
    """

    def __init__(self, par_env: CraftiumParallelEnv, *, scale_obs: bool = True,
                 seed: int | None = None, worker_index: int = 0, vector_index: int = 0,
                 instance: int = 0):
        super().__init__()
        self.par_env = par_env
        self.scale_obs = bool(scale_obs)
        self.possible_agents = list(par_env.possible_agents)
        self.agents = []
        self._agent_ids = set(self.possible_agents)
        self.observation_spaces = {a: self._obs_space(par_env.observation_space(a))
                                   for a in self.possible_agents}
        self.action_spaces = {a: par_env.action_space(a) for a in self.possible_agents}
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self.worker_index = int(worker_index or 0)
        self.vector_index = int(vector_index or 0)
        self.instance = int(instance)
        self.base_seed = secrets.randbits(63) if seed is None else int(seed)
        self._episode_seeds = self._seed_stream(None)
        self.episode_seed: int | None = None
        self.env_steps = 0  # steps taken over this env's lifetime
        self.episodes = 0
        self.new_window()

    def _obs_space(self, space: spaces.Box) -> spaces.Box:
        if not self.scale_obs:
            return space
        return spaces.Box(0.0, 1.0, space.shape, np.float32)

    def _obs(self, frames: dict) -> dict:
        if self.scale_obs:
            return {a: np.asarray(f, np.float32) * np.float32(1 / 255) for a, f in frames.items()}
        # copies: the env's frames are read-only views of the received message
        return {a: np.array(f) for a, f in frames.items()}

    def _seed_stream(self, seed: int | None) -> np.random.Generator:
        entropy = [self.base_seed, self.worker_index, self.vector_index, self.instance]
        if seed is not None:
            entropy.append(int(seed) % 2**63)
        return np.random.default_rng(entropy)

    def new_window(self):
        """Start counting steps and time afresh (see engine_info)."""
        self._window_steps = 0
        self._window_start = self._window_end = None

    def _timed(self, started: float, steps: int):
        if self._window_start is None:
            self._window_start = started
        self._window_end = time.monotonic()
        self._window_steps += steps
        self.env_steps += steps

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        started = time.monotonic()
        if seed is not None:
            self._episode_seeds = self._seed_stream(seed)
        self.episode_seed = int(self._episode_seeds.integers(2**31))
        frames, infos = self.par_env.reset(seed=self.episode_seed, options=options)
        self.agents = list(self.par_env.agents)
        self.episodes += 1
        self._timed(started, 0)
        return self._obs(frames), infos

    def step(self, action_dict: dict):
        started = time.monotonic()
        frames, rewards, terminations, truncations, infos = self.par_env.step(action_dict)
        self._timed(started, 1)
        self.agents = list(self.par_env.agents)
        done = not self.agents
        truncated = done and any(truncations.values())
        terminations["__all__"] = done and not truncated
        truncations["__all__"] = truncated
        return self._obs(frames), rewards, terminations, truncations, infos

    def render(self):
        return self.par_env.render()

    def close(self):
        self.par_env.close()

    def engine_info(self) -> dict:
        """Where this env runs (host, worker pid, RLlib indexes, engine pids) and how much
        it stepped: `env_steps` and `episodes` (resets) in its lifetime, `window_steps` and
        `window_s` since new_window(): the steps and the seconds from the start of the first
        reset or step to the end of the last one (the RLModule's inference in between
        included), which over one sampling phase measure the sampling throughput."""
        pids = list(self.par_env.engine_pids().values())  # server, then the clients
        directory = self.par_env.engine_directory
        directory = str(directory) if directory is not None else None
        return {"host": socket.gethostname(), "pid": os.getpid(),
                "worker_index": self.worker_index, "vector_index": self.vector_index,
                "instance": self.instance, "engine_pids": pids, "engine_dir": directory,
                "env_steps": self.env_steps, "episodes": self.episodes,
                "episode_seed": self.episode_seed, "window_steps": self._window_steps,
                "window_s": (0.0 if self._window_start is None
                             else self._window_end - self._window_start)}


def make_env(task: str | None, bound: dict, env_context=None) -> CraftiumMultiAgentEnv:
    """The env creator register_task() registers: `bound` are register_task's kwargs,
    `env_context` RLlib's EnvContext (a dict of env_config plus worker_index, vector_index)."""
    config = {**bound, **dict(env_context or {})}
    adapter = {k: config.pop(k) for k in ADAPTER_KEYS if k in config}
    worker_index = getattr(env_context, "worker_index", 0) or 0
    vector_index = getattr(env_context, "vector_index", 0) or 0
    instance = _instances[worker_index]
    _instances[worker_index] += 1
    return CraftiumMultiAgentEnv(parallel_env(task, **config),
                                 worker_index=worker_index, vector_index=vector_index,
                                 instance=instance, **adapter)


def register_task(task: str | None = None, name: str | None = None, **env_kwargs) -> str:
    """Register a task with RLlib (ray.tune.registry.register_env); returns the env name.

    env_kwargs are CraftiumParallelEnv's (num_agents, max_cycles, obs_size, frameskip,
    task_dir, ...) plus the adapter's `scale_obs` (default True: float32 frames in [0, 1])
    and `seed` (base of the per-env seed streams). `config.environment(env_config=...)`
    adds to or overrides them per run. They are checked here by building the env once,
    which starts no process. Name: `name`, else "craftium_ma/<task id>".
    """
    config = {k: v for k, v in env_kwargs.items() if k not in ADAPTER_KEYS}
    probe = parallel_env(task, **config)  # raises TaskError / ValueError early
    name = name or f"craftium_ma/{probe.task.id}"
    register_env(name, functools.partial(make_env, task, dict(env_kwargs)))
    return name


def map_to_shared(agent_id, episode=None, **kwargs) -> str:
    """policy_mapping_fn: every agent acts with the one shared module."""
    return SHARED_MODULE


#: ppo_config()'s policies=: one module for all agents, one per team, one per agent.
POLICIES = ("shared", "per_team", "per_agent")


class AgentModules:
    """policy_mapping_fn of a fixed agent -> module id table (picklable, for Ray)."""

    def __init__(self, modules: dict[str, str]):
        self.modules = dict(modules)

    def __call__(self, agent_id, episode=None, **kwargs) -> str:
        return self.modules[agent_id]


def agent_modules(env, policies: str) -> dict[str, str]:
    """Each agent's module id under `policies` (POLICIES) for a craftium-ma env."""
    if policies not in POLICIES:
        raise ValueError(f"policies must be one of {', '.join(POLICIES)}, got {policies!r}")
    if policies == "per_team":
        teams = {a: env.team_of(a) for a in env.possible_agents}
        if None in teams.values():
            raise ValueError(f"policies='per_team': task {env.task.id!r} has no teams with "
                             f"these options (teams = [...] in its manifest); use 'shared' or "
                             "'per_agent'")
        return teams
    return {a: SHARED_MODULE if policies == "shared" else a for a in env.possible_agents}


class FrozenOpponents(RLlibCallback):
    """Self-play: the modules in `frozen` are snapshots of module `trained`, copied from
    the learner every `every` training iterations (and at the first) and sent to the env
    runners; they are not trained themselves. Build it with frozen_opponents()."""

    trained: str = ""
    frozen: tuple[str, ...] = ()
    every: int = 1

    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
        if (algorithm.iteration - 1) % self.every:
            return
        state = algorithm.learner_group.get_weights([self.trained])[self.trained]
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {
            module: state for module in self.frozen}}}})
        algorithm.env_runner_group.sync_weights(
            from_worker_or_learner_group=algorithm.learner_group, policies=list(self.frozen),
            inference_only=True)
        result["frozen_opponents_refreshed_at"] = algorithm.iteration


def frozen_opponents(trained: str, frozen, every: int) -> type[FrozenOpponents]:
    """A FrozenOpponents callback class for config.callbacks(...)."""
    return type("FrozenOpponents", (FrozenOpponents,),
                {"trained": trained, "frozen": tuple(frozen), "every": int(every)})


def ppo_config(task: str | None = None, *, num_env_runners: int = 2,
               num_envs_per_env_runner: int = 1, num_cpus_per_env_runner: float = 1,
               train_batch_size: int = 400, minibatch_size: int = 100, num_epochs: int = 2,
               lr: float = 3e-4, conv_filters: list | None = None,
               head_fcnet_hiddens: tuple[int, ...] = (64,), seed: int | None = None,
               scale_obs: bool = True, env_name: str | None = None, policies: str = "shared",
               self_play_every: int | None = None, **env_kwargs):
    """A PPOConfig (new API stack) for a task: with policies="shared" one RLModule,
    SHARED_MODULE, that every agent maps to; "per_team" one per team, named after it;
    "per_agent" one per agent. All are trained, but with self_play_every=k (per_team): then
    the first team's module alone, the others being frozen snapshots of it refreshed every
    k iterations (FrozenOpponents).

    train_batch_size counts env steps (each carries one agent step per live agent); RLlib
    splits it evenly over the env runners ("auto" rollout_fragment_length). The learner
    runs in the driver process (num_learners=0). conv_filters defaults to RLlib's stack for
    the frame size, which exists for DEFAULT_CONV_SIZES; give `[[out_channels, kernel,
    stride], ...]` for other sizes. seed seeds RLlib (torch, numpy) and the envs' seed
    streams. Returns the config; change it further with its usual methods.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_kwargs = {**env_kwargs, "scale_obs": scale_obs}
    if seed is not None:
        env_kwargs["seed"] = seed
    name = register_task(task, env_name, **env_kwargs)
    probe = parallel_env(task, **{k: v for k, v in env_kwargs.items() if k not in ADAPTER_KEYS})
    if conv_filters is None and tuple(probe.obs_size) not in DEFAULT_CONV_SIZES:
        raise ValueError(f"RLlib has no default conv filters for {probe.obs_size} frames: use "
                         f"obs_size in {[s[0] for s in DEFAULT_CONV_SIZES]} or give conv_filters")
    model = DefaultModelConfig(conv_filters=conv_filters,
                               head_fcnet_hiddens=list(head_fcnet_hiddens),
                               vf_share_layers=True)
    modules = agent_modules(probe, policies)
    module_ids = list(dict.fromkeys(modules.values()))  # in agent order: the first team first
    trained = module_ids
    if self_play_every is not None:
        if policies != "per_team":
            raise ValueError("self_play_every needs policies='per_team' (the first team "
                             "learns, the others play its frozen snapshots)")
        positive_int("self_play_every", self_play_every)
        trained = module_ids[:1]
    config = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(env=name)
        .env_runners(num_env_runners=num_env_runners,
                     num_envs_per_env_runner=num_envs_per_env_runner,
                     num_cpus_per_env_runner=num_cpus_per_env_runner,
                     rollout_fragment_length="auto")
        .multi_agent(policies=set(module_ids), policy_mapping_fn=AgentModules(modules),
                     policies_to_train=trained)
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={m: RLModuleSpec(model_config=model) for m in module_ids}))
        .training(train_batch_size_per_learner=train_batch_size,
                  minibatch_size=minibatch_size, num_epochs=num_epochs, lr=lr)
        .learners(num_learners=0)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    if self_play_every is not None:
        config = config.callbacks(frozen_opponents(trained[0], module_ids[1:], self_play_every))
    return config


def env_runner_info(algo, new_window: bool = False) -> list[dict]:
    """engine_info() of every env of every remote EnvRunner of a built algorithm, with the
    runner's worker index added as `runner`. new_window=True then restarts the envs' step
    and time windows: call it before and after algo.train() to get the iteration's
    sampling per env."""
    def collect(runner):
        if runner.env is None:
            return []
        infos = []
        for e in runner.env.envs:
            infos.append(dict(e.unwrapped.engine_info(), runner=runner.worker_index))
            if new_window:
                e.unwrapped.new_window()
        return infos

    results = algo.env_runner_group.foreach_env_runner(collect, local_env_runner=False)
    return [info for infos in results for info in infos]
