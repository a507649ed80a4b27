"""XLand-MiniGrid's ruleset sampler (its scripts/ruleset_generator.py), vectorized in numpy.

Per ruleset: a goal of 11 kinds (agent-hold, agent-near and its 4 directions, tile-near and its
4 directions), uniform. Then `chain_depth` levels of a binary tree, built backwards: each object
still needed (popped from the end of the level's list) is, with probability `prune_prob`,
placed at the start; else a rule of the same 11 kinds produces it from new inputs (never an
object used so far), which the next level needs. The last level's inputs are placed at the
start. Then distractor objects (any not used, with replacement) and distractor rules (a product
not used, or VANISH; any inputs), whose inputs are placed too. A ruleset whose goal and rules
equal an earlier one's is dropped, so the result is the first `num_rulesets` distinct ones of
an i.i.d. stream, as XLand-MiniGrid's rejection loop keeps them. Its random stream is not
reproduced: same distribution, other draws.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

import numpy as np
from tqdm.auto import tqdm

from .benchmark import Benchmark
from .encoding import RULE_SIZE, VANISH, Colour, GoalId, RuleId, Tile

GENERATOR_VERSION = 2
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
        # the chain's objects are distinct: depth 3 uses at most 30 of the 60 pickable ones,
        # depth 4 could ask for 62
        if not 0 <= self.chain_depth <= MAX_CHAIN_DEPTH:
            raise ValueError(f"chain_depth must be in 0..{MAX_CHAIN_DEPTH}, got {self.chain_depth}")
        if not 0.0 <= self.prune_prob <= 1.0:
            raise ValueError(f"prune_prob must be in [0, 1], got {self.prune_prob}")
        if self.max_distractor_rules < 0 or self.num_distractor_objects < 0:
            raise ValueError("max_distractor_rules and num_distractor_objects must be >= 0, got "
                             f"{self.max_distractor_rules} and {self.num_distractor_objects}")


# the flags of XLand-MiniGrid's scripts/generate_benchmarks.sh
LEVELS = {
    "trivial": LevelParams(0, 0.0, 0, False, 3),
    "small": LevelParams(1, 0.3, 2, True, 2),
    "medium": LevelParams(2, 0.1, 3, True, 2),
    "high": LevelParams(3, 0.1, 4, True, 1),
}

# XLand-MiniGrid's sampling sets: 10 colours (no black); pickable shapes; goal tiles join them
# as the first object of agent-near goals and of tile-near goals and rules.
COLOURS = tuple(c for c in Colour if c not in (Colour.EMPTY, Colour.BLACK))
PICKABLE = tuple((int(t), int(c)) for t in (Tile.BALL, Tile.SQUARE, Tile.PYRAMID, Tile.KEY,
                                            Tile.STAR, Tile.HEX) for c in COLOURS)
GOAL_TILES = tuple((int(Tile.GOAL), int(c)) for c in COLOURS)
# Object indices: PICKABLE, then GOAL_TILES (so both sets are prefixes), then VANISH; index -1
# (the last row) reads as (0, 0), "no object".
_OBJECT_TABLE = np.array(PICKABLE + GOAL_TILES + (VANISH, (0, 0)), dtype=np.uint8)
NUM_PICKABLE = len(PICKABLE)
NUM_NEAR_A = NUM_PICKABLE + len(GOAL_TILES)  # what a near goal's or tile-near rule's a may be
_PRODUCTS = np.append(np.arange(NUM_PICKABLE), NUM_NEAR_A)  # what a distractor rule makes

# The 11 kinds, in one order for goals and rules: hold, agent-near (5), tile-near (5).
_GOAL_IDS = np.array([GoalId.AGENT_HOLD, GoalId.AGENT_NEAR, *range(GoalId.AGENT_NEAR_UP, 15),
                      GoalId.TILE_NEAR, *range(GoalId.TILE_NEAR_UP, 11)], dtype=np.uint8)
_RULE_IDS = np.array([RuleId.AGENT_HOLD, RuleId.AGENT_NEAR, *range(RuleId.AGENT_NEAR_UP, 12),
                      RuleId.TILE_NEAR, *range(RuleId.TILE_NEAR_UP, 8)], dtype=np.uint8)
NUM_KINDS = 11
_FIRST_TILE_NEAR = 6  # kinds 6-10 take two objects

_CHUNK = 200_000  # rulesets sampled at most at once (memory)
_MIN_ROUND = 8_192  # and at least


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
    """How many distinct rulesets a level without rules allows (its distinct goals: hold,
    agent-near in 5 kinds, tile-near in 5 kinds); None where it has rules (astronomically
    many)."""
    if params.chain_depth or params.max_distractor_rules:
        return None
    return NUM_PICKABLE + 5 * NUM_NEAR_A + 5 * NUM_NEAR_A * NUM_PICKABLE


def _draw(rng, high, active, avoid=None, table=None) -> np.ndarray:
    """Per row, uniform in [0, high) (or table[that]) and not marked in `avoid`; -1 where not
    `active`. Redrawing the rejected rows is uniform over what is left."""
    rows = active.shape[0]
    high = np.broadcast_to(high, (rows,))
    value = rng.integers(0, high)
    if table is not None:
        value = table[value]
    if avoid is not None:
        todo = np.flatnonzero(active)
        todo = todo[avoid[todo, value[todo]]]
        while todo.size:
            redrawn = rng.integers(0, high[todo])
            value[todo] = redrawn if table is None else table[redrawn]
            todo = todo[avoid[todo, value[todo]]]
    return np.where(active, value, -1)


def _mark(mask, values) -> None:
    rows = np.flatnonzero(values >= 0)
    mask[rows, values[rows]] = True


def _inputs(rng, active, avoid=None):
    """A rule's kind and inputs per row: a pickable a (a goal tile too for tile-near) and, for
    tile-near, a pickable b, both avoiding `avoid` (they may be equal); -1 where unused."""
    kind = rng.integers(0, NUM_KINDS, active.shape[0])
    pair = kind >= _FIRST_TILE_NEAR
    a = _draw(rng, np.where(pair, NUM_NEAR_A, NUM_PICKABLE), active, avoid)
    b = _draw(rng, NUM_PICKABLE, active & pair, avoid)
    return np.where(active, kind, -1), a, b


def _rule_rows(kind, a, b, product) -> np.ndarray:
    """(m, 7) rule vectors in XLand-MiniGrid's layouts; kind -1 gives an empty rule."""
    table = _OBJECT_TABLE
    pair = (kind >= _FIRST_TILE_NEAR)[:, None]
    rows = np.concatenate([_RULE_IDS[kind][:, None], table[a],
                           np.where(pair, table[b], table[product]),
                           np.where(pair, table[product], 0)], axis=1)
    rows[kind < 0] = 0
    return rows


