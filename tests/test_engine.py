"""The patched engine with real server and client processes: lock-step stepping,
per-player rewards and terminations from Lua, frames, determinism, cleanup."""

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from craftium_ma import protocol
from craftium_ma.lockstep import NOOP, AgentAction
from craftium_ma.protocol import EngineError

from conftest import AGENTS, make_session

pytestmark = pytest.mark.engine

DIG = AgentAction(keys=protocol.key_bits(["dig"]))
FORWARD = AgentAction(keys=protocol.key_bits(["forward"]))


def test_dig_rewards_only_the_digger_in_the_same_step(session):
    obs, _ = session.reset(seed=1, options={}, agents=AGENTS)
    assert all(o.ready for o in obs.values())
    _, result = session.step({"agent_0": NOOP, "agent_1": NOOP})
    assert [result["agents"][a]["reward"] for a in AGENTS] == [0, 0]
    _, result = session.step({"agent_0": DIG, "agent_1": NOOP})
    assert result["agents"]["agent_0"]["reward"] == 1
    assert result["agents"]["agent_1"]["reward"] == 0
    # rewards are cleared once reported
    _, result = session.step({"agent_0": NOOP, "agent_1": NOOP})
    assert result["agents"]["agent_0"]["reward"] == 0


def test_soft_reset_restores_the_dug_target(session):
    session.reset(seed=1, options={}, agents=AGENTS)
    _, result = session.step({"agent_0": DIG, "agent_1": DIG})
    assert [result["agents"][a]["reward"] for a in AGENTS] == [1, 1]
    session.reset(seed=1, options={}, agents=AGENTS)
    _, result = session.step({"agent_0": DIG, "agent_1": NOOP})
    assert result["agents"]["agent_0"]["reward"] == 1


def test_termination_reaches_only_that_player(session):
    session.reset(seed=1, options={"terminate": ["agent_1", 3]}, agents=AGENTS)
    flags = []
    for _ in range(4):
        _, result = session.step({"agent_0": NOOP, "agent_1": NOOP})
        flags.append({a: result["agents"][a]["terminated"] for a in AGENTS})
    assert flags[2] == {"agent_0": False, "agent_1": True}
    assert not any(f["agent_1"] for i, f in enumerate(flags) if i != 2)
    assert not any(f["agent_0"] for f in flags)


def walk_forward(session, pause: float, steps: int = 40):
    obs, _ = session.reset(seed=1, options={"targets": False}, agents=AGENTS)
    start = np.array(obs["agent_0"].position)
    for _ in range(steps):
        obs, result = session.step({"agent_0": FORWARD, "agent_1": NOOP})
        time.sleep(pause)
    distance = np.linalg.norm(np.array(obs["agent_0"].position) - start)
    return distance, result["agents"]["agent_0"]["info"]["server_time"]


def test_game_time_follows_steps_not_the_wall_clock(session):
    fast_distance, fast_time = walk_forward(session, pause=0.0)
    slow_distance, slow_time = walk_forward(session, pause=0.1)
    dt = session.config.frame_dtime * session.frameskip
    assert fast_distance > 5  # it really walked
    assert slow_distance == pytest.approx(fast_distance, rel=0.01)
    assert fast_time == pytest.approx(40 * dt, rel=1e-4)
    assert slow_time == pytest.approx(40 * dt, rel=1e-4)


def test_frames_are_not_blank_and_change_when_the_camera_turns(session):
    obs, _ = session.reset(seed=1, options={}, agents=AGENTS)
    before = obs["agent_0"].frame
    assert before.shape == (64, 64, 3) and before.dtype == np.uint8
    assert before.std() > 10  # not a flat colour
    obs, _ = session.step({"agent_0": AgentAction(dx=1.0), "agent_1": NOOP})
    after = obs["agent_0"].frame
    assert np.abs(after.astype(int) - before.astype(int)).mean() > 5
    assert obs["agent_0"].yaw != pytest.approx(0.0, abs=1)
    # the other agent did not turn and sees the same picture
    assert obs["agent_1"].yaw == pytest.approx(0.0, abs=1e-3)


def frames_around_a_server_change(pipelined: bool):
    """agent_0's frames of 4 idle steps; the server removes the targets at step 3."""
    with make_session(pipelined=pipelined) as s:
        s.reset(seed=1, options={"remove_targets_at": 3}, agents=AGENTS)
        return [s.step({"agent_0": NOOP, "agent_1": NOOP})[0]["agent_0"].frame
                for _ in range(4)]


