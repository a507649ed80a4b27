"""Bad input caught in Python before any engine starts: arguments, manifests,
task options, new-task names, and the rewriting of Lua error messages."""

from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

import craftium_ma
from craftium_ma.env import why_outside
from craftium_ma.errors import LuaErrorText
from craftium_ma.scaffold import new_task
from craftium_ma.tasks import MODS


def first_line(excinfo) -> str:
    return str(excinfo.value).splitlines()[0]


def test_a_task_id_together_with_task_dir_is_refused(tmp_path):
    folder = new_task("mine", tmp_path)
    with pytest.raises(ValueError) as e:
        craftium_ma.parallel_env("small_room", task_dir=folder)
    assert first_line(e).startswith("give a task id or task_dir=, not both (got 'small_room'")


def test_an_undeclared_task_option_lists_the_declared_ones():
    with pytest.raises(ValueError) as e:
        craftium_ma.parallel_env("capture_the_flag", task_options={"lenght": 12})
    assert first_line(e).startswith("task_options: task 'capture_the_flag' takes no option "
                                    "'lenght'; its options are: layout, length, reward, width")
    # layout has no default: declared, accepted, absent unless given
    env = craftium_ma.parallel_env("capture_the_flag", task_options={"layout": "test"})
    assert "layout" not in env.task.options and "layout" in env.task.options_without_default


def test_reset_options_the_manifest_does_not_declare_are_warned_about(monkeypatch):
    monkeypatch.setenv("CRAFTIUM_MA_ENGINE", "/nonexistent")  # the warning comes first
    env = craftium_ma.parallel_env("small_room")
    with pytest.warns(UserWarning, match=r"reset\(options=...\): task 'small_room' takes no "
                                         r"option 'sise'; its options are: size"):
        with pytest.raises(craftium_ma.EngineNotBuiltError):
            env.reset(options={"sise": 3})


@pytest.mark.parametrize("kwargs,message", [
    ({"num_agents": "2"}, "num_agents must be an int, got str '2'"),
    ({"num_agents": 2.0}, "num_agents must be an int, got float 2.0"),
    ({"num_agents": True}, "num_agents must be an int, got bool True"),
    ({"obs_size": "64"}, "obs_size must be an int or (height, width) of ints, got str '64'"),
    ({"obs_size": 64.0}, "obs_size must be an int or (height, width) of ints, got float 64.0"),
    ({"obs_size": (64, "64")}, "obs_size must be an int or (height, width) of ints, got tuple"),
    ({"obs_size": True}, "obs_size must be an int or (height, width) of ints, got bool True"),
    ({"max_cycles": True}, "max_cycles must be an int, got bool True"),
    ({"frameskip": 1.5}, "frameskip must be an int, got float 1.5"),
])
def test_a_wrong_type_says_the_type_is_wrong(kwargs, message):
    with pytest.raises(TypeError) as e:
        craftium_ma.parallel_env("small_room", **kwargs)
    assert first_line(e).startswith(message)


def test_numpy_ints_are_ints():
    env = craftium_ma.parallel_env("small_room", num_agents=np.int64(3), obs_size=np.int32(32))
    assert env.possible_agents[-1] == "agent_2" and env.obs_size == (32, 32)


def test_state_before_reset():
    with pytest.raises(RuntimeError, match=r"^state\(\) before reset\(\)"):
        craftium_ma.parallel_env("small_room").state()


def test_an_action_outside_the_space_says_what_is_wrong():
    assert why_outside(spaces.Discrete(4), np.array([1])) == (
        ": it has shape (1,), the space takes one int")
    assert why_outside(spaces.Discrete(4), 4) == ": it takes 0 to 3"
    assert why_outside(spaces.Discrete(4), "forward") == ": it is a str, the space takes an int"
    full = craftium_ma.parallel_env("small_room", action_space="full").action_space("agent_0")
    action = {**{k: 0 for k in full.spaces if k != "mouse"}, "mouse": np.zeros(1, np.float32)}
    assert why_outside(full, action) == ": 'mouse' has shape (1,), the space takes (2,)"
    assert why_outside(full, {"forward": 1}).startswith(": keys missing ['aux1'")


