"""commons_harvest: +1 to the agent that digs an apple; empty spots regrow only
near remaining apples, so a patch harvested bare stays bare; a reset restores
the apples; the episode's metrics arrive in infos at the last step."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, LEFT, RIGHT, DIG = 0, 1, 2, 3, 4
AGENTS = ["agent_0", "agent_1", "agent_2"]
# layout "test": patch 0 is one apple in front of agent_0, patch 1 a row of three
# whose middle is in front of agent_1, patches 2 and 3 are full diamonds of 13
START = [1, 3, 13, 13]
P = len(START)


def act(**chosen):
    return {a: chosen.get(a, NOOP) for a in AGENTS}


def test_digging_rewards_the_digger_and_apples_regrow_only_near_apples():
    env = craftium_ma.parallel_env("commons_harvest", num_agents=3,
                                   task_options={"layout": "test", "regrow_rate": 0.05})
    try:
        env.reset(seed=0)
        start = env.state().copy()
        assert list(start[:P]) == START

        _, rewards, terminations, _, infos = env.step(act(agent_0=DIG))
        assert rewards == {"agent_0": 1, "agent_1": 0, "agent_2": 0}
        assert not any(terminations.values())
        assert [infos[a]["apples"] for a in AGENTS] == [1, 0, 0]
        assert list(env.state()[:P]) == [0, 3, 13, 13]

        _, rewards, _, _, infos = env.step(act(agent_1=DIG))
        assert rewards == {"agent_0": 0, "agent_1": 1, "agent_2": 0}
        assert [infos[a]["apples"] for a in AGENTS] == [1, 1, 0]
        assert list(env.state()[:P]) == [0, 2, 13, 13]

        # the taken middle apple of patch 1 has two neighbours: it regrows
        # (p = 0.05 * 2 per step); patch 0 has none left and never regrows
        counts = []
        for _ in range(80):
            _, rewards, _, _, _ = env.step(act())
            assert set(rewards.values()) == {0}
            counts.append(env.state()[:2].copy())
        counts = np.array(counts)
        assert (counts[:, 0] == 0).all()
        assert counts[-1, 1] == 3 and (counts[:, 1] == 2).any()
        assert list(env.state()[2:P]) == [13, 13]

        # the positions in state() are the agents' own
        for i, a in enumerate(AGENTS):
            x, _, z = infos[a]["position"]
            assert env.state()[P + 2 * i: P + 2 + 2 * i] == pytest.approx([x, z], abs=1e-3)

        # a soft reset restores the apples and the places
        env.reset(seed=0)
        np.testing.assert_allclose(env.state(), start, atol=1e-4)
    finally:
        env.close()


def test_metrics_arrive_at_the_last_step():
    env = craftium_ma.parallel_env("commons_harvest", num_agents=3, max_cycles=6,
                                   task_options={"layout": "test", "regrow_rate": 0})
    try:
        env.reset(seed=1)
        plan = [act(agent_0=DIG), act(agent_1=DIG)] + [act()] * 4
        for step, actions in enumerate(plan, 1):
            _, rewards, terminations, truncations, infos = env.step(actions)
            last = step == len(plan)
            assert all(t == last for t in truncations.values())
            assert not any(terminations.values())
            for a in AGENTS:  # before the last step: the schema's defaults (0, apples_left -1)
                assert (infos[a]["apples_left"] == -1 and infos[a]["equality"] == 0) != last
        assert env.agents == []
        for a in AGENTS:
            info = infos[a]
            # harvests 1, 1, 0: Gini = 4 / (2 * 3 * 2) = 1/3
            assert info["equality"] == pytest.approx(2 / 3)
            assert info["sustainability"] == pytest.approx(1.5)  # taken at steps 1 and 2
            assert info["efficiency"] == pytest.approx(2 / 3)
            assert info["apples_left"] == sum(START) - 2  # nothing regrows at rate 0
        assert list(env.state()[:P]) == [0, 2, 13, 13]
    finally:
        env.close()