def _compact(values, present) -> np.ndarray:
    """Move the present entries of each row to its front, keeping their order."""
    order = np.argsort(~present, axis=1, kind="stable")
    expand = (slice(None), slice(None)) + (None,) * (values.ndim - 2)
    return np.take_along_axis(values, order[expand], axis=1)


def _sample(params: LevelParams, m: int, rng: np.random.Generator):
    """m rulesets, not yet distinct: goals (m, 5), rules (m, R, 7) as XLand-MiniGrid lays them
    out, padded with empty rules, and initial objects (m, K) as indices (-1 none)."""
    used = np.zeros((m, _OBJECT_TABLE.shape[0] - 1), dtype=bool)
    everyone = np.ones(m, dtype=bool)
    kind = rng.integers(0, NUM_KINDS, m)
    pair = kind >= _FIRST_TILE_NEAR
    goal_a = _draw(rng, np.where(kind == 0, NUM_PICKABLE, NUM_NEAR_A), everyone)
    goal_b = _draw(rng, NUM_PICKABLE, pair)
    _mark(used, goal_a)
    _mark(used, goal_b)
    goals = np.concatenate([_GOAL_IDS[kind][:, None], _OBJECT_TABLE[goal_a],
                            _OBJECT_TABLE[goal_b]], axis=1)

    chain, init = [], []
    needed = np.stack([goal_a, goal_b], axis=1)  # a level's list of objects, -1 for none
    if params.chain_depth == 0:
        init.extend(needed.T)
    for level in range(params.chain_depth):
        last = level == params.chain_depth - 1
        inputs = []
        for node in needed.T[::-1]:  # popped from the end of the list
            active = node >= 0
            pruned = active & (rng.random(m) < params.prune_prob)
            init.append(np.where(pruned, node, -1))
            rule_kind, a, b = _inputs(rng, active & ~pruned, used)
            _mark(used, a)
            _mark(used, b)
            inputs.extend((a, b))
            if last:
                init.extend((a, b))
            chain.append(_rule_rows(rule_kind, a, b, node))
        needed = np.stack(inputs, axis=1)

    for _ in range(params.num_distractor_objects):  # with replacement, never a used object
        init.append(_draw(rng, NUM_NEAR_A, everyone, used))

    count = (rng.integers(0, params.max_distractor_rules + 1, m) if params.sample_distractor_rules
             else np.full(m, params.max_distractor_rules))
    distractors = []
    for i in range(params.max_distractor_rules):
        active = i < count
        product = _draw(rng, _PRODUCTS.size, active, used, table=_PRODUCTS)
        rule_kind, a, b = _inputs(rng, active)
        init.extend((a, b))
        distractors.append(_rule_rows(rule_kind, a, b, product))

    if params.chain_depth == 0:  # XLand-MiniGrid's placeholder: an empty rule first
        rules = [np.zeros((m, RULE_SIZE), dtype=np.uint8), *distractors]
    else:
        rules = chain + distractors
    rules = np.stack(rules, axis=1)
    if params.chain_depth:
        rules = _compact(rules, rules[..., 0] != 0)
    init = np.stack(init, axis=1).astype(np.int8)
    return goals.astype(np.uint8), rules, _compact(init, init >= 0)


