"""Why a baseline learns a task slowly or not at all: what a policy meets in the env of the
task's baseline config (baselines/configs/ppo_<task>.toml), per episode. The policy is
uniformly random, or with --policy a trained one (a checkpoint of examples/train_ppo.py,
in the env of its training, on the task's own reward).

- pressure_plates: the steps an agent stands on plate A, on plate B, and with the door open
  (both held), and whether an agent got through (the task's only reward);
- spiders_attack: the step the first agent dies (where a BenchMARL episode ends: TorchRL
  resets a parallel env when any agent is done), the episode's length, and the kills
  before and after that step;
- capture_the_flag: the steps each team carries the other's flag, both at once (neither
  can score then), and the flags each team scored.

    .venv/bin/python benchmarks/task_diagnostics.py --episodes 20
    .venv/bin/python benchmarks/task_diagnostics.py --tasks pressure_plates \
        --policy out/baselines/ppo_pressure_plates_distance_1m/seed3/checkpoint.pt --out F
    .venv/bin/python benchmarks/task_diagnostics.py --tasks capture_the_flag --policy F.pt

Writes benchmarks/results/task_diagnostics.json, or --out (each task's episodes and their
means); docs/baselines.md quotes them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

import numpy as np

import craftium_ma
from craftium_ma.policies import RandomPolicy, checkpoint_policy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import measure  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "task_diagnostics.json"
PLATES = {"a": (2, 2), "b": (5, 7)}  # (x, z) of pressure_plates' plates (docs/tasks/)
HOLD = 0.8  # an agent holds a plate within this of its node on x and z


def own_reward(task_options: dict) -> dict:
    """The task options without a training shaping (its field, say, but not its reward)."""
    return {k: v for k, v in task_options.items() if k != "reward"}


def random_player(task: str):
    """(the env of the task's baseline config on the task's own reward, a uniformly random
    policy of seed 0)."""
    options = tomllib.loads((ROOT / "baselines" / "configs" / f"ppo_{task}.toml").read_text())
    train = options["train"]
    env = craftium_ma.parallel_env(task, task_options=own_reward(train.get("task_options", {})),
                                   **{k: train[k] for k in (
                                       "num_agents", "max_cycles", "frameskip", "obs_size")})
    return env, RandomPolicy(env, seed=0)


def checkpoint_player(path: str, task: str):
    """(the env of the checkpoint's training on the task's own reward, its policy, actions
    sampled with seed 0)."""
    policy, options = checkpoint_policy(path, task, seed=0)
    options["task_options"] = own_reward(options.get("task_options", {}))
    return craftium_ma.parallel_env(task, observations=policy.observations, **options), policy


def play_step(env, policy, observations):
    """One step of every agent's action from its observation."""
    return env.step({a: policy(a, observations[a], {}) for a in env.agents})


def pressure_plates_episode(env, seed: int, policy) -> dict:
    observations, _ = env.reset(seed=seed)
    held = {"plate_a": 0, "plate_b": 0, "door_open": 0}
    steps = solved = 0
    while env.agents:
        observations, rewards, *_ = play_step(env, policy, observations)
        state = env.state()
        xz = state[1:].reshape(-1, 3)[:, :2]
        for plate, at in PLATES.items():
            held[f"plate_{plate}"] += int((np.abs(xz - at) < HOLD).all(1).any())
        held["door_open"] += int(state[0] > 0)
        steps += 1
        solved = solved or any(r > 0 for r in rewards.values())
    return {"steps": steps, **held, "solved": int(solved)}


def spiders_attack_episode(env, seed: int, policy) -> dict:
    observations, _ = env.reset(seed=seed)
    steps = kills = 0
    first_death, kills_before = None, 0
    while env.agents:
        observations, rewards, terminations, *_ = play_step(env, policy, observations)
        steps += 1
        if first_death is None:
            kills_before = kills  # this step's kills come with or after the death
        kills += sum(rewards.values())
        if first_death is None and any(terminations.values()):
            first_death = steps
    return {"steps": steps, "first_death": first_death or steps, "kills": kills,
            "kills_before_first_death": kills_before}


def capture_the_flag_episode(env, seed: int, policy) -> dict:
    observations, _ = env.reset(seed=seed)
    counts = dict.fromkeys(("steps", "red_carries", "blue_carries", "both_carry", "red_flags",
                            "blue_flags"), 0)
    while env.agents:
        observations, rewards, *_ = play_step(env, policy, observations)
        counts["steps"] += 1
        red_home, blue_home = env.state()[:2]
        counts["red_carries"] += int(blue_home == 0)
        counts["blue_carries"] += int(red_home == 0)
        counts["both_carry"] += int(red_home == 0 and blue_home == 0)
        counts["red_flags"] += int(rewards["agent_0"] > 0)  # a score pays the whole team
        counts["blue_flags"] += int(rewards["agent_1"] > 0)
    return counts


EPISODE = {"pressure_plates": pressure_plates_episode, "spiders_attack": spiders_attack_episode,
           "capture_the_flag": capture_the_flag_episode}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=10_000, help="the first episode's seed")
    parser.add_argument("--tasks", nargs="+", default=list(EPISODE), choices=list(EPISODE))
    parser.add_argument("--policy", help="a checkpoint of train_ppo to play instead of the "
                        "random policy (one task: the checkpoint's)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.policy and len(args.tasks) != 1:
        parser.error("--policy plays one task: name it with --tasks")
    results = {"command": " ".join(["benchmarks/task_diagnostics.py", *sys.argv[1:]]),
               "machine": measure.machine()}
    for task in args.tasks:
        env, policy = (checkpoint_player(args.policy, task) if args.policy
                       else random_player(task))
        try:
            episodes = []
            for k in range(args.episodes):
                if args.policy:
                    policy.reset()  # empty frame stacks, as a new episode in training
                episodes.append(EPISODE[task](env, args.seed + k, policy))
        finally:
            env.close()
        means = {k: round(float(np.mean([e[k] for e in episodes])), 3) for k in episodes[0]}
        results[task] = {"episodes": episodes, "mean": means}
        print(task, json.dumps(means), flush=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
