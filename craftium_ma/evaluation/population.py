"""Bots: the background players of scenarios, and their registry.

A bot is made anew for every episode from a generator of that episode's seed, and
acts once per step: `act(agent, observation, world)`, where `observation` is a dict of
the task's observations it declares it reads (`BotSpec.observations`; "rgb" its frame)
and `world` the privileged view of the whole world (every player's infos, the task's
`state()`, the env itself). A bot that reads no "rgb" plays with a client that draws
no frame. Scripted bots ("puppets") live in craftium_ma.evaluation.puppets; a path to a
checkpoint (of examples/train_ppo.py, or a saved BenchMARL policy) is a bot too (a saved
policy), and so is each shipped baseline of a checkout (<task>.<row>, its row's name in
baselines/results.json: commons_harvest.ppo_commons_harvest).

`bots(task)` lists the bots training code may use; held-out bots are reachable only
through scenarios tagged "held_out" (craftium_ma.evaluation.scenario).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

CHECKPOINT_SUFFIX = ".pt"


@dataclass
class World:
    """What bots may know of the world at a step: the full env (read it, never step it),
    each player's latest infos and the observations bots read, by agent."""
    env: Any
    infos: dict[str, dict] = field(default_factory=dict)
    observations: dict[str, dict] = field(default_factory=dict)

    def state(self) -> np.ndarray:
        return self.env.state()


class Bot(Protocol):
    def act(self, agent: str, observation: dict, world: World):
        """The bot's action for `agent` at this step."""


@dataclass(frozen=True)
class BotSpec:
    """A registered bot: `make(rng)` gives a new bot for an episode."""
    name: str  # "<task>.<what it does>"
    task: str
    version: int  # raise it when its behaviour changes: it enters scenarios' config hashes
    make: Callable[[np.random.Generator], Bot]
    observations: tuple[str, ...] = ()  # the task's observations it reads ("rgb": frames)
    description: str = ""
    held_out: bool = False  # only scenarios tagged "held_out" draw it
    file_sha256: str | None = None  # a saved policy's checkpoint file

    @property
    def identity(self) -> dict:
        """What of the bot enters a scenario's config hash."""
        identity = {"name": self.name, "version": self.version}
        if self.file_sha256:
            identity["sha256"] = self.file_sha256
        return identity


_REGISTRY: dict[str, BotSpec] = {}


def register_bot(spec: BotSpec) -> BotSpec:
    """Adds a bot to the registry under spec.name (a name taken already is an error)."""
    if spec.name in _REGISTRY:
        raise ValueError(f"a bot named {spec.name!r} is registered already")
    _REGISTRY[spec.name] = spec
    return spec


def bots(task: str | None = None) -> list[str]:
    """The names of the bots training may use (of `task`, or all); held-out ones are not
    among them."""
    _load_puppets()
    return sorted(n for n, s in _REGISTRY.items()
                  if not s.held_out and (task is None or s.task == task))


def spec(name: str, task: str, held_out: bool = False) -> BotSpec:
    """The bot called `name` for `task`: a registered bot (a held-out one only with
    `held_out`), or a saved policy given by its checkpoint's path."""
    _load_puppets()
    if name.endswith(CHECKPOINT_SUFFIX):
        return saved_policy(name, task)
    found = _REGISTRY.get(name)
    if found is None or (found.held_out and not held_out):
        raise ValueError(f"unknown bot {name!r}; the bots of task {task!r} are "
                         f"{', '.join(bots(task)) or 'none'} (or a checkpoint path, *.pt)")
    if found.task != task:
        raise ValueError(f"bot {name!r} plays task {found.task!r}, not {task!r}")
    return found


@functools.cache
def _load_puppets():
    from . import puppets  # noqa: F401  (registers the scripted bots)
    _load_baselines()


# the shipped baselines' table, in a checkout (baselines/ is not part of the wheel)
BASELINES = Path(__file__).resolve().parents[2] / "baselines" / "results.json"


def _load_baselines():
    """Each shipped baseline policy (docs/baselines.md) as the bot <task>.<row name> (a task
    may have several rows of one algorithm), where the checkout has them: a saved policy,
    fed as in its training."""
    if not BASELINES.is_file():
        return
    for row in json.loads(BASELINES.read_text()):
        path = BASELINES.parent.parent / row["checkpoint"]
        register_bot(BotSpec(
            name=f"{row['task']}.{row['name']}", task=row["task"], version=0,
            make=functools.partial(SavedPolicyBot, str(path)),
            observations=tuple(row["observations"]),
            description=f"the {row['algorithm'].upper()} baseline ({row['checkpoint']})",
            file_sha256=hashlib.sha256(path.read_bytes()).hexdigest()))


# -- saved policies ------------------------------------------------------------------------

class SavedPolicyBot:
    """A checkpoint (craftium_ma.policies.CheckpointPolicy) playing a background slot."""

    def __init__(self, path: str, rng: np.random.Generator):
        from ..policies import CheckpointPolicy
        #: paced to its scenario's frameskip by the scenario env (hold_actions)
        self.policy = CheckpointPolicy(path, seed=int(rng.integers(2**31)))

    def act(self, agent: str, observation: dict, world: World):
        names = self.policy.observation_names
        seen = observation["rgb"] if names == ["rgb"] else {n: observation[n] for n in names}
        return self.policy(agent, seen, world.infos.get(agent, {}))


@functools.cache
def saved_policy(path: str, task: str) -> BotSpec:
    """The bot spec of a checkpoint file (loaded once per process)."""
    from ..policies import CheckpointPolicy
    policy = CheckpointPolicy(path)
    if policy.task != task:
        raise ValueError(f"bot {path!r} was trained on task {policy.task!r}, not {task!r}")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return BotSpec(name=path, task=task, version=0,
                   make=functools.partial(SavedPolicyBot, path),
                   observations=tuple(policy.observation_names),
                   description=f"the saved policy {path}", file_sha256=digest)
