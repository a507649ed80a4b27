"""The backward chain sampler of XLand-MiniGrid's benchmarks, vectorized over rulesets.

A ruleset starts from its goal; each object the goal needs is, with probability 1 - prune_prob,
produced by a rule from one or two new objects, which are in turn produced by rules, down to
`chain_depth` levels (a binary tree pruned along the way). The objects nobody produces are
placed at the start. Distractor rules (dead ends, which may consume chain objects) and
distractor objects (never part of the chain) are added last. All objects of the chain are
distinct. Rulesets that pose the same task (`encoding.canonical_keys`) are kept once.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

import numpy as np
from tqdm.auto import tqdm

from .benchmark import Benchmark
from .encoding import (OBJECT_COLOURS, OBJECT_SHAPES, PICKABLE_SHAPES, VANISH, GoalId, RuleId,
                       canonical_keys)

GENERATOR_VERSION = 1
MAX_CHAIN_DEPTH = 3


@dataclass(frozen=True)
class LevelParams:
    """XLand-MiniGrid's generation options for one level of its benchmarks."""

    chain_depth: int  # levels of production rules below the goal
    prune_prob: float  # chance that an object of the chain is placed instead of produced
    max_distractor_rules: int
    sample_distractor_rules: bool  # True: uniform in 0..max_distractor_rules; False: exactly max
    num_distractor_objects: int

    def __post_init__(self):
        # a full chain of depth 3 holds 30 distinct objects; depth 4 would need 62, more than
        # the 48 pickable ones its rules may ask for
        if not 0 <= self.chain_depth <= MAX_CHAIN_DEPTH:
            raise ValueError(f"chain_depth must be in 0..{MAX_CHAIN_DEPTH}, got {self.chain_depth}")
        if not 0.0 <= self.prune_prob <= 1.0:
            raise ValueError(f"prune_prob must be in [0, 1], got {self.prune_prob}")
        if self.max_distractor_rules < 0 or self.num_distractor_objects < 0:
            raise ValueError("max_distractor_rules and num_distractor_objects must be >= 0, got "
                             f"{self.max_distractor_rules} and {self.num_distractor_objects}")


LEVELS = {
    "trivial": LevelParams(0, 0.0, 0, False, 3),
    "small": LevelParams(1, 0.3, 2, True, 2),
    "medium": LevelParams(2, 0.1, 3, True, 2),
    "high": LevelParams(3, 0.1, 4, True, 1),
}

# Object indices: pickable objects first (so "pickable" is the prefix [0, NUM_PICKABLE)), then
# the fixed ones, then VANISH; index -1 (the last row) reads as (0, 0), "no argument".
_OBJECTS = [(int(s), int(c)) for s in OBJECT_SHAPES for c in OBJECT_COLOURS]
NUM_PICKABLE = len(PICKABLE_SHAPES) * len(OBJECT_COLOURS)
NUM_OBJECTS = len(_OBJECTS)
_VANISH_INDEX = NUM_OBJECTS
_OBJECT_TABLE = np.array(_OBJECTS + [VANISH, (0, 0)], dtype=np.uint8)
_PRODUCTS = np.append(np.arange(NUM_PICKABLE), _VANISH_INDEX)  # what a distractor rule makes

# the sampler's three kinds of goals and of rules: hold, near the agent, near another object
_GOAL_IDS = np.array([GoalId.AGENT_HOLD, GoalId.AGENT_NEAR, GoalId.TILE_NEAR], dtype=np.uint8)
_RULE_IDS = np.array([0, RuleId.AGENT_HOLD, RuleId.AGENT_NEAR, RuleId.TILE_NEAR], dtype=np.uint8)
HOLD, NEAR, TILE_NEAR = 0, 1, 2

_CHUNK = 200_000  # rulesets sampled at once (memory)
_MIN_ROUND = 65_536
_MAX_IDLE_ROUNDS = 20


def level_params(level: str | LevelParams) -> LevelParams:
    if isinstance(level, LevelParams):
        return level
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; levels are {', '.join(LEVELS)}")
    return LEVELS[level]


def _level_name(level: str | LevelParams) -> str:
    return level if isinstance(level, str) else "custom"


