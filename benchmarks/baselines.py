"""Baselines: a config's algorithm trained on its task, one run per seed within a fixed budget
of agent steps; each seed's policy and a uniformly random one scored on the same evaluation
episodes; the row recorded in baselines/results.json (and its table, results.md) and the best
seed's policy shipped, then scored as the focal population of its task's scenarios.

    .venv/bin/python benchmarks/baselines.py baselines/configs/ppo_commons_harvest.toml
    .venv/bin/python benchmarks/baselines.py CONFIG --seeds 2 3     # more seeds of a row
    .venv/bin/python benchmarks/baselines.py CONFIG --eval-only     # score the trained seeds again
    .venv/bin/python benchmarks/baselines.py CONFIG --scenarios-only  # its scenarios again
    .venv/bin/python benchmarks/baselines.py CONFIG --max-wall-time 5400  # train in sittings

A config (TOML, committed; docs/baselines.md) names the task, the algorithm ("ppo":
examples/train_ppo.py, CleanRL's single file; "ippo", "mappo": BenchMARL's, through
examples/train_benchmarl.py), the seeds, the budget (agent steps), the
evaluation (episodes, first seed) and the trainer's options under [train]. Each seed trains
into out/baselines/<config>/seed<k>/ (the trainer's episodes.csv, updates.csv and
checkpoint.pt), then plays the evaluation's episodes with `craftium_ma.evaluate(checkpoint,
task=...)`, in the env of its training, actions sampled; the random policy plays the same
seeds in the same env. The row keeps, per seed, the evaluation's mean return per agent and
the training curve (the mean return per agent of the episodes that ended in each 5 % of the
budget); its return_mean is the mean over seeds, return_ci95 a two-level bootstrap interval
(seeds resampled, then each seed's episodes), as rliable's stratified bootstrap. The best
seed's model (without its optimizer state or frozen opponent) goes to
baselines/<config>.pt, which
`craftium-ma evaluate baselines/<config>.pt --task TASK --episodes N --json` plays. It then
plays the focal slots of its task's scenarios (docs/scenarios.md) on the episodes of their
reference scores, at its own frame size and the scenarios' frameskip (1), and the row keeps
each focal per-capita return beside the random and scripted references and the task's
normalised score (--scenarios-only does this part alone).
docs/img/baselines.png shows every row's curve, a panel per task, the mean over seeds with
a 95 % bootstrap interval.

A competitive task trained in self-play (its agents share one policy) returns 0 per agent on
average in its own env, so its config names an `eval_scenario` (duel_0: one focal player
against a scripted fighter): each policy, the random one too, is scored as that scenario's
focal population (focal per-capita return), and the curve is the same score of the
trainer's snapshots (`snapshots` under [train]) instead of the training episodes' returns.

A seed whose run directory is gone (out/ is not committed) keeps what the row kept of it:
its evaluation's returns per episode, its curve and wall time, so `--seeds 4` adds a seed to
a row trained elsewhere (a row of another budget is not kept). The table goes to results.md
and, between its marks, to docs/baselines.md.

A config's `eval_task_options` go over the task options of the evaluation's env (the
policy's and the random one's; the row's evaluate_args pass them on): xland trains on the
rulesets of split "train" and is scored on those of split "held-out".

A ppo config that `continues` another (the same task and [train], a larger budget) resumes
each seed's run of that config, copied with its optimizer and logs, to its own budget
(train_ppo --resume); a seed without such a run trains from scratch.

A ppo seed can take longer than one sitting: `--max-wall-time S` stops each seed's training
after S seconds (train_ppo's checkpoint, with its optimizer) and scores nothing while a seed
is short of the budget; the same command again resumes each such seed where it stopped, and
leaves a seed already done as it is. Until the row is scored, each seed's run directory is
also kept in baselines/sittings/<config>/seed<k>.tar.gz (committed: out/ is per machine), from
which a sitting on another machine restores it; the row's scoring removes them.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import gzip
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

import matplotlib
import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import measure  # noqa: E402

from craftium_ma import evaluate, scenario, scenarios  # noqa: E402
from craftium_ma.evaluation import normalised, reference_scores  # noqa: E402
from craftium_ma.models import env_options, observation_names  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BASELINES = ROOT / "baselines"  # results.json and the shipped policies
FIGURE = ROOT / "docs" / "img" / "baselines.png"
DOCS = ROOT / "docs" / "baselines.md"  # its table, between these two lines, is results.md's
TABLE_MARKS = ("<!-- the table of baselines/results.md (benchmarks/baselines.py writes it) -->",
               "<!-- end of the table -->")
# each algorithm's trainer command: the same options, its own script
TRAINERS = {"ppo": [str(ROOT / "examples" / "train_ppo.py")],  # script, then its options
            **{a: [str(ROOT / "examples" / "train_benchmarl.py"), "--algorithm", a]
               for a in ("ippo", "mappo")}}
CURVE_BINS = 20
RESAMPLES = 10_000
REFERENCE_SEED = 1000  # the first episode seed of the scenarios' reference scores


def load_config(path: Path) -> dict:
    config = tomllib.loads(path.read_text())
    missing = [k for k in ("task", "algorithm", "seeds", "budget_agent_steps", "eval_episodes",
                           "eval_seed", "train") if k not in config]
    if missing:
        raise ValueError(f"{path}: the config lacks {', '.join(missing)}")
    if "eval_scenario" in config:
        scenario(config["eval_scenario"])  # an unknown name is an error now, not after training
        if not config["train"].get("snapshots"):
            raise ValueError(f"{path}: an eval_scenario's curve needs snapshots under [train]")
    if config["algorithm"] not in TRAINERS:
        raise ValueError(f"{path}: unknown algorithm {config['algorithm']!r}; "
                         f"known: {sorted(TRAINERS)}")
    if "continues" in config:
        earlier = path.parent / f"{config['continues']}.toml"
        if not earlier.exists():
            raise ValueError(f"{path}: continues {config['continues']!r}, but {earlier} "
                             f"does not exist")
        earlier = tomllib.loads(earlier.read_text())
        same = {k: earlier.get(k) == config.get(k) for k in ("task", "algorithm", "train")}
        if config["algorithm"] != "ppo" or not all(same.values()) \
                or earlier["budget_agent_steps"] >= config["budget_agent_steps"]:
            raise ValueError(f"{path}: continues {config['continues']!r}, which must be a "
                             f"ppo config of the same task and [train] and a smaller budget")
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return config | {"name": path.stem, "path": str(where)}


def run_dir(config: dict, seed: int) -> Path:
    return ROOT / "out" / "baselines" / config["name"] / f"seed{seed}"


def trainer_options(config: dict, seed: int) -> list[str]:
    """The command-line options of the config's trainer for one seed (after its script)."""
    argv = [*TRAINERS[config["algorithm"]][1:], "--task", config["task"], "--seed", str(seed),
            "--total-timesteps", str(config["budget_agent_steps"]),
            "--run-name", f"{config['name']}_seed{seed}", "--out-dir", str(run_dir(config, seed)),
            "--quiet"]
    for key, value in config["train"].items():
        flag = key.replace("_", "-")
        if isinstance(value, bool):  # argparse's BooleanOptionalAction: --flag, --no-flag
            argv.append(f"--{flag}" if value else f"--no-{flag}")
        else:
            argv += [f"--{flag}", json.dumps(value) if isinstance(value, dict) else str(value)]
    return argv


