"""Observations a task declares beside the frames (parallel_env(task, observations=...)):
manifests, spaces, Lua's values in Python bit for bit, errors naming the task, name and
agent, envs that observe no frame drawing none, the pool, PettingZoo's API test, and the
shipped tasks' declarations (duel's hp, commons_harvest's apples)."""

import functools
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

import craftium_ma
from craftium_ma import testing
from craftium_ma.observations import ObservationSpec
from craftium_ma.tasks import TaskError, load_task

TASK = Path(__file__).parent / "mods" / "observations_test"
DECLARED = ("count", "index", "values", "flags")
VALUES = np.array([[0.1, -2.5], [0.001, 0]], np.float32)  # the last one is count / 3


def make(observations="rgb", **kwargs):
    return craftium_ma.parallel_env(task_dir=TASK, observations=observations, timeout=30,
                                    **kwargs)


def write_task(folder: Path, observations: str) -> Path:
    (folder / "mod.conf").write_text("name = probe\ndepends = craftium_ma\n")
    (folder / "init.lua").write_text("")
    (folder / "task.toml").write_text(f'id = "probe"\n[[actions]]\nname = "noop"\n'
                                      f"[observations]\n{observations}\n")
    return folder


# -- manifests and spaces (no engine) -------------------------------------------------------

def test_a_manifest_declares_observations_in_order_with_their_dtype_shape_and_range():
    declared = load_task(TASK).observations
    assert list(declared) == list(DECLARED)
    assert declared["count"] == ObservationSpec("int64", (1,))
    assert declared["index"] == ObservationSpec("uint8", (), 0, 7)
    assert declared["flags"].space() == spaces.Box(0, 1, (2,), np.bool_)


@pytest.mark.parametrize("line, error", [
    ('rgb = { dtype = "uint8" }', "observation 'rgb' is the frames' name"),
    ('hp = { dtype = "int16" }', "observation 'hp' needs dtype = one of bool, uint8"),
    ("turn_degrees = 90", "observation 'turn_degrees' must be a table { dtype = ..., shape = "
                          "[...] }, got 90 (a top-level key must come before [observations])"),
    ('hp = { dtype = "uint8", shape = [0] }', "shape must be a list of positive ints, got [0]"),
    ('hp = { dtype = "uint8", shape = 2 }', "shape must be a list of positive ints, got 2"),
    ('hp = { dtype = "uint8", size = 2 }', "unknown fields ['size']"),
    ('hp = { dtype = "int32", low = 5, high = 1 }', "low 5 is above high 1"),
    ('hp = { dtype = "int32", low = "a" }', "low and high must be numbers"),
    ('hp = { dtype = "bool", high = 1 }', "a bool observation takes no low or high"),
    ('hp = { dtype = "uint8", privileged = 1 }', "privileged must be true or false, got 1"),
])
def test_a_wrong_declaration_is_a_task_error_naming_the_manifest_and_the_name(tmp_path, line,
                                                                              error):
    with pytest.raises(TaskError, match="task.toml: ") as raised:
        load_task(write_task(tmp_path, line))
    assert error in str(raised.value)


def test_rgb_is_the_default_a_name_gives_its_box_and_a_list_a_dict():
    assert make().observation_space("agent_0") == spaces.Box(0, 255, (16, 16, 3), np.uint8)
    assert make("count").observation_space("agent_1") == spaces.Box(
        np.iinfo(np.int64).min, np.iinfo(np.int64).max, (1,), np.int64)
    assert make("index").observation_space("agent_0") == spaces.Box(0, 7, (), np.uint8)
    both = make(["rgb", "values"]).observation_space("agent_0")
    assert isinstance(both, spaces.Dict) and set(both) == {"rgb", "values"}
    assert both["values"] == spaces.Box(-np.inf, np.inf, (2, 2), np.float32)
    assert isinstance(make(["flags"]).observation_space("agent_0"), spaces.Dict)


def test_frames_are_drawn_where_an_observation_or_render_needs_them():
    every = make().possible_agents
    assert make().drawn_agents == every and make(["rgb", "count"]).drawn_agents == every
    assert make("count").drawn_agents == [] and make(["count", "flags"]).drawn_agents == []
    assert make("count", render_mode="rgb_array").drawn_agents == every
    assert make(frameless_agents=["agent_0"]).drawn_agents == every[1:]
    with pytest.raises(ValueError, match=r"frameless_agents: unknown agents \['bot'\]"):
        make(frameless_agents=["bot"])


