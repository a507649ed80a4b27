"""The observations a task declares beside the frames, and how an env selects them.

A task's manifest declares each agent's extra observations in `[observations]` (name =
{ dtype, shape, low, high, privileged }); its Lua fills them with
craftium_ma.register_observation (mods/craftium_ma/observations.lua). A privileged one
(what a player could not see, for scripted bots and training) is refused to the focal
players of a scenario (craftium_ma.evaluation). `parallel_env(task, observations=...)` takes "rgb"
(the frames, the default), a declared name, or a list of names: a name gives that
observation's Box, a list a Dict of them (docs/environments.md#observations).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_empty_array

from .infos import DTYPES

RGB = "rgb"  # the frames: every task has them


@dataclass(frozen=True)
class ObservationSpec:
    """One declared observation: an array of `shape` and `dtype` within [low, high]."""
    dtype: str
    shape: tuple[int, ...] = ()
    low: float | None = None  # None: the dtype's least (-inf for floats)
    high: float | None = None  # None: the dtype's most (inf for floats)
    privileged: bool = False  # beyond what the player could see: bots and training only

    def space(self) -> spaces.Box:
        if self.dtype == "bool":
            return spaces.Box(0, 1, self.shape, np.bool_)
        return spaces.Box(self.bounds[0], self.bounds[1], self.shape, self.dtype)

    @functools.cached_property
    def bounds(self) -> tuple[float, float]:
        """The range values must lie in (the declared one, or the dtype's own)."""
        if self.dtype == "bool":
            return 0, 1
        kind = np.dtype(self.dtype)
        info = np.iinfo(kind) if kind.kind in "iu" else None
        low = self.low if self.low is not None else (info.min if info else -math.inf)
        high = self.high if self.high is not None else (info.max if info else math.inf)
        return low, high

    def value(self, given) -> np.ndarray:
        """Lua's value (a number, a bool or a flat list; None: Lua's empty table) as an
        array of this dtype and shape, bit for bit; a ValueError says what is wrong with it."""
        flat = np.asarray([] if given is None else given).reshape(-1)
        size = math.prod(self.shape)
        if flat.size != size:
            raise ValueError(f"is {flat.size} values, its manifest declares shape {self.shape} "
                             f"({size} value{'s' * (size != 1)})")
        if flat.dtype.kind not in "biuf":
            raise ValueError(f"holds {flat.dtype} values, not numbers")
        low, high = self.bounds
        if not low <= flat.min() <= flat.max() <= high:  # NaN is outside too
            raise ValueError(f"is {flat.tolist()}, outside its range [{low}, {high}]")
        value = flat.astype(self.dtype)
        if not self.dtype.startswith("float") and not (value == flat).all():
            raise ValueError(f"is {flat.tolist()}, which {self.dtype} cannot hold exactly")
        return value.reshape(self.shape)


def parse_observations(table, where: str) -> dict[str, ObservationSpec]:
    """A manifest's [observations] table: name = { dtype = "...", shape = [...], low = ...,
    high = ..., privileged = true } (all but dtype optional)."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [observations] must be a table of names")
    declared = {}
    for name, spec in table.items():
        what = f"{where}: observation {name!r}"
        if name == RGB:
            raise ValueError(f"{what} is the frames' name; give the task's own another one")
        if not isinstance(spec, dict):
            raise ValueError(f"{what} must be a table {{ dtype = ..., shape = [...] }}, got "
                             f"{spec!r} (a top-level key must come before [observations])")
        if spec.get("dtype") not in DTYPES:
            raise ValueError(f"{what} needs dtype = one of {', '.join(DTYPES)}")
        unknown = sorted(set(spec) - {"dtype", "shape", "low", "high", "privileged"})
        if unknown:
            raise ValueError(f"{what}: unknown fields {unknown}; it takes dtype, shape, low, "
                             "high, privileged")
        privileged = spec.get("privileged", False)
        if type(privileged) is not bool:
            raise ValueError(f"{what}: privileged must be true or false, got {privileged!r}")
        shape = spec.get("shape", [])
        if not isinstance(shape, list) or not all(type(d) is int and d > 0 for d in shape):
            raise ValueError(f"{what}: shape must be a list of positive ints, got {shape!r}")
        bounds = [spec.get("low"), spec.get("high")]
        if spec["dtype"] == "bool" and bounds != [None, None]:
            raise ValueError(f"{what}: a bool observation takes no low or high")
        if any(b is not None and (type(b) not in (int, float) or math.isnan(b)) for b in bounds):
            raise ValueError(f"{what}: low and high must be numbers, got {bounds}")
        declared[name] = ObservationSpec(spec["dtype"], tuple(shape), *bounds, privileged)
        low, high = declared[name].bounds
        if low > high:
            raise ValueError(f"{what}: low {low} is above high {high}")
    return declared


def select(observations, declared: dict[str, ObservationSpec], task: str,
           manifest: str) -> tuple[str, ...]:
    """The names `observations=` asks for ("rgb", a declared name or a list of them)."""
    names = [observations] if isinstance(observations, str) else observations
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"observations must be a name or a list of names, got "
                        f"{observations!r}")
    if not names or len(set(names)) != len(names):
        raise ValueError(f"observations must name each observation once, got {observations!r}")
    known = (RGB, *declared)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"observations: task {task!r} has no observation "
                         f"{', '.join(map(repr, unknown))}; its observations are "
                         f"{', '.join(known)} (declared in {manifest})")
    return tuple(names)


def empty_batch(space: spaces.Space, rows: int):
    """`rows` zero observations of `space` in one batch (arrays, or a dict of them)."""
    return create_empty_array(space, rows, fn=np.zeros)


def set_row(batch, row: int, observation):
    """Row `row` of a batch of empty_batch() is `observation`."""
    if isinstance(batch, dict):
        for name, array in batch.items():
            array[row] = observation[name]
    else:
        batch[row] = observation


def batch_rows(batch, rows: slice):
    """A copy of rows `rows` of a batch of empty_batch()."""
    if isinstance(batch, dict):
        return {name: array[rows].copy() for name, array in batch.items()}
    return batch[rows].copy()


def observation_space(names: tuple[str, ...], frames: spaces.Box,
                      declared: dict[str, ObservationSpec], as_dict: bool) -> gymnasium.Space:
    """The space of one agent's observation: the one named, or a Dict of the names."""
    boxes = {n: frames if n == RGB else declared[n].space() for n in names}
    return spaces.Dict(boxes) if as_dict else boxes[names[0]]
