"""The xland task in the real engine: every rule and goal type fired by a scripted agent in the
test layout, with its reward in the same step; the game modes with 2 and 4 agents; the same
seed and ruleset giving the same episode; the planner solving sampled rulesets; bad input
refused before anything reaches Lua."""

import contextlib

import numpy as np
import pytest

import craftium_ma
from craftium_ma.envs.xland_v0 import XLandEnv
from craftium_ma.xland import Ruleset, generate_benchmark, goal_reward
from craftium_ma.xland.planner import GridState, Planner
from craftium_ma.testing import assert_same

NOOP, FORWARD, LEFT, RIGHT, PICK, PUT, TOGGLE = range(7)
T = 64  # max_cycles of the test envs

RED_BALL, BLUE_CUBE, GREEN_STAR, GREY_PAD = (4, 1), (3, 3), (7, 2), (10, 6)
YELLOW_DOOR, YELLOW_KEY, WHITE_HEX = (9, 5), (8, 5), (6, 7)
NO_RULES = np.zeros((0, 7), np.uint8)

# The test layout: a 9 x 9 room; agent_0 at (1, 1) facing north, agent_1 at (3, 1); the
# initial objects at (1, 3), (3, 3), (5, 3), ... (craftium_ma/xland/world.py).
# Carry the red ball from (1, 3) and put it down so the blue cube at (3, 3) lies directly
# north / east / south / west of it:
PUT_NEXT_TO_CUBE = {
    0: [FORWARD, PICK, RIGHT, FORWARD, PUT],  # ball at (3, 2)
    1: [FORWARD, PICK, RIGHT, FORWARD, LEFT, PUT],  # ball at (2, 3)
    2: [FORWARD, PICK, FORWARD, FORWARD, RIGHT, FORWARD, PUT],  # ball at (3, 4)
    3: [FORWARD, PICK, RIGHT, FORWARD, FORWARD, FORWARD, LEFT, PUT],  # ball at (4, 3)
}
# With the grey pad at (1, 3) and the red ball at (3, 3): walk until the ball lies directly
# north / east / south / west of agent_0, and never next to it before.
WALK_NEXT_TO_BALL = {
    0: [RIGHT, FORWARD, LEFT, FORWARD, RIGHT, FORWARD],  # at (3, 2)
    1: [FORWARD, FORWARD, RIGHT, FORWARD],  # at (2, 3)
    2: [FORWARD, FORWARD, FORWARD, RIGHT, FORWARD, FORWARD],  # at (3, 4)
    3: [FORWARD] * 4 + [RIGHT, FORWARD, FORWARD, FORWARD, RIGHT, FORWARD, FORWARD],  # at (4, 3)
}


def ruleset(goal, rules=(), init=()):
    return Ruleset(np.array(goal), np.array(rules, np.uint8).reshape(-1, 7),
                   np.array(init, np.uint8).reshape(-1, 2))


def goal(gid, a=(0, 0), b=(0, 0)):
    return [gid, *a, *b]


def rule(rid, a, b=(0, 0), c=(1, 0)):
    return [rid, *a, *b, *c]


def xland_env(num_agents):
    """The test layout; 32 x 32 frames, short episodes."""
    return contextlib.closing(craftium_ma.parallel_env(
        "xland", num_agents=num_agents, max_cycles=T, obs_size=32,
        task_options={"layout": "test", "benchmark": "trivial-2008"}))


@pytest.fixture(scope="module")
def env():
    with xland_env(2) as e:
        yield e


@pytest.fixture(scope="module")
def env4():
    with xland_env(4) as e:
        yield e


def play(env, rs, script, actor="agent_0", options=None):
    """Reset to the ruleset, then the actor plays the script while the others wait; the
    actor's rewards, the world at the end and the last infos."""
    _, infos = env.reset(seed=0, options={"ruleset": rs, **(options or {})})
    rewards = []
    for action in script:
        _, r, _, _, infos = env.step({a: action if a == actor else NOOP for a in env.agents})
        rewards.append(r[actor])
    return rewards, GridState(env.state(), len(env.possible_agents)), infos


def rewarded_at_last(rewards):
    """Rewarded exactly in the last step, with 1 - 0.9 t / T."""
    k = len(rewards)
    return rewards == [0.0] * (k - 1) + [pytest.approx(goal_reward(k, T))]


# -- goals -------------------------------------------------------------------------------

