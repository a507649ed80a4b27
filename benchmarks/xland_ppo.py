"""PPO (examples/train_ppo.py) on the trivial xland benchmark with an 80/20 split: mean return on
training and on held-out rulesets against a uniform random policy.

examples/train_ppo.py trains craftium_ma.models.ActorCritic; examples/evaluate.py runs the
checkpoint on each split.

The policy sees its frames only; the goal is painted into the top-left corner of every frame
(five 8 x 8 grey patches: goal id, a's tile and colour, b's tile and colour, grey level 23 x
value), as XLand-MiniGrid's agents get the goal as input. One agent, one room (`rooms = 1`),
`max_cycles` 64.

    .venv/bin/python benchmarks/xland_ppo.py --minutes 20 [--json out.json]

Writes out/ppo/xland_trivial/ (train_ppo's outputs) and docs/img/xland_ppo.png.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib
import numpy as np
from pettingzoo.utils import BaseParallelWrapper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import evaluate  # noqa: E402
import train_ppo  # noqa: E402

from craftium_ma.xland import load_benchmark  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TRAIN, TEST = load_benchmark("trivial-2008").shuffle(np.random.default_rng(0)).split(0.8)
SPLITS = {"train": TRAIN, "held-out": TEST}
PATCH = 8


def paint(frame: np.ndarray, goal) -> np.ndarray:
    """The frame with the goal vector painted into its top-left corner."""
    frame = frame.copy()
    for i, value in enumerate(goal):
        frame[:PATCH, i * PATCH:(i + 1) * PATCH] = min(255, 23 * int(value))
    return frame


class GoalInFrame(BaseParallelWrapper):
    """Each agent's goal vector painted into its frames (the evaluation's env)."""

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._goals = {a: np.asarray(infos[a]["goal"]) for a in infos}
        return self._paint(obs), infos

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._paint(obs), rewards, terminations, truncations, infos

    def _paint(self, obs):
        return {agent: paint(frame, self._goals[agent]) for agent, frame in obs.items()}


class TrainingPool(train_ppo.TrainingVecEnv):
    """train_ppo's pool on the training split, one room, each frame with its goal painted
    (the episode's goal of each env's agent, after the pool's same-step resets)."""

    def __init__(self, args):
        super().__init__(args, task_options={"benchmark": TRAIN, "rooms": 1})

    def observe(self, obs):
        goals = [goal for env in self.pool.envs for goal in env.world.goals]
        return np.stack([paint(frame, goal) for frame, goal in zip(obs, goals)])


def run(minutes: float, episodes: int) -> dict:
    out_dir = ROOT / "out" / "ppo" / "xland_trivial"
    train_ppo.make_vec_env = TrainingPool
    args = train_ppo.parse_args([
        "--task", "xland", "--num-agents", "1", "--max-cycles", "64", "--frameskip", "1",
        "--obs-size", "48", "--frame-stack", "1", "--num-envs", "4",
        "--total-timesteps", "1000000", "--reward-scale", "1.0", "--ent-coef", "0.02",
        "--max-wall-time", str(60 * minutes), "--run-name", "xland_trivial",
        "--out-dir", str(out_dir), "--seed", "1", "--quiet"])
    trained = train_ppo.train(args)
    results = {"train": {k: v for k, v in trained.items() if isinstance(v, (int, float, str))}}
    checkpoint = str(out_dir / "checkpoint.pt")
    for split in SPLITS:
        for policy in ("ppo", "random"):
            eval_args = evaluate.parse_args([checkpoint, "--episodes", str(episodes),
                                             "--seed", "50000", "--gif-episodes", "0", "--quiet",
                                             *(["--random"] if policy == "random" else [])])
            # one room of the split's rulesets, each frame with its goal painted
            r = evaluate.evaluate(eval_args, wrap=GoalInFrame,
                                  task_options={"benchmark": SPLITS[split], "rooms": 1})
            results[f"{split}/{policy}"] = {"mean": r["team"]["mean"], "std": r["team"]["std"],
                                            "mean_length": r["mean_length"]}
    return results


def plot(results: dict, path: Path) -> None:
    episodes = train_ppo.read_episodes(ROOT / "out" / "ppo" / "xland_trivial" / "episodes.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    steps, returns = episodes["global_step"], episodes["return_team"]
    left.plot(steps, returns, ".", alpha=0.15, markersize=3)
    left.plot(steps, train_ppo.rolling_mean(returns, 100), label="running mean (100)")
    left.set_xlabel("agent steps")
    left.set_ylabel("return (training rulesets)")
    left.legend()
    keys = [(split, policy) for split in SPLITS for policy in ("ppo", "random")]
    names = [f"{split}\n{policy}" for split, policy in keys]
    means = [results[f"{split}/{policy}"]["mean"] for split, policy in keys]
    stds = [results[f"{split}/{policy}"]["std"] for split, policy in keys]
    right.bar(names, means, yerr=stds, color=["C0", "C7", "C1", "C7"])
    right.set_ylabel("mean return")
    fig.suptitle("PPO on trivial-2008 (80/20 split), goal painted into the frame")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0, help="training wall time")
    parser.add_argument("--episodes", type=int, default=100, help="evaluation episodes each")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = run(args.minutes, args.episodes)
    plot(results, ROOT / "docs" / "img" / "xland_ppo.png")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