def manifest_folder(tmp_path, extra: str, name="mine") -> Path:
    folder = new_task(name, tmp_path)
    (folder / "task.toml").write_text((folder / "task.toml").read_text().replace(
        "max_cycles = 300\n", f"max_cycles = 300\n{extra}\n"))
    return folder


@pytest.mark.parametrize("extra,message", [
    ('hud = ["hotbar", "minimap"]', "hud holds unknown parts ['minimap']; the parts are hotbar, "),
    ('nametags = "yes"', "nametags must be true or false"),
    ('turn_degrees = 0', "turn_degrees must be a number in (0, 180], got 0"),
    ('turn_degrees = "90"', "turn_degrees must be a number in (0, 180], got '90'"),
])
def test_a_bad_hud_or_turn_in_the_manifest(tmp_path, extra, message):
    folder = manifest_folder(tmp_path, extra)
    with pytest.raises(craftium_ma.TaskError) as e:
        craftium_ma.parallel_env(task_dir=folder)
    assert first_line(e).startswith(f"{folder.resolve() / 'task.toml'}: {message}")


def test_the_manifest_switches_hud_parts_and_name_tags_on_and_sets_the_turn(tmp_path):
    env = craftium_ma.parallel_env(task_dir=manifest_folder(
        tmp_path, 'hud = ["hotbar"]\nnametags = true\nturn_degrees = 90'))
    config = env.launch_config()
    settings = config.server_settings
    assert settings["craftium_ma_hud"] == "hotbar" and settings["craftium_ma_nametags"] == "true"
    assert config.turn_degrees == 90.0


def test_a_task_folder_named_like_the_bridge_mod_is_refused(tmp_path):
    folder = new_task("x", tmp_path).rename(tmp_path / "craftium_ma")
    with pytest.raises(craftium_ma.TaskError, match="cannot be called 'craftium_ma'"):
        craftium_ma.parallel_env(task_dir=folder)


# -- new-task ----------------------------------------------------------------------------

@pytest.fixture
def game_with_mod(tmp_path, monkeypatch):
    """A game whose mods a task's name must not take (as engine/build.sh installs it)."""
    (tmp_path / "cache" / "games" / "minetest_game" / "mods" / "default").mkdir(parents=True)
    monkeypatch.setenv("CRAFTIUM_MA_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("name,message", [
    ("My Task", "task name 'My Task': use lower-case letters, digits and _"),
    ("craftium_ma", "task name 'craftium_ma' is taken by the bridge mod; choose another"),
    ("room", "task name 'room' is taken by a shipped task; choose another"),
    ("default", "task name 'default' is taken by a mod of minetest_game; choose another"),
])
def test_new_task_refuses_bad_and_taken_names(tmp_path, game_with_mod, name, message):
    with pytest.raises(ValueError) as e:
        new_task(name, tmp_path)
    assert first_line(e).startswith(message)
    assert not (tmp_path / name).exists()


def test_new_task_refuses_an_existing_folder(tmp_path):
    new_task("again", tmp_path)
    with pytest.raises(FileExistsError, match=r"again exists already"):
        new_task("again", tmp_path)


def test_the_scaffold_is_written_for_its_name(tmp_path):
    folder = new_task("sheep_count", tmp_path)
    assert (folder / "init.lua").read_text().startswith("-- sheep_count: a craftium-ma task")
    assert craftium_ma.parallel_env(task_dir=folder).task.description.startswith("sheep count:")
    assert (folder / "test_sheep_count.py").is_file()


# -- Lua error messages ----------------------------------------------------------------

WORLD = "/tmp/craftium-ma-b_jam_fn/world"
BRIDGE = MODS / "craftium_ma"


def lua_errors(task: Path) -> LuaErrorText:
    return LuaErrorText(Path(WORLD), [BRIDGE, task])


