"""craftium_ma.xland: XLand-MiniGrid's encoding, its ruleset sampler, benchmarks and their
files (no engine). Reference: tests/data/xminigrid (made by xminigrid 0.9.3 itself)."""

import bz2
import json
import os
import pickle
import subprocess
import sys
import warnings
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from craftium_ma.xland import (LEVELS, Benchmark, Colour, GoalId, LevelParams, RuleId, Ruleset,
                               Tile, generate_benchmark, goal_reward, load_benchmark,
                               load_benchmark_from_path, mission, registered_benchmarks)
from craftium_ma.xland import benchmark as benchmark_module
from craftium_ma.xland import generator
from craftium_ma.xland.encoding import (VANISH, goal_objects, goal_text, rule_inputs,
                                        rule_product, rule_text)

DATA = Path(__file__).parent / "data" / "xminigrid"
RED_BALL, BLUE_SQUARE, GREEN_KEY = (Tile.BALL, Colour.RED), (Tile.SQUARE, Colour.BLUE), \
    (Tile.KEY, Colour.GREEN)
PINK_GOAL, RED_DOOR = (Tile.GOAL, Colour.PINK), (Tile.DOOR_LOCKED, Colour.RED)
N = 3000  # rulesets per level in most tests

# XLand-MiniGrid's sampling sets, from its scripts/ruleset_generator.py
COLOURS = {1, 2, 3, 4, 5, 6, 8, 9, 10, 11}  # no black (7)
PICKABLE = {(t, c) for t in (3, 4, 5, 7, 11, 12) for c in COLOURS}
NEAR_A = PICKABLE | {(6, c) for c in COLOURS}  # goal tiles may be a tile-near's first object
PRODUCTS = PICKABLE | {(1, 7)}
ONE_OBJECT_GOALS, PAIR_GOALS = {3, 11, 12, 13, 14}, {4, 7, 8, 9, 10}
ONE_OBJECT_RULES, PAIR_RULES = {1, 2, 8, 9, 10, 11}, {3, 4, 5, 6, 7}


def goal(gid, a=(0, 0), b=(0, 0)):
    return [gid, *a, *b]


def rule(rid, a=(0, 0), b=(0, 0), c=(0, 0)):
    """[id, a, b, c]: for one-object rules b is the product and c unused, as upstream."""
    return [rid, *a, *b, *c]


@cache
def upstream(level):
    """XLand-MiniGrid's own 500 rulesets of a level."""
    with np.load(DATA / f"rulesets_{level}.npz") as data:
        return {name: data[name] for name in data.files}


@pytest.fixture(scope="module")
def levels():
    return {level: generate_benchmark(level, N, seed=7, progress=False) for level in LEVELS}


def rows(bench):
    """(goal, rules, init_tiles, num_rules) per ruleset of a Benchmark or an upstream dict."""
    get = bench.get if isinstance(bench, dict) else lambda name: getattr(bench, name)
    return zip(get("goals"), get("rules"), get("init_tiles"), get("num_rules")[:, 0])


# ---------------------------------------------------------------- encoding

