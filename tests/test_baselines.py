"""Baselines (benchmarks/baselines.py, baselines/, docs/baselines.md): the pipeline learns a
tiny task within CI time, results.json holds what it promises, and every shipped policy
loads, fits its task and plays it from the shell. `-m slow` also replays each row's
evaluation and expects its figure."""

import json
import math
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch

from craftium_ma import evaluate, testing
from craftium_ma.evaluation import Scenario, bots
from craftium_ma.models import ActorCritic, env_options, load_checkpoint, save_checkpoint

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import baselines  # noqa: E402

RESULTS = ROOT / "baselines" / "results.json"
ROWS = json.loads(RESULTS.read_text())
ROW_KEYS = {"task", "algorithm", "seeds", "budget_agent_steps", "wall_time_s", "machine",
            "return_mean", "return_ci95", "random_return_mean", "checkpoint", "evaluate_args"}


def run(*argv, timeout=600) -> str:
    proc = subprocess.run([sys.executable, *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def evaluate_row(row: dict, episodes: int) -> dict:
    """`craftium-ma evaluate CHECKPOINT --task TASK --episodes N --json` (`--scenario NAME`
    for a row scored in its eval_scenario) with the row's evaluate_args: its JSON line."""
    where = (["--scenario", row["eval_scenario"]] if "eval_scenario" in row
             else ["--task", row["task"]])
    out = run("-m", "craftium_ma", "evaluate", ROOT / row["checkpoint"], *where,
              "--episodes", episodes, "--json", *row["evaluate_args"])
    return json.loads(out.strip().splitlines()[-1])


def row_score(played: dict) -> float:
    return played.get("focal_per_capita_return", played.get("mean_return"))


def episode_returns(policy, tmp_path, name: str, **env_kwargs) -> np.ndarray:
    """The mean return per agent of each of the tiny configs' evaluation episodes (small_room,
    30 from seed 10 000) under `policy`."""
    records = tmp_path / f"{name}.jsonl"
    evaluate(policy, task="small_room", episodes=30, seed=10_000, records=records, **env_kwargs)
    return np.array([np.mean(list(json.loads(line)["returns"].values()))
                     for line in records.read_text().splitlines()])


def untrained_ppo(trained: Path, path: Path) -> None:
    """The network train_ppo started from (rebuilt from the seed), saved at path."""
    model, checkpoint = load_checkpoint(trained)
    torch.manual_seed(checkpoint["args"]["seed"])  # as train_ppo builds its network
    save_checkpoint(path, ActorCritic(model.obs_shape, model.n_actions), args=checkpoint["args"])


def untrained_benchmarl(tiny: Path, path: Path) -> None:
    """The policy train_benchmarl started from: its experiment built again with the seed
    (BenchMARL seeds every module), saved before any iteration."""
    sys.path.insert(0, str(ROOT / "examples"))
    import train_benchmarl

    from craftium_ma.integrations.benchmarl import save_policy
    config = baselines.load_config(tiny)
    args = train_benchmarl.parse_args(baselines.trainer_options(config, config["seeds"][0]))
    experiment = train_benchmarl.experiment_of(args, path.parent)
    try:
        save_policy(experiment, path)
    finally:
        experiment.close()


@pytest.mark.engine
@pytest.mark.parametrize("algorithm", ["ppo", "ippo", "mappo"])
def test_each_algorithm_learns_a_tiny_room_within_ci_time(algorithm, tmp_path):
    """The whole pipeline on small_room of size 3 (one seed, a few thousand agent steps,
    tests/data/<algorithm>_small_room_tiny.toml): on the same 30 evaluation episodes the
    trained policy returns more than the network it started from, a paired 95 % interval
    above 0 (an unchanged network gains exactly 0)."""
    tiny = ROOT / "tests" / "data" / f"{algorithm}_small_room_tiny.toml"
    page = tmp_path / "baselines.md"
    marks = baselines.TABLE_MARKS
    page.write_text("# Baselines\n\n{}\nan older table\n{}\n\ntext\n".format(*marks))
    run(ROOT / "benchmarks" / "baselines.py", tiny, "--out", tmp_path,
        "--figure", tmp_path / "curves.png", "--docs", page)
    (row,) = json.loads((tmp_path / "results.json").read_text())
    assert ROW_KEYS <= set(row) and (tmp_path / "curves.png").stat().st_size > 0
    assert page.read_text() == "# Baselines\n\n{}\n{}{}\n\ntext\n".format(
        marks[0], (tmp_path / "results.md").read_text(), marks[1])
    trained = tmp_path / Path(row["checkpoint"]).name
    if algorithm == "ppo":
        untrained_ppo(trained, tmp_path / "untrained.pt")
        # --snapshots 2: the model halfway and at the end, the end's the shipped one's
        half, end = sorted(ROOT.glob(f"out/baselines/{tiny.stem}/seed1/snapshot_*.pt"),
                           key=lambda p: int(p.stem.split("_")[1]))
        assert int(half.stem.split("_")[1]) == row["budget_agent_steps"] // 2
        assert torch.load(end, weights_only=False)["probe_logits"] == torch.load(
            trained, weights_only=False)["probe_logits"]
    else:
        untrained_benchmarl(tiny, tmp_path / "untrained.pt")
    after = np.array(row["episode_returns_per_seed"]["1"])  # the row's evaluation episodes
    before = episode_returns(tmp_path / "untrained.pt", tmp_path, "before")
    gain = after - before
    low = np.percentile(np.random.default_rng(0).choice(gain, (10_000, len(gain))).mean(1), 2.5)
    assert low > 0, f"no gain: before {before.mean():.2f}, after {after.mean():.2f}, {low=:.2f}"


def test_a_config_scored_in_a_scenario_is_checked_before_training(tmp_path):
    config = tmp_path / "duel.toml"
    duel = (ROOT / "baselines" / "configs" / "ppo_duel.toml").read_text()
    config.write_text(duel.replace('eval_scenario = "duel_0"', 'eval_scenario = "duel_9"'))
    with pytest.raises(ValueError, match="unknown scenario 'duel_9'"):
        baselines.load_config(config)
    config.write_text(duel.replace("snapshots = 4", ""))
    with pytest.raises(ValueError, match="needs snapshots"):
        baselines.load_config(config)


def test_a_config_that_continues_another_resumes_its_runs(tmp_path, monkeypatch):
    """`continues`: each seed starts from the other config's run where it kept its optimizer
    (a copy: that run stays as it was), else from scratch; a config that differs in its
    [train] or does not raise the budget is refused. train_ppo's --resume itself:
    tests/test_training.py."""
    configs = tmp_path / "configs"
    configs.mkdir()
    first = (ROOT / "tests" / "data" / "ppo_small_room_tiny.toml").read_text()
    (configs / "tiny.toml").write_text(first)
    longer = 'continues = "tiny"\n' + first.replace("8192", "16384")
    (configs / "tiny_longer.toml").write_text(longer)
    monkeypatch.setattr(baselines, "ROOT", tmp_path)  # run directories under tmp_path/out
    config = baselines.load_config(configs / "tiny_longer.toml")
    started = baselines.run_dir({"name": "tiny"}, 1)
    started.mkdir(parents=True)
    torch.save({"model": {}, "optimizer": {}}, started / "checkpoint.pt")
    (started / "episodes.csv").write_text("global_step\n8192\n")
    commands = []
    monkeypatch.setattr(baselines.subprocess, "run", lambda argv, check: commands.append(argv))
    baselines.train(config, 1)
    baselines.train(config, 2)  # no run of seed 2 to continue
    resumed = baselines.run_dir(config, 1)
    assert commands[0][-2:] == ["--resume", str(resumed / "checkpoint.pt")]
    assert (resumed / "episodes.csv").read_text() == (started / "episodes.csv").read_text()
    assert "--resume" not in commands[1] and (started / "checkpoint.pt").exists()
    for wrong in (longer.replace("16384", "8192"), longer.replace("obs_size = 24", "obs_size = 32"),
                  longer.replace('"tiny"', '"nowhere"')):
        (configs / "wrong.toml").write_text(wrong)
        with pytest.raises(ValueError, match="continues"):
            baselines.load_config(configs / "wrong.toml")


def test_a_seed_stopped_short_of_its_budget_resumes_and_is_not_scored_before(tmp_path,
                                                                          monkeypatch, capsys):
    """--max-wall-time: a seed whose checkpoint is short of the config's budget resumes there
    on its next training, and the row waits for it; a finished run or one of another budget
    trains from scratch, and a seed done is not trained again in sittings; on a machine without
    the runs, a sitting resumes them from baselines/sittings/, which the row's scoring empties
    (a seed it gains later is packed alone); a config of another trainer is refused.
    train_ppo's --max-wall-time and --resume themselves: tests/test_training.py."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny.toml").write_text(
        (ROOT / "tests" / "data" / "ppo_small_room_tiny.toml").read_text())
    monkeypatch.setattr(baselines, "ROOT", tmp_path)  # run directories under tmp_path/out
    config = baselines.load_config(configs / "tiny.toml")
    checkpoint = baselines.run_dir(config, 1) / "checkpoint.pt"

    def stopped_at(update: int, budget: int = 8192, seed: int = 1) -> None:
        # the tiny config: 2 envs x 2 agents x 64 steps, 256 agent steps an update, 32 updates
        path = baselines.run_dir(config, seed) / "checkpoint.pt"
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"args": {"total_timesteps": budget}, "global_step": 256 * update,
                    "update": update}, path)
    commands = []
    monkeypatch.setattr(baselines.subprocess, "run", lambda argv, check: commands.append(argv))
    stopped_at(5)
    baselines.train(config, 1, max_wall_time=60)
    assert commands[-1][-4:] == ["--max-wall-time", "60", "--resume", str(checkpoint)]
    rows = tmp_path / "rows"
    monkeypatch.setattr(sys, "argv", ["baselines.py", str(configs / "tiny.toml"),
                                      "--out", str(rows), "--max-wall-time", "60"])
    assert baselines.main() == 0 and not (rows / "results.json").exists()
    assert commands[-1][-2:] == ["--resume", str(checkpoint)]
    for update, budget in ((32, 8192), (5, 4096)):
        stopped_at(update, budget)
        baselines.train(config, 1)
        assert "--resume" not in commands[-1]
    stopped_at(32)  # seed 1 done, seed 2 short: the next sitting trains seed 2 alone
    stopped_at(5, seed=2)
    kept = {seed: baselines.run_dir(config, seed) for seed in (1, 2)}
    for where in kept.values():
        (where / "updates.csv").write_text("update\n5\n")
    monkeypatch.setattr(sys, "argv", ["baselines.py", str(configs / "tiny.toml"), "--seeds",
                                      "1", "2", "--out", str(rows), "--max-wall-time", "60"])
    trained = len(commands)
    assert baselines.main() == 0 and not (rows / "results.json").exists()
    assert [c[c.index("--seed") + 1] for c in commands[trained:]] == ["2"]
    # each sitting packs the runs that trained since the last one (seed 1 done is not)
    packed = baselines.sitting(config, 1).read_bytes()
    stopped_at(6, seed=2)  # as seed 2's training leaves it
    time.sleep(1.1)  # a second later (gzip's header keeps a time in seconds)
    assert baselines.main() == 0 and baselines.sitting(config, 1).read_bytes() == packed
    # a fresh machine (out/ gone) resumes each seed from what the last sitting kept
    shutil.rmtree(tmp_path / "out")
    trained = len(commands)
    assert baselines.main() == 0
    assert [c[c.index("--seed") + 1] for c in commands[trained:]] == ["2"]
    assert commands[-1][-2:] == ["--resume", str(kept[2] / "checkpoint.pt")]
    assert torch.load(kept[2] / "checkpoint.pt")["update"] == 6
    assert all((where / "updates.csv").read_text() == "update\n5\n" for where in kept.values())
    stopped_at(32, seed=2)  # every seed done: the row is scored and its sittings removed
    rows.mkdir()
    monkeypatch.setattr(baselines, "score", lambda *_: {
        "name": "tiny", "seeds": [1, 2], "budget_agent_steps": 8192, "return_mean": 0,
        "return_ci95": [0, 0], "random_return_mean": 0, "checkpoint": ""})
    for name in ("scenario_scores", "table", "write_docs_table", "plot"):
        monkeypatch.setattr(baselines, name, lambda *_: "")
    assert baselines.main() == 0 and not any((tmp_path / "baselines").rglob("*.tar.gz"))
    # a seed the row gains later trains in sittings; the row's scored seeds are not packed
    stopped_at(5, seed=3)
    monkeypatch.setattr(sys, "argv", ["baselines.py", str(configs / "tiny.toml"), "--seeds",
                                      "3", "--out", str(rows), "--max-wall-time", "60"])
    assert baselines.main() == 0
    assert [p.name for p in (tmp_path / "baselines").rglob("*.tar.gz")] == ["seed3.tar.gz"]
    ippo = ROOT / "baselines" / "configs" / "ippo_spiders_attack.toml"
    monkeypatch.setattr(sys, "argv", ["baselines.py", str(ippo), "--max-wall-time", "60"])
    with pytest.raises(SystemExit):
        baselines.main()
    assert "only ppo configs resume, not 'ippo'" in capsys.readouterr().err


def test_xlands_row_trains_on_the_train_split_and_scores_on_the_held_out_one():
    """The config's eval_task_options go over the task options of the checkpoint's training
    for the evaluation, the policy's and the random one's."""
    config = baselines.load_config(ROOT / "baselines" / "configs" / "ppo_xland_trivial.toml")
    argv = baselines.trainer_options(config, 1)
    assert argv[argv.index("--task-options") + 1] == '{"split": "train"}'
    trained = {"args": {"task": "xland", "num_agents": 1, "max_cycles": 243, "obs_size": 48,
                        "frameskip": 1, "task_options": '{"split": "train"}'}}
    assert baselines.eval_env_options(config, trained)["task_options"] == {"split": "held-out"}


def test_the_docs_table_is_the_rows_table():
    """docs/baselines.md shows results.json as benchmarks/baselines.py writes it."""
    page = (ROOT / "docs" / "baselines.md").read_text()
    start, end = (page.index(mark) for mark in baselines.TABLE_MARKS)
    assert page[start + len(baselines.TABLE_MARKS[0]) + 1:end] == baselines.table(ROWS)
    assert (ROOT / "baselines" / "results.md").read_text() == baselines.table(ROWS)


def test_a_seed_trained_elsewhere_keeps_what_its_row_kept():
    """A seed without its run directory (out/ is not committed) is the row's figures: a
    row gains a seed on another machine; a seed the row never had is an error."""
    config = {"name": "no_such_run", "task": "small_room", "budget_agent_steps": 100,
              "eval_episodes": 2, "eval_seed": 0, "train": {"num_agents": 2}}
    earlier = {"wall_time_s_per_seed": {"1": 60.0}, "curve": {"per_seed": {"1": [0.5, 1.0]}},
               "episode_returns_per_seed": {"1": [1.0, 2.0]}}
    assert not baselines.run_dir(config, 1).exists()
    assert baselines.seed_figures(config, 1, earlier) == {
        "wall_time": 60.0, "returns": [1.0, 2.0], "curve": [0.5, 1.0]}
    with pytest.raises(SystemExit, match="seed 2: .* train it"):
        baselines.seed_figures(config, 2, earlier)


def test_results_hold_every_promised_field_and_file():
    assert ROWS, "baselines/results.json has no row"
    for row in ROWS:
        assert ROW_KEYS | {"observations"} <= set(row), row.get("name")
        assert (ROOT / row["checkpoint"]).is_file() and (ROOT / row["config"]).is_file()
        config = tomllib.loads((ROOT / row["config"]).read_text())
        assert (row["task"], row["algorithm"], row["budget_agent_steps"]) == (
            config["task"], config["algorithm"], config["budget_agent_steps"])
        low, high = row["return_ci95"]
        assert low <= row["return_mean"] <= high and len(row["seeds"]) >= 1
        # small enough to ship in the repository
        assert (ROOT / row["checkpoint"]).stat().st_size < 2_000_000


@pytest.mark.engine
@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_each_shipped_policy_loads_fits_its_task_and_plays(row):
    """An episode of the row's evaluation: in its eval_scenario, or its task cut to 30 steps
    (evaluate() checks the policy's spaces against the env's first)."""
    where = ({"scenarios": [row["eval_scenario"]]} if "eval_scenario" in row
             else {"task": row["task"], "max_cycles": 30})
    [played] = evaluate(ROOT / row["checkpoint"], episodes=1, seed=row["eval_seed"], **where)
    assert played["episodes"] == 1 and math.isfinite(row_score(played))


@pytest.mark.engine
def test_a_row_plays_from_the_shell_with_its_evaluate_args():
    played = evaluate_row(ROWS[0], 1)
    assert played["task"] == ROWS[0]["task"] and played["episodes"] == 1
    assert math.isfinite(played["mean_return"])


@pytest.mark.engine
def test_each_shipped_policy_is_a_named_background_bot():
    """<task>.<row name> is a bot training may draw; one plays a background slot
    of a scenario of its task (a short one) beside a random focal player."""
    for row in ROWS:
        assert f"{row['task']}.{row['name']}" in bots(row["task"])
    row = ROWS[0]
    name = f"{row['task']}.{row['name']}"
    mine = Scenario("with_a_baseline", row["task"], 2, (True, False), ("default", "default"),
                    {"default": (name,)}, {"visitor"}, "a baseline in the background",
                    max_cycles=20)
    options = env_options(torch.load(ROOT / row["checkpoint"], weights_only=False))
    [result] = evaluate("random", scenarios=[mine], episodes=1, obs_size=options["obs_size"])
    assert result["episodes"] == 1 and math.isfinite(result["background_per_capita_return"])


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_each_shipped_policy_scores_what_its_row_says(row):
    played = evaluate_row(row, row["eval_episodes"])
    assert row_score(played) == pytest.approx(
        row["return_per_seed"][str(row["checkpoint_seed"])], abs=1e-3)


@pytest.mark.engine
@pytest.mark.slow
def test_a_policy_beside_frameless_bots_scores_the_same_in_every_run(tmp_path):
    """A shipped policy's scenario scoring, bit for bit: commons_harvest_0 (6 focal players
    acting on their frames, 2 frameless greedy bots), every player's return in every
    episode, on a loaded machine. Without engine patch 0026, 12 such scorings gave two
    scores (9.17 nine times, 9.03 three times: an apple regrown at step 40 of episode 1004
    showed a step late, or not)."""
    policy = ROOT / "baselines" / "ippo_commons_harvest.pt"
    runs = []
    with testing.another_engine_run():
        for k in range(2):
            evaluate(policy, scenarios=["commons_harvest_0"], seed=1000, episodes=5,
                     records=tmp_path / f"{k}.jsonl")
            runs.append((tmp_path / f"{k}.jsonl").read_text().splitlines())
    assert len(runs[0]) == 5 and runs[0] == runs[1]