def budget_state(config: dict, seed: int) -> str | None:
    """Where the seed's ppo run of this config stands against the config's budget: "short"
    (stopped by --max-wall-time: one more update would still fit), "done", or None (no run
    of this budget)."""
    path = run_dir(config, seed) / "checkpoint.pt"
    if config["algorithm"] != "ppo" or not path.exists():
        return None
    saved = torch.load(path, map_location="cpu", weights_only=False)
    budget, steps, updates = (saved["args"]["total_timesteps"], saved["global_step"],
                              saved["update"])
    if budget != config["budget_agent_steps"]:
        return None
    return "short" if steps + steps // updates <= budget else "done"


def sitting(config: dict, seed: int) -> Path:
    """Where a seed's run directory is kept between sittings, for any machine."""
    return ROOT / "baselines" / "sittings" / config["name"] / f"seed{seed}.tar.gz"


def keep_sitting(config: dict, seed: int) -> None:
    """The seed's run directory, packed reproducibly: a seed not trained since is packed
    into the same bytes (the file is committed; each change of it is a new blob)."""
    sitting(config, seed).parent.mkdir(parents=True, exist_ok=True)
    with open(sitting(config, seed), "wb") as file, \
            gzip.GzipFile("", "wb", fileobj=file, mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w") as tar:
        tar.add(run_dir(config, seed), arcname=".")


def restore_sitting(config: dict, seed: int) -> None:
    """The seed's kept run directory, where this machine has none."""
    if sitting(config, seed).exists() and not (run_dir(config, seed) / "checkpoint.pt").exists():
        with tarfile.open(sitting(config, seed)) as tar:
            tar.extractall(run_dir(config, seed), filter="data")


def train(config: dict, seed: int, max_wall_time: float = 0) -> None:
    """One seed's training, a process of its own, into run_dir(config, seed), for at most
    max_wall_time seconds (0: no limit). A seed that stopped short of the budget resumes where
    it stopped. A config that `continues` another (a smaller budget, the same [train]) starts
    from that config's run of the seed where it is here, its checkpoint, optimizer and logs;
    else from scratch."""
    argv = [sys.executable, TRAINERS[config["algorithm"]][0], *trainer_options(config, seed)]
    if max_wall_time:
        argv += ["--max-wall-time", str(max_wall_time)]
    if budget_state(config, seed) == "short":
        argv += ["--resume", str(run_dir(config, seed) / "checkpoint.pt")]
    elif "continues" in config:
        start, here = run_dir({"name": config["continues"]}, seed), run_dir(config, seed)
        shutil.rmtree(here, ignore_errors=True)
        checkpoint = start / "checkpoint.pt"
        if checkpoint.exists() and "optimizer" in torch.load(checkpoint, weights_only=False):
            shutil.copytree(start, here)
            argv += ["--resume", str(here / "checkpoint.pt")]
    subprocess.run(argv, check=True)


def eval_env_options(config: dict, checkpoint: dict) -> dict:
    """The env options of the evaluation: those of the checkpoint's training, with the
    config's eval_task_options over its task options (xland: split = "held-out")."""
    options = env_options(checkpoint)
    if "eval_task_options" in config:
        options["task_options"] = options.get("task_options", {}) | config["eval_task_options"]
    return options


def episode_returns(policy, config: dict, **env_kwargs) -> list[float]:
    """The mean return per agent of each evaluation episode of `policy` (in the config's
    eval_scenario: the focal per-capita return, in the scenario's own env)."""
    where = ({"scenarios": [config["eval_scenario"]]} if "eval_scenario" in config
             else {"task": config["task"], **env_kwargs})
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "episodes.jsonl"
        evaluate(policy, episodes=config["eval_episodes"], seed=config["eval_seed"],
                 records=records, **where)
        lines = [json.loads(line) for line in records.read_text().splitlines()]
    if "eval_scenario" in config:
        return [line["focal_per_capita_return"] for line in lines]
    return [float(np.mean(list(line["returns"].values()))) for line in lines]


def curve_steps(config: dict, seed: int) -> list[int]:
    """Where a curve's points lie: the end of each bin, or each snapshot's agent steps."""
    if "eval_scenario" in config:
        return sorted(int(p.stem.split("_")[1])
                      for p in run_dir(config, seed).glob("snapshot_*.pt"))
    return [round(x) for x in np.linspace(0, config["budget_agent_steps"], CURVE_BINS + 1)[1:]]


def curve(config: dict, seed: int) -> list[float | None]:
    """The training's mean return per agent of the episodes that ended in each bin; in an
    eval_scenario, each snapshot's mean score there."""
    if "eval_scenario" in config:
        return [round(float(np.mean(episode_returns(
            run_dir(config, seed) / f"snapshot_{steps}.pt", config))), 4)
            for steps in curve_steps(config, seed)]
    return binned_returns(run_dir(config, seed) / "episodes.csv", config["budget_agent_steps"],
                          CURVE_BINS, config["train"]["num_agents"])


def binned_returns(episodes_csv: Path, budget: int, bins: int,
                   agents: int = 1) -> list[float | None]:
    """The mean return per agent of a training run's episodes (train_ppo's episodes.csv) that
    ended in each of `bins` equal parts of `budget` agent steps (later ones in the last part);
    None for a part where none ended."""
    edges = np.linspace(0, budget, bins + 1)
    with open(episodes_csv) as f:
        rows = list(csv.DictReader(f))
    steps = np.array([float(r["global_step"]) for r in rows])
    returns = np.array([float(r["return_team"]) / agents for r in rows])
    which = np.clip(np.digitize(steps, edges) - 1, 0, bins - 1)
    return [float(returns[which == b].mean()) if (which == b).any() else None
            for b in range(bins)]


def two_level_ci(per_seed: list[list[float]], rng) -> list[float]:
    """95 % interval of the mean over seeds: seeds resampled, then each one's episodes."""
    means = np.empty(RESAMPLES)
    for k in range(RESAMPLES):
        seeds = rng.integers(len(per_seed), size=len(per_seed))
        means[k] = np.mean([rng.choice(per_seed[s], len(per_seed[s])).mean() for s in seeds])
    return [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)]


