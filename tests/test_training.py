"""Smoke test of examples/train_ppo.py and examples/evaluate.py on real engine processes:
a few hundred env steps of PPO, a resume, a reload, and a one-episode evaluation."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from craftium_ma import render
from craftium_ma.models import ActorCritic, env_options, load_checkpoint, probe_input

pytestmark = pytest.mark.engine

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# 1 env x 2 agents in this process, tiny frames: 4 updates of 64 steps x 2 slots
TRAIN = ["--task", "small_room", "--num-agents", "2", "--num-envs", "1",
         "--max-cycles", "30", "--frameskip", "4", "--obs-size", "32", "--frame-stack", "2",
         "--num-steps", "64", "--num-minibatches", "2", "--update-epochs", "2",
         "--save-interval", "2", "--torch-threads", "1", "--quiet"]


def run(script, *args, timeout=120):
    """Run an example in its own interpreter; a hung engine can't outlive the timeout
    (the child is killed and craftium_ma's reaper removes its engine processes)."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], check=False,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo")
    stdout = run("train_ppo.py", *TRAIN, "--total-timesteps", "512", "--out-dir", str(out))
    assert "summary: 512 agent steps, 4 updates" in stdout
    return out


def test_training_writes_sane_logs(trained):
    episodes = read_rows(trained / "episodes.csv")
    assert len(episodes) >= 4  # 256 env steps, episodes of at most 31
    assert list(episodes[0]) == ["global_step", "wall_time", "env", "length", "return_agent_0",
                                 "return_agent_1", "return_team"]
    for row in episodes:
        values = {k: float(v) for k, v in row.items()}
        assert all(math.isfinite(v) for v in values.values())
        assert 0 < values["global_step"] <= 512 and 1 <= values["length"] <= 31
        for agent in ("return_agent_0", "return_agent_1"):
            assert -30 <= values[agent] <= -1  # -1 per step until the block or max_cycles
        assert values["return_team"] == values["return_agent_0"] + values["return_agent_1"]
    steps = [int(r["global_step"]) for r in episodes]
    assert steps == sorted(steps)

    updates = read_rows(trained / "updates.csv")
    assert [int(r["update"]) for r in updates] == [1, 2, 3, 4]
    assert all(math.isfinite(float(v)) for r in updates for v in r.values())

    with Image.open(trained / "curve.png") as png:
        assert png.format == "PNG" and png.width > 200 and png.height > 100


def test_checkpoint_reloads_to_the_same_policy(trained):
    model, ckpt = load_checkpoint(trained / "checkpoint.pt")
    assert ckpt["global_step"] == 512 and ckpt["update"] == 4
    assert ckpt["obs_shape"] == [32, 32, 6] and ckpt["n_actions"] == 4
    assert ckpt["args"]["obs_size"] == 32
    with torch.no_grad():
        logits = model.logits(probe_input(ckpt["obs_shape"]))
    # the logits the model gave when it was saved, on the same fixed frames
    np.testing.assert_allclose(logits.numpy(), np.array(ckpt["probe_logits"]), rtol=1e-5, atol=1e-6)
    fresh = ActorCritic(tuple(ckpt["obs_shape"]), 4)
    with torch.no_grad():
        assert not torch.allclose(fresh.logits(probe_input(ckpt["obs_shape"])), logits)


def test_resume_continues_the_run(trained, tmp_path):
    # a copy, so that the other tests see the original run
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("checkpoint.pt", "episodes.csv", "updates.csv"):
        (run_dir / name).write_bytes((trained / name).read_bytes())
    before = len(read_rows(run_dir / "episodes.csv"))
    stdout = run("train_ppo.py", *TRAIN, "--total-timesteps", "768",
                 "--resume", str(run_dir / "checkpoint.pt"))
    assert "resumed from" not in stdout  # --quiet
    _, ckpt = load_checkpoint(run_dir / "checkpoint.pt")
    assert ckpt["global_step"] == 768 and ckpt["update"] == 6
    assert [int(r["update"]) for r in read_rows(run_dir / "updates.csv")] == [1, 2, 3, 4, 5, 6]
    episodes = read_rows(run_dir / "episodes.csv")
    assert len(episodes) > before and int(episodes[-1]["global_step"]) > 512


@pytest.mark.parametrize("policy", ["trained", "random"])
def test_evaluate_writes_results_and_gif(trained, tmp_path, policy):
    gif, result_json = tmp_path / "eval.gif", tmp_path / "eval.json"
    args = [str(trained / "checkpoint.pt"), "--episodes", "1", "--max-cycles", "8",
            "--gif", str(gif), "--json-out", str(result_json)]
    stdout = run("evaluate.py", *args, *(["--random"] if policy == "random" else []), timeout=90)
    assert "team" in stdout
    result = json.loads(result_json.read_text())
    assert result["episodes"] == 1 and result["policy"].startswith(
        "random" if policy == "random" else "sampled")
    assert -16 <= result["team"]["mean"] <= -2
    assert result["team"]["mean"] == result["agent_0"]["mean"] + result["agent_1"]["mean"]
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames > 1
        # the two 32-pixel views side by side, each under its label, scaled 3 times
        assert (im.width, im.height) == (2 * 32 * 3, (32 + render.LABEL_BAR) * 3)


def test_self_play_against_a_frozen_opponent_learns_from_one_side_and_refreshes_it(tmp_path):
    # duel, 2 copies x 2 agents: agent_0 learns in copy 0, agent_1 in copy 1; 3 updates of
    # 4 slots x 32 steps, the opponent replaced by the learner after update 2
    args = ["--task", "duel", "--num-agents", "2", "--num-envs", "2", "--max-cycles", "20",
            "--frameskip", "4", "--obs-size", "32", "--num-steps", "32", "--num-minibatches", "2",
            "--update-epochs", "1", "--torch-threads", "1", "--total-timesteps", "384",
            "--opponent-refresh", "2", "--snapshots", "3", "--out-dir", str(tmp_path)]
    stdout = run("train_ppo.py", *args)
    assert "3 updates of 128 steps (64 of them the learner's)" in stdout
    _, ckpt = load_checkpoint(tmp_path / "checkpoint.pt")
    after_two = torch.load(tmp_path / "snapshot_256.pt", weights_only=False)["model"]
    for name, weights in ckpt["opponent"].items():
        assert torch.equal(weights, after_two[name]), name
    assert any(not torch.equal(ckpt["model"][k], after_two[k]) for k in after_two)


def test_the_opponent_is_drawn_from_a_league_of_the_learners_last_refreshes(tmp_path):
    # refreshed after each of 4 updates; the league keeps the last 3 (the snapshots of
    # updates 2 to 4), and the opponent is the one drawn at update 4
    args = ["--task", "duel", "--num-agents", "2", "--num-envs", "2", "--max-cycles", "20",
            "--frameskip", "4", "--obs-size", "32", "--num-steps", "16", "--num-minibatches", "1",
            "--update-epochs", "1", "--torch-threads", "1", "--total-timesteps", "256",
            "--opponent-refresh", "1", "--opponent-pool", "3", "--snapshots", "4",
            "--seed", "3", "--out-dir", str(tmp_path)]
    run("train_ppo.py", *args)
    _, ckpt = load_checkpoint(tmp_path / "checkpoint.pt")
    snapshots = [torch.load(tmp_path / f"snapshot_{64 * u}.pt", weights_only=False)["model"]
                 for u in (2, 3, 4)]
    assert len(ckpt["league"]) == 3
    for kept, snapshot in zip(ckpt["league"], snapshots, strict=True):
        assert all(torch.equal(kept[k], snapshot[k]) for k in snapshot)
    drawn = np.random.default_rng([3, 4]).integers(3)
    assert all(torch.equal(ckpt["opponent"][k], snapshots[drawn][k]) for k in snapshots[0])
    assert len({tuple(s[k].sum().item() for k in sorted(s)) for s in snapshots}) == 3


def test_a_frozen_opponent_without_a_second_agent_is_an_error_naming_it(tmp_path):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "train_ppo.py"), *TRAIN,
                           "--num-agents", "1", "--total-timesteps", "64",
                           "--opponent-refresh", "2", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "--opponent-refresh needs a positive number of updates and at least 2 agents, " \
        "got 2 and 1 agents" in proc.stderr
    proc = subprocess.run([sys.executable, str(EXAMPLES / "train_ppo.py"), *TRAIN,
                           "--total-timesteps", "64", "--opponent-pool", "3",
                           "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "--opponent-pool needs a size of at least 1 and, above 1, --opponent-refresh; " \
        "got 3 and 0" in proc.stderr


def test_task_options_that_are_not_a_json_object_are_an_error_naming_them():
    for script in ("train_ppo.py", "train_benchmarl.py"):
        proc = subprocess.run([sys.executable, str(EXAMPLES / script),
                               "--task-options", "{size: 3}"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2
        assert proc.stderr.splitlines()[-1] == (
            f"{script}: error: --task-options: task options must be a JSON object such as "
            "'{\"size\": 5}', got '{size: 3}'")


def test_norm_adv_centres_each_minibatch_and_no_norm_adv_keeps_the_raw_advantages(tmp_path):
    # one update of one minibatch: its ratio is 1, so its policy loss is minus the mean advantage
    losses = {}
    for flag in ("--norm-adv", "--no-norm-adv"):
        out = tmp_path / flag
        run("train_ppo.py", *TRAIN, "--num-minibatches", "1", "--update-epochs", "1",
            "--total-timesteps", "128", flag, "--out-dir", str(out))
        losses[flag] = float(read_rows(out / "updates.csv")[0]["policy_loss"])
    assert abs(losses["--norm-adv"]) < 1e-3
    assert abs(losses["--no-norm-adv"]) > 1e-2


def test_the_learner_plays_each_side_in_turn():
    sys.path.insert(0, str(EXAMPLES))
    import train_ppo

    assert train_ppo.learner_slots(4, 2).tolist() == [True, False, False, True] * 2
    assert train_ppo.learner_slots(2, 3).tolist() == [True, False, False, False, True, False]
    # with teams a side is a team: red (agent_0, agent_2) in copy 0, blue in copy 1
    assert train_ppo.learner_slots(2, 4, 2).tolist() == [True, False, True, False,
                                                        False, True, False, True]


def test_in_a_task_with_teams_the_learner_is_a_whole_team(tmp_path):
    # capture_the_flag, one copy of 4 agents: red (agent_0, agent_2) learns, blue plays the
    # frozen opponent; 2 updates of 4 slots x 16 steps
    args = ["--task", "capture_the_flag", "--num-agents", "4", "--num-envs", "1",
            "--max-cycles", "20", "--frameskip", "4", "--obs-size", "32", "--num-steps", "16",
            "--num-minibatches", "1", "--update-epochs", "1", "--torch-threads", "1",
            "--total-timesteps", "128", "--opponent-refresh", "1", "--out-dir", str(tmp_path)]
    stdout = run("train_ppo.py", *args)
    assert "2 updates of 64 steps (32 of them the learner's)" in stdout


def test_a_scenario_trains_its_focal_players_against_its_bots(tmp_path):
    # capture_the_flag_0 at frameskip 4, its blue bots in the pool: red's 2 players are the
    # agents of each copy; 2 updates of 2 slots x 16 steps
    args = ["--scenario", "capture_the_flag_0", "--num-envs", "1", "--max-cycles", "20",
            "--frameskip", "4", "--obs-size", "32", "--num-steps", "16", "--num-minibatches", "1",
            "--update-epochs", "1", "--torch-threads", "1", "--total-timesteps", "64",
            "--task-options", '{"reward": "progress"}', "--out-dir", str(tmp_path)]
    stdout = run("train_ppo.py", *args)
    assert "capture_the_flag (the focal players of capture_the_flag_0): 1 envs x 2 agents = " \
        "2 slots" in stdout
    _, ckpt = load_checkpoint(tmp_path / "checkpoint.pt")
    assert (ckpt["args"]["scenario"], ckpt["args"]["num_agents"]) == ("capture_the_flag_0", 2)
    # its worlds' options: the scenario's field, the run's reward
    assert env_options(ckpt)["task_options"] == {"length": 24, "width": 16, "reward": "progress"}
    episodes = read_rows(tmp_path / "episodes.csv")
    assert list(episodes[0])[4:] == ["return_agent_0", "return_agent_1", "return_team"]


@pytest.mark.parametrize("options,error", [
    (["--scenario-bots", '{"default": ["duel.evasive"]}'], "--scenario-bots needs --scenario"),
    (["--scenario", "duel_0", "--scenario-bots", '{"default": "duel.evasive"}'],
     "--scenario-bots: a JSON object of bot names per role"),
])
def test_scenario_bots_without_a_scenario_or_malformed_are_an_error_naming_them(options, error):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "train_ppo.py"), *options],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and error in proc.stderr.splitlines()[-1]


def test_a_scenario_takes_no_frozen_opponent_its_bots_are_the_opponents():
    sys.path.insert(0, str(EXAMPLES))
    import train_ppo

    with pytest.raises(ValueError, match="--opponent-refresh: with --scenario the opponents"):
        train_ppo.with_scenario(train_ppo.Args(scenario="duel_0", opponent_refresh=2))
    args = train_ppo.with_scenario(train_ppo.Args(scenario="capture_the_flag_1"))
    assert (args.task, args.num_agents) == ("capture_the_flag", 4)