def _keys(goals: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """The exact encoding of each ruleset's goal and rules as one opaque (void) value."""
    key = np.ascontiguousarray(np.concatenate([goals, rules.reshape(len(rules), -1)], axis=1))
    return key.view(f"V{key.shape[1]}")[:, 0]


def _show_progress(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else bool(progress)


def _width(present: np.ndarray) -> int:
    """The least width holding every row's present entries (at least 1)."""
    last = np.where(present.any(axis=1), present.shape[1] - np.argmax(present[:, ::-1], axis=1),
                    0)
    return max(1, int(last.max(initial=0)))


def generate_benchmark(level: str | LevelParams, num_rulesets: int, seed: int,
                       progress: bool | None = None) -> Benchmark:
    """`num_rulesets` distinct rulesets of `level`, the same for the same arguments; rules and
    init_tiles padded to the widest ruleset, as XLand-MiniGrid's files are.

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
    parts, seen = [], None  # the kept rulesets; their keys, sorted
    drawn = have = 0
    with tqdm(total=num_rulesets, desc=f"xland {_level_name(level)}", unit="ruleset",
              disable=not _show_progress(progress)) as bar:
        while have < num_rulesets:
            distinct_rate = have / drawn if drawn else 1.0  # so far
            m = min(max(int((num_rulesets - have) / distinct_rate), _MIN_ROUND), _CHUNK)
            goals, rules, init = _sample(params, m, rng)
            drawn += m
            keys = _keys(goals, rules)
            _, first = np.unique(keys, return_index=True)
            new = np.sort(first)  # first occurrences, in sampling order
            if seen is not None:
                at = np.minimum(np.searchsorted(seen, keys[new]), len(seen) - 1)
                new = new[seen[at] != keys[new]]
            new = new[:num_rulesets - have]
            parts.append((goals[new], rules[new], init[new]))
            new_keys = np.sort(keys[new])
            seen = new_keys if seen is None else np.insert(seen, np.searchsorted(seen, new_keys),
                                                           new_keys)
            have += new.size
            bar.update(new.size)
    goals, rules, init = (np.concatenate(arrays) for arrays in zip(*parts))
    rules = rules[:, :_width(rules[..., 0] != 0)]
    init = init[:, :_width(init >= 0)]
    num_rules = (rules[..., 0] != 0).sum(axis=1, keepdims=True).astype(np.uint8)
    return Benchmark(goals, rules, _OBJECT_TABLE[init], num_rules,
                     params=generation_params(level, num_rulesets, seed))
