"""Clean episode boundaries: after any history, reset(seed) plays exactly the episode a
fresh env plays with that seed (observations, rewards, terminations, truncations, infos
and state, bit for bit). The first episode of an env is a fresh env's episode; it is
played again after a history of episodes that ended in every way."""

import functools

import pytest

import craftium_ma
from craftium_ma import testing
from craftium_ma.tasks import shipped_tasks

pytestmark = pytest.mark.engine

COMPARED_STEPS = 30
HISTORY_CYCLES = 40  # max_cycles of the envs here: history episodes end by it


def other_options(task):
    """Task options that change the world, for a history episode."""
    declared = shipped_tasks()[task].declared_options()
    return {"layout": "test"} if "layout" in declared else {"size": 6} if "size" in declared else {}


def assert_reset_gives_a_fresh_episode(task, seed=11, **kwargs):
    testing.reset_after_history_check(
        functools.partial(craftium_ma.parallel_env, task, max_cycles=HISTORY_CYCLES, **kwargs),
        seed, COMPARED_STEPS, history_options=other_options(task))


@pytest.mark.parametrize("task", craftium_ma.tasks())
def test_a_reset_after_any_history_plays_a_fresh_envs_episode(task):
    assert_reset_gives_a_fresh_episode(task)


@pytest.mark.parametrize("pipelined, frameskip", [(True, 1), (False, 4), (True, 4)])
@pytest.mark.parametrize("task", ["capture_the_flag", "spiders_attack"])
def test_the_same_holds_pipelined_and_with_frameskip(task, pipelined, frameskip):
    assert_reset_gives_a_fresh_episode(task, pipelined=pipelined, frameskip=frameskip)


@pytest.mark.parametrize("num_agents", [1, 8])
def test_the_same_holds_for_the_fewest_and_the_most_agents(num_agents):
    assert_reset_gives_a_fresh_episode("commons_harvest", num_agents=num_agents)


def test_the_same_holds_after_an_episode_ended_by_a_death():
    """duel's test layout: agent_0 hits agent_1 until it dies, which terminates both
    (damage, knock-back, a dead player); then random play from seed 11."""
    attack = {"agent_0": 6, "agent_1": 0}
    env = craftium_ma.parallel_env("duel", max_cycles=400)
    try:
        fresh = testing.play(env, 11, COMPARED_STEPS)
        duel = testing.play(env, 3, options={"layout": "test"}, policy=lambda env: attack)
        used = testing.play(env, 11, COMPARED_STEPS)
    finally:
        env.close()
    _, _, terminations, truncations, _, _ = duel[-1]
    assert all(terminations.values()) and not any(truncations.values()) and len(duel) < 400
    testing.assert_same(fresh, used)