GOAL_CASES = {
    "agent_hold": (goal(1, RED_BALL), [RED_BALL], [FORWARD, PICK]),
    "agent_on_tile": (goal(2, GREY_PAD), [GREY_PAD], [FORWARD, FORWARD]),
    "agent_near": (goal(3, RED_BALL), [RED_BALL], [FORWARD]),
    "tile_near": (goal(4, RED_BALL, BLUE_CUBE), [RED_BALL, BLUE_CUBE], PUT_NEXT_TO_CUBE[1]),
    "tile_on_position": (goal(5, RED_BALL, (2, 3)), [RED_BALL, BLUE_CUBE], PUT_NEXT_TO_CUBE[1]),
    "agent_on_position": (goal(6, (2, 2)), [RED_BALL], [RIGHT, FORWARD, LEFT, FORWARD]),
    **{f"tile_near_{way}": (goal(7 + d, RED_BALL, BLUE_CUBE), [RED_BALL, BLUE_CUBE],
                            PUT_NEXT_TO_CUBE[d])
       for d, way in enumerate(("up", "right", "down", "left"))},
    **{f"agent_near_{way}": (goal(11 + d, RED_BALL), [GREY_PAD, RED_BALL], WALK_NEXT_TO_BALL[d])
       for d, way in enumerate(("up", "right", "down", "left"))},
}


@pytest.mark.engine
@pytest.mark.parametrize("case", GOAL_CASES)
def test_goal_reached_by_scripted_agent(env, case):
    g, init, script = GOAL_CASES[case]
    rewards, _, infos = play(env, ruleset(g, init=init), script)
    assert rewarded_at_last(rewards), rewards
    assert env.agents == []  # cooperative: the episode ends for everyone
    np.testing.assert_array_equal(infos["agent_0"]["goal"], g)


@pytest.mark.engine
def test_empty_goal_never_ends(env):
    rewards, _, _ = play(env, ruleset(goal(0), init=[RED_BALL]), [FORWARD, PICK, NOOP])
    assert rewards == [0.0, 0.0, 0.0] and env.agents == ["agent_0", "agent_1"]


@pytest.mark.engine
@pytest.mark.parametrize("d", range(4))
def test_directional_goals_need_their_direction(env, d):
    """Putting the ball with the cube in direction d reaches only that direction's goal."""
    for other in range(4):
        if other != d:
            g = goal(7 + other, RED_BALL, BLUE_CUBE)
            rewards, _, _ = play(env, ruleset(g, init=[RED_BALL, BLUE_CUBE]), PUT_NEXT_TO_CUBE[d])
            assert rewards == [0.0] * len(PUT_NEXT_TO_CUBE[d]), (d, other)


# -- rules: each fires in the step of its event; the goal needs its product ---------------

def _near_product(rid, init, script):
    return goal(3, GREEN_STAR), [rule(rid, RED_BALL, BLUE_CUBE if 3 <= rid <= 7 else (0, 0),
                                      GREEN_STAR)], init, script


RULE_CASES = {
    "empty": (goal(1, RED_BALL), [[0] * 7], [RED_BALL], [FORWARD, PICK]),
    "agent_hold": (goal(1, GREEN_STAR), [rule(1, RED_BALL, c=GREEN_STAR)], [RED_BALL],
                   [FORWARD, PICK]),
    "agent_near": _near_product(2, [RED_BALL], [FORWARD]),
    "tile_near": _near_product(3, [RED_BALL, BLUE_CUBE], PUT_NEXT_TO_CUBE[1]),
    **{f"tile_near_{way}": _near_product(4 + d, [RED_BALL, BLUE_CUBE], PUT_NEXT_TO_CUBE[d])
       for d, way in enumerate(("up", "right", "down", "left"))},
    **{f"agent_near_{way}": _near_product(8 + d, [GREY_PAD, RED_BALL], WALK_NEXT_TO_BALL[d])
       for d, way in enumerate(("up", "right", "down", "left"))},
}


@pytest.mark.engine
@pytest.mark.parametrize("case", RULE_CASES)
def test_rule_fires_in_the_step_of_its_event(env, case):
    g, rules, init, script = RULE_CASES[case]
    rewards, world, infos = play(env, ruleset(g, rules, init), script)
    assert rewarded_at_last(rewards), rewards
    count = int(infos["agent_0"]["num_rules"])  # the rules, then padding to the benchmark's
    np.testing.assert_array_equal(infos["agent_0"]["rules"][:count], rules)
    assert not infos["agent_0"]["rules"][count:].any()
    if case.startswith("tile_near"):  # the pair became one star, at the ball's place
        assert len(world.find(GREEN_STAR)) == 1 and not world.find(BLUE_CUBE)
        assert not world.find(RED_BALL)


