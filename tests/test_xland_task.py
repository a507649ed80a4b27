"""The xland task in the real engine: every rule and goal type fired by a scripted agent in the
test layout, with its reward in the same step; the game modes with 2 and 4 agents; the same
seed and ruleset giving the same episode; the planner solving sampled rulesets; bad input
refused before anything reaches Lua."""

import numpy as np
import pytest

import craftium_ma
from craftium_ma.envs.xland_v0 import XLandEnv
from craftium_ma.xland import Ruleset, generate_benchmark, goal_reward
from craftium_ma.xland.planner import GridState, Planner
from conftest import assert_same

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


@pytest.fixture(scope="module")
def env():
    e = craftium_ma.parallel_env("xland", num_agents=2, max_cycles=T, obs_size=32,
                                 task_options={"layout": "test", "benchmark": "trivial-2008"})
    yield e
    e.close()


@pytest.fixture(scope="module")
def env4():
    e = craftium_ma.parallel_env("xland", num_agents=4, max_cycles=T, obs_size=32,
                                 task_options={"layout": "test", "benchmark": "trivial-2008"})
    yield e
    e.close()


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
                            PUT_NEXT_TO_CUBE[d]) for d, way in enumerate(("up", "right", "down", "left"))},
    **{f"agent_near_{way}": (goal(11 + d, RED_BALL), [GREY_PAD, RED_BALL], WALK_NEXT_TO_BALL[d])
       for d, way in enumerate(("up", "right", "down", "left"))},
}


@pytest.mark.parametrize("case", GOAL_CASES)
def test_goal_reached_by_scripted_agent(env, case):
    g, init, script = GOAL_CASES[case]
    rewards, _, infos = play(env, ruleset(g, init=init), script)
    assert rewarded_at_last(rewards), rewards
    assert env.agents == []  # cooperative: the episode ends for everyone
    np.testing.assert_array_equal(infos["agent_0"]["goal"], g)


def test_empty_goal_never_ends(env):
    rewards, _, _ = play(env, ruleset(goal(0), init=[RED_BALL]), [FORWARD, PICK, NOOP])
    assert rewards == [0.0, 0.0, 0.0] and env.agents == ["agent_0", "agent_1"]


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


@pytest.mark.parametrize("case", RULE_CASES)
def test_rule_fires_in_the_step_of_its_event(env, case):
    g, rules, init, script = RULE_CASES[case]
    rewards, world, infos = play(env, ruleset(g, rules, init), script)
    assert rewarded_at_last(rewards), rewards
    np.testing.assert_array_equal(infos["agent_0"]["rules"], rules)
    if case.startswith("tile_near"):  # the pair became one star, at the ball's place
        assert len(world.find(GREEN_STAR)) == 1 and not world.find(BLUE_CUBE)
        assert not world.find(RED_BALL)


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


def test_pick_up_and_doors(env):
    """A picked-up key leaves the floor; a locked door opens only with a key of its colour,
    and an open door lets agents through."""
    rs = ruleset(goal(6, (3, 4)), init=[YELLOW_KEY, YELLOW_DOOR])  # key (1, 3), door (3, 3)
    _, infos = env.reset(seed=0, options={"ruleset": rs})
    assert infos["agent_1"]["mission"] == "go to cell (3, 4)"
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
