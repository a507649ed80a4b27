"""Melting Pot's protocol in 3D (craftium_ma.evaluation): scenarios, their bots, the
focal players' env, evaluate() and `craftium-ma evaluate`, with real engine processes."""

import json
import os
import pickle
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import craftium_ma
from craftium_ma import testing
from craftium_ma.evaluation import (SCRIPTED, BotSpec, Scenario, ScenarioEnv, bots, evaluate,
                                    normalised, reference_scores, scenario, scenario_env,
                                    scenarios)
from craftium_ma.evaluation.scenario import HELD_OUT, RESIDENT, VISITOR


def play(env, seed: int, steps: int):
    """The episode record of `steps` random focal actions (testing.play's format)."""
    return testing.play(env, seed, steps, policy=testing.random_actions(0))


# -- the catalogue (no engine) ----------------------------------------------------------------

def test_the_catalogue_covers_six_tasks_residents_visitors_and_held_out_bots():
    found = [scenario(n) for n in scenarios()]
    assert len(found) >= 16 and len({s.task for s in found}) >= 6
    assert sum(RESIDENT in s.tags for s in found) >= 3
    assert sum(VISITOR in s.tags for s in found) >= 3
    held_out = [s for s in found if HELD_OUT in s.tags]
    assert held_out
    for s in found:
        assert (RESIDENT in s.tags) == (2 * sum(s.is_focal) > s.num_players), s.name
    commons = [s for s in found if s.task == "commons_harvest" and s.num_players == 16]
    assert any(sum(s.is_focal) == 4 and VISITOR in s.tags for s in commons)


def test_the_scenarios_command_and_the_docs_list_every_scenario():
    listed = subprocess.run([sys.executable, "-m", "craftium_ma", "scenarios"],
                            capture_output=True, text=True, timeout=120, check=True).stdout
    assert [line.split()[0] for line in listed.splitlines()] == scenarios()
    docs = (Path(__file__).parent.parent / "docs" / "scenarios.md").read_text()
    assert all(f"| {name} |" in docs for name in scenarios())


def test_held_out_bots_are_reachable_only_through_held_out_scenarios():
    every_public = set(bots())
    for s in (scenario(n) for n in scenarios()):
        drawn = {b for pool in s.bots.values() for b in pool}
        assert (HELD_OUT in s.tags) == bool(drawn - every_public), s.name
    hidden = next(b for b in scenario("duel_2").bots["default"])
    with pytest.raises(ValueError, match=rf"unknown bot '{hidden}'; the bots of task 'duel'"):
        Scenario("mine", "duel", 2, (True, False), ("a", "a"), {"a": (hidden,)},
                 {VISITOR}, "a held-out bot in a scenario not tagged held_out")


def test_a_scenario_pickles_whole():
    s = scenario("capture_the_flag_1")
    copy = pickle.loads(pickle.dumps(s))
    assert copy == s and copy.config_hash() == s.config_hash()


def test_a_config_hash_changes_with_anything_that_defines_the_scenario():
    s = scenario("duel_0")
    assert s.config_hash() == scenario("duel_0").config_hash()
    fields = dict(name=s.name, task=s.task, num_players=2, is_focal=s.is_focal, roles=s.roles,
                  bots=s.bots, tags=s.tags, description=s.description, max_cycles=300)
    assert Scenario(**fields).config_hash() == s.config_hash()
    assert Scenario(**{**fields, "max_cycles": 301}).config_hash() != s.config_hash()
    assert Scenario(**{**fields, "bots": {"default": ("duel.evasive",)}}).config_hash() \
        != s.config_hash()


@pytest.mark.parametrize("change, error", [
    ({"task": "nope"}, "unknown task 'nope'"),
    ({"num_players": 3, "is_focal": (True, False, False), "roles": ("default",) * 3},
     "task 'duel' takes 2 to 2 players, not 3"),
    ({"is_focal": (True, True)}, "needs focal and background players, got 2 focal of 2"),
    ({"roles": ("default",)}, "one entry per player (2), got 2 and 1"),
    ({"bots": {"default": ("duel.ninja",)}}, "unknown bot 'duel.ninja'; the bots of task "
                                             "'duel' are duel.aggressive"),
    ({"bots": {"default": ("xland.planner",)}}, "bot 'xland.planner' plays task 'xland'"),
    ({"bots": {}}, "background slot 1 plays role 'default', which has no bots"),
    ({"tags": {RESIDENT}}, "1 focal of 2 players makes it 'visitor'; tag it so"),
])
def test_a_malformed_scenario_is_refused_naming_what_is_wrong(change, error):
    fields = dict(name="mine", task="duel", num_players=2, is_focal=(True, False),
                  roles=("default", "default"), bots={"default": ("duel.aggressive",)},
                  tags={VISITOR}, description="")
    with pytest.raises(ValueError) as raised:
        Scenario(**{**fields, **change})
    assert error in str(raised.value)


