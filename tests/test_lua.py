"""The Lua side without the engine: the bridge's unit tests (mods/craftium_ma/tests/, run by
LuaJIT), luacheck over every mod and the scaffold's task, and the constants Lua gets from
Python (the HUD parts, the generated xland ids)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from craftium_ma.scaffold import new_task
from craftium_ma.tasks import HUD_PARTS, find_task
from craftium_ma.xland.world import LUA_CONSTANTS, lua_constants

ROOT = Path(__file__).resolve().parent.parent
LUA_TESTS = ROOT / "mods" / "craftium_ma" / "tests"
RUNNER = LUA_TESTS / "run.lua"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: apt-get install luajit lua-check "
                    "(tools/setup.sh installs both)")
    return path


def run(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("test_file", sorted(p.name for p in LUA_TESTS.glob("*_test.lua")))
def test_the_bridge_lua_tests_pass(test_file):
    result = run(tool("luajit"), RUNNER, LUA_TESTS / test_file)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok ")


def test_a_failing_lua_test_fails_the_runner(tmp_path):
    (tmp_path / "broken_test.lua").write_text(
        'local t = ...\nt.test("one is two", function() t.eq(1, 2) end)\n'
        't.test("this one passes", function() t.eq({1}, {1}) end)\n')
    result = run(tool("luajit"), RUNNER, tmp_path / "broken_test.lua")
    assert result.returncode == 1
    assert "FAIL " in result.stdout and "one is two" in result.stdout
    assert "expected 2, got 1" in result.stdout
    assert "ok   " in result.stdout and "this one passes" in result.stdout


def test_a_lua_test_file_without_tests_fails_the_runner(tmp_path):
    (tmp_path / "empty_test.lua").write_text("local t = ...\n")
    result = run(tool("luajit"), RUNNER, tmp_path / "empty_test.lua")
    assert result.returncode == 1 and "registers no tests" in result.stdout


def test_luacheck_finds_nothing_in_the_mods():
    result = run(tool("luacheck"), "--formatter", "plain", "--codes", "mods", "tests/mods")
    assert result.returncode == 0, result.stdout + result.stderr


def test_luacheck_finds_nothing_in_a_new_task(tmp_path):
    folder = new_task("sheep_count", tmp_path)
    result = run(tool("luacheck"), "--config", ROOT / ".luacheckrc", "--formatter", "plain",
                 "--codes", folder)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_xland_constants_are_generated_from_the_python():
    assert LUA_CONSTANTS.read_text() == lua_constants(), (
        f"{LUA_CONSTANTS} is stale: regenerate it with python -m craftium_ma.xland.world")


def test_the_bridge_gets_every_hud_part_from_python():
    settings = find_task("small_room").bridge_settings()
    assert settings["craftium_ma_hud_parts"].split(",") == list(HUD_PARTS)
    lua = "".join(p.read_text() for p in (ROOT / "mods" / "craftium_ma").glob("*.lua"))
    assert "healthbar" not in lua  # no copy of the list in Lua