def changed(a, b):
    return np.abs(a.astype(int) - b.astype(int)).mean() > 1


def test_a_strict_step_draws_what_its_tick_changed():
    f = frames_around_a_server_change(pipelined=False)
    assert not changed(f[0], f[1]) and changed(f[1], f[2]) and not changed(f[2], f[3])


def test_a_pipelined_step_draws_what_its_tick_changed_one_step_later():
    strict = frames_around_a_server_change(pipelined=False)
    f = frames_around_a_server_change(pipelined=True)
    assert not changed(f[0], f[1]) and not changed(f[1], f[2]) and changed(f[2], f[3])
    # the same pictures, one step later (the sky still eases a little with game time,
    # and the light the tick changed reaches a floor pixel a step later: one level)
    assert not changed(f[2], strict[1]) and changed(f[2], strict[2])
    assert np.abs(f[3].astype(int) - strict[3].astype(int)).max() <= 1


def test_a_node_removed_on_a_block_border_uncovers_the_next_block_face():
    """The targets lie on their map block's far border (z = 15), bricks behind them
    in the next block (z = 16). The brick faces that the removal uncovers belong to
    the next block's mesh (patch 0007 re-meshes only the meshes that show a change):
    the picture must be the one of a world built without the targets. One agent:
    with more than 3 node changes in a tick, Luanti resends whole blocks instead."""
    layout = {"target_z": 15, "brick_z": 16, "agent_z": 13}

    def frames(**options):
        with make_session(agents=["agent_0"]) as s:
            s.reset(seed=1, options=dict(layout, **options), agents=["agent_0"])
            return [s.step({"agent_0": NOOP})[0]["agent_0"].frame for _ in range(3)]

    removed = frames(remove_targets_at=1)
    never_there = frames(targets=False)
    assert changed(frames()[2], never_there[2])  # the targets are in view
    np.testing.assert_array_equal(removed[2], never_there[2])


def test_a_reset_frame_shows_the_map_that_arrived_during_the_reset():
    """Standing at z = -3, the agent's view reaches into map blocks that the server
    sends during the reset's zero-time steps. The reset's frame must show them, as
    the frames after it do (patch 0009); only the sky eases with game time."""
    with make_session(agents=["agent_0"], obs_size=(128, 128)) as s:
        obs, _ = s.reset(seed=1, options={"agent_z": -3, "target_z": 20}, agents=["agent_0"])
        for _ in range(5):  # past Luanti's 0.2 s draw list rebuild
            later, _ = s.step({"agent_0": NOOP})
    assert not changed(obs["agent_0"].frame, later["agent_0"].frame)


def test_a_target_seen_only_through_a_hole_in_a_wall_is_drawn():
    """Occlusion culling would hide the target's map block: every ray it casts from the
    eye to that block's centre and corners hits the wall. The launcher turns it off
    in the server (SERVER_DEFAULTS) and the client (CLIENT_DEFAULTS). The block
    arrives during the reset: the reset's frame shows it by patch 0009."""

    def frame(**options):
        with make_session(agents=["agent_0"]) as s:
            obs, _ = s.reset(seed=1, options=dict(window=True, agent_z=-3, **options),
                             agents=["agent_0"])
            return obs["agent_0"].frame

    assert (frame() != frame(targets=False)).any()


def test_lua_error_reaches_python_with_its_traceback():
    with make_session() as s, pytest.raises(EngineError) as err:
        s.reset(seed=1, options={"lua_error_at": 2}, agents=AGENTS)
        s.step({"agent_0": NOOP, "agent_1": NOOP})
        s.step({"agent_0": NOOP, "agent_1": NOOP})
    message = str(err.value)
    assert "the error asked for at step 2" in message
    assert "stack traceback" in message and "lockstep_test/init.lua" in message


def test_unknown_player_name_is_a_lua_error():
    with make_session() as s:
        with pytest.raises(EngineError, match="unknown agent 'nobody'"):
            s.reset(seed=1, options={"set_info_bad": True}, agents=AGENTS)


