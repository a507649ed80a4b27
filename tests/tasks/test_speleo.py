"""speleo: every step each agent gets -y, its own depth; walking down the
stairs pays more than standing still."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, JUMP, LEFT, RIGHT, UP, DOWN = range(7)


@pytest.fixture(scope="module")
def env():
    env = craftium_ma.parallel_env("speleo", num_agents=2, frameskip=4)
    yield env
    env.close()


def check_rewards(env, rewards, infos):
    """Each agent's reward is -y: the server's y in state(), and the client's y in infos
    up to the 0.01-node precision of the positions that clients send the server."""
    state = env.state()
    for i, agent in enumerate(["agent_0", "agent_1"]):
        assert rewards[agent] == pytest.approx(-state[3 * i + 1], abs=1e-5)
        assert rewards[agent] == pytest.approx(-infos[agent]["position"][1], abs=0.011)


def test_reward_is_minus_height_and_going_down_pays(env):
    # test layout: agent_0 at the head of the first flight, facing down it
    env.reset(seed=0, options={"layout": "test"})
    np.testing.assert_allclose(env.state()[:3], [5, 0.5, 8], atol=1e-4)
    totals = {"agent_0": 0.0, "agent_1": 0.0}
    heights = []
    for _ in range(20):
        _, rewards, terminations, _, infos = env.step({"agent_0": FORWARD, "agent_1": NOOP})
        check_rewards(env, rewards, infos)
        assert not any(terminations.values())
        assert rewards["agent_1"] == pytest.approx(-0.5, abs=1e-3)  # stands on the top floor
        heights.append(infos["agent_0"]["position"][1])
        for agent in totals:
            totals[agent] += rewards[agent]
    # down the 10-node flight (5 nodes of height) into the second chamber (floor at y = -6)
    assert heights == sorted(heights, reverse=True)
    assert heights[-1] == pytest.approx(-5.5, abs=0.01)
    assert totals["agent_0"] > totals["agent_1"] + 40


def test_random_spawns_in_the_top_chamber(env):
    env.reset(seed=3)
    first = env.state().copy()
    x, y, z = first[0::3], first[1::3], first[2::3]
    assert ((3 <= x) & (x <= 7) & (3 <= z) & (z <= 7)).all()
    np.testing.assert_allclose(y, 0.5, atol=1e-4)
    for _ in range(5):
        _, rewards, _, _, infos = env.step({"agent_0": NOOP, "agent_1": NOOP})
        check_rewards(env, rewards, infos)
        assert rewards["agent_0"] == pytest.approx(-0.5, abs=1e-3)
    env.reset(seed=3)
    np.testing.assert_allclose(env.state(), first, atol=1e-4)
    env.reset(seed=4)
    assert not np.allclose(env.state(), first)
