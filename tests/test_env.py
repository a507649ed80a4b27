"""The PettingZoo API over real engine processes: PettingZoo's own conformance
tests on every task, seeding, rendering, state, the registry and bad input."""

import functools
import importlib
import os
import pickle

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import max_cycles_test, render_test
from pettingzoo.test.state_test import test_parallel_env as parallel_state_test
from pettingzoo.test.state_test import test_state as aec_state_test

import craftium_ma
from craftium_ma import testing
from craftium_ma.tasks import shipped_tasks
from conftest import engine_thread_cpus

TASKS = craftium_ma.tasks()


def task_module(task_id):
    task = shipped_tasks()[task_id]
    return importlib.import_module(f"craftium_ma.envs.{task.env_id}")


def test_tasks_are_listed():
    assert "small_room" in TASKS


@pytest.mark.engine
@pytest.mark.parametrize("task", TASKS)
def test_pettingzoo_parallel_and_aec_api(task):
    testing.api_check(functools.partial(craftium_ma.parallel_env, task, max_cycles=40),
                      num_cycles=40)


@pytest.mark.engine
@pytest.mark.parametrize("task", TASKS)
def test_max_cycles(task):
    max_cycles_test(task_module(task))


# render_test tries render_mode="human" too, which warns once per env on a headless machine
@pytest.mark.engine
@pytest.mark.filterwarnings("ignore:.*render_mode='human' needs a display")
@pytest.mark.parametrize("task", TASKS)
def test_render(task):
    envs = []

    def make(render_mode=None):
        envs.append(craftium_ma.env(task, render_mode=render_mode, max_cycles=20))
        return envs[-1]

    try:
        render_test(make)
    finally:
        for e in envs:
            e.close()


@pytest.mark.engine
@pytest.mark.parametrize("task", [t for t, spec in shipped_tasks().items() if spec.state_size(1)])
def test_state(task):
    aec = craftium_ma.env(task, max_cycles=30)
    par = craftium_ma.parallel_env(task, max_cycles=30)
    try:
        aec_state_test(aec, 30)
        parallel_state_test(par, 30)
        state = par.state()
        assert state.shape == par.state_space.shape and np.isfinite(state).all()
    finally:
        aec.close()
        par.close()


def rollout(task, seed, steps, pipelined=False):
    env = craftium_ma.parallel_env(task, max_cycles=steps, pipelined=pipelined)
    try:
        return testing.play(env, seed, policy=testing.random_actions(123))
    finally:
        env.close()


def without_frames(trace):
    return [step[1:] for step in trace]


@pytest.mark.engine
@pytest.mark.parametrize("task", TASKS)
def test_pipelined_and_strict_steps_play_the_same_episode(task):
    """Pipelining draws the server's changes a step later; everything else is the same."""
    pipelined, strict = rollout(task, 11, 60, pipelined=True), rollout(task, 11, 60)
    testing.assert_same(without_frames(pipelined), without_frames(strict))
    # the first frames (after the reset) are the same too
    testing.assert_same(pipelined[0][0], strict[0][0])


@pytest.mark.engine
def test_pettingzoo_registry():
    env = pettingzoo.make("parallel", "craftium/small_room-v0", max_cycles=3)
    try:
        env.reset(seed=0)
        assert env.max_cycles == 3
    finally:
        env.close()


@pytest.mark.engine
def test_spaces_are_the_same_objects_and_full_actions_work():
    env = craftium_ma.parallel_env("small_room", action_space="full", num_agents=1)
    try:
        assert env.action_space("agent_0") is env.action_space("agent_0")
        assert env.observation_space("agent_0") is env.observation_space("agent_0")
        obs, _ = env.reset(seed=0)
        action = {k: 0 for k in craftium_ma.protocol.KEYS}
        action["forward"] = 1
        action["mouse"] = np.array([0.5, 0.0], np.float32)
        _, _, _, _, infos = env.step({"agent_0": action})
        assert infos["agent_0"]["yaw"] != pytest.approx(0.0)
    finally:
        env.close()


@pytest.mark.engine
def test_an_unreset_env_pickles_and_copies_run_side_by_side():
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    copy = pickle.loads(pickle.dumps(env))
    try:
        a, _ = env.reset(seed=5)
        b, _ = copy.reset(seed=5)
        assert env.engine_directory != copy.engine_directory
        np.testing.assert_array_equal(a["agent_0"], b["agent_0"])
    finally:
        env.close()
        copy.close()


@pytest.mark.engine
def test_reset_is_soft_when_processes_are_up():
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    try:
        env.reset(seed=1)
        directory = env.engine_directory
        env.step({"agent_0": 1})
        env.reset(seed=2)
        assert env.engine_directory == directory
    finally:
        env.close()