def run_episode(seed, pipelined=False):
    with make_session(pipelined=pipelined) as s:
        s.reset(seed=seed, options={}, agents=AGENTS)
        trace = []
        rng = np.random.default_rng(seed)
        for _ in range(30):
            actions = {a: AgentAction(keys=int(rng.integers(0, 1 << 10)),
                                      dx=float(rng.uniform(-1, 1)))
                       for a in AGENTS}
            obs, result = s.step(actions)
            trace.append([(obs[a].position, result["agents"][a]["reward"]) for a in AGENTS])
        return trace


def test_same_seed_and_actions_give_the_same_positions_and_rewards():
    assert run_episode(7) == run_episode(7)


def test_pipelining_changes_the_frames_not_the_game():
    """Positions and rewards do not depend on when the frames are drawn."""
    assert run_episode(7, pipelined=True) == run_episode(7)


def test_version_mismatch_gets_a_clear_error(session):
    session.reset(seed=1, options={}, agents=AGENTS)
    sock = session._agents["agent_0"]
    sock.send(protocol._REQUEST.pack(b"CMAA", 99, protocol.ACT, 1, 0, 1, 0, 0, 0))
    with pytest.raises(EngineError, match="version mismatch"):
        protocol.decode_observation(sock.recv_multipart())
    session._control.send(b'{"v": 99, "cmd": "status"}')
    with pytest.raises(EngineError, match="version mismatch"):
        protocol.decode_control(session._control.recv())


def test_engine_processes_and_zeromq_io_threads_run_sched_batch(session):
    """A thread woken by a hand-off must not preempt the running one (docs/benchmarks.md)."""
    session.reset(seed=1, options={}, agents=AGENTS)
    for pid in session.pids.values():
        threads = os.listdir(f"/proc/{pid}/task")
        assert len(threads) > 1 and all(os.sched_getscheduler(int(t)) == os.SCHED_BATCH
                                        for t in threads)
    io = [int(t) for t in os.listdir("/proc/self/task")
          if Path(f"/proc/self/task/{t}/comm").read_text().startswith("ZMQbg/IO")]
    assert io and all(os.sched_getscheduler(t) == os.SCHED_BATCH for t in io)


def luanti_processes():
    out = subprocess.run(["pgrep", "-f", "bin/luanti"], capture_output=True, text=True).stdout
    return set(out.split())


def test_close_leaves_no_process_socket_or_directory():
    before = luanti_processes()
    s = make_session()
    s.reset(seed=1, options={}, agents=AGENTS)
    directory = s.directory
    assert (directory / "control.sock").exists()
    assert luanti_processes() - before
    s.close()
    s.close()  # idempotent
    assert not directory.exists()
    assert luanti_processes() <= before


def join_attempt(processes, name, password):
    """Start a plain client as `name`; returns its log once it gave up or joined."""
    from craftium_ma.build import find_engine
    directory = processes.dir / f"visitor-{name}-{password}"
    directory.mkdir()
    (directory / "client.conf").write_text("screen_w = 64\nscreen_h = 64\nenable_sound = false\n")
    (directory / "password").write_text(password)
    log = directory / "debug.txt"
    proc = subprocess.Popen(
        [str(find_engine().binary), "--go", "--address", "127.0.0.1",
         "--port", str(processes._port), "--name", name,
         "--password-file", str(directory / "password"),
         "--config", str(directory / "client.conf"), "--logfile", str(log)],
        env=dict(os.environ, SDL_VIDEODRIVER="offscreen", MINETEST_USER_PATH=str(directory)),
        cwd=directory,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, log


def test_only_configured_agents_with_their_password_may_join():
    from craftium_ma.build import find_engine
    from craftium_ma.launcher import EngineProcesses, LaunchConfig
    from conftest import TEST_MOD
    processes = EngineProcesses(LaunchConfig(["agent_0"], (64, 64), [TEST_MOD]), find_engine())
    try:
        processes.start_server()
        for name, password, reason in [("intruder", "anything", "only the configured agents"),
                                       ("agent_0", "wrong", "invalid password")]:
            proc, log = join_attempt(processes, name, password)
            proc.wait(timeout=60)
            assert reason in log.read_text().lower()
        # the right password joins (the client keeps running)
        proc, log = join_attempt(processes, "agent_0", processes._passwords["agent_0"])
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                server_log = (processes.dir / "server.log.debug").read_text()
                if "agent_0 [127.0.0.1] joins game" in server_log:
                    break
                time.sleep(0.1)
            assert "agent_0 [127.0.0.1] joins game" in server_log
        finally:
            proc.kill()
            proc.wait()
    finally:
        processes.close()
