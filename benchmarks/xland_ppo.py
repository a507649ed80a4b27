"""PPO (examples/train_ppo.py) on the trivial xland benchmark: trained on 80 % of trivial-21k's
rulesets, evaluated on those and on the held-out 20 % against a uniform random policy.

The task is xland_v1 (XLand-MiniGrid's step) with one agent in its default layout, R1-9x9
(one 9 x 9 room, 243 steps). The policy sees what --observations names, by default
XLand-MiniGrid's egocentric 5 x 5 symbolic view, the goal vector and the agent's direction
(the task declares it, as XLand-MiniGrid's DirectionObservationWrapper adds it;
craftium_ma.models' encoders), or the RGB frames instead of the view ("rgb,goal,direction").
It acts with XLand-MiniGrid's six actions (0-5, no no-op); the random policy draws uniformly
from the same six.

    .venv/bin/python benchmarks/xland_ppo.py --minutes 40 --seed 1
    .venv/bin/python benchmarks/xland_ppo.py --minutes 40 --seed 2          # adds a run
    .venv/bin/python benchmarks/xland_ppo.py --observations rgb,goal,direction --minutes 40
    .venv/bin/python benchmarks/xland_ppo.py --eval-only --seed 1           # evaluates again

Each run trains into out/ppo/<run> (train_ppo's outputs: episodes.csv, updates.csv,
checkpoint.pt; the learning rate anneals to 0 over SETTINGS' total_timesteps, --minutes stops
it earlier), then plays --episodes episodes of each split with the trained policy (actions
sampled from it; with --greedy also its most likely actions) and, once for all runs, with the
random policy. The episodes of a split are the same for every policy: one pool of --eval-envs
envs reset with seed EVAL_SEED, the first episodes of each env counted (its later resets draw
their seeds from the first, so the rulesets and layouts repeat). Mean returns come with a 95 %
bootstrap interval (10 000 resamples of the episodes), and the policy's minus random's on the
same episodes with one of the paired differences. --goals hold-near keeps the agent-hold and
agent-near rulesets only (410 of 21,000). Results are merged into
benchmarks/results/xland_ppo.json (runs by name, each with its training curve) and .md;
docs/img/xland_ppo.png shows the training return of every run whose curve the results keep
against agent steps, and the evaluation's means with their intervals.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import measure  # noqa: E402
import train_ppo  # noqa: E402

from craftium_ma.models import load_checkpoint  # noqa: E402
from craftium_ma.envs.xland_v1 import split_benchmark  # noqa: E402
from craftium_ma.xland import load_benchmark  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BENCHMARK = "trivial-21k"
# the xland task's split option: shuffled with seed 0, 80 % "train", 20 % "held-out"
TRAIN, TEST = (split_benchmark(load_benchmark(BENCHMARK), s) for s in ("train", "held-out"))
SPLITS = ("train", "held-out")
# --goals: the rulesets of each split kept (by goal id); "all" is the benchmark's
GOAL_SETS = {"all": None, "hold-near": (1, 3, 11, 12, 13, 14)}


def splits(goals: str = "all") -> dict:
    """{"train": Benchmark, "held-out": Benchmark}, only the rulesets of the goal set."""
    ids = GOAL_SETS[goals]
    if ids is None:
        return {"train": TRAIN, "held-out": TEST}
    return {name: bench.filter_split(lambda g, r: np.isin(g[:, 0], ids))[0]
            for name, bench in (("train", TRAIN), ("held-out", TEST))}


def random_key(goals: str) -> str:
    """Where results keep the random policy's evaluation on the goal set."""
    return "random" if goals == "all" else f"random_{goals}"
EVAL_SEED = 100_000  # the evaluation pool's first reset
NUM_ACTIONS = 6  # XLand-MiniGrid's: forward, turn right, turn left, pick up, put down, toggle
# the goal kinds of the trivial level (its goal ids), for the successes by kind
GOAL_KINDS = {"agent-hold": (1,), "agent-near": (3, 11, 12, 13, 14), "tile-near": (4,),
              "tile-near, directional": (7, 8, 9, 10)}
