"""capture_the_flag: picking up the enemy flag, scoring a team reward at home,
and tagging an enemy in your half."""

import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, TAG = 0, 1, 6
RED_HOME, BLUE_HOME = 0, 1  # state indices


def agent_state(state, i):
    x, z, team, carrying = state[2 + 4 * i: 6 + 4 * i]
    return x, z, int(team), int(carrying)


def make_env():
    return craftium_ma.parallel_env("capture_the_flag", num_agents=4,
                                    task_options={"layout": "test", "length": 12})


def test_carrying_the_flag_home_rewards_the_whole_team():
    env = make_env()
    try:
        env.reset(seed=1)
        assert [agent_state(env.state(), i)[2] for i in range(4)] == [0, 1, 0, 1]  # red, blue, ...
        _, rewards, _, _, infos = env.step(dict.fromkeys(env.agents, NOOP))
        assert [infos[a]["team"] for a in env.agents] == [0, 1, 0, 1]  # the manifest's teams
        assert [env.team_of(a) for a in env.agents] == ["red", "blue", "red", "blue"]
        state = env.state()
        assert state[BLUE_HOME] == 0 and agent_state(state, 0)[3] == 1  # agent_0 has it
        assert set(rewards.values()) == {0}
        for _ in range(80):
            _, rewards, terminations, _, _ = env.step(
                {a: FORWARD if a == "agent_0" else NOOP for a in env.agents})
            if any(rewards.values()):
                break
        assert rewards == {"agent_0": 1, "agent_1": 0, "agent_2": 1, "agent_3": 0}
        state = env.state()
        assert state[BLUE_HOME] == 1 and agent_state(state, 0)[3] == 0
        assert agent_state(state, 0)[1] < 4  # scored at the red base
        assert not any(terminations.values())
    finally:
        env.close()


def test_tagging_an_enemy_in_your_half_sends_them_home():
    env = make_env()
    try:
        env.reset(seed=1)
        env.step(dict.fromkeys(env.agents, NOOP))  # agent_0 picks up the blue flag
        for _ in range(40):
            _, rewards, _, _, infos = env.step(
                {a: TAG if a == "agent_1" else NOOP for a in env.agents})
            if infos["agent_0"].get("tagged"):
                break
        else:
            raise AssertionError("agent_1 never tagged agent_0")
        state = env.state()
        x, z, _, carrying = agent_state(state, 0)
        assert z < 4 and carrying == 0  # back at the red base, flag dropped
        assert state[BLUE_HOME] == 1
        assert set(rewards.values()) == {0}
        assert infos["agent_0"]["hp"] == 20  # a tag does no damage
    finally:
        env.close()
