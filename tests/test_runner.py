"""The paced runner against a real server and clients: pacing, pause (game time stops),
single steps, stop, automatic resets, isolated subscribers."""

import threading
import time
from contextlib import contextmanager

import pytest

import craftium_ma
from craftium_ma.scaffold import new_task

MAX_CYCLES = 25
# the server's game clock: globalsteps run in every server tick, the env's or not
GAME_CLOCK = """
local game_time = 0
core.register_globalstep(function(dtime) game_time = game_time + dtime end)
craftium_ma.register_on_step(function()
	for _, name in ipairs(craftium_ma.agents()) do
		craftium_ma.set_info(name, "game_time", game_time)
	end
end)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    folder = new_task("clock", tmp_path_factory.mktemp("tasks"))
    with open(folder / "init.lua", "a") as f:
        f.write(GAME_CLOCK)
    with open(folder / "task.toml", "a") as f:
        f.write('\n[infos]\ngame_time = { dtype = "float64" }\n')
    e = craftium_ma.parallel_env(task_dir=folder, num_agents=2, obs_size=16,
                                 max_cycles=MAX_CYCLES)
    yield e
    e.close()


class Recorder:
    """A noop policy that records the infos it is given, and a subscriber of events."""

    def __init__(self):
        self.infos = []  # (agent, info) in call order
        self.events = []  # (monotonic time, event)

    def policy(self, agent, observation, info):
        self.infos.append((agent, info))
        return 0

    def __call__(self, event):
        self.events.append((time.monotonic(), event))

    def types(self):
        return [e.type for _, e in self.events]


def wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@contextmanager
def running(runner, **kwargs):
    """runner.run(**kwargs) in a thread; stopped and joined at the end."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(reason=runner.run(**kwargs)))
    thread.start()
    try:
        yield result
    finally:
        if thread.is_alive():
            runner.stop()
        thread.join(timeout=30)
        assert not thread.is_alive()


@pytest.mark.engine
def test_a_paced_run_keeps_its_schedule_across_episode_resets(env):
    rec = Recorder()
    runner = craftium_ma.Runner(env, rec.policy, tick_rate=20)
    runner.subscribe(rec)
    assert runner.run(max_steps=61) == "max_steps"
    steps = [t for t, e in rec.events if e.type == "step"]
    assert len(steps) == 61 and runner.step_count == 61
    assert steps[-1] - steps[0] == pytest.approx(3.0, rel=0.01)
    # two resets (every MAX_CYCLES steps) happened inside the schedule
    assert rec.types().count("episode_ended") == 61 // MAX_CYCLES


@pytest.mark.engine
def test_pause_stops_the_step_counter_and_game_time_and_step_runs_exactly_n(env):
    rec = Recorder()
    runner = craftium_ma.Runner(env, rec.policy, tick_rate=20)
    runner.subscribe(rec)
    with running(runner):
        wait_for(lambda: runner.step_count >= 5)
        runner.pause()
        assert runner.paused
        paused_at = runner.step_count
        time.sleep(1.0)
        assert runner.step_count == paused_at
        assert runner.snapshot().status == "paused"

        seen = len(rec.infos)
        runner.step(3)
        assert runner.step_count == paused_at + 3
        time.sleep(0.3)
        assert runner.step_count == paused_at + 3
        # the policy's infos of steps paused_at and paused_at + 1, a second of wall time
        # apart: the server ran one tick between them, not a second's worth
        clock = [info["game_time"] for agent, info in rec.infos[seen:] if agent == "agent_0"]
        assert clock[1] - clock[0] == pytest.approx(env.frame_dtime)

        runner.resume()
        wait_for(lambda: runner.step_count >= paused_at + 6)
        assert not runner.paused
    types = rec.types()
    paused, resumed = types.index("paused"), types.index("resumed")
    assert types[paused:resumed].count("step") == 3
    assert [e.data["command"] for _, e in rec.events if e.type == "control"][:3] == \
        ["pause", "step", "resume"]


@pytest.mark.engine
def test_the_status_says_paused_only_after_the_step_in_flight(env):
    """A pause asked for while a step is in flight: the snapshot says "running" until that
    step is done, then "paused" at the step count that stays (the viewer shows it)."""
    in_policy, release = threading.Event(), threading.Event()

    def slow_policy(agent, observation, info):
        if runner.step_count == 3:
            in_policy.set()
            assert release.wait(30)
        return 0
    runner = craftium_ma.Runner(env, slow_policy)
    with running(runner):
        assert in_policy.wait(30)
        pausing = threading.Thread(target=runner.pause)
        pausing.start()
        wait_for(lambda: runner.paused)
        time.sleep(0.2)
        assert runner.snapshot().status == "running" and runner.step_count == 3
        release.set()
        pausing.join(timeout=30)
        snapshot = runner.snapshot()
        assert snapshot.status == "paused" and snapshot.step == runner.step_count == 4
        time.sleep(0.3)
        assert runner.step_count == 4


