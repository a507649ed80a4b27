"""duel: a hit that does damage gives the hitter +1 and the victim -1 at the step
it lands; the episode ends for both when an agent's HP reaches 0; a reset
revives the dead agent, which can move and fight again (no death screen)."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, BACKWARD, LEFT, RIGHT, JUMP, ATTACK, TURN_LEFT, TURN_RIGHT = range(9)


def hp(state, i):
    return state[4 * i + 3]


@pytest.fixture(scope="module")
def env():
    env = craftium_ma.parallel_env("duel", task_options={"layout": "test"})
    yield env
    env.close()


def test_hits_are_rewarded_until_the_victim_dies(env):
    env.reset(seed=0)
    state = env.state()
    assert hp(state, 0) == hp(state, 1) == 20
    hits, last_hp = 0, 20
    for _ in range(300):
        _, rewards, terminations, truncations, infos = env.step(
            {"agent_0": ATTACK, "agent_1": NOOP})
        state = env.state()
        assert hp(state, 0) == 20 and infos["agent_1"]["hp"] == hp(state, 1)
        landed = int(rewards["agent_0"])
        # a step scores the hits that landed in it, zero-sum
        assert rewards["agent_0"] == landed >= 0 and rewards["agent_1"] == -landed
        assert (landed > 0) == (hp(state, 1) < last_hp)
        hits, last_hp = hits + landed, hp(state, 1)
        assert not any(truncations.values())
        if last_hp > 0:
            assert terminations == {"agent_0": False, "agent_1": False}
        else:
            break
    else:
        pytest.fail("agent_1 did not die")
    # the killing blow is rewarded too, and the episode ends for both
    assert landed >= 1 and hits >= 4  # a steel sword does at most 6 of 20 HP a hit
    assert terminations == {"agent_0": True, "agent_1": True}
    assert env.agents == []


def test_a_reset_revives_the_dead_agent(env):
    env.reset(seed=0)
    for _ in range(300):
        env.step({"agent_0": ATTACK, "agent_1": NOOP})
        if not env.agents:
            break
    assert hp(env.state(), 1) == 0
    _, infos = env.reset(seed=0)
    assert infos["agent_1"]["hp"] == 20 and hp(env.state(), 1) == 20
    # agent_1 fights back: now it scores +1 and agent_0 -1
    for _ in range(40):
        _, rewards, terminations, _, _ = env.step({"agent_0": NOOP, "agent_1": ATTACK})
        assert not any(terminations.values())
        if rewards["agent_1"]:
            break
    assert rewards == {"agent_0": -1, "agent_1": 1}
    assert hp(env.state(), 0) < 20 and hp(env.state(), 1) == 20
    # and it moves: a strafe changes its x
    x = env.state()[4]
    for _ in range(5):
        env.step({"agent_0": NOOP, "agent_1": LEFT})
    assert abs(env.state()[4] - x) > 0.3


def test_random_layout_is_seeded(env):
    layout = {"layout": "random"}
    env.reset(seed=1, options=layout)
    first = env.state().copy()
    assert 2 <= first[1] <= 4 and 8 <= first[5] <= 10  # agent_0 south, agent_1 north
    assert hp(first, 0) == hp(first, 1) == 20
    env.reset(seed=1, options=layout)
    np.testing.assert_allclose(env.state(), first, atol=1e-4)
    env.reset(seed=2, options=layout)
    assert not np.allclose(env.state(), first)


def fighters_potential(state):
    """reward = "distance"'s potential, from state(): minus 0.1 times the distance between
    the fighters."""
    return -0.1 * np.hypot(state[0] - state[4], state[1] - state[5])


def test_distance_reward_pays_both_each_step_the_change_of_the_fighters_potential(env):
    """agent_0 walks towards agent_1 (neither attacks, so every reward is shaping)."""
    env.reset(seed=1, options={"layout": "random", "reward": "distance"})
    start = before = fighters_potential(env.state())
    for _ in range(20):
        _, rewards, _, _, _ = env.step({"agent_0": FORWARD, "agent_1": NOOP})
        after = fighters_potential(env.state())
        assert rewards["agent_0"] == rewards["agent_1"]
        assert rewards["agent_0"] == pytest.approx(after - before, abs=1e-4)
        before = after
    # walking towards the other paid: the potential rose over the walk
    assert after > start + 0.1


def test_an_unknown_reward_option_is_an_error_naming_it(env):
    with pytest.raises(craftium_ma.EngineError,
                       match='option reward must be "hits" or "distance", not "dense"'):
        env.reset(seed=0, options={"reward": "dense"})
    with pytest.warns(RuntimeWarning, match="restarting the engine processes"):
        env.reset(seed=0)  # the env is usable afterwards
    assert hp(env.state(), 0) == 20