RESULTS = ROOT / "benchmarks" / "results" / "xland_ppo.json"
FIGURE = ROOT / "docs" / "img" / "xland_ppo.png"

# the training settings (train_ppo's options); --observations, --seed and --minutes vary
SETTINGS = {
    "task": "xland", "num_agents": 1, "max_cycles": 243, "frameskip": 1, "obs_size": 48,
    "frame_stack": 1, "num_actions": NUM_ACTIONS, "num_envs": 8, "num_steps": 256,
    "num_minibatches": 4, "update_epochs": 4, "learning_rate": 3e-4, "gamma": 0.99,
    "gae_lambda": 0.95, "ent_coef": 0.03, "reward_scale": 1.0, "total_timesteps": 1_100_000,
}


def run_name(observations: str, seed: int, goals: str = "all") -> str:
    suffix = "" if goals == "all" else f"_{goals}"
    return f"xland_trivial_{observations.replace(',', '_')}_s{seed}{suffix}"


def train(observations: str, seed: int, minutes: float, settings: dict,
          goals: str = "all") -> dict:
    """train_ppo on the training split for `minutes` of wall time; its summary."""
    name = run_name(observations, seed, goals)
    benchmark = splits(goals)["train"]
    argv = [f"--{k.replace('_', '-')}={v}" for k, v in settings.items()]
    argv += ["--observations", observations, "--seed", str(seed), "--run-name", name,
             "--out-dir", str(ROOT / "out" / "ppo" / name), "--max-wall-time", str(60 * minutes),
             "--save-interval", "20", "--quiet"]
    args = train_ppo.parse_args(argv)
    train_ppo.make_vec_env = lambda a: train_ppo.TrainingVecEnv(
        a, task_options={"benchmark": benchmark})
    return train_ppo.train(args)