def test_unknown_scenarios_privileged_observations_and_fixed_options_are_clear_errors():
    with pytest.raises(ValueError, match=r"unknown scenario 'duel_9'; the scenarios are "
                                         r"commons_harvest_0"):
        scenario_env("duel_9")
    with pytest.raises(ValueError, match=r"'apple_map' of task 'commons_harvest' is "
                                         r"privileged: bots may read it, focal players not"):
        scenario_env("commons_harvest_0", observations=["rgb", "apple_map"])
    with pytest.raises(ValueError, match="scenario 'duel_0' fixes action_space, num_agents"):
        scenario_env("duel_0", num_agents=2, action_space="discrete")
    with pytest.raises(ValueError, match=r"focal_bots: scenario 'duel_0' has no role \['red'\]"):
        ScenarioEnv("duel_0", focal_bots={"red": "duel.evasive"})
    with pytest.raises(ValueError, match=r"bots: scenario 'duel_0' has no role \['blue'\]"):
        ScenarioEnv("duel_0", bots={"blue": ["duel.evasive"]})
    with pytest.raises(TypeError, match="bots: a pool of bot names per role"):
        ScenarioEnv("duel_0", bots={"default": "duel.evasive"})
    with pytest.raises(ValueError, match="unknown bot 'duel.counter'"):  # held out
        ScenarioEnv("duel_0", bots={"default": ["duel.counter"]})
    with pytest.raises(ValueError, match="scenario 'duel_0': frameskip must be a positive int"):
        ScenarioEnv("duel_0", frameskip=0)


def test_a_frameskip_options_or_bots_of_its_own_make_another_scenario():
    """What a training pool may change of a scenario changes its config hash; frameskip 1,
    the scenarios' own, keeps the hashes the reference scores were made with."""
    duel = scenario("duel_0")
    changed = [replace(duel, frameskip=4), replace(duel, task_options={"reward": "distance"}),
               replace(duel, bots={"default": ("duel.evasive",)})]
    hashes = {s.config_hash() for s in [duel, *changed]}
    assert len(hashes) == 4
    assert replace(duel, frameskip=1).config_hash() == duel.config_hash() == \
        reference_scores()["duel_0"]["config_hash"]


def test_a_policy_dict_missing_a_role_or_a_bad_policy_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match=r"no policy for role\(s\) \['red'\] of scenario "
                                         r"'capture_the_flag_1'"):
        evaluate({"blue": "random"}, ["capture_the_flag_1"], episodes=1)
    with pytest.raises(ValueError, match="the policy of role 'default' of scenario 'duel_0' "
                                         "is 42"):
        evaluate(42, ["duel_0"], episodes=1)
    with pytest.raises(ValueError, match="scenarios=.names. or task=, one of them"):
        evaluate("random", episodes=1)


def test_a_checkpoint_that_does_not_fit_the_task_is_refused_naming_both_shapes(tmp_path):
    torch = pytest.importorskip("torch")
    from craftium_ma.models import ActorCritic
    path = tmp_path / "small.pt"
    torch.save({"model": ActorCritic((32, 32, 3), 9).state_dict(), "obs_shape": [32, 32, 3],
                "n_actions": 9, "args": {"task": "duel", "observations": "rgb",
                                         "grayscale": False, "frame_stack": 1}}, path)
    with pytest.raises(ValueError, match=r"takes observations of shape \(32, 32, 3\) and 9 "
                                         r"actions; agent_0 has \(64, 64, 3\)"):
        evaluate(str(path), ["duel_0"], episodes=1)
    with pytest.raises(ValueError, match="bot .* was trained on task 'duel', not 'xland'"):
        Scenario("mine", "xland", 2, (True, False), ("a", "a"), {"a": (str(path),)},
                 {VISITOR}, "")


