"""A benchmark: many rulesets in padded arrays, as XLand-MiniGrid keeps them; its files (read
without JAX); the cache of locally generated ones."""

from __future__ import annotations

import bz2
import importlib
import json
import os
import pickle
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..build import cache_dir
from .encoding import GOAL_SIZE, RULE_SIZE, Ruleset

BENCHMARK_SEED = 0
# XLand-MiniGrid's benchmark names, their files (xminigrid.benchmarks.NAME2HFFILENAME), level
# and size (its scripts/generate_benchmarks.sh)
UPSTREAM_FILES = {"trivial-21k": "trivial_21k", "small-1m": "small_1m_v3",
                  "medium-1m": "medium_1m_v3", "medium-3m": "medium_3m_v3",
                  "high-1m": "high_1m_v3", "high-3m": "high_3m_v3"}
_REGISTERED = {"trivial-21k": ("trivial", 21_000), "small-1m": ("small", 1_000_000),
               "medium-1m": ("medium", 1_000_000), "medium-3m": ("medium", 3_000_000),
               "high-1m": ("high", 1_000_000), "high-3m": ("high", 3_000_000)}
UPSTREAM_URL = "https://huggingface.co/datasets/Howuhh/xland_minigrid/resolve/main/"


@dataclass(frozen=True, eq=False)
class Benchmark:
    """goals (n, 5), rules (n, R, 7) padded with empty rules, init_tiles (n, K, 2) padded with
    (0, 0), num_rules (n, 1) uint8 (the non-empty rules), integer arrays kept as given (XLand-
    MiniGrid's files have int32 goals, ours uint8); params: how it was generated (None for
    hand-made ones)."""

    goals: np.ndarray
    rules: np.ndarray
    init_tiles: np.ndarray
    num_rules: np.ndarray
    params: dict | None = field(default=None)

    def __post_init__(self):
        n = len(self.goals)
        shapes = {"goals": (self.goals, 2, GOAL_SIZE), "rules": (self.rules, 3, RULE_SIZE),
                  "init_tiles": (self.init_tiles, 3, 2), "num_rules": (self.num_rules, 2, 1)}
        for name, (array, ndim, width) in shapes.items():
            if array.ndim != ndim or array.shape[-1] != width or len(array) != n:
                raise ValueError(f"{name} has shape {array.shape}; expected {n} rulesets of "
                                 f"width {width} ({ndim} dimensions)")
            if not np.issubdtype(array.dtype, np.integer):
                raise ValueError(f"{name} has dtype {array.dtype}; expected integers")

    def num_rulesets(self) -> int:
        return len(self.goals)

    def __len__(self) -> int:
        return self.num_rulesets()

    def get_ruleset(self, ruleset_id: int) -> Ruleset:
        """The ruleset as stored, padding included (as XLand-MiniGrid's get_ruleset)."""
        n = self.num_rulesets()
        if not -n <= ruleset_id < n:
            raise IndexError(f"ruleset_id {ruleset_id} out of range for {n} rulesets")
        return Ruleset(self.goals[ruleset_id], self.rules[ruleset_id],
                       self.init_tiles[ruleset_id])

    def sample_ruleset(self, rng: np.random.Generator) -> Ruleset:
        return self.get_ruleset(int(rng.integers(self.num_rulesets())))

    def _subset(self, index) -> Benchmark:
        return Benchmark(self.goals[index], self.rules[index], self.init_tiles[index],
                         self.num_rules[index], self.params)

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
                                    init_tiles=self.init_tiles, num_rules=self.num_rules,
                                    params=np.array(json.dumps(self.params)))
                tmp.flush()
                os.fsync(tmp.fileno())
            except BaseException:
                os.unlink(tmp.name)
                raise
        os.replace(tmp.name, path)

    @classmethod
    def load(cls, path: Path) -> Benchmark:
        """A file written by save."""
        with np.load(path) as data:
            return cls(data["goals"], data["rules"], data["init_tiles"], data["num_rules"],
                       json.loads(str(data["params"])))


def _reconstruct_array(fun, args, arr_state, aval_state) -> np.ndarray:
    """JAX's jax._src.array._reconstruct_array, returning the numpy array it wraps."""
    value = fun(*args)
    value.__setstate__(arr_state)
    return value


