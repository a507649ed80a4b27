"""capture_the_flag: picking up the enemy flag, scoring a team reward at home,
tagging an enemy in your half or carrying your flag, the flags in sight, and the progress
reward."""

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


def test_a_carrier_of_your_flag_is_tagged_in_its_own_half_too():
    """On a field of 8, agent_1 (blue) waits in the red half; agent_0 (red) takes the blue
    flag and stops in its own half in front of agent_1, who tags it there: the flag goes
    home (two carriers at their own bases could otherwise never be tagged)."""
    env = make_env(length=8)
    try:
        env.reset(seed=1)
        env.step(dict.fromkeys(env.agents, NOOP))  # agent_0 picks up the blue flag
        assert agent_state(env.state(), 0)[3] == 1
        for _ in range(60):
            in_red_half = agent_state(env.state(), 0)[1] < 4.9  # red's: z < 5
            _, rewards, _, _, infos = env.step(
                {"agent_0": NOOP if in_red_half else FORWARD,
                 "agent_1": TAG if in_red_half else NOOP, "agent_2": NOOP, "agent_3": NOOP})
            if infos["agent_0"]["tagged"]:
                break
        else:
            raise AssertionError("agent_1 never tagged agent_0 in the red half")
        state = env.state()
        assert in_red_half and state[BLUE_HOME] == 1 and agent_state(state, 0)[3] == 0
        assert set(rewards.values()) == {0}  # sent home, not a score
    finally:
        env.close()


def test_every_agent_sees_the_enemy_flag_in_its_first_frame():
    """On the scenarios' field at 48 x 48, the enemy flag's banner shows against the end
    wall, not hidden by a defender (v0's thin post, behind one, showed in no pixel)."""
    env = craftium_ma.parallel_env("capture_the_flag", num_agents=4, obs_size=48,
                                   task_options={"length": 24, "width": 16})
    try:
        observations, _ = env.reset(seed=1)
    finally:
        env.close()
    for agent, frame in observations.items():
        enemy_colour = 2 if env.team_of(agent) == "red" else 0  # RGB channel of its wool
        top = frame[:25].astype(int)  # at and above the horizon: the end wall, sky, flag
        rest = np.delete(top, enemy_colour, axis=-1).max(-1)
        assert (top[..., enemy_colour] > 2 * rest).sum() >= 4, agent


def progress(state, team, scored):
    """A team's (0 red, 1 blue) progress for reward = "progress", from state(), written
    from the task's page: a round trip between the bases per flag scored, plus what is
    done of the current one."""
    agents = [agent_state(state, i) for i in range((len(state) - 2) // 4)]
    way_back = np.hypot(*(BASES[1 - team] - BASES[team]))
    carrier = [a for a in agents if a[2] == team and a[3]]
    if carrier:
        left = np.hypot(*(np.array(carrier[0][:2]) - BASES[team]))
    else:
        left = min(np.hypot(*(np.array(a[:2]) - BASES[1 - team])) for a in agents
                   if a[2] == team) + way_back
    return 2 * way_back * (scored + 1) - left


def red_lead(state, red_scored):
    """Red's potential: 0.1 times its progress less blue's (blue's is minus that)."""
    return 0.1 * (progress(state, 0, red_scored) - progress(state, 1, 0))


def test_progress_reward_pays_a_team_its_lead_in_progress():
    """agent_0 (red) carries the blue flag home while the others stand still: red is paid
    each step the way its carrier came and blue loses as much; scoring costs no shaping,
    and the episode's shaping sums to the last potential less the first."""
    env = make_env(reward="progress")
    paid_red = 0.0

    def step(agent_0_action):
        nonlocal paid_red
        before = env.state()
        _, rewards, _, _, _ = env.step(
            {a: agent_0_action if a == "agent_0" else NOOP for a in env.agents})
        red = rewards["agent_0"]
        assert rewards["agent_2"] == red  # a team's own
        assert rewards["agent_1"] == rewards["agent_3"] == pytest.approx(
            -(red - (1 if red >= 1 else 0)), abs=1e-6)  # zero-sum but for the score
        paid_red += red
        return before, red

    try:
        env.reset(seed=1)
        first = red_lead(env.state(), 0)
        step(NOOP)  # agent_0 picks up the blue flag (the step hooks, after this step's pay)
        step(NOOP)
        assert agent_state(env.state(), 0)[3] == 1
        paid_home = 0.0
        for _ in range(80):
            before, red = step(FORWARD)
            if red >= 1:
                break  # scored
            assert red == pytest.approx(red_lead(env.state(), 0) - red_lead(before, 0),
                                        abs=1e-4)
            paid_home += red
        else:
            raise AssertionError("agent_0 never scored")
        assert paid_home > 0.1 * 5  # the carrier walked home, over 5 nodes, and was paid
        _, red = step(NOOP)  # the first pay after the score: a new round trip
        assert red >= 0
        assert paid_red == pytest.approx(1 + red_lead(env.state(), 1) - first, abs=1e-3)
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
