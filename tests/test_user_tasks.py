"""Tasks of one's own: the scaffold, task folders outside the package, and their errors."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import craftium_ma
from craftium_ma.scaffold import new_task


@pytest.mark.engine
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


@pytest.mark.engine
def test_a_lua_syntax_error_names_the_file_and_line(tmp_path):
    folder = new_task("broken", tmp_path)
    lines = (folder / "init.lua").read_text().splitlines()
    lines.insert(2, "local = 1  -- not Lua")
    (folder / "init.lua").write_text("\n".join(lines))
    env = craftium_ma.parallel_env(task_dir=folder)
    try:
        with pytest.raises(craftium_ma.EngineError) as e:
            env.reset(seed=0)
    finally:
        env.close()
    message = str(e.value)
    assert message.splitlines()[0] == f"{folder.resolve()}/init.lua:3: '<name>' expected near '='"
    assert message.count("expected near") == 1 and "server.log" not in message


def task_with(tmp_path, lua: str, name="mine"):
    """A scaffolded task with `lua` appended to its init.lua; returns its folder and the
    line number of lua's first line."""
    folder = new_task(name, tmp_path)
    init = folder / "init.lua"
    text = init.read_text()
    init.write_text(text + lua)
    return folder.resolve(), text.count("\n") + 1


def lua_error_of(folder, steps=0, **kwargs) -> str:
    env = craftium_ma.parallel_env(task_dir=folder, num_agents=1, **kwargs)
    try:
        with pytest.raises(craftium_ma.EngineError) as e:
            env.reset(seed=0)
            for _ in range(steps):
                env.step({"agent_0": 0})
    finally:
        env.close()
    return str(e.value)


@pytest.mark.engine
@pytest.mark.parametrize("call,message", [
    ('craftium_ma.add_reward("agent_0", "lots")',
     "craftium_ma.add_reward: the reward must be a number, got string lots"),
    ('craftium_ma.set_info("agent_0", "seen", {x = 1})',
     "craftium_ma.set_info: 'seen' must be a flat array of numbers, "
     "got a table with the string key x holding a number"),
    ('craftium_ma.set_info("agent_0", "seen", print)',
     "craftium_ma.set_info: 'seen' must be a number, string, boolean or flat array of numbers, "
     "got function"),
    ('craftium_ma.set_reward("agent_9", 1)',
     "craftium_ma: unknown agent 'agent_9'; the agents are agent_0"),
    ('craftium_ma.spawn("agent_0", {x = 1, z = 2})', "craftium_ma.spawn: pos must be a position "
     "{x = ..., y = ..., z = ...}, got a table without numbers x, y, z"),
])
def test_an_api_call_with_a_bad_argument_blames_the_callers_line(tmp_path, call, message):
    folder, line = task_with(tmp_path, f"craftium_ma.register_on_step(function()\n\t{call}\nend)\n")
    error = lua_error_of(folder, steps=1)
    assert error.splitlines()[0] == f"{folder}/init.lua:{line + 1}: {message}"
    assert "Runtime error from mod" not in error and "/tmp/craftium-ma-" not in error
    assert error.count("stack traceback") == 1


@pytest.mark.engine
def test_options_at_load_time_is_a_lua_error_saying_where_to_call_it(tmp_path):
    folder, line = task_with(tmp_path, "local options = craftium_ma.options()\n")
    assert lua_error_of(folder).splitlines()[0] == (
        f"{folder}/init.lua:{line}: craftium_ma.options() at load time: the options are known "
        "from the first reset on; call it in a register_on_reset or register_on_step function")


@pytest.mark.engine
def test_a_state_size_unlike_the_manifests_is_an_error_naming_both(tmp_path):
    folder = new_task("mine", tmp_path)
    manifest = folder / "task.toml"
    manifest.write_text(manifest.read_text().replace("shared = 2", "shared = 3"))
    env = craftium_ma.parallel_env(task_dir=folder, num_agents=1)
    try:
        with pytest.raises(craftium_ma.TaskError) as e:
            env.reset(seed=0)
    finally:
        env.close()
    assert str(e.value).splitlines()[0] == (
        "task 'mine': its Lua state vector has 4 values, its manifest says 5 (state = { shared "
        f"= 3, per_agent = 2 }} with 1 agents, in {folder.resolve() / 'task.toml'})")


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


@pytest.mark.engine
def test_the_scaffolds_agents_stay_in_its_walled_field_and_never_start_at_the_goal(tmp_path):
    env = craftium_ma.parallel_env(task_dir=new_task("field", tmp_path), num_agents=4,
                                   max_cycles=300)
    rng = np.random.default_rng(0)
    try:
        for seed in range(40):
            env.reset(seed=seed)
            state = env.state()  # goal x, z, then x, z of each agent
            goal, agents = state[:2], state[2:].reshape(4, 2)
            assert (np.abs(agents - goal).max(axis=1) > 1.3).all(), seed  # not next to it
            assert len({tuple(p) for p in agents}) == 4, seed
        env.reset(seed=1)
        for _ in range(300):
            if not env.agents:
                env.reset()
            actions = {a: int(rng.choice(4, p=[0.1, 0.6, 0.15, 0.15])) for a in env.agents}
            _, _, _, _, infos = env.step(actions)
            for info in infos.values():
                x, y, z = info["position"]
                assert 0.5 < x < 12.5 and 0.5 < z < 12.5 and 0.4 < y < 2.5, info["position"]
    finally:
        env.close()


@pytest.mark.engine
def test_the_scaffolds_generated_test_passes(tmp_path):
    folder = new_task("walker", tmp_path)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(folder)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "5 passed" in out.stdout


TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"
EDIT = re.compile(r"in\s+`([\w.]+)`,?\s+replace\n\n```\w+\n(.*?)```"
                  r"\n\nwith\n\n```\w+\n(.*?)```", re.S)


@pytest.mark.engine
def test_the_tutorials_edits_apply_to_the_scaffold_and_its_test_passes(tmp_path):
    folder = new_task("meet_up", tmp_path)
    edits = EDIT.findall(TUTORIAL.read_text())
    assert len(edits) == 7
    for file, old, new in edits:
        text = (folder / file).read_text()
        assert text.count(old) == 1, (file, old)
        (folder / file).write_text(text.replace(old, new))
    assert craftium_ma.parallel_env(task_dir=folder).task.min_agents == 2
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(folder)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "5 passed" in out.stdout, out.stdout + out.stderr