def test_a_hook_error_names_the_task_files_whole_and_drops_the_bridge_preamble(tmp_path):
    task = new_task("rt", tmp_path)
    text = (f"Runtime error from mod 'craftium_ma' in callback craftium_hook(): "
            f"{WORLD}/worldmods/rt/init.lua:47: craftium_ma.add_reward: the reward must be a "
            "number, got string lots\nstack traceback:\n\t[C]: in function 'error'\n"
            "\t...raftium-ma-b_jam_fn/world/worldmods/craftium_ma/init.lua:69: in function "
            f"'check_reward'\n\t{WORLD}/worldmods/rt/init.lua:47: in function 'fn'\n"
            "\t...um-ma-b_jam_fn/world/worldmods/rt/init.lua:9: in function <...>")
    out = lua_errors(task).runtime_error(text).splitlines()
    real = task.resolve()
    assert out[0] == (f"{real}/init.lua:47: craftium_ma.add_reward: the reward must be a number, "
                      "got string lots")
    assert out[3] == f"\t{BRIDGE}/init.lua:69: in function 'check_reward'"
    assert out[4] == f"\t{real}/init.lua:47: in function 'fn'"
    assert out[5] == f"\t{real}/init.lua:9: in function <...>"


def log(*lines):
    return "".join(f"2026-12-01 14:51:18: {line}\n" for line in lines)


def test_a_load_error_is_read_whole_from_the_log(tmp_path):
    task = new_task("rt", tmp_path)
    message = f"{WORLD}/worldmods/rt/init.lua:3: " + "x" * 300
    text = log("ACTION[Main]: Server: Shutting down",
               f"ERROR[Main]: ModError: Failed to load and run script from {WORLD}/worldmods/rt/"
               "init.lua:", f"ERROR[Main]: {message[:256]}", f"ERROR[Main]: {message[256:]}",
               "ERROR[Main]: stack traceback:", f"ERROR[Main]: \t{WORLD}/worldmods/rt/init.lua:3: "
               "in main chunk", "ACTION[Main]: something else")
    out = lua_errors(task).stop_error(text).splitlines()
    assert out == [f"{task.resolve()}/init.lua:3: " + "x" * 300, "stack traceback:",
                   f"\t{task.resolve()}/init.lua:3: in main chunk"]


def test_a_fatal_callback_error_is_read_from_the_log(tmp_path):
    task = new_task("rt", tmp_path)
    text = log("ERROR[Main]: ServerError: AsyncErr: Lua: Runtime error from mod 'craftium_ma' in "
               "callback on_emerge_area_completion(): \"Unknown node: default:stone_brick\"",
               "ERROR[Main]: stack traceback:",
               f"ERROR[Main]: \t{WORLD}/worldmods/rt/init.lua:16: in function 'on_loaded'")
    assert lua_errors(task).stop_error(text).splitlines() == [
        '"Unknown node: default:stone_brick"', "stack traceback:",
        f"\t{task.resolve()}/init.lua:16: in function 'on_loaded'"]
    assert lua_errors(task).stop_error(log("ERROR[Main]: something else")) is None


def test_a_log_tail_shows_each_line_once(tmp_path):
    from craftium_ma.build import EngineBuild
    from craftium_ma.launcher import EngineProcesses, LaunchConfig
    processes = EngineProcesses(LaunchConfig(agents=["agent_0"], obs_size=(64, 64), mods=[]),
                                EngineBuild(tmp_path, tmp_path))
    try:
        lines = [f"2026-12-01 14:51:0{i}: ERROR[Main]: line {i}" for i in range(3)]
        (processes.dir / "server.log.debug").write_text("\n".join(["-- Separator --", *lines]))
        (processes.dir / "server.log").write_text("\n".join(["| banner |", *lines, "Segfault"]))
        tail = processes.log_tail("server")
        assert all(tail.count(line) == 1 for line in lines)
        assert tail.endswith("--- server.log (output not in the debug log) ---\n"
                             "| banner |\nSegfault\n")
    finally:
        processes.close()