@pytest.mark.engine
@pytest.mark.parametrize("d", range(4))
def test_directional_rules_need_their_direction(env, d):
    """Each directional rule fires only for its own direction, tile-near and agent-near."""
    for other in range(4):
        if other == d:
            continue
        _, world, _ = play(env, ruleset(goal(0), [rule(4 + other, RED_BALL, BLUE_CUBE, GREEN_STAR)],
                                        [RED_BALL, BLUE_CUBE]), PUT_NEXT_TO_CUBE[d])
        assert not world.find(GREEN_STAR) and world.find(RED_BALL), ("tile", d, other)
        _, world, _ = play(env, ruleset(goal(0), [rule(8 + other, RED_BALL, c=GREEN_STAR)],
                                        [GREY_PAD, RED_BALL]), WALK_NEXT_TO_BALL[d])
        assert not world.find(GREEN_STAR) and world.find(RED_BALL), ("agent", d, other)


@pytest.mark.engine
def test_vanish_and_a_chain_of_two_rules_and_any_agent_fires(env):
    """(floor, none) removes the inputs; a product feeds the next rule in the same step; the
    other agent's move fires a rule too."""
    rs = ruleset(goal(1, WHITE_HEX),
                 [rule(1, RED_BALL, c=GREEN_STAR), rule(1, GREEN_STAR, c=WHITE_HEX),
                  rule(2, BLUE_CUBE)], [RED_BALL, BLUE_CUBE])
    env.reset(seed=0, options={"ruleset": rs})
    # agent_1 walks up to the cube at (3, 3), which vanishes
    _, r, *_ = env.step({"agent_0": FORWARD, "agent_1": FORWARD})
    world = GridState(env.state(), 2)
    assert not world.find(BLUE_CUBE) and world.find(RED_BALL) and set(r.values()) == {0.0}
    _, r, *_ = env.step({"agent_0": PICK, "agent_1": NOOP})
    assert r == {"agent_0": pytest.approx(goal_reward(2, T)),
                 "agent_1": pytest.approx(goal_reward(2, T))}
    assert GridState(env.state(), 2).held[0] == WHITE_HEX


@pytest.mark.engine
def test_pick_up_and_doors(env):
    """A picked-up key leaves the floor; a locked door opens only with a key of its colour,
    and an open door lets agents through."""
    rs = ruleset(goal(6, (3, 4)), init=[YELLOW_KEY, YELLOW_DOOR])  # key (1, 3), door (3, 3)
    _, infos = env.reset(seed=0, options={"ruleset": rs})
    assert craftium_ma.decode_text(infos["agent_1"]["mission"]) == "go to cell (3, 4)"
    for action in (FORWARD, TOGGLE, FORWARD):  # agent_1, without the key: the door stays shut
        env.step({"agent_0": NOOP, "agent_1": action})
    assert GridState(env.state(), 2).agents[1] == (3, 2, 0)
    for action in (FORWARD, PICK):
        env.step({"agent_0": action, "agent_1": NOOP})
    world = GridState(env.state(), 2)
    assert world.held[0] == YELLOW_KEY and not world.find(YELLOW_KEY)
    for action in (FORWARD, RIGHT, FORWARD, TOGGLE):  # agent_0 to (2, 3), facing the door
        env.step({"agent_0": action, "agent_1": NOOP})
    _, r, *_ = env.step({"agent_0": NOOP, "agent_1": FORWARD})
    assert GridState(env.state(), 2).agents[1] == (3, 3, 0) and r["agent_1"] == 0.0
    _, r, *_ = env.step({"agent_0": NOOP, "agent_1": FORWARD})
    assert r["agent_1"] == pytest.approx(goal_reward(11, T)) == r["agent_0"]


# -- game modes ---------------------------------------------------------------------------

MODE_RULESET = ruleset(goal(1, RED_BALL), init=[RED_BALL, BLUE_CUBE, GREEN_STAR, WHITE_HEX])


def plan_until_reward(env, actor, infos, limit=40):
    """The actor follows the planner towards its own goal, the others wait; the step's
    rewards and terminations once any agent is rewarded."""
    planner = Planner(infos[actor]["goal"], infos[actor]["rules"],
                      env.possible_agents.index(actor))
    for _ in range(limit):
        action = planner.act(env.state(), len(env.possible_agents))
        _, rewards, terminations, _, _ = env.step(
            {a: action if a == actor else NOOP for a in env.agents})
        if any(rewards.values()):
            return rewards, terminations
    goal_text = craftium_ma.decode_text(infos[actor]["mission"])
    raise AssertionError(f"{actor} did not reach its goal {goal_text!r}")


