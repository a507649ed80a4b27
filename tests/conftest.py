"""Shared fixtures: sessions of real Luanti processes running tests/mods/lockstep_test;
the guard that fails a test starting Luanti processes without the `engine` mark."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from craftium_ma.launcher import EngineProcesses, LaunchConfig
from craftium_ma.lockstep import LockstepSession

TEST_MOD = Path(__file__).parent / "mods" / "lockstep_test"
AGENTS = ["agent_0", "agent_1"]

NOT_MARKED = ("this test starts Luanti processes but is not marked engine: add "
              "@pytest.mark.engine (or pytestmark = pytest.mark.engine for its module)")
_stand_in = pytest.StashKey[Path]()
_guard = pytest.StashKey[pytest.MonkeyPatch]()


def pytest_configure(config):
    """A stand-in engine build whose luanti only prints NOT_MARKED and exits 1."""
    root = Path(tempfile.mkdtemp(prefix="pytest-not-engine-"))
    (root / "bin").mkdir()
    (root / "bin" / "luanti").write_text(f"#!/bin/sh\necho '{NOT_MARKED}' >&2\nexit 1\n")
    (root / "bin" / "luanti").chmod(0o755)
    config.stash[_stand_in] = root
    # SB3 makes a log folder for every model (an empty /tmp/SB3-<date> by default)
    os.environ["SB3_LOGDIR"] = str(root / "sb3")


def pytest_unconfigure(config):
    shutil.rmtree(config.stash[_stand_in], ignore_errors=True)


def _refuse_to_start(*args, **kwargs):
    pytest.fail(NOT_MARKED, pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before its fixtures: a test not marked engine fails with NOT_MARKED where it starts
    engine processes in this process, and processes it starts (a script, the CLI) find
    the stand-in build."""
    if item.get_closest_marker("engine"):
        return
    guard = item.stash[_guard] = pytest.MonkeyPatch()
    guard.setenv("CRAFTIUM_MA_ENGINE", str(item.config.stash[_stand_in]))
    guard.setattr(EngineProcesses, "start_server", _refuse_to_start)
    guard.setattr(EngineProcesses, "start_clients", _refuse_to_start)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if _guard in item.stash:
        item.stash[_guard].undo()


def make_session(agents=AGENTS, pipelined=False, obs_size=(64, 64), **kwargs) -> LockstepSession:
    config = LaunchConfig(agents=list(agents), obs_size=obs_size, mods=[TEST_MOD], timeout=30,
                          **kwargs)
    return LockstepSession(config, pipelined=pipelined)


@pytest.fixture(scope="module")
def session():
    s = make_session()
    yield s
    s.close()


def assert_same(a, b, where="episode"):
    """Nested episode records (dicts, tuples, lists, arrays) are equal, bit for bit."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where


def engine_thread_cpus(pid: int) -> set:
    """The CPUs the threads of engine process `pid` may run on, but Mesa's shader cache
    writer ("luanti:disk$0"), which gives itself every CPU and idles after start-up."""
    threads = [t for t in os.listdir(f"/proc/{pid}/task")
               if ":disk$" not in open(f"/proc/{pid}/task/{t}/comm").read()]
    return {c for t in threads for c in os.sched_getaffinity(int(t))}


def write_task(folder: Path, name: str, options: list[str], init_lua: str) -> Path:
    """A task with one no-op action, options without defaults and `init_lua`, written
    into `folder` (a task_dir=)."""
    (folder / "task.toml").write_text(f'id = "{name}"\noptions_without_default = '
                                      f'{json.dumps(options)}\n[[actions]]\nname = "noop"\n')
    (folder / "mod.conf").write_text(f"name = {name}\ndepends = craftium_ma\n")
    (folder / "init.lua").write_text(init_lua)
    return folder


def write_lua_error_task(folder: Path) -> Path:
    """A task whose hooks raise a Lua error when told to (options fail_at, fail_reset)."""
    return write_task(folder, "lua_error", ["fail_at", "fail_reset"], """
craftium_ma.register_on_reset(function(seed, options)
	if options.fail_reset then error("the reset hook failed") end
end)
craftium_ma.register_on_step(function()
	if craftium_ma.options().fail_at == craftium_ma.step_count() then
		error("the step hook failed")
	end
end)
""")