@pytest.mark.parametrize("make, message", [
    (lambda: Ruleset(goal(1, RED_BALL)[:4], [], []), r"goal has shape \(4,\)"),
    (lambda: Ruleset(goal(15, RED_BALL), [], []), "unknown goal id 15"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(12, RED_BALL)], []),
     r"rules\[0\]: unknown rule id 12"),
    (lambda: Ruleset(goal(1, (13, 1)), [], []), r"goal \(agent_hold\): a \(slots 1-2\) has "
     "unknown tile 13"),
    (lambda: Ruleset(goal(3, (4, 12)), [], []), "unknown colour 12"),
    (lambda: Ruleset(goal(1, RED_BALL, GREEN_KEY), [], []),
     r"goal \(agent_hold\): slots 3-4 are unused by this id and must be zero, got \(7, 2\)"),
    (lambda: Ruleset(goal(6, (3, 4), (1, 0)), [], []), r"agent_on_position\): slots 3-4"),
    (lambda: Ruleset(goal(0, RED_BALL), [], []), r"goal \(empty\): slots 1-2"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(1, RED_BALL, GREEN_KEY, BLUE_SQUARE)], []),
     r"rules\[0\] \(agent_hold\): slots 5-6 are unused"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(0), rule(3, RED_BALL, GREEN_KEY, (3, 12))], []),
     r"rules\[1\] \(tile_near\): product \(slots 5-6\) has unknown colour 12"),
    (lambda: Ruleset(goal(1, RED_BALL), np.zeros(7), []), r"rules has shape \(7,\)"),
    (lambda: Ruleset(goal(1, RED_BALL), [], [RED_BALL, (13, 0)]),
     r"init_tiles\[1\] has unknown tile 13"),
    (lambda: Ruleset(goal(1, RED_BALL), [], [[4, -1]]), "init_tiles has values outside 0-255"),
    (lambda: Ruleset(goal(5, RED_BALL, (300, 2)), [], []), "goal has values outside 0-255"),
    (lambda: Ruleset(np.array(goal(1, RED_BALL), dtype=float), [], []), "dtype float64"),
])
def test_bad_input_names_what_is_wrong(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_valid_rulesets_of_every_id():
    goals = [goal(0), goal(1, RED_BALL), goal(2, PINK_GOAL), goal(3, RED_DOOR),
             goal(4, PINK_GOAL, RED_BALL), goal(5, RED_BALL, (3, 200)), goal(6, (3, 4)),
             *(goal(g, RED_BALL, BLUE_SQUARE) for g in range(7, 11)),
             *(goal(g, PINK_GOAL) for g in range(11, 15))]
    rules = [rule(0), rule(1, RED_BALL, VANISH), rule(2, RED_DOOR, PINK_GOAL),
             *(rule(r, GREEN_KEY, GREEN_KEY, RED_BALL) for r in range(3, 8)),
             *(rule(r, PINK_GOAL, BLUE_SQUARE) for r in range(8, 12)), rule(0)]
    assert sorted({g[0] for g in goals}) == list(GoalId)
    assert sorted({r[0] for r in rules}) == list(RuleId)
    for g in goals:
        ruleset = Ruleset(np.array(g, dtype=np.int32), rules, [RED_BALL, PINK_GOAL, (0, 0)])
        assert ruleset.goal.dtype == np.uint8 and ruleset.goal.tolist() == g
        assert ruleset.rules.shape == (len(rules), 7), "padding is kept"
        assert ruleset.init_tiles.shape == (3, 2)
        assert not ruleset.goal.flags.writeable and not ruleset.rules.flags.writeable
    assert Ruleset(goal(1, RED_BALL), [], []).rules.shape == (0, 7)


@pytest.mark.parametrize("level", LEVELS)
def test_upstream_rulesets_are_accepted_as_they_are(level):
    data = upstream(level)
    assert data["goals"].dtype == np.int32  # upstream's own (it meant uint8)
    for g, rules, init, _ in rows(data):
        ruleset = Ruleset(g, rules, init)
        assert ruleset.goal.tolist() == g.tolist()
        assert np.array_equal(ruleset.rules, rules) and np.array_equal(ruleset.init_tiles, init)
        assert mission(ruleset)


def test_upstream_data_holds_the_cases_a_stricter_check_refused():
    """An agent-hold rule producing a goal tile, a tile-near rule of one object twice, a goal
    tile as a tile-near rule's input: all in upstream's rulesets, all accepted above."""
    rules = np.concatenate([upstream(level)["rules"].reshape(-1, 7) for level in LEVELS])
    pair = np.isin(rules[:, 0], list(PAIR_RULES))
    assert ((rules[:, 0] == RuleId.AGENT_HOLD) & (rules[:, 3] == Tile.GOAL)).any()
    assert (pair & (rules[:, 1:3] == rules[:, 3:5]).all(axis=1)).any()
    assert (pair & (rules[:, 1] == Tile.GOAL)).any()


def test_objects_of_goals_and_rules():
    assert goal_objects(goal(4, RED_BALL, BLUE_SQUARE)) == [RED_BALL, BLUE_SQUARE]
    assert goal_objects(goal(12, RED_BALL)) == [RED_BALL]
    assert goal_objects(goal(5, RED_BALL, (2, 3))) == [RED_BALL]
    assert goal_objects(goal(6, (2, 3))) == []
    assert rule_inputs(rule(9, RED_BALL, GREEN_KEY)) == [RED_BALL]
    assert rule_product(rule(9, RED_BALL, GREEN_KEY)) == GREEN_KEY
    assert rule_inputs(rule(5, RED_BALL, BLUE_SQUARE, VANISH)) == [RED_BALL, BLUE_SQUARE]
    assert rule_product(rule(5, RED_BALL, BLUE_SQUARE, VANISH)) == VANISH
    assert rule_inputs(rule(0)) == [] and rule_product(rule(0)) is None


def test_mission_text():
    assert mission(Ruleset(goal(4, RED_BALL, BLUE_SQUARE), [], [])) == \
        "put the red ball next to the blue square"
    rules = [rule(1, (Tile.KEY, Colour.ORANGE), GREEN_KEY), rule(0),
             rule(3, PINK_GOAL, RED_BALL, VANISH)]
    assert mission(Ruleset(goal(1, GREEN_KEY), rules, [])) \
        == ("pick up the green key; rules: an orange key you hold becomes a green key; "
            "a pink goal and a red ball next to each other disappear")
    assert goal_text(goal(9, RED_BALL, BLUE_SQUARE)) == \
        "put the blue square one cell down from the red ball"
    assert goal_text(goal(12, RED_DOOR)) == "stand with the red door locked one cell right from you"
    assert rule_text(rule(11, RED_BALL, VANISH)) == "a red ball one cell left from you disappears"
    assert goal_text(goal(6, (3, 4))) == "go to cell (3, 4)"
    assert goal_text(goal(5, RED_BALL, (3, 4))) == "put the red ball on cell (3, 4)"
    assert rule_text(rule(5, RED_BALL, PINK_GOAL, GREEN_KEY)) == \
        "a pink goal one cell right from a red ball: together they become a green key"


def test_key_is_the_exact_encoding_of_goal_and_rules():
    hold, near = rule(1, RED_BALL, GREEN_KEY), rule(3, RED_BALL, BLUE_SQUARE, PINK_GOAL)
    key = Ruleset(goal(4, RED_BALL, BLUE_SQUARE), [hold, near], [RED_BALL]).key()
    assert key == (4, *RED_BALL, *BLUE_SQUARE, *hold, *near)
    assert Ruleset(goal(4, RED_BALL, BLUE_SQUARE), [hold, near, rule(0)], []).key() == key
    assert Ruleset(goal(4, RED_BALL, BLUE_SQUARE), [near, hold], []).key() != key
    assert Ruleset(goal(4, BLUE_SQUARE, RED_BALL), [hold, near], []).key() != key


def test_goal_reward():
    assert goal_reward(0, 100) == 1.0
    assert goal_reward(100, 100) == pytest.approx(0.1)
    assert goal_reward(50, 100) == pytest.approx(0.55)
    with pytest.raises(ValueError, match="step=101"):
        goal_reward(101, 100)


# ---------------------------------------------------------------- generator

def product_of(r):
    return (r[5], r[6]) if r[0] in PAIR_RULES else (r[3], r[4])


def inputs_of(r, avoid=frozenset()):
    """A rule's inputs, checked against the sets XLand-MiniGrid draws them from."""
    a, b = (r[1], r[2]), (r[3], r[4])
    if r[0] in PAIR_RULES:
        assert a in NEAR_A - avoid and b in PICKABLE - avoid, r
        return [a, b]
    assert r[0] in ONE_OBJECT_RULES and a in PICKABLE - avoid and r[5:] == (0, 0), r
    return [a]


def replay(g, rules, init, num_rules, params):
    """Walk a ruleset the way XLand-MiniGrid's script builds it, asserting each draw came from
    the set it draws from; returns (levels that have a rule, distractor rules)."""
    g = tuple(int(v) for v in g)
    if g[0] == GoalId.AGENT_HOLD:
        objects = [(g[1], g[2])]
        assert objects[0] in PICKABLE and g[3:] == (0, 0)
    elif g[0] in ONE_OBJECT_GOALS:
        objects = [(g[1], g[2])]
        assert objects[0] in NEAR_A and g[3:] == (0, 0)
    else:
        assert g[0] in PAIR_GOALS and (g[1], g[2]) in NEAR_A and (g[3], g[4]) in PICKABLE
        objects = [(g[1], g[2]), (g[3], g[4])]
    rules = [tuple(int(v) for v in r) for r in rules]
    init = [tuple(int(v) for v in t) for t in init]
    assert sum(r[0] != 0 for r in rules) == num_rules
    used, chain_init, position, depth = set(objects), [], 0, 0
    if params.chain_depth == 0:
        chain_init, position = list(objects), 1
        assert rules[0] == (0,) * 7
    chain = list(objects)
    for level in range(params.chain_depth):
        below = []
        while chain:
            needed = chain.pop()
            r = rules[position] if position < len(rules) else (0,) * 7
            if r[0] and product_of(r) == needed:
                inputs = inputs_of(r, frozenset(used))
                used.update(inputs)
                below += inputs
                position += 1
                chain_init += inputs if level == params.chain_depth - 1 else []
            else:
                chain_init.append(needed)
        depth += bool(below)
        chain = below
    # a pruned object and a produced one may be equal objects: compare the chain's part unordered
    assert Counter(init[:len(chain_init)]) == Counter(chain_init)
    rest = init[len(chain_init):]
    objects = rest[:params.num_distractor_objects]
    assert len(objects) == params.num_distractor_objects
    assert set(objects) <= NEAR_A - used
    distractor_inputs = []
    distractors = [r for r in rules[position:] if r[0]]
    assert rules[position:] == distractors + [(0,) * 7] * (len(rules) - position - len(distractors))
    for r in distractors:
        assert product_of(r) in PRODUCTS - used, r
        distractor_inputs += inputs_of(r)
    padding = rest[params.num_distractor_objects + len(distractor_inputs):]
    assert rest[params.num_distractor_objects:][:len(distractor_inputs)] == distractor_inputs
    assert set(padding) <= {(0, 0)}
    return depth, len(distractors)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("source", ["upstream", "ours"])
def test_rulesets_are_built_as_xland_minigrids(levels, level, source):
    """The same walk passes on upstream's rulesets (so it reads its script right) and ours."""
    params = LEVELS[level]
    bench = upstream(level) if source == "upstream" else levels[level]
    depths, distractors = map(Counter, zip(*(replay(*row, params) for row in rows(bench))))
    assert max(depths) == params.chain_depth
    if params.prune_prob:
        assert min(depths) < params.chain_depth
    assert sorted(distractors) == (list(range(params.max_distractor_rules + 1))
                                   if params.sample_distractor_rules
                                   else [params.max_distractor_rules])
    if source == "ours":  # padded to the widest ruleset, as upstream pads
        non_empty = (bench.rules[..., 0] != 0).sum(axis=1)
        assert bench.num_rules[:, 0].tolist() == non_empty.tolist()
        assert bench.rules.shape[1] == max(1, non_empty.max() + (params.chain_depth == 0))
        assert bench.init_tiles.shape[1] == (bench.init_tiles[..., 0] != 0).sum(axis=1).max()
        assert bench.goals.dtype == bench.rules.dtype == bench.num_rules.dtype == np.uint8


def level_features(data):
    """What the statistics test compares, each a flat array of categories."""
    goals, rules = data["goals"], data["rules"][data["rules"][..., 0] != 0]
    pair_rule = np.isin(rules[:, 0], list(PAIR_RULES))
    pair_goal = np.isin(goals[:, 0], list(PAIR_GOALS))
    objects = np.concatenate([goals[:, 1:3], goals[pair_goal, 3:5], rules[:, 1:3],
                              rules[pair_rule, 3:5]])
    return {"goal id": goals[:, 0], "rule id": rules[:, 0],
            "number of rules": data["num_rules"][:, 0],
            "init tiles": (data["init_tiles"][..., 0] != 0).sum(axis=1),
            "input tile": objects[:, 0], "input colour": objects[:, 1],
            "product tile": np.where(pair_rule, rules[:, 5], rules[:, 3])}


def homogeneity_p(ours, theirs):
    """Chi-square test that two samples of categories come from one distribution; categories
    expected fewer than 5 times in the smaller sample are pooled."""
    from scipy.stats import chi2_contingency
    categories = np.union1d(ours, theirs)
    table = np.array([[np.sum(sample == c) for c in categories] for sample in (ours, theirs)])
    expected = table.sum(axis=0) * min(len(ours), len(theirs)) / table.sum()
    rare = expected < 5
    if rare.any():
        table = np.column_stack([table[:, ~rare], table[:, rare].sum(axis=1)])
        if expected[rare].sum() < 5 and table.shape[1] > 2:
            table[:, -2] += table[:, -1]
            table = table[:, :-1]
    if table.shape[1] < 2:
        return 1.0
    return chi2_contingency(table, correction=False).pvalue


P_MIN = 1e-6  # at most ~30 tests: a correct sampler fails one with probability < 1e-4


def sample_like_upstream(level):
    """The features of eight benchmarks of 500 rulesets, the size of upstream's sample: what
    rejecting duplicates does to the distribution depends on the size (the trivial level's 60
    agent-hold goals fill up first)."""
    samples = [level_features(vars(generate_benchmark(level, 500, seed, progress=False)))
               for seed in range(8)]
    return {name: np.concatenate([sample[name] for sample in samples]) for name in samples[0]}


@pytest.mark.parametrize("level", LEVELS)
def test_statistics_match_upstream(level):
    ours, theirs = sample_like_upstream(level), level_features(upstream(level))
    p = {name: homogeneity_p(ours[name], theirs[name]) for name in ours}
    assert min(p.values()) > P_MIN, p


def test_statistics_test_fails_a_sampler_without_directions(levels):
    """The old sampler made no directional goals or rules: the test above rejects that."""
    old = level_features(vars(levels["medium"]))
    old["goal id"] = np.select([old["goal id"] >= 11, old["goal id"] >= 7],
                               [GoalId.AGENT_NEAR, GoalId.TILE_NEAR], old["goal id"])
    old["rule id"] = np.select([old["rule id"] >= 8, old["rule id"] >= 4],
                               [RuleId.AGENT_NEAR, RuleId.TILE_NEAR], old["rule id"])
    theirs = level_features(upstream("medium"))
    assert homogeneity_p(old["goal id"], theirs["goal id"]) < 1e-30
    assert homogeneity_p(old["rule id"], theirs["rule id"]) < 1e-30


def test_trivial_holds_every_distinct_goal_once():
    """The trivial level's distinct rulesets are its goals, counted here from the sets."""
    goals = {(1, *a, 0, 0) for a in PICKABLE}
    goals |= {(gid, *a, 0, 0) for gid in ONE_OBJECT_GOALS for a in NEAR_A}
    goals |= {(gid, *a, *b) for gid in PAIR_GOALS for a in NEAR_A for b in PICKABLE}
    count = len(goals)
    assert count == 21_410 == generator.capacity(LEVELS["trivial"])
    bench = generate_benchmark("trivial", count, seed=1, progress=False)
    assert {tuple(g) for g in bench.goals.tolist()} == goals
    with pytest.raises(ValueError, match=f"allows only {count} distinct rulesets"):
        generate_benchmark("trivial", count + 1, seed=1, progress=False)


@pytest.mark.parametrize("level", LEVELS)
def test_rulesets_are_distinct(levels, level):
    keys = {Ruleset(*row[:3]).key() for row in rows(levels[level])}
    assert len(keys) == N


def test_small_level_collides_often_enough_to_test_uniqueness():
    """Sampled without rejection, small rulesets repeat within N: so the test above does check
    the rejection."""
    goals, rules, _ = generator._sample(LEVELS["small"], N, np.random.default_rng(7))
    keys = {(*g, *r.ravel()) for g, r in zip(goals.tolist(), rules)}
    assert len(keys) < N - 10


def test_same_seed_same_rulesets_other_seed_others(levels):
    again = generate_benchmark("medium", N, seed=7, progress=False)
    for name in ("goals", "rules", "init_tiles", "num_rules"):
        assert np.array_equal(getattr(again, name), getattr(levels["medium"], name))
    other = generate_benchmark("medium", N, seed=8, progress=False)
    assert not np.array_equal(other.goals, levels["medium"].goals)


def test_generate_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown level 'huge'"):
        generate_benchmark("huge", 10, seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        generate_benchmark("small", 0, seed=0)
    with pytest.raises(ValueError, match="chain_depth must be in 0..3, got 4"):
        LevelParams(4, 0.1, 0, False, 0)
    with pytest.raises(ValueError, match=r"prune_prob must be in \[0, 1\], got 1.5"):
        LevelParams(1, 1.5, 0, False, 0)
    params = LevelParams(3, 0.0, 2, False, 0)
    custom = generate_benchmark(params, 200, seed=0, progress=False)
    assert custom.params["level"] == "custom"
    assert all(replay(*row, params) == (3, 2) for row in rows(custom))
    params = LevelParams(0, 0.0, 2, True, 1)  # the empty placeholder rule, then distractors
    assert all(replay(*row, params) for row in rows(generate_benchmark(params, 200, seed=0)))


# ---------------------------------------------------------------- benchmark

def test_get_and_sample_ruleset(levels):
    bench = levels["high"]
    ruleset = bench.get_ruleset(5)
    for name, row in (("goal", bench.goals[5]), ("rules", bench.rules[5]),
                      ("init_tiles", bench.init_tiles[5])):
        assert np.array_equal(getattr(ruleset, name), row), "kept as stored, padding included"
    sampled = bench.sample_ruleset(np.random.default_rng(3))
    index = int(np.random.default_rng(3).integers(bench.num_rulesets()))
    assert sampled.key() == bench.get_ruleset(index).key()
    with pytest.raises(IndexError, match=f"ruleset_id {N} out of range"):
        bench.get_ruleset(N)


def test_shuffle_is_a_permutation(levels):
    bench = levels["small"]
    shuffled = bench.shuffle(np.random.default_rng(0))
    keys = [r.key() for r in map(bench.get_ruleset, range(N))]
    shuffled_keys = [r.key() for r in map(shuffled.get_ruleset, range(N))]
    assert sorted(keys) == sorted(shuffled_keys) and keys != shuffled_keys
    order = [keys.index(k) for k in shuffled_keys[:50]]
    assert np.array_equal(shuffled.num_rules[:50], bench.num_rules[order])
    again = bench.shuffle(np.random.default_rng(0))
    assert np.array_equal(again.rules, shuffled.rules)


def test_split_sizes_and_disjointness(levels):
    bench = levels["small"].shuffle(np.random.default_rng(1))
    train, test = bench.split(0.8)
    assert (train.num_rulesets(), test.num_rulesets()) == (round(0.8 * N), N - round(0.8 * N))
    train_keys = {train.get_ruleset(i).key() for i in range(len(train))}
    test_keys = {test.get_ruleset(i).key() for i in range(len(test))}
    assert not train_keys & test_keys and len(train_keys | test_keys) == N
    assert bench.split(0.0)[0].num_rulesets() == 0 and bench.split(1.0)[1].num_rulesets() == 0
    with pytest.raises(ValueError, match=r"prop must be in \[0, 1\], got 1.5"):
        bench.split(1.5)


def test_filter_split(levels):
    bench = levels["medium"]
    holds, others = bench.filter_split(lambda goals, rules: goals[:, 0] == GoalId.AGENT_HOLD)
    assert holds.num_rulesets() + others.num_rulesets() == N
    assert 0 < holds.num_rulesets() < N
    assert (holds.goals[:, 0] == GoalId.AGENT_HOLD).all()
    assert (others.goals[:, 0] != GoalId.AGENT_HOLD).all()
    with pytest.raises(ValueError, match="fn must return a bool array"):
        bench.filter_split(lambda goals, rules: goals[:, 0])


def test_registered_benchmarks_are_xland_minigrids():
    from xminigrid import benchmarks
    assert benchmark_module.UPSTREAM_FILES == benchmarks.NAME2HFFILENAME
    assert tuple(registered_benchmarks()) == benchmarks.registered_benchmarks()
    assert registered_benchmarks()["trivial-21k"] == ("trivial", 21_000)
    assert registered_benchmarks()["high-3m"] == ("high", 3_000_000)


def write_upstream_file(path, level):
    """A benchmark file exactly as XLand-MiniGrid writes one: its save_bz2_pickle of JAX
    arrays (here those of its rulesets in tests/data)."""
    import jax.numpy as jnp
    from xminigrid.benchmarks import save_bz2_pickle
    data = upstream(level)
    save_bz2_pickle({"generation_config": json.loads(str(data["generation_config"])),
                     **{k: jnp.asarray(data[k]) for k in ("goals", "rules", "init_tiles",
                                                          "num_rules")}}, str(path))


_LOAD_WITHOUT_JAX = """
import json, sys
sys.modules["jax"] = None  # import jax fails
import numpy as np
from craftium_ma.xland import load_benchmark_from_path
bench = load_benchmark_from_path(sys.argv[1])
assert not [m for m in sys.modules if m.startswith("jax") and sys.modules[m] is not None]
np.savez(sys.argv[2], goals=bench.goals, rules=bench.rules, init_tiles=bench.init_tiles,
         num_rules=bench.num_rules, params=json.dumps(bench.params))
"""


def test_upstream_file_loads_without_jax(tmp_path):
    from xminigrid.benchmarks import load_benchmark_from_path as upstream_load
    path, out = tmp_path / "high_1m_v3", tmp_path / "ours.npz"
    write_upstream_file(path, "high")
    subprocess.run([sys.executable, "-c", _LOAD_WITHOUT_JAX, str(path), str(out)], check=True,
                   env={**os.environ, "JAX_PLATFORMS": "cpu"})
    reference = upstream_load(str(path))
    with np.load(out) as ours:
        for name in ("goals", "rules", "init_tiles", "num_rules"):
            theirs = np.asarray(getattr(reference, name))
            assert ours[name].dtype == theirs.dtype and np.array_equal(ours[name], theirs), name
        assert json.loads(str(ours["params"]))["chain_depth"] == 3
    bench = load_benchmark_from_path(path)
    assert bench.goals.dtype == np.int32 and bench.num_rules.shape == (500, 1)
    assert bench.get_ruleset(7).key() == Ruleset(*(upstream("high")[k][7] for k in
                                                   ("goals", "rules", "init_tiles"))).key()


def test_upstream_file_with_other_classes_is_refused(tmp_path):
    path = tmp_path / "evil"
    with bz2.open(path, "wb") as file:
        pickle.dump({"goals": Counter()}, file)
    with pytest.raises(ValueError, match="refusing collections.Counter"):
        load_benchmark_from_path(path)
    with bz2.open(path, "wb") as file:
        pickle.dump({"goals": np.zeros((1, 5), np.uint8)}, file)
    with pytest.raises(ValueError, match="lacks init_tiles, num_rules, rules"):
        load_benchmark_from_path(path)


def test_load_benchmark_reads_upstreams_file_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAND_MINIGRID_DATA", str(tmp_path))
    monkeypatch.setenv("CRAFTIUM_MA_CACHE", str(tmp_path / "cache"))
    write_upstream_file(tmp_path / "small_1m_v3", "small")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = load_benchmark("small-1m")
    for name in ("goals", "rules", "init_tiles", "num_rules"):
        assert np.array_equal(getattr(bench, name), upstream("small")[name])
    assert not (tmp_path / "cache").exists()


def test_load_benchmark_generates_caches_and_checks_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAND_MINIGRID_DATA", str(tmp_path / "upstream"))
    monkeypatch.setenv("CRAFTIUM_MA_CACHE", str(tmp_path / "cache"))
    name = "trivial-21k"
    with pytest.warns(UserWarning, match=f"trivial_21k is not in {tmp_path / 'upstream'}.*"
                      f"huggingface.co/datasets/Howuhh/xland_minigrid/resolve/main/trivial_21k"):
        first = load_benchmark(name, progress=False)
    assert first.num_rulesets() == 21_000
    path = tmp_path / "cache" / "xland" / f"{name}.npz"
    assert path.exists() and os.listdir(path.parent) == [path.name]
    assert first.params == generator.generation_params("trivial", 21_000, 0)

    def no_generation(*args, **kwargs):
        raise AssertionError("the cached file should have been used")
    with monkeypatch.context() as patched, pytest.warns(UserWarning, match="generated locally"):
        patched.setattr(generator, "generate_benchmark", no_generation)
        cached = load_benchmark(name)
    for field in ("goals", "rules", "init_tiles", "num_rules"):
        assert np.array_equal(getattr(cached, field), getattr(first, field))

    monkeypatch.setitem(benchmark_module._REGISTERED, "high-3m", ("high", 300))
    stale = Benchmark(*(getattr(first, k)[:5] for k in ("goals", "rules", "init_tiles",
                                                       "num_rules")),
                      params=generator.generation_params("high", 300, 1))
    stale.save(tmp_path / "cache" / "xland" / "high-3m.npz")
    with pytest.warns(UserWarning, match="generated locally"), \
            pytest.warns(UserWarning, match="generating it again"):
        regenerated = load_benchmark("high-3m", progress=False)
    assert regenerated.num_rulesets() == 300 and regenerated.params["level"] == "high"

    with pytest.raises(ValueError, match="unknown benchmark 'trivial-1'"):
        load_benchmark("trivial-1")


def test_save_is_atomic(tmp_path, monkeypatch, levels):
    path = tmp_path / "bench.npz"
    levels["trivial"].save(path)

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(benchmark_module.np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        levels["small"].save(path)
    assert os.listdir(tmp_path) == ["bench.npz"]
    assert np.array_equal(Benchmark.load(path).goals, levels["trivial"].goals)


def test_benchmark_checks_its_arrays(levels):
    bench = levels["small"]
    with pytest.raises(ValueError, match=rf"rules has shape \({N - 1}, \d+, 7\); expected {N}"):
        Benchmark(bench.goals, bench.rules[1:], bench.init_tiles, bench.num_rules)
    with pytest.raises(ValueError, match="num_rules has shape"):
        Benchmark(bench.goals, bench.rules, bench.init_tiles, bench.num_rules[:, 0])
    with pytest.raises(ValueError, match="goals has dtype float64; expected integers"):
        Benchmark(bench.goals.astype(float), bench.rules, bench.init_tiles, bench.num_rules)
