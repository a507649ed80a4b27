"""BenchMARL (1.5) adapter: every craftium-ma task as a BenchMARL task.

    from benchmarl.algorithms import IppoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models import CnnConfig
    from craftium_ma.integrations.benchmarl import CraftiumTask

    task = CraftiumTask.COMMONS_HARVEST.get_task({"num_agents": 2, "obs_size": 32})
    config = ExperimentConfig.get_from_yaml()
    config.render = False  # headless: no video of the evaluation episodes
    Experiment(task, IppoConfig.get_from_yaml(), CnnConfig.get_from_yaml(), seed=0,
               config=config).run()

CraftiumTask has one member per shipped task (its id in capitals); a task's config is the
keyword arguments of craftium_ma.parallel_env (num_agents, obs_size, max_cycles,
task_options, ...), empty for the manifest's defaults. A task folder of your own is
CraftiumTaskClass("my_task", {"task_dir": "path/to/my_task"}).

The env is craftium_ma.parallel_env(...) wrapped by TorchRL's PettingZooWrapper:
- groups: one per team where the task has teams (env.team_of), named after the team;
  otherwise one group, "agents";
- observations: the frames, uint8 (H, W, 3) under (group, "observation"); BenchMARL's CNN
  casts them to float itself;
- infos: the task's fixed info schema under (group, "info") (docs/environments.md#infos);
- state: state() under "state" where the task has one, the input of centralised critics
  (MAPPO's); its spec is state_spec();
- actions: discrete only; render off (has_render is False);
- episodes: TorchRL resets a parallel env when any agent is done, so a BenchMARL episode
  ends with its first agent's; with "done_on_any": False in the task's config it goes on
  until every agent is done, a done agent's rows padded (zeros, reward 0, done) and marked
  by TorchRL's (group, "mask"), which BenchMARL's losses do not read;
- seeds: the k-th env a task object builds (k = 0, 1, ...) gets the experiment's seed + k,
  so that BenchMARL's evaluation env and its n_envs_per_worker training envs play
  different episodes.

save_policy(experiment, path) writes a group's trained policy as a checkpoint that
`craftium-ma evaluate` and the scenarios play (torch.export: no BenchMARL needed there).
"""

from __future__ import annotations

import copy
import io
import itertools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import torch
    import yaml
    from benchmarl.environments import Task, TaskClass
    from tensordict import TensorDict
    from torchrl.data import Composite
    from torchrl.envs import EnvBase, PettingZooWrapper
except ImportError as e:
    raise ImportError("craftium_ma.integrations.benchmarl needs BenchMARL: pip install "
                      f"'craftium-ma[benchmarl]'; importing it failed with: {e}") from e

from ..make import parallel_env
from ..models import probe_input
from ..tasks import tasks

ONE_GROUP = "agents"  # the group of a task without teams
WRAPPER_OPTIONS = {"done_on_any": True}  # config keys for TorchRL's wrapper, and defaults


def env_config(config: dict) -> dict:
    """A task config without the wrapper's options: parallel_env's keyword arguments."""
    return {k: v for k, v in config.items() if k not in WRAPPER_OPTIONS}


def group_map(env) -> dict[str, list[str]]:
    """The agents of a craftium-ma ParallelEnv by team (teams without agents left out), or
    all in ONE_GROUP where the task has no teams."""
    groups: dict[str, list[str]] = {}
    for agent in env.possible_agents:
        groups.setdefault(env.team_of(agent) or ONE_GROUP, []).append(agent)
    return groups


class CraftiumTaskClass(TaskClass):
    """One craftium-ma task for BenchMARL: name is the task id (any case), config the
    keyword arguments of craftium_ma.parallel_env (with task_dir=, name only names it)
    and WRAPPER_OPTIONS (done_on_any: see the module doc)."""

    def __init__(self, name: str, config: dict[str, Any] | None):
        super().__init__(name, config)
        action_space = self.config.get("action_space", "discrete")
        if action_space != "discrete":
            raise ValueError(f"BenchMARL task {name}: action_space={action_space!r}; BenchMARL "
                             "takes the discrete action space only (leave action_space out)")
        self._envs_built = itertools.count()

    def make_env(self, seed: int | None = None, device="cpu") -> PettingZooWrapper:
        """The task's env as TorchRL's PettingZooWrapper, reset once with seed."""
        config = env_config(self.config)
        done_on_any = self.config.get("done_on_any", WRAPPER_OPTIONS["done_on_any"])
        task = None if "task_dir" in config else self.name.lower()
        env = parallel_env(task, **config)
        return PettingZooWrapper(env, group_map=group_map(env), categorical_actions=True,
                                 return_state=hasattr(env, "state_space"), seed=seed,
                                 done_on_any=done_on_any, use_mask=not done_on_any,
                                 device=device)

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None,
                    device) -> Callable[[], EnvBase]:
        # one env per call; BenchMARL batches them in a SerialEnv or ParallelEnv
        def make():
            return self.make_env(None if seed is None else seed + next(self._envs_built),
                                 device)
        return make

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def max_steps(self, env: EnvBase) -> int:
        return env.max_cycles

    def has_render(self, env: EnvBase) -> bool:
        return False

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return env.group_map

    def _group_entries(self, env: EnvBase, key: str) -> Composite:
        """The observation spec's (group, key) entries alone, for every group."""
        spec = env.observation_spec.clone()
        for group in self.group_map(env):
            for other in list(spec[group].keys()):
                if other != key:
                    del spec[group][other]
        if "state" in spec.keys():
            del spec["state"]
        return spec

    def observation_spec(self, env: EnvBase) -> Composite:
        return self._group_entries(env, "observation")

    def info_spec(self, env: EnvBase) -> Composite | None:
        return self._group_entries(env, "info")

    def state_spec(self, env: EnvBase) -> Composite | None:
        if "state" not in env.observation_spec.keys():
            return None
        return Composite({"state": env.observation_spec["state"].clone()})

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        return None

    @staticmethod
    def env_name() -> str:
        return "craftium"


