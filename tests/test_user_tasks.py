"""Tasks of one's own: the scaffold, task folders outside the package, and their errors."""

import subprocess
import sys

import pytest
from pettingzoo.test import parallel_api_test

import craftium_ma
from craftium_ma.scaffold import new_task


def test_the_scaffold_from_the_command_line_runs_the_api_test_unchanged(tmp_path):
    out = subprocess.run([sys.executable, "-m", "craftium_ma", "new-task", "my_task",
                          "--dir", str(tmp_path)], capture_output=True, text=True, check=True)
    assert "my_task" in out.stdout
    env = craftium_ma.parallel_env(task_dir=tmp_path / "my_task", max_cycles=40)
    try:
        parallel_api_test(env, num_cycles=40)
        assert env.task.id == "my_task" and env.state().shape == (2 + 2 * 2,)
    finally:
        env.close()


def test_scaffold_refuses_bad_names_and_existing_folders(tmp_path):
    with pytest.raises(ValueError, match="lower-case"):
        new_task("My Task", tmp_path)
    new_task("again", tmp_path)
    with pytest.raises(FileExistsError):
        new_task("again", tmp_path)


def test_a_lua_syntax_error_names_the_file_and_line(tmp_path):
    folder = new_task("broken", tmp_path)
    lines = (folder / "init.lua").read_text().splitlines()
    lines.insert(2, "local = 1  -- not Lua")
    (folder / "init.lua").write_text("\n".join(lines))
    env = craftium_ma.parallel_env(task_dir=folder)
    try:
        with pytest.raises(craftium_ma.EngineError, match=r"broken/init\.lua:3"):
            env.reset(seed=0)
    finally:
        env.close()


def test_a_folder_that_is_not_a_task(tmp_path):
    with pytest.raises(craftium_ma.TaskError, match="no task.toml"):
        craftium_ma.parallel_env(task_dir=tmp_path)
    folder = new_task("half", tmp_path)
    (folder / "task.toml").write_text("id = 'half'\n")  # no actions
    with pytest.raises(craftium_ma.TaskError, match="malformed manifest"):
        craftium_ma.parallel_env(task_dir=folder)
    (folder / "init.lua").unlink()
    with pytest.raises(craftium_ma.TaskError, match="not a Lua mod"):
        craftium_ma.parallel_env(task_dir=folder)