@pytest.mark.engine
@pytest.mark.parametrize("fixture", ["env", "env4"])
def test_cooperative_rewards_everyone_and_ends(fixture, request):
    env = request.getfixturevalue(fixture)
    _, infos = env.reset(seed=0, options={"ruleset": MODE_RULESET, "mode": "cooperative"})
    assert len({str(i["goal"]) for i in infos.values()}) == 1
    rewards, terminations = plan_until_reward(env, "agent_1", infos)
    assert len(set(rewards.values())) == 1 and all(r > 0 for r in rewards.values())
    assert all(terminations.values()) and env.agents == []


@pytest.mark.engine
@pytest.mark.parametrize("fixture", ["env", "env4"])
def test_competitive_winner_team_gets_the_reward_the_other_its_negative(fixture, request):
    env = request.getfixturevalue(fixture)
    n = len(env.possible_agents)
    for actor in ("agent_0", "agent_1"):
        _, infos = env.reset(seed=3, options={"ruleset": MODE_RULESET, "mode": "competitive"})
        # teams dealt out in turn; each team has its own goal, the same for its members
        for i in range(2, n):
            np.testing.assert_array_equal(infos[f"agent_{i}"]["goal"],
                                          infos[f"agent_{i % 2}"]["goal"])
        np.testing.assert_array_equal(infos["agent_0"]["goal"], MODE_RULESET.goal)
        rewards, terminations = plan_until_reward(env, actor, infos)
        winners = int(actor[-1])
        r = rewards[actor]
        assert r > 0
        assert rewards == {f"agent_{i}": r if i % 2 == winners else -r for i in range(n)}
        assert all(terminations.values()) and env.agents == []


@pytest.mark.engine
@pytest.mark.parametrize("fixture", ["env", "env4"])
def test_independent_agents_end_alone(fixture, request):
    env = request.getfixturevalue(fixture)
    n = len(env.possible_agents)
    _, infos = env.reset(seed=4, options={"ruleset": MODE_RULESET, "mode": "independent"})
    rewards, terminations = plan_until_reward(env, "agent_1", infos)
    assert rewards["agent_1"] > 0 and terminations["agent_1"]
    assert all(rewards[a] == 0 and not terminations[a] for a in rewards if a != "agent_1")
    assert env.agents == [a for a in env.possible_agents if a != "agent_1"]
    rewards, terminations = plan_until_reward(env, "agent_0", infos)
    assert rewards["agent_0"] > 0 and terminations["agent_0"] and "agent_1" not in rewards
    assert len(env.agents) == n - 2


# -- episodes -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small():
    return generate_benchmark("small", 500, seed=7)


def record(env, seed, options, steps=12):
    rng = np.random.default_rng(seed)
    out = [env.reset(seed=seed, options=options)]
    for _ in range(steps):
        if not env.agents:
            break
        out.append(env.step({a: int(rng.integers(7)) for a in env.agents}))
        out.append(env.state())
    return out


@pytest.mark.engine
def test_same_seed_and_ruleset_same_episode(env, small):
    options = {"ruleset": small.get_ruleset(5), "layout": "random"}
    first = record(env, 11, options)
    record(env, 12, {"ruleset": small.get_ruleset(6), "layout": "random", "rooms": 9})
    assert_same(first, record(env, 11, options))
    # without a ruleset the seed samples it, and the world, from the benchmark
    env.reset(seed=21, options={"benchmark": small, "layout": "random"})
    goal_21, world_21 = env.ruleset.key(), env.world.lua()
    env.reset(seed=22, options={"benchmark": small, "layout": "random"})
    assert env.ruleset.key() != goal_21
    env.reset(seed=21, options={"benchmark": small, "layout": "random"})
    assert env.ruleset.key() == goal_21 and env.world.lua() == world_21


@pytest.mark.engine
def test_trial_episodes_keep_ruleset_and_layout(env, small):
    options = {"benchmark": small, "layout": "random", "trial_episodes": 3}
    worlds = []
    for seed in (1, 2, 3, 4):
        _, infos = env.reset(seed=seed, options=options)
        worlds.append((env.ruleset.key(), str(env.world.lua()),
                       craftium_ma.decode_text(infos["agent_0"]["mission"])))
    assert worlds[0] == worlds[1] == worlds[2] != worlds[3]


