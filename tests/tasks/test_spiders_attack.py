"""spiders_attack: +1 to the agent that kills a spider, the next round brings
more spiders and clearing the last round ends the episode; a spider bites an
idle agent until its HP reaches 0, which terminates that agent only; a reset
revives it."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, BACKWARD, LEFT, RIGHT, JUMP, ATTACK, TURN_LEFT, TURN_RIGHT = range(9)
# layout "test": agent_0 at (3, 3) looks at the round's one spider, 2.5 nodes
# ahead; agent_1 stands in the far corner. state(): spiders alive, round, then
# x, z, hp of each agent.
START = [1, 1, 3, 3, 20, 13, 12, 20]


def make(**options):
    # frameskip 4: a step is 0.2 s of game time, a spider bites once a second
    return craftium_ma.parallel_env("spiders_attack", num_agents=2, frameskip=4,
                                    task_options={"layout": "test", **options})


def attack_until_reward(env, limit=40):
    """agent_0 holds attack until it is rewarded; the spider lives until then."""
    for step in range(1, limit):
        alive_before = env.state()[0]
        _, rewards, terminations, _, infos = env.step({"agent_0": ATTACK, "agent_1": NOOP})
        if rewards["agent_0"]:
            assert alive_before == 1
            return step, rewards, terminations, infos
        assert rewards == {"agent_0": 0, "agent_1": 0} and env.state()[0] == 1
    pytest.fail("agent_0 never killed the spider")


def test_killing_a_spider_rewards_the_killer_and_starts_the_next_round():
    env = make()
    try:
        env.reset(seed=0)
        np.testing.assert_allclose(env.state(), START, atol=1e-3)
        step, rewards, terminations, infos = attack_until_reward(env)
        assert rewards == {"agent_0": 1, "agent_1": 0}
        assert not any(terminations.values())
        assert infos["agent_0"]["kills"] == 1 and infos["agent_1"]["kills"] == 0
        assert list(env.state()[:2]) == [2, 2]  # round 2: two spiders
        assert step > 1  # the spider first walks into reach

        # with one round only, the kill ends the episode for the whole team
        env.reset(seed=0, options={"rounds": 1})
        np.testing.assert_allclose(env.state(), START, atol=1e-3)
        # (not necessarily at the same step: the client's punch timer keeps its
        # phase across resets, so punches land on other frames)
        _, rewards, terminations, _ = attack_until_reward(env)
        assert rewards == {"agent_0": 1, "agent_1": 0}
        assert terminations == {"agent_0": True, "agent_1": True}
        assert env.agents == [] and env.state()[0] == 0
    finally:
        env.close()


def test_a_spider_bites_an_idle_agent_until_it_terminates():
    env = make(spider_damage=5)
    try:
        env.reset(seed=0)
        hps = []
        for _ in range(60):
            _, rewards, terminations, _, infos = env.step({a: NOOP for a in env.agents})
            assert rewards == {"agent_0": 0, "agent_1": 0}
            hps.append(infos["agent_0"]["hp"])
            assert infos["agent_1"]["hp"] == 20 and not terminations["agent_1"]
            if terminations["agent_0"]:
                break
        else:
            pytest.fail("agent_0 never died")
        # 5 HP a bite, a bite at most once a second (five steps), down to 0
        drops = [i for i in range(1, len(hps)) if hps[i] < hps[i - 1]]
        assert hps[0] in (15, 20) and hps[-1] == 0
        assert all(hps[i - 1] - hps[i] == 5 for i in drops)
        assert all(b - a >= 5 for a, b in zip(drops, drops[1:]))
        assert env.agents == ["agent_1"] and env.state()[4] == 0

        assert min(hps[:-1]) > 0  # terminated at the very step HP reached 0

        # the spider leaves the dead agent for the one left, across the cage
        for _ in range(60):
            _, rewards, terminations, _, infos = env.step({"agent_1": NOOP})
            assert rewards == {"agent_1": 0}
            if infos["agent_1"]["hp"] < 20:
                break
        else:
            pytest.fail("the spider never reached agent_1")
        assert infos["agent_1"]["hp"] == 15 and terminations == {"agent_1": False}

        # a reset revives agent_0: full HP, and it moves (no death screen holds it)
        _, infos = env.reset(seed=0)
        assert infos["agent_0"]["hp"] == 20
        np.testing.assert_allclose(env.state(), START, atol=1e-3)
        _, _, _, _, infos = env.step({"agent_0": BACKWARD, "agent_1": NOOP})
        assert infos["agent_0"]["position"][2] < 3 - 0.2
    finally:
        env.close()