def test_a_checkpoint_of_the_first_actions_fits_a_larger_action_space(tmp_path):
    """train_ppo's --num-actions 6 on xland (its first six actions, no no-op): the policy
    acts in the task's seven; more actions than the space has are refused."""
    torch = pytest.importorskip("torch")
    from gymnasium import spaces
    from craftium_ma.models import ActorCritic
    from craftium_ma.policies import CheckpointPolicy
    path = tmp_path / "six.pt"
    torch.save({"model": ActorCritic((32, 32, 3), 6).state_dict(), "obs_shape": [32, 32, 3],
                "n_actions": 6, "args": {"task": "xland", "observations": "rgb",
                                         "grayscale": False, "frame_stack": 1}}, path)
    policy = CheckpointPolicy(path)
    frames = spaces.Box(0, 255, (32, 32, 3), np.uint8)
    policy.check_fits(frames, spaces.Discrete(7), "agent_0")
    with pytest.raises(ValueError, match="6 actions; agent_0 has .* Discrete.5."):
        policy.check_fits(frames, spaces.Discrete(5), "agent_0")


def frameskip_checkpoint(path, frameskip: int, favoured: int):
    """A duel checkpoint of 2 stacked 32 x 32 frames, trained at `frameskip`, whose policy
    almost always samples the action `favoured`."""
    import torch
    from craftium_ma.models import ActorCritic, save_checkpoint
    model = ActorCritic((32, 32, 6), 9)
    with torch.no_grad():
        model.policy.weight.zero_()
        model.policy.bias.copy_(torch.full((9,), -30.0))
        model.policy.bias[favoured] = 0.0
    save_checkpoint(path, model, args={
        "task": "duel", "observations": "rgb", "grayscale": False, "frame_stack": 2,
        "num_agents": 2, "max_cycles": 300, "obs_size": 32, "frameskip": frameskip})
    return path


DUEL_FORWARD, DUEL_ATTACK, DUEL_CAMERA_LEFT = 1, 6, 7  # mods/duel/task.toml


@pytest.mark.parametrize("favoured,held", [(DUEL_ATTACK, DUEL_ATTACK), (DUEL_CAMERA_LEFT, 0)])
def test_a_checkpoint_in_a_smaller_frameskip_keeps_its_trainings_pace(tmp_path, favoured, held):
    """Trained at frameskip 4, at frameskip 1: it decides every 4th step, from that step's
    frame only (its stack holds decision frames), and holds its keys in between but does not
    turn again (a frameskip holds keys for every frame and turns once)."""
    pytest.importorskip("torch")
    from craftium_ma.policies import CheckpointPolicy
    from craftium_ma.tasks import find_task
    path = frameskip_checkpoint(tmp_path / "fs4.pt", 4, favoured)
    frames = np.random.default_rng(0).integers(0, 256, (9, 32, 32, 3), dtype=np.uint8)
    policy = CheckpointPolicy(path, seed=0)
    policy.hold_actions(1, find_task("duel").actions)
    actions = [policy("agent_0", f, {}) for f in frames]
    assert actions == [favoured, held, held, held] * 2 + [favoured]
    np.testing.assert_array_equal(policy._inputs["agent_0"].frames.stacks[0],
                                  np.concatenate([frames[4], frames[8]], -1))
    policy.reset()  # a new episode decides at once
    assert policy("agent_0", frames[0], {}) == favoured
    policy.hold_actions(4, find_task("duel").actions)  # its own frameskip: every step
    assert [policy("agent_0", f, {}) for f in frames[:3]] == [favoured] * 3
    with pytest.raises(ValueError, match="trained at frameskip 4: an env of frameskip 3 cannot"):
        policy.hold_actions(3, find_task("duel").actions)


@pytest.mark.engine
@pytest.mark.parametrize("frameskip,acted", [(1, [DUEL_CAMERA_LEFT, 0, 0, 0] * 2),
                                             (4, [DUEL_CAMERA_LEFT] * 8)])