@pytest.mark.engine
def test_stop_ends_the_run_with_its_reason(env):
    rec = Recorder()
    runner = craftium_ma.Runner(env, rec.policy)
    runner.subscribe(rec)
    with running(runner) as result:
        wait_for(lambda: runner.step_count >= 3)
        runner.stop()
        wait_for(lambda: "reason" in result)
    assert result["reason"] == "stopped" == runner.reason
    ended = rec.events[-1][1]
    assert ended.type == "run_ended" and ended.data["reason"] == "stopped"
    assert ended.data["step"] == runner.step_count
    assert runner.snapshot().status == "ended"


@pytest.mark.engine
def test_episodes_reset_automatically_and_end_the_run_with_returns(env):
    rec = Recorder()
    runner = craftium_ma.Runner(env, {"agent_0": rec.policy, "agent_1": lambda a, o, i: 0})
    runner.subscribe(rec)
    assert runner.run(episodes=2) == "episodes"
    assert runner.step_count == 2 * MAX_CYCLES
    assert {agent for agent, info in rec.infos} == {"agent_0"}  # each agent its own policy
    ended = [e.data for _, e in rec.events if e.type == "episode_ended"]
    assert [(d["episode"], d["length"]) for d in ended] == [(0, MAX_CYCLES), (1, MAX_CYCLES)]
    steps = [e.data for _, e in rec.events if e.type == "step"]
    for d in ended:
        for agent in env.possible_agents:
            assert d["returns"][agent] == sum(s["rewards"][agent] for s in steps
                                              if s["episode"] == d["episode"])
        assert d["team_returns"] == {"all": sum(d["returns"].values())}
    snapshot = runner.snapshot().to_dict()
    assert snapshot["episode_returns"] == [d["returns"] for d in ended]
    assert snapshot["episode"] == 2 and set(snapshot["agents"]) == set(env.possible_agents)
    assert len(snapshot["task_state"]) == 2 + 2 * 2


@pytest.mark.engine
def test_a_raising_subscriber_does_not_stop_the_run(env, caplog):
    runner = craftium_ma.Runner(env, lambda a, o, i: 0)

    def broken(event):
        raise RuntimeError("subscriber bug")

    got = []
    runner.subscribe(broken)
    runner.subscribe(got.append)
    assert runner.run(max_steps=10) == "max_steps"
    assert [e.data["step"] for e in got if e.type == "step"] == list(range(1, 11))
    assert "subscriber bug" in caplog.text


@pytest.mark.engine
def test_a_raising_policy_ends_the_run_with_reason_error(env):
    got = []

    def policy(agent, observation, info):
        raise ValueError("policy bug")

    runner = craftium_ma.Runner(env, policy)
    runner.subscribe(got.append)
    with pytest.raises(ValueError, match="policy bug"):
        runner.run(max_steps=5)
    assert runner.reason == "error"
    assert got[-1].type == "run_ended" and "policy bug" in got[-1].data["error"]


@pytest.mark.engine
def test_chat_reaches_the_agents_and_what_is_said_comes_out_as_chat_events(env):
    rec = Recorder()

    def policy(agent, observation, info):
        if agent == "agent_0" and runner.step_count == 1:
            runner.post_chat("come here", to="agent_1", sender="alice")
        if agent == "agent_0" and runner.step_count == 3:
            env.say("agent_0", "on my way")
        return rec.policy(agent, observation, info)

    runner = craftium_ma.Runner(env, policy)
    runner.subscribe(rec)
    assert runner.run(max_steps=8) == "max_steps"
    heard = {a: [(c["from"], c["text"]) for b, info in rec.infos if b == a for c in info["chat"]]
             for a in env.possible_agents}
    assert heard == {"agent_0": [], "agent_1": [("alice", "come here"), ("agent_0", "on my way")]}
    chats = [(e.data["from"], e.data["to"], e.data["text"]) for _, e in rec.events
             if e.type == "chat"]
    assert chats == [("alice", "agent_1", "come here"), ("agent_0", None, "on my way")]


# -- no engine: an env that is never reset starts no processes ---------------------------

def test_tick_rate_controls_and_bad_arguments_name_what_was_wrong():
    env = craftium_ma.parallel_env("small_room", num_agents=2)
    runner = craftium_ma.Runner(env, lambda a, o, i: 0, tick_rate=20)
    runner.faster()
    assert runner.tick_rate == 40
    runner.slower()
    runner.slower()
    assert runner.tick_rate == 10
    runner.set_tick_rate(None)
    runner.faster()
    assert runner.tick_rate is None
    runner.slower()
    assert runner.tick_rate == 20
    with pytest.raises(ValueError, match="tick_rate -1 is out of range"):
        runner.set_tick_rate(-1)
    with pytest.raises(TypeError, match="tick_rate must be None or a number"):
        craftium_ma.Runner(env, lambda a, o, i: 0, tick_rate="fast")
    with pytest.raises(ValueError, match=r"no policy for \['agent_1'\]"):
        craftium_ma.Runner(env, {"agent_0": lambda a, o, i: 0})
    with pytest.raises(TypeError, match="policy must be a callable"):
        craftium_ma.Runner(env, 3)
    with pytest.raises(ValueError, match="max_steps must be None or a positive int"):
        runner.run(max_steps=0)
    with pytest.raises(ValueError,
                       match=r"n \(the number of steps\) must be a positive int, got 0"):
        runner.step(0)
    with pytest.raises(ValueError, match="chat to unknown agent 'agent_7'"):
        runner.post_chat("hi", to="agent_7")
