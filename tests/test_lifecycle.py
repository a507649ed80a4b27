"""No Luanti process, socket or temp directory survives the Python process that
started them, even when it is killed with SIGKILL."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_lua_error_task

HERE = Path(__file__).resolve().parent

CHILD = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from conftest import make_session
s = make_session(agents=["agent_0"])
s.reset(seed=0, options={{}}, agents=["agent_0"])
print(s.directory, flush=True)
import time
time.sleep(600)
"""


def engine_pids():
    out = subprocess.run(["pgrep", "-f", "bin/luanti"], capture_output=True, text=True).stdout
    return set(out.split())


def test_sigkill_of_the_python_parent_leaves_nothing_behind():
    before = engine_pids()
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    directory = Path(child.stdout.readline().strip())
    assert directory.is_dir() and engine_pids() - before
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    deadline = time.monotonic() + 10
    while (engine_pids() - before or directory.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not engine_pids() - before
    assert not directory.exists()


def test_repeated_sessions_leak_no_process_fd_or_directory():
    from conftest import make_session
    before_pids = engine_pids()
    before_fds = len(os.listdir("/proc/self/fd"))
    directories = []
    for _ in range(5):
        s = make_session(agents=["agent_0"])
        s.reset(seed=0, options={}, agents=["agent_0"])
        directories.append(s.directory)
        s.close()
    assert engine_pids() <= before_pids
    assert not any(d.exists() for d in directories)
    assert len(os.listdir("/proc/self/fd")) <= before_fds + 2


ENV_CHILD = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if the parent ignores it
import craftium_ma
env = craftium_ma.parallel_env("small_room", num_agents=2)
env.reset(seed=0)
print(env._session.directory, flush=True)
import time
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_killed_or_interrupted_process_holding_a_started_env_leaves_nothing(sig):
    before = engine_pids()
    child = subprocess.Popen([sys.executable, "-c", ENV_CHILD], stdout=subprocess.PIPE, text=True)
    directory = Path(child.stdout.readline().strip())
    assert directory.is_dir()
    os.kill(child.pid, sig)
    child.wait(timeout=30)
    deadline = time.monotonic() + 10
    while (engine_pids() - before or directory.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not engine_pids() - before and not directory.exists()


def test_twenty_env_cycles_leak_nothing():
    import tempfile

    import craftium_ma
    before_pids = engine_pids()
    before_fds = len(os.listdir("/proc/self/fd"))
    before_dirs = set(Path(tempfile.gettempdir()).glob("craftium-ma-*"))
    for i in range(20):
        env = craftium_ma.parallel_env("small_room", num_agents=1)
        env.reset(seed=i)
        env.step({"agent_0": 1})
        env.close()
    assert engine_pids() <= before_pids
    assert set(Path(tempfile.gettempdir()).glob("craftium-ma-*")) <= before_dirs
    assert len(os.listdir("/proc/self/fd")) <= before_fds + 2


def test_garbage_collection_closes_the_env():
    import gc

    import craftium_ma
    before = engine_pids()
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    env.reset(seed=0)
    directory = env._session.directory
    del env
    gc.collect()
    assert not directory.exists() and engine_pids() <= before


def test_a_crashed_client_is_named_with_its_log():
    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=2, timeout=20)
    try:
        env.reset(seed=0)
        os.kill(env.engine_pids()["agent_1"], signal.SIGKILL)
        with pytest.raises(craftium_ma.EngineError, match=r"(?s)client of agent_1 exited.*agent_1\.log"):
            env.step({"agent_0": 0, "agent_1": 0})
    finally:
        env.close()


def test_an_env_started_from_a_thread_that_exits_keeps_running():
    """Worker threads (thread-based runners) may reset an env and exit: the engine
    processes must not die with them (PR_SET_PDEATHSIG is per thread)."""
    import threading

    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    try:
        worker = threading.Thread(target=env.reset, kwargs={"seed": 0})
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive() and set(env.engine_pids()) == {"server", "agent_0"}
        time.sleep(0.5)
        for _ in range(5):
            obs, *_ = env.step({"agent_0": 1})
        assert obs["agent_0"].shape == (64, 64, 3)
    finally:
        env.close()


def assert_nothing_left(pids, directory):
    alive = [p for p in pids if Path(f"/proc/{p}").exists()
             and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()]
    assert not alive and not directory.exists()


def assert_restarts(env, process):
    """The next reset starts new engine processes, warns naming the failed process and
    says so in infos; the env then steps as usual."""
    old_pids, old_dir = set(env.engine_pids().values()), env._session.directory
    with pytest.warns(RuntimeWarning, match=f"(?s)restarting the engine processes.*{process}"):
        obs, infos = env.reset(seed=1)
    assert all(info["engine_restarted"] for info in infos.values())
    assert obs["agent_0"].shape == (64, 64, 3) and obs["agent_0"].any()
    assert not old_pids & set(env.engine_pids().values())
    assert_nothing_left(old_pids, old_dir)
    env.step({a: 0 for a in env.agents})
    _, infos = env.reset(seed=2)
    assert not any(info["engine_restarted"] for info in infos.values())


@pytest.mark.parametrize("process", ["agent_1", "server"])
def test_after_a_killed_process_the_next_reset_restarts_the_engine(process):
    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=2, timeout=20)
    try:
        env.reset(seed=0)
        os.kill(env.engine_pids()[process], signal.SIGKILL)
        with pytest.raises(craftium_ma.EngineError, match="server" if process == "server" else process):
            env.step({"agent_0": 0, "agent_1": 0})
        with pytest.raises(RuntimeError, match="broke in an earlier call.*env.reset"):
            env.step({"agent_0": 0, "agent_1": 0})
        assert_restarts(env, process)
        pids, directory = set(env.engine_pids().values()), env._session.directory
    finally:
        env.close()
    assert_nothing_left(pids, directory)