# -- bad input ---------------------------------------------------------------------------

def test_unknown_task_names_the_known_ones():
    with pytest.raises(craftium_ma.TaskError, match="unknown task 'nope'.*small_room"):
        craftium_ma.parallel_env("nope")


@pytest.mark.parametrize("n", [0, 5])
def test_num_agents_out_of_range(n):
    with pytest.raises(ValueError, match="num_agents"):
        craftium_ma.parallel_env("small_room", num_agents=n)


@pytest.mark.parametrize("kwargs,match", [
    ({"obs_size": 2}, "obs_size"),
    ({"max_cycles": 0}, "max_cycles"), ({"frameskip": 0}, "frameskip"),
    ({"render_mode": "ansi"}, "render_mode"), ({"action_space": "mouse"}, "action_space"),
    ({"cpus": [10**6]}, "cpus"), ({"cpus": []}, "cpus"), ({"cpus": [0, 0]}, "cpus"),
    ({"cpus": "0"}, "cpus"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        craftium_ma.parallel_env("small_room", **kwargs)


@pytest.mark.engine
def test_cpus_pin_every_engine_thread_and_spread_the_agents():
    cpus = sorted(os.sched_getaffinity(0))[:2]
    env = craftium_ma.parallel_env("small_room", num_agents=2, obs_size=16, cpus=cpus)
    try:
        env.reset(seed=0)
        env.step({a: 1 for a in env.agents})
        pids = env.engine_pids()
        placed = {name: engine_thread_cpus(pid) for name, pid in pids.items()}
    finally:
        env.close()
    # the agents go round the CPUs, the server takes the next turn
    assert placed == {"agent_0": {cpus[0]}, "agent_1": {cpus[1 % len(cpus)]},
                      "server": {cpus[0]}}


def test_step_before_reset():
    env = craftium_ma.parallel_env("small_room")
    with pytest.raises(RuntimeError, match="before reset"):
        env.step({"agent_0": 0, "agent_1": 0})


@pytest.fixture(scope="module")
def running_env():
    env = craftium_ma.parallel_env("small_room")
    env.reset(seed=0)
    yield env
    env.close()


@pytest.mark.engine
def test_missing_agent_in_actions(running_env):
    with pytest.raises(ValueError, match=r"no action for live agents \['agent_1'\]"):
        running_env.step({"agent_0": 0})


@pytest.mark.engine
@pytest.mark.parametrize("action", [4, -1, "forward", None])
def test_action_outside_the_space(running_env, action):
    with pytest.raises(ValueError, match="outside its action space"):
        running_env.step({"agent_0": action, "agent_1": 0})


@pytest.mark.engine
def test_actions_that_are_not_a_dict(running_env):
    with pytest.raises(TypeError, match=r"^actions must be a dict \{agent: action\}, got list"):
        running_env.step([1, 0])


@pytest.mark.engine
def test_an_action_of_the_wrong_shape_says_so(running_env):
    with pytest.raises(ValueError, match=r"action array\(\[1\]\) for agent_0 is outside its "
                                         r"action space Discrete\(4\): it has shape \(1,\)"):
        running_env.step({"agent_0": np.array([1]), "agent_1": 0})


@pytest.mark.engine
def test_unknown_agent_in_actions(running_env):
    with pytest.raises(ValueError, match="unknown agents"):
        running_env.step({"agent_0": 0, "agent_1": 0, "agent_9": 0})


def test_missing_engine_build_says_how_to_build(monkeypatch, tmp_path):
    monkeypatch.setenv("CRAFTIUM_MA_ENGINE", str(tmp_path / "no-build"))
    env = craftium_ma.parallel_env("small_room")
    with pytest.raises(craftium_ma.EngineNotBuiltError, match="craftium-ma engine build"):
        env.reset()


@pytest.mark.engine
def test_a_seed_also_fixes_the_later_unseeded_resets():
    """Gymnasium's convention: reset(seed=s), then reset() draws its seed from s."""
    def states():
        env = craftium_ma.parallel_env("small_room", num_agents=1)
        try:
            env.reset(seed=5)
            first = env.state()
            env.reset()
            return first, env.state()
        finally:
            env.close()
    (a1, a2), (_, b2) = states(), states()
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # a new episode, not a repeat of seed 5


def test_copies_of_an_unseeded_env_draw_different_episode_seeds():
    env = craftium_ma.parallel_env("small_room", num_agents=1)
    copies = [pickle.loads(pickle.dumps(env)) for _ in range(2)]
    assert len({int(c._episode_seeds.integers(2**31)) for c in copies}) == 2
