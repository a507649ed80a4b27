"""pressure_plates: the door opens only while both plates are held; an agent that
enters the goal room gives every agent +1 and ends the episode; a reset closes
the door again."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, BACKWARD, LEFT, RIGHT, TURN_LEFT, TURN_RIGHT = range(7)
PLATE_A, PLATE_B = (2, 2), (5, 7)  # x, z (mods/pressure_plates/init.lua)
REACH = 0.8  # plate half width + player box half width
GOAL_Z = 7.5  # the door's near face


def pos(state, i):
    return state[1 + 3 * i], state[2 + 3 * i]


def on(state, i, plate):
    x, z = pos(state, i)
    return abs(x - plate[0]) < REACH and abs(z - plate[1]) < REACH


def both_held(state, n=2):
    return (any(on(state, i, PLATE_A) for i in range(n))
            and any(on(state, i, PLATE_B) for i in range(n)))


def walk(env, a0, a1, until, limit=40):
    """Step until until(state) holds; every step before the episode's end must
    give no reward, and its door flag must match the plates held."""
    for _ in range(limit):
        _, rewards, terminations, truncations, _ = env.step({"agent_0": a0, "agent_1": a1})
        state = env.state()
        assert rewards == {"agent_0": 0, "agent_1": 0}
        assert not any(terminations.values()) and not any(truncations.values())
        assert state[0] == both_held(state)
        if until(state):
            return state
    pytest.fail(f"condition not met in {limit} steps; state {state}")


@pytest.fixture(scope="module")
def env():
    env = craftium_ma.parallel_env("pressure_plates", task_options={"layout": "test"})
    yield env
    env.close()


def test_the_door_needs_both_plates_and_the_goal_rewards_everyone(env):
    env.reset(seed=0)
    state = env.state()
    assert state[0] == 0 and on(state, 0, PLATE_A) and not on(state, 1, PLATE_B)
    # plate A alone: the door stays shut
    for _ in range(3):
        assert walk(env, NOOP, NOOP, until=lambda s: True)[0] == 0
    # agent_1 steps onto plate B: the door opens at that very step
    state = walk(env, NOOP, FORWARD, until=lambda s: s[0] == 1)
    assert on(state, 0, PLATE_A) and on(state, 1, PLATE_B)
    # agent_0 leaves plate A: plate B alone does not keep it open
    state = walk(env, BACKWARD, NOOP, until=lambda s: s[0] == 0)
    assert not on(state, 0, PLATE_A) and on(state, 1, PLATE_B)
    state = walk(env, FORWARD, NOOP, until=lambda s: s[0] == 1)
    assert on(state, 0, PLATE_A) and on(state, 1, PLATE_B)
    # agent_1 walks through: everyone gets +1 and the episode ends
    for _ in range(40):
        before = env.state()
        assert before[0] == 1 and pos(before, 1)[1] <= GOAL_Z
        _, rewards, terminations, truncations, _ = env.step({"agent_0": NOOP, "agent_1": FORWARD})
        if any(rewards.values()):
            break
        assert not any(terminations.values())
    else:
        pytest.fail("agent_1 never reached the goal room")
    assert pos(env.state(), 1)[1] > GOAL_Z
    assert rewards == {"agent_0": 1, "agent_1": 1}
    assert terminations == {"agent_0": True, "agent_1": True}
    assert truncations == {"agent_0": False, "agent_1": False}
    assert env.agents == []


def test_a_reset_closes_the_door_and_one_agent_cannot_pass(env):
    env.reset(seed=0)
    env.step({"agent_0": NOOP, "agent_1": FORWARD})
    walk(env, NOOP, FORWARD, until=lambda s: s[0] == 1)  # open it, then reset
    _, infos = env.reset(seed=0)
    state = env.state()
    assert state[0] == 0 and tuple(infos["agent_1"]["position"]) == (5.0, 0.5, 5.0)
    # agent_0 leaves plate A; agent_1 alone on plate B runs into the closed door
    walk(env, BACKWARD, NOOP, until=lambda s: not on(s, 0, PLATE_A))
    state = walk(env, NOOP, FORWARD, until=lambda s: on(s, 1, PLATE_B))
    for _ in range(15):
        state = walk(env, NOOP, FORWARD, until=lambda s: True)
    assert state[0] == 0 and pos(state, 1)[1] < 7.21  # the door face (7.5) less half a body


def test_random_layout_is_seeded(env):
    layout = {"layout": "random"}
    env.reset(seed=1, options=layout)
    first = env.state().copy()
    assert first[0] == 0
    for i in range(2):
        x, z = pos(first, i)
        assert 1 <= x <= 9 and 1 <= z <= 6 and not on(first, i, PLATE_A)
    env.reset(seed=1, options=layout)
    np.testing.assert_allclose(env.state(), first, atol=1e-4)
    env.reset(seed=2, options=layout)
    assert not np.allclose(env.state(), first)


def plates_potential(state, n=2):
    """reward = "distance"'s potential, from state(): minus 0.05 times the distance from the
    plates to the nearest pair of agents, one on each."""
    def distance(i, plate):
        return np.hypot(*(np.subtract(pos(state, i), plate)))
    return -0.05 * min(distance(i, PLATE_A) + distance(j, PLATE_B)
                       for i in range(n) for j in range(n) if i != j)


def test_distance_reward_pays_each_step_the_change_of_the_plates_potential(env):
    """agent_1 walks onto plate B, which opens the door, and on into the goal room."""
    env.reset(seed=0, options={"layout": "test", "reward": "distance"})
    start = before = plates_potential(env.state())
    shaping = []
    for _ in range(40):
        _, rewards, terminations, _, _ = env.step({"agent_0": NOOP, "agent_1": FORWARD})
        after, goal = plates_potential(env.state()), int(any(terminations.values()))
        assert rewards["agent_0"] == rewards["agent_1"]
        assert rewards["agent_0"] - goal == pytest.approx(after - before, abs=1e-4)
        shaping.append(rewards["agent_0"] - goal)
        before = after
        if goal:
            break
    else:
        pytest.fail("agent_1 never reached the goal room")
    # nearing plate B paid as it happened; the episode's shaping is the potential's change
    assert all(r > 0 for r in shaping[1:5])
    assert sum(shaping) == pytest.approx(after - start, abs=1e-3) and after > start


def test_an_unknown_reward_option_is_an_error_naming_it(env):
    with pytest.raises(craftium_ma.EngineError,
                       match='option reward must be "goal" or "distance", not "dense"'):
        env.reset(seed=0, options={"layout": "test", "reward": "dense"})
    with pytest.warns(RuntimeWarning, match="restarting the engine processes"):
        env.reset(seed=0)  # the env is usable afterwards
    assert env.state()[0] == 0