def test_an_unknown_name_is_a_value_error_naming_the_declared_ones():
    with pytest.raises(ValueError, match=r"observations: task 'observations_test' has no "
                       r"observation 'hp'; its observations are rgb, count, index, values, "
                       r"flags \(declared in .*task.toml\)"):
        make(["rgb", "hp"])
    with pytest.raises(ValueError, match="no observation 'apples'; its observations are rgb, hp "):
        craftium_ma.parallel_env("duel", observations="apples")
    with pytest.raises(ValueError, match="each observation once"):
        make(["count", "count"])
    with pytest.raises(ValueError, match="each observation once"):
        make([])
    with pytest.raises(TypeError, match="a name or a list of names"):
        make(3)


def test_a_value_arrives_as_its_dtype_and_shape_bit_for_bit_or_says_what_is_wrong():
    values = ObservationSpec("float32", (2, 2))
    given = [0.1, -2.5, 0.001, 1 / 3]
    assert values.value(given).tobytes() == np.array(given, np.float32).reshape(2, 2).tobytes()
    assert ObservationSpec("uint8").value(3.0).shape == ()
    assert ObservationSpec("bool", (2,)).value([True, False]).dtype == np.bool_
    for spec, given, error in [
        (values, [1, 2, 3], "is 3 values, its manifest declares shape (2, 2) (4 values)"),
        (ObservationSpec("int32", (1,)), None, "is 0 values"),
        (ObservationSpec("uint8"), 256, "is [256], outside its range [0, 255]"),
        (ObservationSpec("int32", (1,), 0, 20), [21], "outside its range [0, 20]"),
        (ObservationSpec("int64", (1,)), [2.5], "is [2.5], which int64 cannot hold exactly"),
        (ObservationSpec("bool"), 0.5, "is [0.5], which bool cannot hold exactly"),
        (ObservationSpec("float64"), float("nan"), "outside its range [-inf, inf]"),
        (ObservationSpec("float64", (2,)), [1, None], "holds object values, not numbers"),
    ]:
        with pytest.raises(ValueError) as raised:
            spec.value(given)
        assert error in str(raised.value)


def test_the_pools_spaces_batch_the_observation_space():
    pool = craftium_ma.vector_env(None, 2, task_dir=TASK, observations=["rgb", "count"])
    try:
        assert isinstance(pool.single_observation_space, spaces.Dict)
        assert pool.observation_space["count"].shape == (4, 1)
    finally:
        pool.close()


# -- on the engine --------------------------------------------------------------------------

@pytest.mark.engine
def test_declared_values_reach_python_after_every_reset_and_step_and_done_agents_keep_theirs():
    env = make(list(DECLARED) + ["rgb"])
    try:
        obs, _ = env.reset(seed=1, options={"end_agent_1": 2})
        space = env.observation_space("agent_0")
        frames = [env.last_frames["agent_0"].copy()]
        for step in range(4):
            assert all(space.contains(o) for o in obs.values())
            for i, agent in enumerate(obs):
                o = obs[agent]
                assert o["count"].dtype == np.int64 and o["count"].tolist() == [step]
                assert o["index"].shape == () and o["index"] == i
                expected = VALUES.copy()
                expected[1, 1] = np.float32(step / 3)
                assert o["values"].tobytes() == expected.tobytes()  # bit for bit
                assert o["flags"].tolist() == [step % 2 == 0, i == 0]
            obs, _, terminations, _, _ = env.step({a: 1 for a in env.agents})
            frames.append(env.last_frames["agent_0"].copy())
            assert terminations.get("agent_1", False) == (step == 1)
        assert list(obs) == ["agent_0"]
        last = env.last_observations
        assert last["agent_1"]["count"].tolist() == [2] and last["agent_0"]["count"].tolist() == [4]
        # the frames are drawn: agent_0 turns, and its view changes every step
        assert all((a != b).any() for a, b in zip(frames, frames[1:]))
    finally:
        env.close()


@pytest.mark.engine
def test_without_rgb_nothing_is_drawn_and_the_game_is_the_same():
    played = {}
    for names in ("count", ["rgb", "count"]):
        env = make(names, num_agents=1)
        try:
            played[str(names)] = testing.play(env, 3, 5, policy=lambda e: {"agent_0": 1})
            env.reset(seed=4)
            reset_frame = env.last_frames["agent_0"].copy()
            # nobody looks at frames: the client is frameless, its frames black, a reset's too
            assert env.frameless_agents == (("agent_0",) if names == "count" else ())
            assert reset_frame.any() == (names != "count")
            for _ in range(3):
                env.step({"agent_0": 1})
                # frameless: still black; drawn: the agent turned
                same = (env.last_frames["agent_0"] == reset_frame).all()
                assert same == (names == "count")
        finally:
            env.close()
    alone, with_frames = played["count"], played["['rgb', 'count']"]
    for (obs, *rest), (obs_rgb, *rest_rgb) in zip(alone, with_frames):
        testing.assert_same(rest, rest_rgb)  # rewards, flags, infos, state
        testing.assert_same(obs, {a: o["count"] for a, o in obs_rgb.items()})