def generation_params(level: str | LevelParams, num_rulesets: int, seed: int) -> dict:
    """What a generated benchmark records about its making (and a cached one is checked by)."""
    return {"level": _level_name(level), **asdict(level_params(level)),
            "num_rulesets": num_rulesets, "seed": seed, "generator_version": GENERATOR_VERSION}


def capacity(params: LevelParams) -> int | None:
    """How many distinct rulesets the level allows, where that is small enough to reach: levels
    without rules (the distinct goals); None where it is astronomically large."""
    if params.chain_depth or params.max_distractor_rules:
        return None
    fixed = NUM_OBJECTS - NUM_PICKABLE
    pairs = NUM_PICKABLE * (NUM_PICKABLE - 1) // 2 + fixed * NUM_PICKABLE  # one pickable at least
    return NUM_PICKABLE + NUM_OBJECTS + pairs  # hold, near, tile-near (unordered)


def _draw(rng, high, active, avoid=None, differ=None, table=None) -> np.ndarray:
    """Per row, a uniform index in [0, high) (or table[index]), not marked in `avoid` and not
    `differ`; -1 where not `active`."""
    rows = active.shape[0]
    high = np.broadcast_to(high, (rows,))

    def rejected(idx, value):
        bad = np.zeros(idx.size, dtype=bool)
        if avoid is not None:
            bad |= avoid[idx, value]
        if differ is not None:
            bad |= differ[idx] == value
        return bad

    raw = rng.integers(0, high)
    value = raw if table is None else table[raw]
    todo = np.flatnonzero(active)
    todo = todo[rejected(todo, value[todo])]
    while todo.size:
        raw = rng.integers(0, high[todo])
        value[todo] = raw if table is None else table[raw]
        todo = todo[rejected(todo, value[todo])]
    return np.where(active, value, -1)


def _mark(mask, values) -> None:
    rows = np.flatnonzero(values >= 0)
    mask[rows, values[rows]] = True


def _rule_rows(kind, a, b, c) -> np.ndarray:
    """(m, 7) rule vectors; kind -1 gives an empty row."""
    rows = np.concatenate([_RULE_IDS[kind + 1][:, None], _OBJECT_TABLE[a], _OBJECT_TABLE[b],
                           _OBJECT_TABLE[c]], axis=1)
    rows[kind < 0] = 0
    return rows


def _compact(values, present) -> np.ndarray:
    """Move the present entries of each row to its front, keeping their order."""
    order = np.argsort(~present, axis=1, kind="stable")
    expand = (slice(None), slice(None)) + (None,) * (values.ndim - 2)
    return np.take_along_axis(values, order[expand], axis=1)