def ship(config: dict, seed: int, out: Path) -> str:
    """The seed's model without what only its training needs (the optimizer state, a frozen
    opponent and its league), as <out>/<config>.pt."""
    checkpoint = torch.load(run_dir(config, seed) / "checkpoint.pt", weights_only=False)
    for key in ("optimizer", "opponent", "league"):
        checkpoint.pop(key, None)
    path = out / f"{config['name']}.pt"
    torch.save(checkpoint, path)
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def seed_figures(config: dict, seed: int, earlier: dict | None, **env_kwargs) -> dict:
    """One seed's wall time, evaluation returns and curve: from its run directory where it
    has them (out/ is not committed), else as its earlier row kept them."""
    where, key = run_dir(config, seed), str(seed)
    kept = earlier or {}
    kept_returns = kept.get("episode_returns_per_seed", {}).get(key)
    kept_curve = kept.get("curve", {}).get("per_seed", {}).get(key)
    if (where / "checkpoint.pt").exists():
        checkpoint = torch.load(where / "checkpoint.pt", weights_only=False)
        wall_time = float(checkpoint["wall_time"])
        returns = episode_returns(where / "checkpoint.pt", config, **env_kwargs)
    elif kept_returns is not None:
        wall_time, returns = kept["wall_time_s_per_seed"][key], kept_returns
    else:
        raise SystemExit(f"seed {seed}: no {where / 'checkpoint.pt'} and no earlier returns "
                         f"of it in results.json; train it (--seeds {seed})")
    has_curve = (any(where.glob("snapshot_*.pt")) if "eval_scenario" in config
                 else (where / "episodes.csv").exists())
    if not has_curve and kept_curve is None:
        raise SystemExit(f"seed {seed}: {where} holds no training curve")
    return {"wall_time": wall_time, "returns": [round(r, 4) for r in returns],
            "curve": curve(config, seed) if has_curve else kept_curve}


