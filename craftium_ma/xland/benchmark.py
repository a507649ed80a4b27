"""A benchmark: many rulesets in padded arrays; sampling, shuffling, splitting; the cache."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

import numpy as np

from ..build import cache_dir
from .encoding import GOAL_SIZE, RULE_SIZE, Ruleset

BENCHMARK_SEED = 0
_MILLION = 1_000_000


@dataclass(frozen=True, eq=False)
class Benchmark:
    """goals (n, 5), rules (n, R, 7) padded with empty rules, init_tiles (n, K, 2) padded with
    (0, 0); params: how it was generated (None for hand-made ones)."""

    goals: np.ndarray
    rules: np.ndarray
    init_tiles: np.ndarray
    params: dict | None = field(default=None)

    def __post_init__(self):
        n = len(self.goals)
        shapes = {"goals": (self.goals, 2, GOAL_SIZE), "rules": (self.rules, 3, RULE_SIZE),
                  "init_tiles": (self.init_tiles, 3, 2)}
        for name, (array, ndim, width) in shapes.items():
            if array.ndim != ndim or array.shape[-1] != width or len(array) != n:
                raise ValueError(f"{name} has shape {array.shape}; expected {n} rulesets of "
                                 f"width {width} ({ndim} dimensions)")
            if array.dtype != np.uint8:
                raise ValueError(f"{name} has dtype {array.dtype}; expected uint8")

    def num_rulesets(self) -> int:
        return len(self.goals)

    def __len__(self) -> int:
        return self.num_rulesets()

    def get_ruleset(self, ruleset_id: int) -> Ruleset:
        """The ruleset without its padding."""
        n = self.num_rulesets()
        if not -n <= ruleset_id < n:
            raise IndexError(f"ruleset_id {ruleset_id} out of range for {n} rulesets")
        rules, init = self.rules[ruleset_id], self.init_tiles[ruleset_id]
        return Ruleset(self.goals[ruleset_id], rules[rules[:, 0] != 0], init[init[:, 0] != 0])

    def sample_ruleset(self, rng: np.random.Generator) -> Ruleset:
        return self.get_ruleset(int(rng.integers(self.num_rulesets())))

    def _subset(self, index) -> Benchmark:
        return Benchmark(self.goals[index], self.rules[index], self.init_tiles[index], self.params)

    def shuffle(self, rng: np.random.Generator) -> Benchmark:
        return self._subset(rng.permutation(self.num_rulesets()))

    def split(self, prop: float) -> tuple[Benchmark, Benchmark]:
        """The first round(prop * n) rulesets and the rest."""
        if not 0.0 <= prop <= 1.0:
            raise ValueError(f"prop must be in [0, 1], got {prop}")
        cut = round(self.num_rulesets() * prop)
        return self._subset(slice(0, cut)), self._subset(slice(cut, None))

    def filter_split(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
                     ) -> tuple[Benchmark, Benchmark]:
        """fn(goals (n, 5), rules (n, R, 7)) -> bool mask (n,), vectorized like numpy; returns
        the rulesets where it is True and those where it is False."""
        mask = np.asarray(fn(self.goals, self.rules))
        if mask.shape != (self.num_rulesets(),) or mask.dtype != bool:
            raise ValueError(f"fn must return a bool array of shape ({self.num_rulesets()},), "
                             f"got {mask.dtype} {mask.shape}")
        return self._subset(mask), self._subset(~mask)

    def save(self, path: Path) -> None:
        """A compressed .npz, written to a temporary file first and renamed over `path`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, suffix=".tmp",
                                         delete=False) as tmp:
            try:
                np.savez_compressed(tmp, goals=self.goals, rules=self.rules,
                                    init_tiles=self.init_tiles,
                                    params=np.array(json.dumps(self.params)))
                tmp.flush()
                os.fsync(tmp.fileno())
            except BaseException:
                os.unlink(tmp.name)
                raise
        os.replace(tmp.name, path)

    @classmethod
    def load(cls, path: Path) -> Benchmark:
        with np.load(path) as data:
            return cls(data["goals"], data["rules"], data["init_tiles"],
                       json.loads(str(data["params"])))


def _size_name(n: int) -> str:
    return f"{n // _MILLION}m" if n % _MILLION == 0 else str(n)


def registered_benchmarks() -> dict[str, tuple[str, int]]:
    """name -> (level, number of rulesets): every distinct trivial ruleset, and a million of
    each other level."""
    from .generator import LEVELS, capacity  # the generator builds on this module
    names = {}
    for level, params in LEVELS.items():
        n = capacity(params) or _MILLION
        names[f"{level}-{_size_name(n)}"] = (level, n)
    return names


def benchmark_path(name: str) -> Path:
    return cache_dir() / "xland" / f"{name}.npz"


def load_benchmark(name: str, progress: bool | None = None) -> Benchmark:
    """A registered benchmark, generated into the user cache on first use and read from it
    afterwards; a cached file made with other generation parameters is regenerated."""
    from .generator import generate_benchmark, generation_params
    names = registered_benchmarks()
    if name not in names:
        raise ValueError(f"unknown benchmark {name!r}; benchmarks are {', '.join(names)}")
    level, n = names[name]
    expected = generation_params(level, n, BENCHMARK_SEED)
    path = benchmark_path(name)
    if path.exists():
        try:
            benchmark = Benchmark.load(path)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
            warnings.warn(f"{path} is unreadable ({error}); generating it again", stacklevel=2)
        else:
            if benchmark.params == expected:
                return benchmark
            warnings.warn(f"{path} was generated with {benchmark.params}, not {expected}; "
                          "generating it again", stacklevel=2)
    benchmark = generate_benchmark(level, n, BENCHMARK_SEED, progress=progress)
    benchmark.save(path)
    return benchmark