@pytest.mark.engine
def test_a_wrong_length_or_a_lua_error_names_the_task_the_name_and_the_agent():
    env = make(["count"])
    try:
        env.reset(seed=0)
        with pytest.raises(TaskError, match=r"task 'observations_test': observation 'count' of "
                           r"agent_1 is 2 values, its manifest declares shape \(1,\) \(1 value\)"):
            env.reset(seed=0, options={"wrong_length": "agent_1"})
        with pytest.raises(craftium_ma.EngineError) as raised:
            env.reset(seed=0, options={"wrong_type": "agent_0"})
        first = str(raised.value).splitlines()[0]
        assert first.startswith(f"{TASK}/init.lua:")  # where the function is defined
        assert first.endswith("craftium_ma: an observation must be a number, a boolean or a flat "
                              "array of them, got string (observation 'count' of agent_0)")
        with (pytest.raises(craftium_ma.EngineError) as raised,
              pytest.warns(RuntimeWarning, match="restarting the engine processes")):
            env.reset(seed=0, options={"fail": "agent_0"})
        first = str(raised.value).splitlines()[0]
        assert first.startswith(f"{TASK}/init.lua:")  # where it raised
        assert first.endswith("count failed (observation 'count' of agent_0)")
    finally:
        env.close()


@pytest.mark.engine
def test_a_declared_observation_lua_does_not_register_is_a_task_error_saying_so(tmp_path):
    env = craftium_ma.parallel_env(task_dir=write_task(tmp_path, 'seen = { dtype = "bool" }'),
                                   observations="seen", num_agents=1, obs_size=16, timeout=30)
    try:
        with pytest.raises(TaskError, match=r"task 'probe': its Lua gives agent_0 no observation "
                           r"'seen', which its manifest declares: register it with "
                           r"craftium_ma.register_observation\('seen', function\(player\)"):
            env.reset(seed=0)
    finally:
        env.close()


@pytest.mark.engine
def test_duels_hp_observation_is_the_hp_of_infos_and_state():
    env = craftium_ma.parallel_env("duel", observations="hp", obs_size=16, timeout=30,
                                   task_options={"layout": "test"})
    try:
        obs, infos = env.reset(seed=0)
        hps = []
        for _ in range(8):  # agent_1's first hit lands at step 6
            state = env.state().reshape(2, 4)
            for i, agent in enumerate(env.possible_agents):
                assert obs[agent].dtype == np.uint8 and obs[agent].shape == (1,)
                assert obs[agent][0] == infos[agent]["hp"] == state[i, 3]
            hps.append(int(obs["agent_1"][0]))
            obs, _, _, _, infos = env.step({"agent_0": 6, "agent_1": 0})  # agent_0 attacks
        assert hps[0] == 20 and hps[-1] < 20
    finally:
        env.close()


@pytest.mark.engine
def test_commons_harvest_observes_each_agents_apples():
    env = craftium_ma.parallel_env("commons_harvest", observations=["apples"], obs_size=16,
                                   timeout=30, task_options={"layout": "test", "regrow_rate": 0})
    try:
        obs, infos = env.reset(seed=0)
        assert obs["agent_0"]["apples"].tolist() == [0]
        for actions in ({"agent_0": 4, "agent_1": 0}, {"agent_0": 0, "agent_1": 4}):
            obs, _, _, _, infos = env.step(actions)
        for agent in env.possible_agents:
            assert obs[agent]["apples"].dtype == np.int32
            assert obs[agent]["apples"].tolist() == [infos[agent]["apples"]] == [1]
    finally:
        env.close()


@pytest.mark.engine
@pytest.mark.parametrize("names", [["rgb", "flags"], "values"])
def test_pettingzoo_api_tests_pass(names):
    testing.api_check(functools.partial(make, names, max_cycles=10), num_cycles=10)


@pytest.mark.engine
def test_each_row_of_a_pool_is_the_single_envs_pipelined_too():
    # agent_1 is done at step 2 (its rows inactive), the episodes end at step 4 (autoreset)
    testing.pool_check(task_dir=TASK, observations=["rgb", "count", "values"], max_cycles=4,
                       pipelined=True, timeout=30, task_options={"end_agent_1": 2})