def score(config: dict, seeds: list[int], earlier: dict | None, out: Path) -> dict:
    """The config's row from its trained seeds (those of an earlier row as it kept them)."""
    trained = [s for s in seeds if (run_dir(config, s) / "checkpoint.pt").exists()]
    model = (run_dir(config, trained[0]) / "checkpoint.pt" if trained
             else ROOT / earlier["checkpoint"])
    checkpoint = torch.load(model, weights_only=False)
    options = eval_env_options(config, checkpoint)
    given = {"task_options": options["task_options"]} if "eval_task_options" in config else {}
    figures = {s: seed_figures(config, s, earlier, **given) for s in seeds}
    per_seed = {s: f["returns"] for s, f in figures.items()}
    random = episode_returns("random", config, **options)
    # the best of the seeds whose policy is here: trained here, or shipped by the earlier row
    have = set(trained) | ({earlier["checkpoint_seed"]} if earlier else set())
    best = max(have & set(seeds), key=lambda s: np.mean(per_seed[s]))
    shipped = ship(config, best, out) if best in trained else earlier["checkpoint"]
    rng = np.random.default_rng(0)
    return {
        "name": config["name"], "config": config["path"], "task": config["task"],
        "algorithm": config["algorithm"], "seeds": seeds,
        "budget_agent_steps": config["budget_agent_steps"],
        "wall_time_s": round(float(np.mean([f["wall_time"] for f in figures.values()])), 1),
        "wall_time_s_per_seed": {str(s): round(f["wall_time"], 1) for s, f in figures.items()},
        "machine": measure.machine(), "date": datetime.date.today().isoformat(),
        "eval_episodes": config["eval_episodes"], "eval_seed": config["eval_seed"],
        "return_mean": round(float(np.mean([np.mean(per_seed[s]) for s in seeds])), 4),
        "return_ci95": two_level_ci([per_seed[s] for s in seeds], rng),
        "return_per_seed": {str(s): round(float(np.mean(per_seed[s])), 4) for s in seeds},
        "episode_returns_per_seed": {str(s): per_seed[s] for s in seeds},
        "random_return_mean": round(float(np.mean(random)), 4),
        "random_return_ci95": two_level_ci([random], rng),
        "checkpoint": shipped, "checkpoint_seed": best,
        "observations": observation_names(checkpoint),
        "evaluate_args": ["--seed", str(config["eval_seed"]), *(
            ["--task-options", json.dumps(options["task_options"])] if given else [])],
        "curve": {"agent_steps": curve_steps(config, trained[0]) if trained
                  else earlier["curve"]["agent_steps"],
                  "per_seed": {str(s): f["curve"] for s, f in figures.items()}},
    } | {k: config[k] for k in ("eval_scenario", "eval_task_options") if k in config}


