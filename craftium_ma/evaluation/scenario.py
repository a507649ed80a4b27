"""A scenario: a task whose player slots are focal (the population under test) or
background (bots drawn from pools), as in Melting Pot (docs/scenarios.md)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..tasks import find_task
from ..validate import positive_int
from . import population as botlib

RESIDENT, VISITOR, HELD_OUT = "resident", "visitor", "held_out"


@dataclass(frozen=True)
class Scenario:
    """Slot i of `num_players` is focal where `is_focal[i]`, and plays `roles[i]`; each
    background slot draws its bot from `bots[role]` at every reset. `tags` hold
    "resident" (a focal majority) or "visitor" (a focal minority), the task's kind, and
    "held_out" where its bots are kept from training."""

    name: str
    task: str
    num_players: int
    is_focal: tuple[bool, ...]
    roles: tuple[str, ...]
    bots: dict[str, tuple[str, ...]]  # role -> the pool of bot names its background slots draw
    tags: frozenset[str]
    description: str
    task_options: dict = field(default_factory=dict)
    max_cycles: int | None = None  # None: the task's
    frameskip: int = 1  # engine steps per step; the bots act once per step, so it sets their pace

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "is_focal", tuple(bool(f) for f in self.is_focal))
        set_(self, "roles", tuple(self.roles))
        set_(self, "bots", {role: tuple(pool) for role, pool in self.bots.items()})
        set_(self, "tags", frozenset(self.tags))
        set_(self, "task_options", dict(self.task_options))
        what = f"scenario {self.name!r}"
        task = find_task(self.task)
        n = positive_int(f"{what}: num_players", self.num_players)
        positive_int(f"{what}: frameskip", self.frameskip)
        if not task.min_agents <= n <= task.max_agents:
            raise ValueError(f"{what}: task {task.id!r} takes {task.min_agents} to "
                             f"{task.max_agents} players, not {n}")
        if len(self.is_focal) != n or len(self.roles) != n:
            raise ValueError(f"{what}: is_focal and roles need one entry per player ({n}), got "
                             f"{len(self.is_focal)} and {len(self.roles)}")
        focal = sum(self.is_focal)
        if not 0 < focal < n:
            raise ValueError(f"{what}: needs focal and background players, got {focal} focal "
                             f"of {n}")
        kind = RESIDENT if 2 * focal > n else VISITOR
        if kind not in self.tags or {RESIDENT, VISITOR} <= self.tags:
            raise ValueError(f"{what}: {focal} focal of {n} players makes it {kind!r}; tag it "
                             f"so (tags {sorted(self.tags)})")
        for slot, role in enumerate(self.roles):
            if self.is_focal[slot]:
                continue
            pool = self.bots.get(role)
            if not pool:
                raise ValueError(f"{what}: background slot {slot} plays role {role!r}, which "
                                 f"has no bots")
            for name in pool:
                botlib.spec(name, task=self.task, held_out=HELD_OUT in self.tags)

    @property
    def focal_slots(self) -> list[int]:
        return [i for i, f in enumerate(self.is_focal) if f]

    @property
    def background_slots(self) -> list[int]:
        return [i for i, f in enumerate(self.is_focal) if not f]

    def config_hash(self) -> str:
        """sha256 of everything that defines the scenario: its fields, the task's version
        and mod files, and each bot's version (a saved policy's file)."""
        task = find_task(self.task)
        held_out = HELD_OUT in self.tags
        defined = {
            "name": self.name, "task": self.task, "task_version": task.version,
            "task_files": _digest(task.directory, task.mod),
            "task_options": self.task_options, "max_cycles": self.max_cycles,
            "num_players": self.num_players, "is_focal": self.is_focal, "roles": self.roles,
            "bots": {role: [botlib.spec(b, task=self.task, held_out=held_out).identity
                            for b in pool] for role, pool in sorted(self.bots.items())},
            "tags": sorted(self.tags)}
        if self.frameskip != 1:  # absent at 1, so the hashes from before the field still hold
            defined["frameskip"] = self.frameskip
        return hashlib.sha256(json.dumps(defined, sort_keys=True).encode()).hexdigest()

    def make_env(self, **env_kwargs):
        """scenario_env(self, **env_kwargs): what craftium_ma.vector_env builds from it."""
        from .env import ScenarioEnv
        return ScenarioEnv(self, **env_kwargs)


def _digest(*folders: Path) -> str:
    """sha256 over the files of the folders (paths within them, and contents)."""
    h = hashlib.sha256()
    for folder in sorted(set(map(Path, folders))):
        for path in sorted(p for p in folder.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts):
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
