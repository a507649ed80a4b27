"""The craftium-ma command's answers when something is wrong or missing (no engine needed)."""

import os
import subprocess
import sys

from craftium_ma.cli import parser
from craftium_ma.doctor import RECEIVE_BUFFER_WANTED, RMEM_MAX


def craftium_ma(*argv, **env):
    return subprocess.run([sys.executable, "-m", "craftium_ma", *map(str, argv)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))


def test_new_task_refuses_a_bad_or_taken_name_in_one_line(tmp_path):
    bad = craftium_ma("new-task", "My Task", "--dir", tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert (bad.stderr.startswith("craftium-ma: error: task name 'My Task'")
            and bad.stderr.count("\n") == 1)
    assert craftium_ma("new-task", "taken", "--dir", tmp_path).returncode == 0
    taken = craftium_ma("new-task", "taken", "--dir", tmp_path)
    assert taken.returncode == 2 and "exists" in taken.stderr and taken.stderr.count("\n") == 1
    bridge = craftium_ma("new-task", "craftium_ma", "--dir", tmp_path)
    assert (bridge.returncode == 2 and "bridge mod" in bridge.stderr
            and bridge.stderr.count("\n") == 1)


def test_without_an_engine_build_doctor_and_engine_path_say_how_to_build(tmp_path):
    env = {"CRAFTIUM_MA_CACHE": str(tmp_path), "CRAFTIUM_MA_ENGINE": ""}
    doctor = craftium_ma("doctor", **env)
    assert doctor.returncode == 1
    lines = doctor.stdout.splitlines()
    for what in ("engine build", "game data"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"missing  {what}:"))
        assert lines[at + 1].strip() == "add it with: craftium-ma engine build"
    assert any(line.startswith("ok       tasks: bridge mod and ") for line in lines)
    rmem_max = int(RMEM_MAX.read_text())
    enough = "ok" if rmem_max >= RECEIVE_BUFFER_WANTED else "warning"
    assert any(line.split(":")[0].split() == [enough, "UDP", "receive", "buffer"]
               and str(rmem_max) in line
               for line in lines)
    path = craftium_ma("engine", "path", **env)
    assert path.returncode == 1 and "craftium-ma engine build" in path.stderr


def test_tasks_is_list():
    listed, aliased = craftium_ma("list"), craftium_ma("tasks")
    assert listed.returncode == 0 and listed.stdout == aliased.stdout
    assert listed.stdout.splitlines()[0].split() == ["task", "agents", "kind", "description"]
    assert any(line.split()[:3] == ["duel", "2", "competitive,"]
               for line in listed.stdout.splitlines())


def test_join_without_a_display_says_it_needs_one_and_points_to_the_viewer(tmp_path):
    password = tmp_path / "password"
    password.write_text("secret")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    out = subprocess.run([sys.executable, "-m", "craftium_ma", "join", "--address", "127.0.0.1",
                          "--port", "30000", "--name", "alice", "--password-file", str(password)],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2
    assert "needs a display" in out.stderr and "craftium-ma serve" in out.stderr


def test_serve_takes_a_task_id_or_a_task_folder_and_says_so():
    both = craftium_ma("serve", "small_room", "--task-dir", ".")
    neither = craftium_ma("serve")
    for out in (both, neither):
        assert out.returncode == 2 and "a task id or --task-dir FOLDER" in out.stderr


def test_serve_builds_a_task_folders_env(tmp_path):
    from craftium_ma.scaffold import new_task
    from craftium_ma.viewer.serve import env_and_policy
    folder = new_task("mine", tmp_path)
    env, _ = env_and_policy(None, task_dir=folder)
    assert env.task.id == "mine"


def test_doctor_lists_each_missing_package_of_an_extra_once(monkeypatch):
    from importlib import metadata

    from craftium_ma import doctor
    real = metadata.version

    def without_torch(name):
        if name == "torch":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", without_torch)
    missing = doctor.missing_extras()["test"]
    assert len(missing) == len(set(missing)) and sum(m.startswith("torch==") for m in missing) == 1


def test_evaluate_refuses_task_options_that_are_not_a_json_object_in_one_line():
    for text in ("{size: 5}", "[5]"):
        bad = craftium_ma("evaluate", "random", "--task", "small_room", "--task-options", text)
        assert bad.returncode == 2 and bad.stdout == ""
        assert bad.stderr == ("craftium-ma: error: task options must be a JSON object such as "
                              f"'{{\"size\": 5}}', got '{text}'\n")


def test_every_commands_help_reads_as_written():
    """Each subcommand's --help renders (argparse formats help strings with %, not
    descriptions: a literal '%%' there is printed twice)."""
    commands = next(a for a in parser()._actions if a.choices and "evaluate" in a.choices)
    for name, sub in commands.choices.items():
        text = sub.format_help()
        assert "%%" not in text and "%(" not in text, f"craftium-ma {name} --help:\n{text}"