def scenario_scores(row: dict) -> dict | None:
    """The shipped policy as the focal population of its task's scenarios, on the episodes
    of their reference scores: each focal per-capita return with its interval beside the
    random and scripted references, and the task's normalised score (random 0, scripted 1)."""
    names = [n for n in scenarios() if scenario(n).task == row["task"]]
    if not names:
        return None
    references = reference_scores()
    results = evaluate(ROOT / row["checkpoint"], scenarios=names, seed=REFERENCE_SEED,
                       episodes=references[names[0]]["episodes"])
    return {"normalised": round(normalised(results)[row["task"]], 4), "per_scenario": {
        r["scenario"]: {"focal_per_capita_return": round(r["focal_per_capita_return"], 4),
                        "ci95": [round(x, 4) for x in r["focal_per_capita_return_ci95"]],
                        "random": references[r["scenario"]]["random"],
                        "scripted": references[r["scenario"]]["scripted"]}
        for r in results}}


def row_label(row: dict) -> str:
    """The task, where it is scored when that is not its own env as trained, and what the
    policy sees when that is not the frames alone."""
    where = ([f"in {row['eval_scenario']}"] if "eval_scenario" in row
             else [f"{k} {v}" for k, v in row.get("eval_task_options", {}).items()])
    if row["observations"] != ["rgb"]:
        where.append("sees " + ", ".join(row["observations"]))
    return f"{row['task']} ({'; '.join(where)})" if where else row["task"]


def table(rows: list[dict]) -> str:
    """results.md: one line per row."""
    lines = ["| task | algorithm | seeds | agent steps | wall time per seed (min) | return per "
             "agent (95 % interval) | per seed | random | in the scenarios (normalised) | "
             "shipped policy |",
             "| --- | --- | --- | ---: | ---: | --- | --- | ---: | ---: | --- |"]
    for r in rows:
        low, high = r["return_ci95"]
        d = 3 if max(abs(low), abs(high)) < 1 else 2  # xland's returns: 0.01 to 0.1
        per_seed = ", ".join(f"{v:.{d}f}" for v in r["return_per_seed"].values())
        # + 0.0: a normalised score that rounds to zero is 0.00, not -0.00
        in_scenarios = (f"{round(r['scenarios']['normalised'], 2) + 0.0:.2f}"
                        if r.get("scenarios") else "-")
        task = row_label(r)
        lines.append(f"| {task} | {r['algorithm']} | {len(r['seeds'])} | "
                     f"{r['budget_agent_steps']:,} | {r['wall_time_s'] / 60:.1f} | "
                     f"**{r['return_mean']:.{d}f}** [{low:.{d}f}, {high:.{d}f}] | {per_seed} | "
                     f"{r['random_return_mean']:.{d}f} | {in_scenarios} | `{r['checkpoint']}` |")
    return "\n".join(lines) + "\n"


def write_docs_table(page: Path, rows: list[dict]) -> None:
    """The page's table between TABLE_MARKS, replaced by the rows'."""
    text = page.read_text()
    start, end = (text.find(mark) for mark in TABLE_MARKS)
    if start < 0 or end < start:
        raise SystemExit(f"{page} lacks the lines that hold the table: {TABLE_MARKS}")
    page.write_text(text[:start + len(TABLE_MARKS[0])] + "\n" + table(rows) + text[end:])


