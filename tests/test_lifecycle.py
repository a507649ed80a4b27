"""No Luanti process, socket or temp directory survives the Python process that
started them, even when it is killed with SIGKILL. The checks look at the processes and
directories each test started, so other engines on the machine do not matter."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_lua_error_task, write_task

pytestmark = pytest.mark.engine

HERE = Path(__file__).resolve().parent

CHILD = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from conftest import make_session
s = make_session(agents=["agent_0"])
s.reset(seed=0, options={{}}, agents=["agent_0"])
print(s.directory, *s.pids.values(), flush=True)
import time
time.sleep(600)
"""


def running(pids) -> set[int]:
    """Those of `pids` that are running processes (not zombies)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def started_child(script: str) -> tuple[subprocess.Popen, Path, set[int]]:
    """A Python child running `script`, which prints its engine directory and pids."""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    directory, *pids = child.stdout.readline().split()
    assert directory and pids, "the child printed no engine directory and pids"
    return child, Path(directory), {int(p) for p in pids}


def wait_until_gone(pids, directory, timeout=10.0):
    deadline = time.monotonic() + timeout
    while (running(pids) or directory.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)


def test_sigkill_of_the_python_parent_leaves_nothing_behind():
    child, directory, pids = started_child(CHILD)
    assert directory.is_dir() and running(pids) == pids
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    wait_until_gone(pids, directory)
    assert not running(pids)
    assert not directory.exists()


def test_repeated_sessions_leak_no_process_fd_or_directory():
    from conftest import make_session
    before_fds = len(os.listdir("/proc/self/fd"))
    directories, pids = [], set()
    for _ in range(5):
        s = make_session(agents=["agent_0"])
        s.reset(seed=0, options={}, agents=["agent_0"])
        directories.append(s.directory)
        pids |= set(s.pids.values())
        s.close()
    assert len(pids) == 10 and not running(pids)
    assert not any(d.exists() for d in directories)
    assert len(os.listdir("/proc/self/fd")) <= before_fds + 2


ENV_CHILD = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if the parent ignores it
import craftium_ma
env = craftium_ma.parallel_env("small_room", num_agents=2)
env.reset(seed=0)
print(env.engine_directory, *env.engine_pids().values(), flush=True)
import time
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_killed_or_interrupted_process_holding_a_started_env_leaves_nothing(sig):
    child, directory, pids = started_child(ENV_CHILD)
    assert directory.is_dir() and running(pids) == pids
    os.kill(child.pid, sig)
    child.wait(timeout=30)
    wait_until_gone(pids, directory)
    assert not running(pids) and not directory.exists()


def reaper_of(directory: Path) -> int:
    """The pid of the reaper (craftium_ma/_reaper.py) that watches `directory`."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().decode().split("\0")
        except (OSError, ValueError):
            continue
        if any(a.endswith("_reaper.py") for a in argv) and str(directory) in argv:
            return int(proc.name)
    raise AssertionError(f"no reaper watches {directory}")


def test_pkill_of_both_the_parent_and_its_reaper_leaves_nothing():
    """`pkill -f` of a pattern naming both (SIGTERM to the reaper first), then the parent
    killed: the reaper outlives the signal and cleans up after its parent."""
    child, directory, pids = started_child(ENV_CHILD)
    reaper = reaper_of(directory)
    os.kill(reaper, signal.SIGTERM)
    os.kill(reaper, signal.SIGINT)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    wait_until_gone(pids | {reaper}, directory)
    assert not running(pids | {reaper}) and not directory.exists()


def test_twenty_env_cycles_leak_nothing():
    import craftium_ma
    before_fds = len(os.listdir("/proc/self/fd"))
    directories, pids = [], set()
    for i in range(20):
        env = craftium_ma.parallel_env("small_room", num_agents=1)
        env.reset(seed=i)
        env.step({"agent_0": 1})
        directories.append(env.engine_directory)
        pids |= set(env.engine_pids().values())
        env.close()
    assert len(pids) == 40 and not running(pids)
    assert not any(d.exists() for d in directories)
    assert len(os.listdir("/proc/self/fd")) <= before_fds + 2


def test_garbage_collection_closes_the_env():
    import gc

    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    env.reset(seed=0)
    directory, pids = env.engine_directory, set(env.engine_pids().values())
    del env
    gc.collect()
    assert not directory.exists() and pids and not running(pids)


def test_a_crashed_client_is_named_with_its_log():
    import craftium_ma
    env = craftium_ma.parallel_env("small_room", num_agents=2, timeout=20)
    try:
        env.reset(seed=0)
        os.kill(env.engine_pids()["agent_1"], signal.SIGKILL)
        with pytest.raises(craftium_ma.EngineError,
                           match=r"(?s)client of agent_1 exited.*agent_1\.log"):
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
    assert not running(pids) and not directory.exists()


def assert_restarts(env, process):
    """The next reset starts new engine processes, warns naming the failed process and
    says so in infos; the env then steps as usual."""
    old_pids, old_dir = set(env.engine_pids().values()), env.engine_directory
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
        with pytest.raises(craftium_ma.EngineError, match=process):
            env.step({"agent_0": 0, "agent_1": 0})
        with pytest.raises(RuntimeError, match="broke in an earlier call.*env.reset"):
            env.step({"agent_0": 0, "agent_1": 0})
        assert_restarts(env, process)
        pids, directory = set(env.engine_pids().values()), env.engine_directory
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


def test_a_reset_whose_map_never_arrives_says_what_it_waited_for(tmp_path):
    import craftium_ma
    write_task(tmp_path, "far_reset", ["far"], """
craftium_ma.register_on_reset(function(seed, options)
	if not options.far then return end  -- option far: every player beyond the map's edge
	for _, player in ipairs(core.get_connected_players()) do
		player:set_pos({x = 0, y = 40000, z = 0})
	end
end)
""")
    env = craftium_ma.parallel_env(task_dir=tmp_path, num_agents=1, timeout=5)
    try:
        env.reset(seed=0)
        with pytest.raises(TimeoutError) as failure:
            env.reset(seed=0, options={"far": True})
    finally:
        env.close()
    message = str(failure.value)
    assert re.search(r"did not load within 5 s \(\d+ zero-time ticks\); waiting for: the map "
                     r"at agent_0's feet.*\(at 0\.0, 40000\.0, 0\.0\)", message), message
    assert "--- server.log.debug ---" in message and "--- agent_0.log.debug ---" in message


@pytest.mark.parametrize("hook", ["step", "reset"])
def test_after_a_lua_error_in_a_hook_the_next_reset_restarts_the_world(tmp_path, hook):
    import craftium_ma
    env = craftium_ma.parallel_env(task_dir=write_lua_error_task(tmp_path), num_agents=1,
                                   timeout=20)
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
        assert obs["agent_0"].shape == (64, 64, 3)
        assert set(env.engine_pids()) == {"server", "agent_0"}
    finally:
        env.close()


DROPPED_ENV = """
import gc
import craftium_ma
env = craftium_ma.parallel_env("small_room", num_agents=2)
env.reset(seed=0)
env.step({"agent_0": 1, "agent_1": 0})
directory = env.engine_directory
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