# (module, name) -> the numpy submodule that holds it under this numpy ("numpy._core" in 2.x,
# "numpy.core" in 1.x; a file written under either names either)
_NUMPY_GLOBALS = {("numpy", "ndarray"): "", ("numpy", "dtype"): ""}
for _core in ("numpy.core", "numpy._core"):
    _NUMPY_GLOBALS.update({(f"{_core}.multiarray", "_reconstruct"): "multiarray",
                           (f"{_core}.multiarray", "scalar"): "multiarray",
                           (f"{_core}.numeric", "_frombuffer"): "numeric"})


def _numpy_global(module: str, name: str):
    submodule = _NUMPY_GLOBALS[module, name]
    if not submodule:
        return getattr(np, name)
    try:
        return getattr(importlib.import_module(f"numpy._core.{submodule}"), name)
    except ImportError:
        return getattr(importlib.import_module(f"numpy.core.{submodule}"), name)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles numpy arrays and JAX arrays (as numpy arrays, without importing JAX); refuses
    every other class."""

    def find_class(self, module: str, name: str):
        if (module, name) == ("jax._src.array", "_reconstruct_array"):
            return _reconstruct_array
        if (module, name) in _NUMPY_GLOBALS:
            return _numpy_global(module, name)
        raise pickle.UnpicklingError(f"refusing {module}.{name}: an XLand-MiniGrid benchmark "
                                     "file holds only dicts, strings, numbers and arrays")


def load_benchmark_from_path(path: str | Path) -> Benchmark:
    """A file in XLand-MiniGrid's format (a bz2 pickle of a dict with goals, rules,
    init_tiles, num_rules and generation_config, the arrays JAX's), read without JAX; its
    arrays are kept as they are and generation_config becomes params."""
    with bz2.open(path, "rb") as file:
        try:
            data = _ArrayUnpickler(file).load()
        except pickle.UnpicklingError as error:
            raise ValueError(f"{path}: {error}") from None
    missing = {"goals", "rules", "init_tiles", "num_rules"} - set(data if isinstance(data, dict)
                                                                  else ())
    if missing:
        raise ValueError(f"{path} lacks {', '.join(sorted(missing))}; not an XLand-MiniGrid "
                         "benchmark")
    return Benchmark(*(np.asarray(data[k]) for k in ("goals", "rules", "init_tiles", "num_rules")),
                     params=data.get("generation_config"))


def registered_benchmarks() -> dict[str, tuple[str, int]]:
    """XLand-MiniGrid's benchmark names -> (level, number of rulesets)."""
    return dict(_REGISTERED)


def upstream_data_dir() -> Path:
    """Where XLand-MiniGrid keeps its downloaded benchmarks."""
    return Path(os.environ.get("XLAND_MINIGRID_DATA") or Path.home() / ".xland_minigrid")


def benchmark_path(name: str) -> Path:
    """Where a locally generated benchmark is cached."""
    return cache_dir() / "xland" / f"{name}.npz"


def load_benchmark(name: str, progress: bool | None = None) -> Benchmark:
    """XLand-MiniGrid's benchmark `name`: its own file where upstream_data_dir() holds it, read
    as it is; else (with a warning) one generated locally by our generator with the level and
    size of that name, cached at benchmark_path(name) and regenerated when the cached file was
    made with other parameters."""
    from .generator import generate_benchmark, generation_params  # it builds on this module
    names = registered_benchmarks()
    if name not in names:
        raise ValueError(f"unknown benchmark {name!r}; benchmarks are {', '.join(names)}")
    upstream = upstream_data_dir() / UPSTREAM_FILES[name]
    if upstream.exists():
        return load_benchmark_from_path(upstream)
    level, n = names[name]
    path = benchmark_path(name)
    warnings.warn(
        f"XLand-MiniGrid's {upstream.name} is not in {upstream.parent} ($XLAND_MINIGRID_DATA, "
        f"else ~/.xland_minigrid): using {name} generated locally ({n} rulesets of level "
        f"{level}, seed {BENCHMARK_SEED}, cached at {path}), drawn as XLand-MiniGrid draws "
        f"but not the same rulesets. For its file: download {UPSTREAM_URL}{upstream.name} "
        f"into {upstream.parent}, or run xminigrid.load_benchmark({name!r})", stacklevel=2)
    expected = generation_params(level, n, BENCHMARK_SEED)
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