class _CraftiumTasks(Task):
    """Members are added by name below (one per shipped task)."""

    @staticmethod
    def associated_class():
        return CraftiumTaskClass

    def get_from_yaml(self, path: str | None = None) -> CraftiumTaskClass:
        """The task with its manifest's defaults, or with the config of the YAML file at
        path (parallel_env's keyword arguments)."""
        if path is None:
            return self.get_task(config={})
        with open(path) as f:
            return self.get_task(config=yaml.safe_load(f) or {})


CraftiumTask = _CraftiumTasks("CraftiumTask", [t.upper() for t in tasks()], module=__name__)


class GroupLogits(torch.nn.Module):
    """One agent's logits from its frames (batch, H, W, C), by a group's shared actor model:
    the frames fill every agent slot of the group, and the first slot's logits are read (a
    decentralised actor with shared parameters gives each slot the logits of its own frame)."""

    def __init__(self, model: torch.nn.Module, group: str, n_agents: int):
        super().__init__()
        self.model, self.group, self.n_agents = model, group, n_agents

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        batch = frames.shape[0]
        slots = frames.unsqueeze(1).expand(batch, self.n_agents, *frames.shape[1:])
        observation = TensorDict({"observation": slots}, batch_size=[batch, self.n_agents])
        td = TensorDict({self.group: observation}, batch_size=[batch])
        return self.model(td)[self.group, "logits"][:, 0]


def save_policy(experiment, path: str | Path, group: str | None = None, **fields) -> None:
    """Writes `group`'s policy (the experiment's only group when None) as a checkpoint of
    craftium_ma.models.load_checkpoint: its actor exported with torch.export (frames -> logits),
    args naming the task and the env options of its training, and `fields` (e.g. wall_time).
    `craftium-ma evaluate PATH --task TASK` and the scenarios' saved-policy bots play it with
    torch alone. Needs BenchMARL's default share_policy_params (one network per group)."""
    groups = experiment.group_map
    group = group if group is not None else (next(iter(groups)) if len(groups) == 1 else None)
    if group not in groups:
        raise ValueError(f"save_policy: give group= one of {sorted(groups)}")
    if not experiment.config.share_policy_params:
        raise ValueError("save_policy: the experiment's agents do not share their policy "
                         "(share_policy_params=False); it saves one network per group")
    [actor] = [a for a in experiment.policy.module if a.in_keys[0][0] == group]
    # a copy: the export leaves the module it traces unusable, and training may go on
    model = GroupLogits(copy.deepcopy(actor.module[0]), group, len(groups[group])).eval()
    frames_shape = tuple(experiment.observation_spec[group, "observation"].shape[-3:])
    probe = probe_input(frames_shape)
    with torch.no_grad():
        probe_logits = model(probe)
        program = torch.export.export(
            model, (probe,), dynamic_shapes=({0: torch.export.Dim("batch", min=1)},))
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    config = env_config(experiment.task.config)
    env = parallel_env(None if "task_dir" in config else experiment.task.name.lower(), **config)
    env.close()  # never reset: only its settings are read
    height, width = env.unwrapped.obs_size
    args = {"task": env.unwrapped.task.id, "trainer": "benchmarl",
            "algorithm": type(experiment.algorithm).__name__.lower(), "group": group,
            "num_agents": len(env.possible_agents), "max_cycles": env.unwrapped.max_cycles,
            "obs_size": height if height == width else [height, width],
            "frameskip": env.unwrapped.frameskip,
            "task_options": json.dumps(config["task_options"]) if config.get("task_options")
            else "", "observations": "rgb", "grayscale": False, "frame_stack": 1}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"model": buffer.getvalue(), "obs_shape": list(frames_shape),
                "n_actions": probe_logits.shape[-1], "probe_logits": probe_logits.tolist(),
                "args": args, **fields}, tmp)
    os.replace(tmp, path)