def test_a_saved_policy_bot_keeps_its_trainings_pace_at_the_scenarios_frameskip(
        tmp_path, monkeypatch, frameskip, acted):
    """A bot trained at frameskip 4: in duel_0 (frameskip 1) it decides every 4th step and
    holds its keys, not its turn, in between; in a pool of frameskip 4, every step."""
    pytest.importorskip("torch")
    from craftium_ma.evaluation.population import SavedPolicyBot
    path = frameskip_checkpoint(tmp_path / "fs4.pt", 4, DUEL_CAMERA_LEFT)
    seen, act = [], SavedPolicyBot.act
    monkeypatch.setattr(SavedPolicyBot, "act",
                        lambda self, *args: seen.append(act(self, *args)) or seen[-1])
    env = ScenarioEnv("duel_0", bots={"default": [str(path)]}, frameskip=frameskip,
                      obs_size=32, max_cycles=8)
    try:
        play(env, 0, 8)
        assert env.bots_drawn == {"agent_1": str(path)} and env.frameskip == frameskip
    finally:
        env.close()
    assert seen == acted


# -- with the engine -----------------------------------------------------------------------------

@pytest.mark.engine
def test_the_same_seed_gives_the_same_bots_and_episode_and_other_seeds_other_bots():
    """commons_harvest_2 draws each of 12 background players from two bots."""
    env = scenario_env("commons_harvest_2", max_cycles=40)
    try:
        first = play(env, 5, 40)
        bots_first = dict(env.bots_drawn)
        again = play(env, 5, 40)
        assert env.bots_drawn == bots_first
        testing.assert_same(first, again)
        drawn = []
        for seed in (6, 7):
            env.reset(seed=seed)
            drawn.append(dict(env.bots_drawn))
    finally:
        env.close()
    assert len({json.dumps(d, sort_keys=True) for d in (bots_first, *drawn)}) == 3
    assert set(bots_first.values()) == {"commons_harvest.greedy", "commons_harvest.sustainable"}
    fresh = scenario_env("commons_harvest_2", max_cycles=40)
    try:
        testing.assert_same(first, play(fresh, 5, 40))
    finally:
        fresh.close()


@pytest.mark.engine
def test_a_scenario_env_exposes_only_focal_players_and_its_bots_act():
    """commons_harvest_1: 2 focal players among 6 sustainable harvesters, which take
    apples (their returns) while the focal players only wait."""
    env = scenario_env("commons_harvest_1")
    try:
        parallel_api_test(env, num_cycles=5)
        observations, infos = env.reset(seed=3)
        assert env.possible_agents == env.agents == ["agent_0", "agent_1"]
        assert set(observations) == set(infos) == {"agent_0", "agent_1"}
        assert all(info["scenario"] == "commons_harvest_1" for info in infos.values())
        assert not any("bot" in key for info in infos.values() for key in info)
        for _ in range(60):
            _, rewards, _, _, infos = env.step({"agent_0": 0, "agent_1": 0})
        assert set(rewards) == {"agent_0", "agent_1"} and sum(rewards.values()) == 0
        background = [r for a, r in env.returns.items() if a not in env.possible_agents]
        assert sum(background) >= 5
        with pytest.raises(ValueError, match=r"actions for unknown agents \['agent_2'\]"):
            env.step({"agent_0": 0, "agent_1": 0, "agent_2": 0})
    finally:
        env.close()


@pytest.mark.engine
def test_a_bot_that_needs_no_pixels_draws_no_frame():
    """duel_0: the focal player's frame changes as it turns; the aggressive bot's client
    draws nothing, not even the reset's frame, though the bot turns and walks."""
    env = scenario_env("duel_0")
    try:
        env.reset(seed=1)
        world = env.world.env
        assert world.drawn_agents == ["agent_0"] and world.frameless_agents == ("agent_1",)
        position = env.world.infos["agent_1"]["position"].copy()
        focal = [env.last_frames["agent_0"]]
        for _ in range(15):
            env.step({"agent_0": 7})  # camera_left
            focal.append(env.last_frames["agent_0"])
            assert not world.last_frames["agent_1"].any()
        assert not np.array_equal(env.world.infos["agent_1"]["position"], position)
        assert not all(np.array_equal(focal[0], f) for f in focal[1:])
    finally:
        env.close()


@pytest.mark.engine
def test_a_frameless_bot_plays_the_same_episode():
    """Patch 0024: clients that make no meshes and draw nothing play the same game, bit
    for bit: commons_harvest, 4 agents digging and walking, 2 of them frameless."""
    def episode(**kwargs):
        env = craftium_ma.parallel_env("commons_harvest", num_agents=4, max_cycles=120,
                                       **kwargs)
        try:
            record = testing.play(env, 7, 120, policy=testing.random_actions(1))
        finally:
            env.close()
        return record
    frameless = episode(frameless_agents=["agent_2", "agent_3"])
    drawn = episode()
    for (obs_a, *rest_a), (obs_b, *rest_b) in zip(frameless, drawn):
        testing.assert_same(rest_a, rest_b)
        testing.assert_same({a: obs_a[a] for a in ("agent_0", "agent_1") if a in obs_a},
                            {a: obs_b[a] for a in ("agent_0", "agent_1") if a in obs_b})
        assert all(not obs_a[a].any() for a in ("agent_2", "agent_3") if a in obs_a)
    assert len(frameless) == len(drawn) and sum(
        sum(step[1].values()) for step in frameless[1:]) > 0  # apples were dug


