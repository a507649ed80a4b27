"""Checks of the arguments users give the env, the pool, the runner and the tasks' options.

Each returns the value in its plain Python form or raises a TypeError or ValueError that
names the argument and what it takes. numpy's integers count as ints everywhere; bools
do not (True would pass as 1).
"""

from __future__ import annotations

import numbers
import os

import numpy as np


def is_int(value) -> bool:
    """An int, numpy's too, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def positive_int(name: str, value, *, optional: bool = False) -> int | None:
    """`value` as an int >= 1 (or None, where `optional`)."""
    if optional and value is None:
        return None
    must = f"{name} must be {'None or ' if optional else ''}a"
    if not is_int(value):
        raise TypeError(f"{must}n int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{must} positive int, got {value!r}")
    return int(value)


def cpu_list(cpus) -> tuple[int, ...]:
    """cpus=: None (no pinning: ()) or distinct CPUs this process may run on."""
    if cpus is None:
        return ()
    allowed = os.sched_getaffinity(0)
    listed = list(cpus) if isinstance(cpus, (list, tuple, range, np.ndarray)) else None
    if (not listed or not all(is_int(c) for c in listed) or len(set(listed)) != len(listed)
            or not set(listed) <= allowed):
        raise ValueError(f"cpus must be None or distinct CPUs this process may run on "
                         f"(os.sched_getaffinity(0): {sorted(allowed)}), got {cpus!r}")
    return tuple(int(c) for c in listed)


def frame_size(obs_size) -> tuple[int, int]:
    """obs_size=: an int or (height, width), each 8 to 4096 pixels."""
    if is_int(obs_size):
        obs_size = (obs_size, obs_size)
    if (not isinstance(obs_size, (tuple, list, np.ndarray)) or len(obs_size) != 2
            or not all(is_int(v) for v in obs_size)):
        raise TypeError(f"obs_size must be an int or (height, width) of ints, "
                        f"got {type(obs_size).__name__} {obs_size!r}")
    height, width = (int(v) for v in obs_size)
    if not (8 <= height <= 4096 and 8 <= width <= 4096):
        raise ValueError(f"obs_size {obs_size!r} is out of range (8 to 4096 pixels a side)")
    return height, width


def seeds_per_env(seed, count: int, what: str) -> list[int | None]:
    """One seed per env from None, an int (env e gets seed + e) or one int (or None) per env."""
    if seed is None:
        return [None] * count
    if is_int(seed):
        return [int(seed) + e for e in range(count)]
    seeds = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else None
    if seeds is None or len(seeds) != count or not all(s is None or is_int(s) for s in seeds):
        raise ValueError(f"{what} must be None, an int or one int per env ({count}), got {seed!r}")
    return [None if s is None else int(s) for s in seeds]