@pytest.mark.engine
@pytest.mark.parametrize("rooms", [1, 2, 4, 6, 9])
def test_layouts_have_their_rooms_and_place_on_free_cells(env, small, rooms):
    env.reset(seed=rooms, options={"ruleset": small.get_ruleset(rooms), "layout": "random",
                                   "rooms": rooms})
    world = GridState(env.state(), 2)
    walls = world.tiles == 2
    inside = ~walls
    # rooms are the connected parts of the floor once the doorways are walled up
    doorways = [(x, z) for x, z in np.argwhere(inside)
                if (walls[x - 1, z] and walls[x + 1, z]) or (walls[x, z - 1] and walls[x, z + 1])]
    assert len(doorways) == {1: 0, 2: 1, 4: 4, 6: 7, 9: 12}[rooms]
    assert len(world.find((0, 0))) == 0  # every cell inside the grid is known
    placed = sorted((t, c) for t, c in zip(world.tiles[inside], world.colours[inside]) if t > 2)
    assert placed == sorted(map(tuple, small.get_ruleset(rooms).init_tiles.tolist()))
    assert len({a[:2] for a in world.agents}) == 2
    assert all(world.tiles[x, z] == 1 for x, z, _ in world.agents)


# -- the planner --------------------------------------------------------------------------

def solved(env, rs, seed) -> bool:
    _, infos = env.reset(seed=seed, options={"ruleset": rs, "layout": "random", "rooms": 0})
    planner = Planner(infos["agent_0"]["goal"], infos["agent_0"]["rules"])
    while "agent_0" in env.agents:
        action = planner.act(env.state(), 2)
        _, rewards, *_ = env.step({"agent_0": action, "agent_1": NOOP})
        if rewards["agent_0"] > 0:
            return True
    return False


@pytest.mark.engine
def test_planner_solves_trivial_and_small_rulesets(env, small):
    """A sample of 30 rulesets of each level, at least 95 % and 80 % solved
    (benchmarks/xland_task.py runs 100 of each and reports the figures)."""
    trivial = generate_benchmark("trivial", 2008, seed=7)
    rng = np.random.default_rng(0)
    trivial_wins = sum(solved(env, trivial.sample_ruleset(rng), 100 + i) for i in range(30))
    small_wins = sum(solved(env, small.sample_ruleset(rng), 200 + i) for i in range(30))
    assert trivial_wins >= 29 and small_wins >= 24, (trivial_wins, small_wins)


# -- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    ({"goal": [15, 0, 0, 0, 0], "rules": NO_RULES, "init_tiles": [RED_BALL]},
     "unknown goal id 15"),
    ({"goal": goal(1, RED_BALL), "rules": np.zeros((1, 6), int), "init_tiles": [RED_BALL]},
     "has shape"),
    ({"goal": goal(1, RED_BALL), "rules": NO_RULES, "init_tiles": [(1, 0)]}, "the world can place"),
    ({"goal": goal(1, RED_BALL)}, "missing"),
    ("red ball", "ruleset must be"),
    ({"goal": goal(6, (40, 2)), "rules": NO_RULES, "init_tiles": [RED_BALL]}, "outside the grid"),
    ({"goal": goal(6, (0, 2)), "rules": NO_RULES, "init_tiles": [RED_BALL]}, "a wall"),
    ({"goal": goal(1, RED_BALL), "rules": NO_RULES, "init_tiles": [RED_BALL] * 16},
     "holds 15 objects"),
])
def test_malformed_ruleset_raises_before_the_engine(bad, message):
    env = XLandEnv(task_options={"layout": "test"})
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"ruleset": bad})
    assert env.engine_pids() == {}
    env.close()


@pytest.mark.parametrize("options, message", [
    ({"mode": "teams"}, "mode must be one of"), ({"rooms": 3}, "rooms must be"),
    ({"layout": "maze"}, "layout must be"), ({"trial_episodes": 0}, "trial_episodes"),
    ({"benchmark": 5}, "benchmark must be"),
])
def test_bad_task_options(options, message):
    with pytest.raises(ValueError, match=message):
        craftium_ma.parallel_env("xland", task_options=options)
    with pytest.raises(ValueError, match="needs at least 2 agents"):
        craftium_ma.parallel_env("xland", num_agents=1, task_options={"mode": "competitive"})