@pytest.mark.engine
def test_evaluate_scores_the_random_population_in_two_scenarios_with_records(tmp_path):
    records = tmp_path / "episodes.jsonl"
    results = evaluate("random", ["duel_0", "pressure_plates_0"], episodes=2, seed=4,
                       records=records, max_cycles=40)
    assert [r["scenario"] for r in results] == ["duel_0", "pressure_plates_0"]
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [(r["scenario"], r["seed"]) for r in lines] == [
        ("duel_0", 4), ("duel_0", 5), ("pressure_plates_0", 4), ("pressure_plates_0", 5)]
    for result in results:
        mine = [r for r in lines if r["scenario"] == result["scenario"]]
        # 40 steps is a scenario of its own: its hash says so
        shipped = scenario(result["scenario"])
        assert result["config_hash"] == replace(shipped, max_cycles=40).config_hash() \
            != shipped.config_hash()
        assert all(r["config_hash"] == result["config_hash"] for r in mine)
        focal = [r["focal_per_capita_return"] for r in mine]
        assert result["focal_per_capita_return"] == pytest.approx(np.mean(focal))
        low, high = result["focal_per_capita_return_ci95"]
        assert low <= result["focal_per_capita_return"] <= high
        assert result["episodes"] == 2 and "background_per_capita_return" in result
        assert all(set(r["bots"]) == {"agent_1"} and r["steps"] <= 40 for r in mine)
    # duel is zero-sum: what the focal player lost the bot won
    duel = [r for r in lines if r["scenario"] == "duel_0"]
    assert all(r["focal_per_capita_return"] == -r["background_per_capita_return"] for r in duel)


@pytest.mark.engine
def test_a_checkpoint_plays_as_a_bot_and_as_the_focal_population(tmp_path):
    """A saved policy of examples/train_ppo.py (untrained here): a background bot whose
    client draws (it reads frames), and the focal policy; its file is in the hash."""
    torch = pytest.importorskip("torch")
    from craftium_ma.models import ActorCritic, save_checkpoint
    path = tmp_path / "duel.pt"
    args = {"task": "duel", "observations": "rgb", "grayscale": False, "frame_stack": 2,
            "num_agents": 2, "max_cycles": 300, "obs_size": 64, "frameskip": 1}
    torch.manual_seed(0)
    save_checkpoint(path, ActorCritic((64, 64, 6), 9), args=args)
    mine = Scenario("duel_saved", "duel", 2, (True, False), ("a", "a"), {"a": (str(path),)},
                    {VISITOR}, "a focal player against a saved policy", max_cycles=30)
    [result] = evaluate(str(path), [mine], episodes=1, seed=0, records=tmp_path / "r.jsonl")
    [record] = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert record["bots"] == {"agent_1": str(path)} and record["steps"] == 30
    assert result["config_hash"] == mine.config_hash()
    env = ScenarioEnv(mine)
    try:
        env.reset(seed=0)
        assert env.world.env.drawn_agents == ["agent_0", "agent_1"]
    finally:
        env.close()
    save_checkpoint(path, ActorCritic((64, 64, 6), 9), args=args)  # other weights
    from craftium_ma.evaluation.population import saved_policy
    saved_policy.cache_clear()
    assert mine.config_hash() != result["config_hash"]


@pytest.mark.engine
def test_a_scenario_paces_a_focal_checkpoint_to_its_training(tmp_path):
    """duel_0 steps one frame at a time: a policy trained at frameskip 4 decides on every
    4th step of its focal player."""
    pytest.importorskip("torch")
    from craftium_ma.policies import CheckpointPolicy
    path = frameskip_checkpoint(tmp_path / "fs4.pt", 4, DUEL_FORWARD)
    policy = CheckpointPolicy(path, seed=0)
    decisions = []
    decide = policy._decide
    policy._decide = lambda agent, observation: decisions.append(agent) or decide(
        agent, observation)
    evaluate(policy, [replace(scenario("duel_0"), max_cycles=20)], episodes=1)
    assert decisions == ["agent_0"] * 5


