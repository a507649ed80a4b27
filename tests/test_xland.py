"""craftium_ma.xland: encoding, the chain sampler, benchmarks and their cache (no engine)."""

import os
from collections import Counter

import numpy as np
import pytest

from craftium_ma.xland import (LEVELS, Benchmark, Colour, GoalId, LevelParams, RuleId, Ruleset,
                               Tile, generate_benchmark, goal_reward, load_benchmark, mission,
                               registered_benchmarks)
from craftium_ma.xland import benchmark as benchmark_module
from craftium_ma.xland import generator
from craftium_ma.xland.encoding import (FIXED_SHAPES, OBJECT_COLOURS, PICKABLE_SHAPES, VANISH,
                                        canonical_keys)

RED_BALL, BLUE_PYRAMID, GREEN_KEY = (Tile.BALL, Colour.RED), (Tile.PYRAMID, Colour.BLUE), \
    (Tile.KEY, Colour.GREEN)
RED_DOOR, GREY_PAD = (Tile.DOOR, Colour.RED), (Tile.PAD, Colour.GREY)
N = 2000  # rulesets per level in most tests (trivial has 2008)


def goal(gid, a=(0, 0), b=(0, 0)):
    return [gid, *a, *b]


def rule(rid, a=(0, 0), b=(0, 0), c=(0, 0)):
    return [rid, *a, *b, *c]


@pytest.fixture(scope="module")
def levels():
    return {level: generate_benchmark(level, N, seed=7, progress=False) for level in LEVELS}


def pair(vector, i):
    return int(vector[i]), int(vector[i + 1])


def task_key(ruleset):
    """The task a generated ruleset poses, written independently of encoding.canonical_keys:
    tile-near's objects unordered, rules a multiset."""
    g = ruleset.goal
    objects = frozenset([pair(g, 1), pair(g, 3)]) if g[0] == GoalId.TILE_NEAR else pair(g, 1)
    rules = Counter((int(r[0]), frozenset([pair(r, 1), pair(r, 3)]) if r[0] == RuleId.TILE_NEAR
                     else pair(r, 1), pair(r, 5)) for r in ruleset.rules)
    return int(g[0]), objects, frozenset(rules.items())


def analyse(ruleset):
    """Walk the chain back from the goal: its depth, the chain's and the distractors' rules, the
    objects placed because of them, and the chain's objects."""
    g = ruleset.goal
    frontier = [pair(g, 1)] + ([pair(g, 3)] if g[0] == GoalId.TILE_NEAR else [])
    chain_objects = set(frontier)
    assert len(chain_objects) == len(frontier)
    remaining = [tuple(int(v) for v in r) for r in ruleset.rules]
    depth, chain_rules, placed = 0, 0, []
    while frontier:
        below = []
        for obj in frontier:
            producers = [r for r in remaining if (r[5], r[6]) == obj]
            assert len(producers) <= 1
            if not producers:
                placed.append(obj)
                continue
            r = producers[0]
            remaining.remove(r)
            chain_rules += 1
            inputs = [(r[1], r[2])] + ([(r[3], r[4])] if r[0] == RuleId.TILE_NEAR else [])
            assert not chain_objects & set(inputs), "chain objects are distinct"
            chain_objects |= set(inputs)
            below += inputs
        depth += bool(below)
        frontier = below
    for r in remaining:  # distractor rules: their inputs are placed unless they exist already
        for obj in [(r[1], r[2])] + ([(r[3], r[4])] if r[0] == RuleId.TILE_NEAR else []):
            if obj not in chain_objects and obj not in placed:
                placed.append(obj)
        assert (r[5], r[6]) not in chain_objects
    return depth, chain_rules, remaining, placed, chain_objects


def all_rulesets(bench):
    return [bench.get_ruleset(i) for i in range(bench.num_rulesets())]


# ---------------------------------------------------------------- encoding

