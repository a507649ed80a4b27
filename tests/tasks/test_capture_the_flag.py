"""capture_the_flag: picking up the enemy flag, scoring a team reward at home,
and tagging an enemy in your half."""

import numpy as np
import pytest

import craftium_ma

pytestmark = pytest.mark.engine

NOOP, FORWARD, TAG = 0, 1, 6
RED_HOME, BLUE_HOME = 0, 1  # state indices


def agent_state(state, i):
    x, z, team, carrying = state[2 + 4 * i: 6 + 4 * i]
    return x, z, int(team), int(carrying)


LENGTH, WIDTH = 12, 24
BASES = {0: np.array([WIDTH // 2 + 1, 2]), 1: np.array([WIDTH // 2 + 1, LENGTH - 1])}  # x, z


def make_env(**options):
    return craftium_ma.parallel_env("capture_the_flag", num_agents=4,
                                    task_options={"layout": "test", "length": LENGTH, **options})


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


def progress(state, team, scored):
    """reward = "progress"'s potential of a team (0 red, 1 blue) from state(), written
    from the task's page: 0.1 times a round trip between the bases per flag scored, less
    what is left of the current one."""
    agents = [agent_state(state, i) for i in range((len(state) - 2) // 4)]
    way_back = np.hypot(*(BASES[1 - team] - BASES[team]))
    carrier = [a for a in agents if a[2] == team and a[3]]
    if carrier:
        left = np.hypot(*(np.array(carrier[0][:2]) - BASES[team]))
    else:
        left = min(np.hypot(*(np.array(a[:2]) - BASES[1 - team])) for a in agents
                   if a[2] == team) + way_back
    return 0.1 * (2 * way_back * scored - left)


def test_progress_reward_pays_each_team_its_way_to_the_flag_and_back():
    """agent_0 (red) carries the blue flag home while the others stand still: red is paid
    each step the way its carrier came, blue nothing; scoring costs no shaping, and the
    episode's shaping sums to the last potential less the first."""
    env = make_env(reward="progress")
    totals = np.zeros(2)  # red's, blue's

    def step(agent_0_action):
        before = env.state()
        _, rewards, _, _, _ = env.step(
            {a: agent_0_action if a == "agent_0" else NOOP for a in env.agents})
        red, blue = rewards["agent_0"], rewards["agent_1"]
        assert (rewards["agent_2"], rewards["agent_3"]) == (red, blue)  # each team its own
        totals[:] += red, blue
        return before, red, blue

    try:
        env.reset(seed=1)
        first = [progress(env.state(), team, 0) for team in (0, 1)]
        step(NOOP)  # agent_0 picks up the blue flag (the step hooks, after this step's pay)
        step(NOOP)
        assert agent_state(env.state(), 0)[3] == 1
        paid_home = 0.0
        for _ in range(80):
            before, red, blue = step(FORWARD)
            if red >= 1:
                break  # scored
            assert blue == 0
            assert red == pytest.approx(progress(env.state(), 0, 0) - progress(before, 0, 0),
                                        abs=1e-4)
            paid_home += red
        else:
            raise AssertionError("agent_0 never scored")
        assert paid_home > 0.1 * 5  # the carrier walked home, over 5 nodes, and was paid
        _, red, blue = step(NOOP)  # the first pay after the score: a new round trip
        assert red >= 0 and blue == 0
        last = [progress(env.state(), 0, 1), progress(env.state(), 1, 0)]
        np.testing.assert_allclose(totals, [1 + last[0] - first[0], last[1] - first[1]],
                                   atol=1e-3)
    finally:
        env.close()


def test_an_unknown_reward_option_is_an_error_naming_it():
    env = make_env()
    try:
        with pytest.raises(craftium_ma.EngineError,
                           match='option reward must be "score" or "progress", not "dense"'):
            env.reset(seed=0, options={"reward": "dense"})
    finally:
        env.close()
