"""chop_tree: +1 to the agent that digs a tree trunk node, 0 for anything else;
a soft reset grows the dug trunks back."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, JUMP, DIG, LEFT, RIGHT, UP, DOWN = range(8)


@pytest.fixture(scope="module")
def env():
    # frameskip 4: a step is 0.2 s, so a trunk takes a few steps with a steel axe
    env = craftium_ma.parallel_env("chop_tree", num_agents=2, frameskip=4)
    yield env
    env.close()


def dig_until_reward(env, other=DIG, limit=20):
    """agent_0 digs (agent_1 does `other`) until agent_0 is rewarded; returns the steps."""
    for step in range(1, limit + 1):
        _, rewards, terminations, truncations, _ = env.step({"agent_0": DIG, "agent_1": other})
        assert rewards["agent_1"] == 0
        assert not any(terminations.values()) and not any(truncations.values())
        if rewards["agent_0"]:
            assert rewards["agent_0"] == 1
            return step
    pytest.fail(f"agent_0 got no reward in {limit} steps of digging")


def test_digging_trunks_rewards_the_digger_and_reset_restores_them(env):
    # test layout: agent_0 at (11, 10) faces the trunk at (11, 11); agent_1 faces the hedge
    env.reset(seed=0, options={"layout": "test"})
    start = env.state().copy()
    np.testing.assert_allclose(start[:3], [11, 10, 0], atol=1e-4)

    # the trunk node at eye height; agent_1 digs the hedge meanwhile, for nothing
    first = dig_until_reward(env)
    assert 2 <= first <= 10
    # nothing left in reach at eye height: digging on gives nothing
    for _ in range(first + 2):
        _, rewards, _, _, _ = env.step({"agent_0": DIG, "agent_1": NOOP})
        assert rewards == {"agent_0": 0, "agent_1": 0}
    # looking 30 degrees down, the trunk node below pays again
    for _ in range(2):
        env.step({"agent_0": DOWN, "agent_1": NOOP})
    assert dig_until_reward(env, other=NOOP) == first

    # a soft reset puts the trunk back: the same digging pays at the same step
    env.reset(seed=0, options={"layout": "test"})
    np.testing.assert_allclose(env.state(), start, atol=1e-4)
    assert dig_until_reward(env) == first


def test_random_spawns_follow_the_seed(env):
    env.reset(seed=5)
    first = env.state().copy()
    x, z = first[0::3], first[1::3]
    assert ((1 <= x) & (x <= 24) & (1 <= z) & (z <= 24)).all()
    assert (x[0], z[0]) != (x[1], z[1])
    _, rewards, _, _, _ = env.step({"agent_0": NOOP, "agent_1": NOOP})
    assert rewards == {"agent_0": 0, "agent_1": 0}
    env.reset(seed=5)
    np.testing.assert_allclose(env.state(), first, atol=1e-4)
    env.reset(seed=6)
    assert not np.allclose(env.state(), first)