@pytest.mark.engine
def test_evaluate_on_ray_workers_gives_the_same_records(tmp_path):
    ray = pytest.importorskip("ray")
    here, there = tmp_path / "here.jsonl", tmp_path / "ray.jsonl"
    kwargs = dict(episodes=2, seed=9, max_cycles=30)
    assert evaluate("random", ["duel_1"], records=here, **kwargs) == \
        evaluate("random", ["duel_1"], records=there, ray=True, **kwargs)
    ray.shutdown()
    assert here.read_text() == there.read_text()


@pytest.mark.engine
def test_the_scripted_population_plays_focal_slots_with_puppets():
    """pressure_plates_0: the runner (focal, scripted) and the helper (bot) open the door
    together and reach the goal room well before the end."""
    [result] = evaluate("scripted", ["pressure_plates_0"], episodes=1, seed=2)
    assert result["focal_per_capita_return"] == 1.0
    assert SCRIPTED["pressure_plates"] == {"default": "pressure_plates.runner"}


@pytest.mark.engine
def test_a_pool_of_scenario_envs_steps_focal_rows_only():
    pool = craftium_ma.vector_env(scenario("spiders_attack_0"), 2, seed=3, max_cycles=20)
    try:
        observations, _ = pool.reset()
        assert observations.shape == (4, 64, 64, 3)  # 2 envs x 2 focal players
        for _ in range(5):
            observations, rewards, _, _, infos = pool.step(np.zeros(4, int))
        assert rewards.shape == (4,) and list(infos["scenario"]) == ["spiders_attack_0"] * 4
    finally:
        pool.close()


@pytest.mark.engine
def test_sixteen_players_start_step_and_close_cleanly():
    env = scenario_env("commons_harvest_2", max_cycles=10)
    env.reset(seed=0)
    world = env.world.env
    pids, directory = list(world.engine_pids().values()), world.engine_directory
    assert len(pids) == 17  # the server and 16 clients
    steps = 0
    while env.agents:
        env.step({a: 1 for a in env.agents})
        steps += 1
    env.close()
    assert steps == 10 and not directory.exists()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.engine
def test_the_evaluate_command_prints_a_json_line_per_result(tmp_path):
    out = tmp_path / "records.jsonl"
    run = subprocess.run([sys.executable, "-m", "craftium_ma", "evaluate", "random",
                          "--scenario", "duel_0", "--episodes", "1", "--json", "--out", out],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    [line] = run.stdout.splitlines()
    assert json.loads(line)["scenario"] == "duel_0" and len(out.read_text().splitlines()) == 1
    task = subprocess.run([sys.executable, "-m", "craftium_ma", "evaluate", "random", "--task",
                           "small_room", "--episodes", "1", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert task.returncode == 0, task.stderr
    result = json.loads(task.stdout)
    assert result["task"] == "small_room" and "mean_return" in result
    bad = subprocess.run([sys.executable, "-m", "craftium_ma", "evaluate", "random",
                          "--scenario", "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown scenario 'nope'" in bad.stderr


def test_reference_scores_cover_every_scenario_at_its_current_configuration():
    references = reference_scores()
    for name in scenarios():
        assert references[name]["config_hash"] == scenario(name).config_hash(), name
        assert {"random", "scripted"} <= set(references[name])
    result = {"scenario": "duel_0", "config_hash": scenario("duel_0").config_hash(),
              "focal_per_capita_return": references["duel_0"]["scripted"]}
    if references["duel_0"]["random"] != references["duel_0"]["scripted"]:
        assert normalised([result]) == {"duel": pytest.approx(1.0)}


def test_registering_a_bot_makes_it_listed_for_its_task():
    from craftium_ma.evaluation import register_bot
    from craftium_ma.evaluation.puppets import RandomBot
    register_bot(BotSpec("duel.test_twin", "duel", 1, make=lambda rng: RandomBot(rng, 9)))
    assert "duel.test_twin" in bots("duel") and "duel.test_twin" not in bots("xland")
    with pytest.raises(ValueError, match="a bot named 'duel.test_twin' is registered already"):
        register_bot(BotSpec("duel.test_twin", "duel", 1, make=lambda rng: None))