def test_after_a_stopped_client_the_step_times_out_and_the_reset_restarts_the_engine():
    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=2, timeout=3)
    try:
        env.reset(seed=0)
        os.kill(env.engine_pids()["agent_1"], signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="agent_1.*within 3"):
            env.step({"agent_0": 0, "agent_1": 0})
        assert time.monotonic() - start < 3 + 2
        assert_restarts(env, "agent_1")
    finally:
        env.close()


@pytest.mark.parametrize("hook", ["step", "reset"])
def test_after_a_lua_error_in_a_hook_the_next_reset_restarts_the_world(tmp_path, hook):
    import craftium_ma
    env = craftium_ma.parallel_env(task_dir=write_lua_error_task(tmp_path), num_agents=1, timeout=20)
    try:
        env.reset(seed=0)
        with pytest.raises(craftium_ma.EngineError, match=f"(?s)the {hook} hook failed.*traceback"):
            if hook == "step":
                env.reset(seed=0, options={"fail_at": 2})
                env.step({"agent_0": 0})
                env.step({"agent_0": 0})
            else:
                env.reset(seed=0, options={"fail_reset": True})
        assert_restarts(env, f"the {hook} hook failed")
    finally:
        env.close()


def test_step_after_close_says_so_and_reset_starts_the_env_again():
    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    try:
        env.reset(seed=0)
        env.close()
        with pytest.raises(RuntimeError, match=r"^step\(\) after close\(\): the env is closed; "
                                               r"reset\(\) starts it again"):
            env.step({"agent_0": 0})
        obs, _ = env.reset(seed=0)
        assert obs["agent_0"].shape == (64, 64, 3) and set(env.engine_pids()) == {"server", "agent_0"}
    finally:
        env.close()


DROPPED_ENV = """
import gc
import craftium_ma
env = craftium_ma.parallel_env("small_room", num_agents=2)
env.reset(seed=0)
env.step({"agent_0": 1, "agent_1": 0})
directory = env._session.directory
del env
gc.collect()
assert not directory.exists()
print("dropped", flush=True)
"""


def test_an_env_dropped_without_close_closes_its_sockets_and_context():
    out = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c",
                          DROPPED_ENV], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout == "dropped\n", out.stderr
    assert "ResourceWarning" not in out.stderr and "Unclosed" not in out.stderr, out.stderr