def play(split: str, policy: str, episodes: int, num_envs: int, checkpoint: Path | None = None,
         observations: str = "symbolic,goal", goals: str = "all") -> dict:
    """`episodes` episodes of the split (rounded up to a multiple of num_envs) with `policy`:
    "random" (uniform over the six actions), "sampled" or "greedy" (the checkpoint's)."""
    if checkpoint is not None:
        model, ckpt = load_checkpoint(checkpoint)
        args = train_ppo.Args(**{**ckpt["args"], "num_envs": num_envs})
    else:
        model = None
        args = train_ppo.Args(**{**train_ppo.Args().__dict__, **SETTINGS, "num_envs": num_envs,
                                 "observations": observations})
    torch.set_num_threads(1)
    torch.manual_seed(EVAL_SEED)
    rng = np.random.default_rng(EVAL_SEED)
    per_env = -(-episodes // num_envs)
    returns = [[] for _ in range(num_envs)]
    lengths = [[] for _ in range(num_envs)]
    goal_ids = [[] for _ in range(num_envs)]  # each episode's goal id
    bench = splits(goals)[split]
    vec = train_ppo.TrainingVecEnv(args, task_options={"benchmark": bench})
    start = time.time()
    steps = 0
    try:
        obs, _ = vec.reset(seed=EVAL_SEED)
        tracker = train_ppo.EpisodeTracker(num_envs, 1)
        while min(map(len, returns)) < per_env:
            if model is None:
                actions = rng.integers(0, NUM_ACTIONS, num_envs)
            else:
                with torch.no_grad():
                    logits = model.logits(train_ppo.apply(torch.from_numpy, obs))
                actions = (logits.argmax(-1) if policy == "greedy"
                           else torch.distributions.Categorical(logits=logits).sample()).numpy()
            obs, rewards, terms, truncs, infos = vec.step(actions)
            steps += num_envs
            for e, length, rets in tracker.step(rewards, terms | truncs, infos["active"]):
                if len(returns[e]) < per_env:
                    returns[e].append(float(rets.sum()))
                    lengths[e].append(length)
                    goal_ids[e].append(int(infos["goal"][e][0]))
    finally:
        vec.close()
    r, n = np.array(returns).reshape(-1), np.array(lengths).reshape(-1)
    g = np.array(goal_ids).reshape(-1)
    lo, hi = bootstrap_ci(r)
    by_goal = {kind: {"episodes": int(np.isin(g, ids).sum()),
                      "success": float((r[np.isin(g, ids)] > 0).mean()) if np.isin(g, ids).any()
                      else None} for kind, ids in GOAL_KINDS.items()}
    return {"policy": policy, "split": split, "goals": goals, "rulesets": len(bench),
            "episodes": len(r), "mean": float(r.mean()),
            "ci95": [lo, hi], "std": float(r.std()), "success": float((r > 0).mean()),
            "mean_length": float(n.mean()), "by_goal": by_goal, "eval_seed": EVAL_SEED,
            "envs": num_envs,
            "agent_steps_per_s": round(steps / (time.time() - start), 1),
            "returns": [round(x, 6) for x in r.tolist()]}  # env-major: the same for every policy


def paired_difference(policy: dict, random: dict) -> dict | None:
    """The mean of policy - random over the same episodes (seeds) with its 95 % bootstrap
    interval; None without both policies' returns of the same episodes."""
    a, b = policy.get("returns"), random.get("returns")
    if a is None or b is None or len(a) != len(b):
        return None
    d = np.array(a) - np.array(b)
    lo, hi = bootstrap_ci(d)
    return {"mean": float(d.mean()), "ci95": [lo, hi]}


def bootstrap_ci(x: np.ndarray, resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """The 95 % percentile bootstrap interval of the mean of x."""
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), (resamples, len(x)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def training_stats(name: str) -> dict:
    """From a run's CSVs: steps/s, episodes, the return of its first and last 500 episodes,
    and the entropy of its last update."""
    out = ROOT / "out" / "ppo" / name
    episodes = train_ppo.read_episodes(out / "episodes.csv")
    updates = train_ppo.read_episodes(out / "updates.csv")
    ret = episodes["return_team"]
    k = min(500, len(ret) // 2)
    return {"episodes": len(ret), "agent_steps": int(updates["global_step"][-1]),
            "wall_s": float(updates["wall_time"][-1]),
            "agent_steps_per_s": round(updates["global_step"][-1] / updates["wall_time"][-1], 1),
            "rollout_steps_per_s_median": float(np.median(updates["sps"])),
            "return_first_500": float(ret[:k].mean()), "return_last_500": float(ret[-k:].mean()),
            "success_first_500": float((ret[:k] > 0).mean()),
            "success_last_500": float((ret[-k:] > 0).mean()),
            "entropy_first": float(updates["entropy"][0]),
            "entropy_last": float(updates["entropy"][-1])}


def curve(name: str, window: int = 500, points: int = 200) -> dict:
    """The run's training return (the mean of the last `window` episodes) at up to `points`
    agent steps, kept in the results so that the figure does not need out/."""
    episodes = train_ppo.read_episodes(ROOT / "out" / "ppo" / name / "episodes.csv")
    steps = np.asarray(episodes["global_step"][window - 1:])
    means = train_ppo.rolling_mean(episodes["return_team"], window)[window - 1:]
    keep = np.unique(np.linspace(0, len(steps) - 1, points).astype(int))
    return {"steps": steps[keep].tolist(), "return": [round(float(v), 5) for v in means[keep]]}


def plot(results: dict, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    for i, run in enumerate(results["runs"].values()):
        if "curve" not in run:  # a run trained before curves were kept in the results
            continue
        note = f", {run['label']}" if run.get("label") else ""
        left.plot(run["curve"]["steps"], run["curve"]["return"], color=f"C{i}",
                  label=f"{run['observations']}, seed {run['seed']}{note}")
    for key, ls in (("random", "--"), ("random_hold-near", ":")):
        if "train" in results.get(key, {}):
            left.axhline(results[key]["train"]["mean"], color="grey", ls=ls, lw=1,
                         label=f"{key.replace('_', ', goals ')}, training rulesets")
    left.set_xlabel("agent steps")
    left.set_ylabel("return, mean of the last 500 episodes")
    left.grid(alpha=0.3)
    left.legend(fontsize=8, loc="upper left")

    bars = []  # (label, stats, colour)
    for goals in GOAL_SETS:
        for split in SPLITS:
            if split in results.get(random_key(goals), {}):
                bars.append((f"random\n{split}\n{goals}", results[random_key(goals)][split],
                             "C7"))
            for i, run in enumerate(results["runs"].values()):
                if run.get("goals", "all") != goals:
                    continue
                for policy in ("sampled", "greedy"):
                    s = run.get("eval", {}).get(split, {}).get(policy)
                    if s:
                        bars.append((f"PPO s{run['seed']}\n{policy}\n{split}\n{goals}", s,
                                     f"C{i}" if policy == "sampled"
                                     else matplotlib.colors.to_rgba(f"C{i}", 0.5)))
    x = np.arange(len(bars))
    means = np.array([b[1]["mean"] for b in bars])
    err = np.array([[b[1]["mean"] - b[1]["ci95"][0], b[1]["ci95"][1] - b[1]["mean"]]
                    for b in bars]).T
    right.bar(x, means, yerr=err, color=[b[2] for b in bars], capsize=3)
    right.set_xticks(x, [b[0] for b in bars], fontsize=7)
    right.set_ylabel("mean return (95 % bootstrap interval)")
    right.grid(alpha=0.3, axis="y")
    fig.suptitle(f"PPO on xland {BENCHMARK} (R1-9x9, 1 agent): trained on 80 % of the "
                 "rulesets, evaluated on them and on the held-out 20 %")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def markdown(results: dict) -> str:
    lines = [f"# PPO on xland {BENCHMARK}", "",
             measure.machine_line(results) + " (this file's last invocation; each training "
             "run's own load is in its row below)", "",
             "| policy | observations | seed | training (agent steps, wall) | goals | split "
             "| episodes | mean return [95 % CI] | minus random, same episodes [95 % CI] "
             "| success | mean length |",
             "| --- | --- | ---: | --- | --- | --- | ---: | --- | --- | ---: | ---: |"]

    def row(policy, obs, seed, trained, s):
        lo, hi = s["ci95"]
        lines.append(f"| {policy} | {obs} | {seed} | {trained} | {s.get('goals', 'all')} "
                     f"| {s['split']} | {s['episodes']} | {s['mean']:.3f} [{lo:.3f}, {hi:.3f}] "
                     f"| {diff(s.get('minus_random'))} "
                     f"| {100 * s['success']:.1f} % | {s['mean_length']:.0f} |")

    def diff(d):
        return f"{d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]" if d else "-"

    for goals in GOAL_SETS:
        for split in SPLITS:
            if split in results.get(random_key(goals), {}):
                row("uniform random (0-5)", "-", "-", "-", results[random_key(goals)][split])
            for run in results["runs"].values():
                if run.get("goals", "all") != goals:
                    continue
                t = run.get("training", {})
                trained = (f"{t['agent_steps']:,}, {t['wall_s'] / 60:.0f} min" if t else "")
                for policy in ("sampled", "greedy"):
                    s = run.get("eval", {}).get(split, {}).get(policy)
                    if s:
                        row(f"PPO, {policy}", run["observations"], run["seed"], trained, s)
    lines += ["", "Training runs:", "",
              "| run | observations | lr | ent_coef | agent steps | wall (min) | agent steps/s "
              "| return, first / last 500 episodes | success, first / last 500 "
              "| entropy, first / last update | load average at its start |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: |"]
    for name, run in results["runs"].items():
        t, s = run.get("training"), run.get("settings", {})
        if not t:
            continue
        lines.append(f"| {name}{' (' + run['label'] + ')' if run.get('label') else ''} "
                     f"| {run['observations']} | {s.get('learning_rate', '')} "
                     f"| {s.get('ent_coef', '')} | {t['agent_steps']:,} | {t['wall_s'] / 60:.1f} "
                     f"| {t['agent_steps_per_s']:.0f} "
                     f"| {t['return_first_500']:.3f} / {t['return_last_500']:.3f} "
                     f"| {100 * t['success_first_500']:.1f} % "
                     f"/ {100 * t['success_last_500']:.1f} % "
                     f"| {t['entropy_first']:.2f} / {t['entropy_last']:.2f} "
                     f"| {run.get('machine', {}).get('load_average', [float('nan')])[0]:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", default="symbolic,goal,direction")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--goals", choices=list(GOAL_SETS), default="all",
                        help="train and evaluate on the rulesets of these goals only")
    parser.add_argument("--no-eval", action="store_true", help="record the training only")
    parser.add_argument("--minutes", type=float, default=40.0, help="training wall time")
    parser.add_argument("--episodes", type=int, default=320,
                        help="evaluation episodes per split and policy")
    parser.add_argument("--eval-envs", type=int, default=8)
    parser.add_argument("--eval-only", action="store_true",
                        help="evaluate the run's checkpoint without training")
    parser.add_argument("--greedy", action="store_true",
                        help="also evaluate the greedy policy (the most likely action)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="train_ppo settings other than SETTINGS' (e.g. learning_rate=1e-3)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--figure", type=Path, default=FIGURE)
    args = parser.parse_args()

    results = json.loads(args.results.read_text()) if args.results.exists() else {"runs": {}}
    results.update(machine=measure.machine_with_load(),
                   date=datetime.date.today().isoformat(),
                   setup={"benchmark": BENCHMARK, "split": "shuffled with seed 0, first 80 % "
                          "for training", "layout": "R1-9x9", "max_cycles": 243,
                          "eval_seed": EVAL_SEED, "num_actions": NUM_ACTIONS,
                          "torch": torch.__version__})
    settings = dict(SETTINGS)
    for item in args.set:
        key, value = item.split("=", 1)
        settings[key] = type(SETTINGS.get(key, ""))(value) if key in SETTINGS else value
    name = run_name(args.observations, args.seed, args.goals)
    run = results["runs"].setdefault(name, {})
    run.update(observations=args.observations, seed=args.seed, goals=args.goals)

    def save():
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=1) + "\n")
        args.results.with_suffix(".md").write_text(markdown(results))
        plot(results, args.figure)

    if not args.eval_only:
        run["settings"] = settings
        run["machine"] = measure.machine_with_load()  # at the start of its training
        summary = train(args.observations, args.seed, args.minutes, settings, args.goals)
        run["train_summary"] = {k: v for k, v in summary.items()
                                if isinstance(v, (int, float, str))}
    run["training"] = training_stats(name)
    run.setdefault("curve", curve(name))
    save()
    checkpoint = ROOT / "out" / "ppo" / name / "checkpoint.pt"
    random = results.setdefault(random_key(args.goals), {})
    for split in () if args.no_eval else SPLITS:
        if split not in random or random[split]["episodes"] < args.episodes or \
                "returns" not in random[split]:
            random[split] = play(split, "random", args.episodes, args.eval_envs,
                                 goals=args.goals)
            print(json.dumps(random[split]), flush=True)
            save()
        for policy in ("sampled",) + (("greedy",) if args.greedy else ()):
            s = play(split, policy, args.episodes, args.eval_envs, checkpoint, goals=args.goals)
            s["minus_random"] = paired_difference(s, random[split])
            run.setdefault("eval", {}).setdefault(split, {})[policy] = s
            print(json.dumps(s), flush=True)
            save()
    print(markdown(results))


if __name__ == "__main__":
    main()