def _sample(params: LevelParams, m: int, rng: np.random.Generator):
    """m rulesets: goals (m, 5), rules (m, R, 7), init objects (m, K) as indices (-1 none)."""
    used = np.zeros((m, NUM_OBJECTS + 1), dtype=bool)  # objects of the chain
    everyone = np.ones(m, dtype=bool)
    kind = rng.integers(0, 3, m)
    goal_a = _draw(rng, np.where(kind == HOLD, NUM_PICKABLE, NUM_OBJECTS), everyone, used)
    _mark(used, goal_a)
    goal_b = _draw(rng, NUM_PICKABLE, kind == TILE_NEAR, used)
    _mark(used, goal_b)
    goals = np.concatenate([_GOAL_IDS[kind][:, None], _OBJECT_TABLE[goal_a],
                            _OBJECT_TABLE[goal_b]], axis=1)

    rules, init = [], []
    nodes = np.stack([goal_a, goal_b], axis=1)  # objects of the current level that must exist
    for _ in range(params.chain_depth):
        children = np.full((m, 2 * nodes.shape[1]), -1, dtype=nodes.dtype)
        for j, node in enumerate(nodes.T):
            active = node >= 0
            pruned = active & (rng.random(m) < params.prune_prob)
            init.append(np.where(pruned, node, -1))
            made = active & ~pruned
            # a fixed object cannot come out of the agent's hand
            rule_kind = np.where(node < NUM_PICKABLE, rng.integers(0, 3, m),
                                 rng.integers(NEAR, TILE_NEAR + 1, m))
            a = _draw(rng, np.where(rule_kind == HOLD, NUM_PICKABLE, NUM_OBJECTS), made, used)
            _mark(used, a)
            b = _draw(rng, NUM_PICKABLE, made & (rule_kind == TILE_NEAR), used)
            _mark(used, b)
            children[:, 2 * j], children[:, 2 * j + 1] = a, b
            rules.append(_rule_rows(np.where(made, rule_kind, -1), a, b, node))
        nodes = children
    init.extend(nodes.T)  # the last level is placed

    for _ in range(params.num_distractor_objects):  # repeats allowed, never a chain object
        init.append(_draw(rng, NUM_OBJECTS, everyone, used))

    count = (rng.integers(0, params.max_distractor_rules + 1, m) if params.sample_distractor_rules
             else np.full(m, params.max_distractor_rules))
    placed = used.copy()  # a distractor's inputs are placed unless they exist already
    for i in range(params.max_distractor_rules):
        active = i < count
        product = _draw(rng, _PRODUCTS.size, active, used, table=_PRODUCTS)
        rule_kind = rng.integers(0, 3, m)
        a = _draw(rng, np.where(rule_kind == HOLD, NUM_PICKABLE, NUM_OBJECTS), active)
        b = _draw(rng, NUM_PICKABLE, active & (rule_kind == TILE_NEAR), differ=a)
        for obj in (a, b):
            new = (obj >= 0) & ~placed[np.arange(m), obj]
            init.append(np.where(new, obj, -1))
            _mark(placed, np.where(new, obj, -1))
        rules.append(_rule_rows(np.where(active, rule_kind, -1), a, b, product))

    rules = np.stack(rules, axis=1) if rules else np.zeros((m, 1, 7), dtype=np.uint8)
    rules = _compact(rules, rules[..., 0] != 0)
    init = np.stack(init, axis=1).astype(np.int8)  # indices -1..NUM_OBJECTS
    return goals.astype(np.uint8), rules, _compact(init, init >= 0)


def _show_progress(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else bool(progress)


def generate_benchmark(level: str | LevelParams, num_rulesets: int, seed: int,
                       progress: bool | None = None) -> Benchmark:
    """`num_rulesets` distinct rulesets of `level`, the same for the same seed.

    progress: a tqdm bar on stderr; None shows it when stderr is a terminal.
    """
    params = level_params(level)
    limit = capacity(params)
    if num_rulesets < 1:
        raise ValueError(f"num_rulesets must be at least 1, got {num_rulesets}")
    if limit is not None and num_rulesets > limit:
        raise ValueError(f"level {level!r} allows only {limit} distinct rulesets, "
                         f"asked for {num_rulesets}")
    rng = np.random.default_rng(seed)
    goals, rules, init, keys = [], [], [], []
    have, idle = 0, 0
    with tqdm(total=num_rulesets, desc=f"xland {_level_name(level)}", unit="ruleset",
              disable=not _show_progress(progress)) as bar:
        while have < num_rulesets:
            todo = max(num_rulesets - have, _MIN_ROUND)
            for start in range(0, todo, _CHUNK):
                chunk_goals, chunk_rules, chunk_init = _sample(params, min(_CHUNK, todo - start),
                                                               rng)
                goals.append(chunk_goals)
                rules.append(chunk_rules)
                init.append(chunk_init)
                keys.append(canonical_keys(chunk_goals, chunk_rules))
            all_keys = np.concatenate(keys)
            _, first = np.unique(all_keys, axis=0, return_index=True)
            idle = idle + 1 if first.size == have else 0
            if idle > _MAX_IDLE_ROUNDS:
                raise RuntimeError(f"found only {have} distinct rulesets of level {level!r}")
            have = min(first.size, num_rulesets)
            bar.update(have - bar.n)
    keep = np.sort(first)[:num_rulesets]
    goals, rules = np.concatenate(goals)[keep], np.concatenate(rules)[keep]
    init = np.concatenate(init)[keep]
    num_rules = max(1, int((rules[..., 0] != 0).sum(axis=1).max()))
    num_init = int((init >= 0).sum(axis=1).max())
    return Benchmark(goals, rules[:, :num_rules], _OBJECT_TABLE[init[:, :num_init]],
                     params=generation_params(level, num_rulesets, seed))