def plot(rows: list[dict], figure: Path) -> None:
    """One panel per task: each row's curve, the mean over seeds with a 95 % bootstrap
    interval (a single seed: its curve alone), and the random policy's return."""
    tasks = sorted({r["task"] for r in rows})
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.8 * len(tasks), 3.6), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, task in zip(axes[0], tasks):
        for row in (r for r in rows if r["task"] == task):
            x = np.array(row["curve"]["agent_steps"]) / 1000
            runs = np.array([[np.nan if v is None else v for v in c]
                             for c in row["curve"]["per_seed"].values()])
            sees = "" if row["observations"] == ["rgb"] else f" ({row['observations'][0]})"
            budget = row["budget_agent_steps"]
            budget = f"{budget / 1e6:g}M" if budget >= 1e6 else f"{budget / 1e3:g}k"
            line, = ax.plot(x, np.nanmean(runs, axis=0), label=f"{row['algorithm'].upper()}"
                            f"{sees}, {len(runs)} seed{'s' * (len(runs) > 1)}, {budget}")
            if len(runs) > 1:  # the band in its line's colour (patches cycle colours apart)
                picks = rng.integers(len(runs), size=(RESAMPLES, len(runs)))
                boot = np.nanmean(runs[picks], axis=1)
                ax.fill_between(x, np.nanpercentile(boot, 2.5, axis=0),
                                np.nanpercentile(boot, 97.5, axis=0), alpha=0.25,
                                color=line.get_color())
        ax.axhline(np.mean([r["random_return_mean"] for r in rows if r["task"] == task]),
                   color="grey", ls="--", label="random")
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("agent steps (thousands)")
        where = {r["eval_scenario"] for r in rows if r["task"] == task and "eval_scenario" in r}
        ax.set_ylabel(f"focal return in {', '.join(sorted(where))}" if where
                      else "return per agent")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(figure, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", help="default: the config's")
    parser.add_argument("--eval-only", action="store_true", help="score the trained seeds again")
    parser.add_argument("--scenarios-only", action="store_true",
                        help="only score the row's shipped policy in its task's scenarios again")
    parser.add_argument("--out", type=Path, default=BASELINES, help="where results.json and "
                        "the shipped policies go (default: %(default)s)")
    parser.add_argument("--max-wall-time", type=float, default=0, metavar="S",
                        help="stop each seed's training after S seconds (ppo); the same "
                        "command again resumes it, and scores once every seed is done")
    parser.add_argument("--figure", type=Path, default=FIGURE, help="default: %(default)s")
    parser.add_argument("--docs", type=Path, default=DOCS,
                        help="the page whose table is rewritten (default: %(default)s)")
    args = parser.parse_args()
    config = load_config(args.config.resolve())
    if args.max_wall_time and config["algorithm"] != "ppo":
        parser.error(f"--max-wall-time: only ppo configs resume, not {config['algorithm']!r}")
    results = args.out / "results.json"

    def read_rows() -> list[dict]:
        return json.loads(results.read_text()) if results.exists() else []
    earlier = next((r for r in read_rows() if r["name"] == config["name"]), None)
    if earlier and not args.scenarios_only \
            and earlier["budget_agent_steps"] != config["budget_agent_steps"]:
        earlier = None  # another budget: its seeds are not this row's
    if args.scenarios_only:
        if earlier is None:
            raise SystemExit(f"{results} has no row {config['name']!r} yet")
        row = earlier
    else:
        asked = args.seeds or ([] if args.eval_only and earlier else config["seeds"])
        seeds = sorted({*asked, *(earlier["seeds"] if earlier else [])})
        for seed in seeds:
            restore_sitting(config, seed)
        if not args.eval_only:
            for seed in asked:
                # in sittings, a seed already done waits for the others, it is not run again
                if not (args.max_wall_time and budget_state(config, seed) == "done"):
                    train(config, seed, args.max_wall_time)
        states = {seed: budget_state(config, seed) for seed in seeds}
        if short := [seed for seed, state in states.items() if state == "short"]:
            scored = set(earlier["seeds"]) if earlier else set()  # results.json holds them
            for seed, state in states.items():
                if state and seed not in scored:  # short or done: a run of this budget
                    keep_sitting(config, seed)
            print(f"seeds {short} stopped short of {config['budget_agent_steps']} agent steps; "
                  f"run the command again to resume them (nothing scored; the row's runs kept "
                  f"in {sitting(config, short[0]).parent.relative_to(ROOT)}/)")
            return 0
        row = score(config, seeds, earlier, args.out)
        for seed in seeds:
            sitting(config, seed).unlink(missing_ok=True)
    row["scenarios"] = scenario_scores(row)
    rows = read_rows()  # others' rows as they are now; the row keeps its place
    names = [r["name"] for r in rows]
    place = names.index(config["name"]) if config["name"] in names else len(rows)
    rows[place:place + 1] = [row]
    results.write_text(json.dumps(rows, indent=1) + "\n")
    (args.out / "results.md").write_text(table(rows))
    write_docs_table(args.docs, rows)
    plot(rows, args.figure)
    print(json.dumps({k: row[k] for k in ("name", "return_mean", "return_ci95",
                                          "random_return_mean", "checkpoint")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