@pytest.mark.parametrize("make, message", [
    (lambda: Ruleset(goal(1, RED_BALL)[:4], [], []), r"goal has shape \(4,\)"),
    (lambda: Ruleset(goal(15, RED_BALL), [], []), "unknown goal id 15"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(12, RED_BALL)], []),
     r"rules\[0\]: unknown rule id 12"),
    (lambda: Ruleset(goal(1, RED_DOOR), [], []), r"\(door, red\) cannot be picked up"),
    (lambda: Ruleset(goal(2, RED_BALL), [], []), r"\(ball, red\) cannot be stood on"),
    (lambda: Ruleset(goal(1, (11, 1)), [], []), "unknown tile 11"),
    (lambda: Ruleset(goal(3, (4, 9)), [], []), "unknown colour 9"),
    (lambda: Ruleset(goal(1, RED_BALL, GREEN_KEY), [], []), r"argument b is unused .* \(0, 0\)"),
    (lambda: Ruleset(goal(4, RED_DOOR, GREY_PAD), [], []), "neither .* can be picked up"),
    (lambda: Ruleset(goal(3, (Tile.WALL, 0)), [], []), "not an object the world can place"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(1, RED_BALL, c=RED_DOOR)], []),
     r"rules\[0\] \(agent_hold\): argument c \(door, red\) cannot be picked up"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(2, RED_BALL, c=(Tile.EMPTY, 0))], []),
     r"argument c \(empty, none\) is not an object"),
    (lambda: Ruleset(goal(1, RED_BALL), [rule(3, RED_DOOR, GREY_PAD, RED_BALL)], []), "neither"),
    (lambda: Ruleset(goal(1, RED_BALL), np.zeros(7), []), r"rules has shape \(7,\)"),
    (lambda: Ruleset(goal(1, RED_BALL), [], [RED_BALL, VANISH]),
     r"init_tiles\[1\]: argument object \(floor, none\) is not an object the world can place"),
    (lambda: Ruleset(goal(1, RED_BALL), [], [[4, -1]]), "init_tiles has values outside 0-255"),
    (lambda: Ruleset(np.array(goal(1, RED_BALL), dtype=float), [], []), "dtype float64"),
])
def test_bad_input_names_what_is_wrong(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_valid_rulesets_of_every_id():
    position = (3, 4)
    goals = [goal(0), goal(1, RED_BALL), goal(2, GREY_PAD), goal(3, RED_DOOR),
             goal(4, RED_DOOR, RED_BALL), goal(5, RED_BALL, position), goal(6, position),
             *(goal(g, RED_BALL, BLUE_PYRAMID) for g in range(7, 11)),
             *(goal(g, GREY_PAD) for g in range(11, 15))]
    rules = [rule(0), rule(1, RED_BALL, c=VANISH), rule(2, RED_DOOR, c=GREY_PAD),
             *(rule(r, GREEN_KEY, RED_DOOR, RED_BALL) for r in range(3, 8)),
             *(rule(r, RED_DOOR, c=BLUE_PYRAMID) for r in range(8, 12))]
    assert sorted({g[0] for g in goals}) == list(GoalId)
    assert sorted({r[0] for r in rules}) == list(RuleId)
    for g in goals:
        ruleset = Ruleset(g, rules, [RED_BALL, RED_DOOR, GREY_PAD])
        assert ruleset.goal.dtype == np.uint8 and ruleset.rules.shape == (len(rules), 7)
        assert not ruleset.goal.flags.writeable


def test_mission_text():
    assert mission(Ruleset(goal(4, RED_BALL, BLUE_PYRAMID), [], [])) == \
        "put the red ball next to the blue pyramid"
    rules = [rule(1, (Tile.KEY, Colour.ORANGE), c=GREEN_KEY), rule(0),
             rule(3, RED_DOOR, RED_BALL, VANISH)]
    assert mission(Ruleset(goal(1, GREEN_KEY), rules, [])) \
        == ("pick up the green key; rules: an orange key you hold becomes a green key; "
            "a red door and a red ball next to each other disappear")
    assert mission(Ruleset(goal(9, RED_BALL, BLUE_PYRAMID), [], [])) == \
        "put the red ball with the blue pyramid directly south of it"
    assert mission(Ruleset(goal(12, RED_DOOR), [rule(11, RED_DOOR, c=VANISH)], [])) == \
        "stand with the red door directly east of you; rules: a red door directly west of you " \
        "disappears"
    assert mission(Ruleset(goal(6, (3, 4)), [], [])) == "go to cell (3, 4)"
    assert mission(Ruleset(goal(2, GREY_PAD), [rule(5, RED_BALL, GREY_PAD, GREEN_KEY)], [])) == \
        "stand on the grey pad; rules: a red ball with a grey pad directly east of it: together " \
        "they become a green key"


def test_canonical_key_ignores_symmetric_forms_and_order():
    def key(g, rules):
        return Ruleset(g, rules, []).key()
    hold = rule(1, RED_BALL, c=GREEN_KEY)
    near = rule(3, RED_BALL, BLUE_PYRAMID, GREY_PAD)
    assert key(goal(4, RED_BALL, BLUE_PYRAMID), [hold, near]) == \
        key(goal(4, BLUE_PYRAMID, RED_BALL), [rule(3, BLUE_PYRAMID, RED_BALL, GREY_PAD), rule(0),
                                              hold])
    # b north of a is a south of b; b east of a is a west of b
    assert key(goal(7, RED_BALL, BLUE_PYRAMID), []) == key(goal(9, BLUE_PYRAMID, RED_BALL), [])
    assert key(goal(1, RED_BALL), [rule(5, RED_BALL, GREEN_KEY, GREY_PAD)]) == \
        key(goal(1, RED_BALL), [rule(7, GREEN_KEY, RED_BALL, GREY_PAD)])
    # and what differs stays different
    assert key(goal(7, RED_BALL, BLUE_PYRAMID), []) != key(goal(7, BLUE_PYRAMID, RED_BALL), [])
    assert key(goal(11, RED_BALL), []) != key(goal(13, RED_BALL), [])
    assert key(goal(1, RED_BALL), [hold]) != key(goal(1, RED_BALL), [hold, hold])
    assert key(goal(1, RED_BALL), [hold]) != key(goal(1, RED_BALL), [rule(1, RED_BALL, c=VANISH)])


def test_goal_reward():
    assert goal_reward(0, 100) == 1.0
    assert goal_reward(100, 100) == pytest.approx(0.1)
    assert goal_reward(50, 100) == pytest.approx(0.55)
    with pytest.raises(ValueError, match="step=101"):
        goal_reward(101, 100)


# ---------------------------------------------------------------- generator

def test_trivial_holds_every_distinct_goal_once():
    """The vocabulary's trivial goals, counted here from scratch; generating all of them only
    ends with each once if collisions are resampled correctly (XLand-MiniGrid's loop was not)."""
    pickable = [(int(s), int(c)) for s in PICKABLE_SHAPES for c in OBJECT_COLOURS]
    objects = pickable + [(int(s), int(c)) for s in FIXED_SHAPES for c in OBJECT_COLOURS]
    near_pairs = {frozenset([a, b]) for a in objects for b in pickable if a != b}
    count = len(pickable) + len(objects) + len(near_pairs)
    assert f"trivial-{count}" in registered_benchmarks()

    bench = generate_benchmark("trivial", count, seed=1, progress=False)
    rulesets = all_rulesets(bench)
    assert len({task_key(r) for r in rulesets}) == count == bench.num_rulesets()
    assert {frozenset([pair(r.goal, 1), pair(r.goal, 3)]) for r in rulesets
            if r.goal[0] == GoalId.TILE_NEAR} == near_pairs
    with pytest.raises(ValueError, match=f"allows only {count} distinct rulesets"):
        generate_benchmark("trivial", count + 1, seed=1, progress=False)


@pytest.mark.parametrize("level", LEVELS)
def test_rulesets_are_distinct(levels, level):
    keys = {task_key(r) for r in all_rulesets(levels[level])}
    assert len(keys) == N


def test_small_level_collides_often_enough_to_test_uniqueness():
    """Sampled without rejection, small rulesets repeat within N: so the test above does check
    the resampling."""
    goals, rules, _ = generator._sample(LEVELS["small"], N, np.random.default_rng(7))
    keys = {tuple(k) for k in canonical_keys(goals, rules)}
    assert len(keys) < N - 10


@pytest.mark.parametrize("level", LEVELS)
def test_chain_depth_and_distractors_follow_the_level(levels, level):
    params = LEVELS[level]
    depths, distractor_counts = Counter(), Counter()
    for ruleset in all_rulesets(levels[level]):
        depth, chain_rules, distractors, placed, chain_objects = analyse(ruleset)
        depths[depth] += 1
        distractor_counts[len(distractors)] += 1
        assert chain_rules + len(distractors) == len(ruleset.rules)
        extra = Counter(map(tuple, ruleset.init_tiles.tolist()))
        extra.subtract(placed)
        assert min(extra.values(), default=0) >= 0, "every needed object is placed"
        extra = +extra
        assert sum(extra.values()) == params.num_distractor_objects
        assert not set(extra) & chain_objects
        assert ruleset.goal[0] in (GoalId.AGENT_HOLD, GoalId.AGENT_NEAR, GoalId.TILE_NEAR)
    assert max(depths) == params.chain_depth
    if params.prune_prob:
        assert min(depths) < params.chain_depth
    expected_counts = (range(params.max_distractor_rules + 1) if params.sample_distractor_rules
                       else [params.max_distractor_rules])
    assert sorted(distractor_counts) == list(expected_counts)


def test_small_level_prunes_goal_objects_at_its_rate(levels):
    """A goal object is placed (pruned) with probability 0.3, else produced by a rule."""
    placed = total = 0
    for ruleset in all_rulesets(levels["small"]):
        g = ruleset.goal
        objects = [pair(g, 1)] + ([pair(g, 3)] if g[0] == GoalId.TILE_NEAR else [])
        produced = {pair(r, 5) for r in ruleset.rules}
        total += len(objects)
        placed += sum(obj not in produced for obj in objects)
    assert placed / total == pytest.approx(LEVELS["small"].prune_prob, abs=0.03)


def test_same_seed_same_rulesets_other_seed_others(levels):
    again = generate_benchmark("medium", N, seed=7, progress=False)
    for name in ("goals", "rules", "init_tiles"):
        assert np.array_equal(getattr(again, name), getattr(levels["medium"], name))
    other = generate_benchmark("medium", N, seed=8, progress=False)
    assert {task_key(r) for r in all_rulesets(other)} != \
        {task_key(r) for r in all_rulesets(levels["medium"])}


def test_generate_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown level 'huge'"):
        generate_benchmark("huge", 10, seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        generate_benchmark("small", 0, seed=0)
    with pytest.raises(ValueError, match="chain_depth must be in 0..3, got 4"):
        LevelParams(4, 0.1, 0, False, 0)
    with pytest.raises(ValueError, match=r"prune_prob must be in \[0, 1\], got 1.5"):
        LevelParams(1, 1.5, 0, False, 0)
    custom = generate_benchmark(LevelParams(3, 0.0, 0, False, 0), 200, seed=0, progress=False)
    assert custom.params["level"] == "custom"
    assert all(analyse(r)[0] == 3 for r in all_rulesets(custom))


# ---------------------------------------------------------------- benchmark

def test_get_and_sample_ruleset(levels):
    bench = levels["high"]
    ruleset = bench.get_ruleset(5)
    assert np.array_equal(ruleset.goal, bench.goals[5])
    assert len(ruleset.rules) == (bench.rules[5, :, 0] != 0).sum()
    assert (ruleset.rules[:, 0] != 0).all() and (ruleset.init_tiles[:, 0] != 0).all()
    sampled = bench.sample_ruleset(np.random.default_rng(3))
    index = int(np.random.default_rng(3).integers(bench.num_rulesets()))
    assert sampled.key() == bench.get_ruleset(index).key()
    with pytest.raises(IndexError, match=f"ruleset_id {N} out of range"):
        bench.get_ruleset(N)


def test_shuffle_is_a_permutation(levels):
    bench = levels["small"]
    shuffled = bench.shuffle(np.random.default_rng(0))
    keys = [r.key() for r in all_rulesets(bench)]
    shuffled_keys = [r.key() for r in all_rulesets(shuffled)]
    assert sorted(keys) == sorted(shuffled_keys) and keys != shuffled_keys
    again = bench.shuffle(np.random.default_rng(0))
    assert np.array_equal(again.rules, shuffled.rules)


def test_split_sizes_and_disjointness(levels):
    bench = levels["small"].shuffle(np.random.default_rng(1))
    train, test = bench.split(0.8)
    assert (train.num_rulesets(), test.num_rulesets()) == (round(0.8 * N), N - round(0.8 * N))
    train_keys = {r.key() for r in all_rulesets(train)}
    test_keys = {r.key() for r in all_rulesets(test)}
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


def test_load_benchmark_generates_caches_and_checks_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAFTIUM_MA_CACHE", str(tmp_path))
    name = next(n for n in registered_benchmarks() if n.startswith("trivial-"))
    first = load_benchmark(name, progress=False)
    path = tmp_path / "xland" / f"{name}.npz"
    assert path.exists() and os.listdir(path.parent) == [path.name]
    assert first.params == generator.generation_params("trivial", first.num_rulesets(), 0)

    def no_generation(*args, **kwargs):
        raise AssertionError("the cached file should have been used")
    with monkeypatch.context() as patched:
        patched.setattr(generator, "generate_benchmark", no_generation)
        cached = load_benchmark(name)
    for field in ("goals", "rules", "init_tiles"):
        assert np.array_equal(getattr(cached, field), getattr(first, field))

    stale = Benchmark(first.goals[:5], first.rules[:5], first.init_tiles[:5],
                      params={**first.params, "num_distractor_objects": 2})
    stale.save(path)
    with pytest.warns(UserWarning, match="generating it again"):
        regenerated = load_benchmark(name, progress=False)
    assert regenerated.num_rulesets() == first.num_rulesets()
    assert Benchmark.load(path).params == first.params

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
    with pytest.raises(ValueError, match=r"rules has shape \(1999, \d+, 7\); expected 2000"):
        Benchmark(bench.goals, bench.rules[1:], bench.init_tiles)
    with pytest.raises(ValueError, match="goals has dtype int64; expected uint8"):
        Benchmark(bench.goals.astype(np.int64), bench.rules, bench.init_tiles)


def test_registered_benchmarks():
    names = registered_benchmarks()
    assert ([n for n in names if not n.startswith("trivial-")]
            == ["small-1m", "medium-1m", "high-1m"])
    assert all(size == 1_000_000 for level, size in names.values() if level != "trivial")
