"""IPPO or MAPPO from BenchMARL on a craftium-ma task, through craftium_ma.integrations.benchmarl.

    python examples/train_benchmarl.py --algorithm mappo --task commons_harvest \\
        --total-timesteps 60000 --out-dir out/benchmarl/commons_mappo

BenchMARL's own experiment (its configs' defaults, then the options below) trains the
algorithm with BenchMARL's CNN actor on each agent's frames (parameters shared within a
group); MAPPO's centralised critic is an MLP on the task's state(), IPPO's critic the
actor's CNN on the agent's own frame. The budget is in agent steps (BenchMARL counts
env steps: frames = agent steps / agents). At the end, out-dir holds:
  checkpoint.pt   the policy as craftium_ma.integrations.benchmarl.save_policy writes it
                  (`craftium-ma evaluate out-dir/checkpoint.pt --task TASK` plays it)
  episodes.csv    one row per iteration: global_step (agent steps so far), return_team
                  (the iteration's mean episode return per agent, times the agents)
  benchmarl/      BenchMARL's own output (its CSV logs)
The same arguments as examples/train_ppo.py where they mean the same, so that
benchmarks/baselines.py runs either.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import torch
from benchmarl.algorithms import IppoConfig, MappoConfig
from benchmarl.experiment import Experiment, ExperimentConfig
from benchmarl.models import CnnConfig, MlpConfig

from craftium_ma.integrations.benchmarl import CraftiumTask, save_policy
from craftium_ma.tasks import TaskError, options_from_json

ALGORITHMS = {"ippo": IppoConfig, "mappo": MappoConfig}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="mappo")
    p.add_argument("--task", default="commons_harvest")
    p.add_argument("--task-options", default="", help="the task's options as a JSON object")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=60_000, help="agent steps")
    p.add_argument("--num-agents", type=int, default=2)
    p.add_argument("--max-cycles", type=int, default=200)
    p.add_argument("--frameskip", type=int, default=4)
    p.add_argument("--obs-size", type=int, default=48)
    p.add_argument("--num-envs", type=int, default=2, help="BenchMARL's n_envs_per_worker")
    p.add_argument("--frames-per-batch", type=int, default=1200,
                   help="env steps collected per iteration (over all envs)")
    p.add_argument("--minibatch-size", type=int, default=300)
    p.add_argument("--minibatch-iters", type=int, default=20)
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--done-on-any", action=argparse.BooleanOptionalAction, default=True,
                   help="an episode ends with its first agent's (TorchRL's default); "
                        "--no-done-on-any: with its last agent's, the done agents padded")
    p.add_argument("--run-name", default="")
    p.add_argument("--out-dir", default="")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        args.task_options = options_from_json(args.task_options) if args.task_options else {}
    except TaskError as e:
        p.error(f"--task-options: {e}")
    return args


def experiment_of(args: argparse.Namespace, out: Path) -> Experiment:
    env = {"num_agents": args.num_agents, "max_cycles": args.max_cycles,
           "frameskip": args.frameskip, "obs_size": args.obs_size,
           "done_on_any": args.done_on_any}
    if args.task_options:
        env["task_options"] = args.task_options
    task = CraftiumTask[args.task.upper()].get_task(env)
    config = ExperimentConfig.get_from_yaml()
    config.max_n_iters = None
    config.max_n_frames = args.total_timesteps // args.num_agents
    config.on_policy_collected_frames_per_batch = args.frames_per_batch
    config.on_policy_n_envs_per_worker = args.num_envs
    config.on_policy_minibatch_size = args.minibatch_size
    config.on_policy_n_minibatch_iters = args.minibatch_iters
    config.lr = args.learning_rate
    config.evaluation = False  # benchmarks/baselines.py scores the saved policy itself
    config.render, config.loggers, config.create_json = False, ["csv"], False
    config.checkpoint_at_end, config.keep_checkpoints_num = False, 1
    config.save_folder = str(out / "benchmarl")
    algorithm = ALGORITHMS[args.algorithm].get_from_yaml()
    algorithm.entropy_coef = args.ent_coef
    model = CnnConfig.get_from_yaml()  # strides of 2 keep it fast on 2 cores (docs/benchmarl.md)
    model.cnn_num_cells, model.cnn_strides, model.mlp_num_cells = [16, 32, 32], 2, [64]
    critic = MlpConfig.get_from_yaml() if args.algorithm == "mappo" else None  # on state()
    (out / "benchmarl").mkdir(parents=True, exist_ok=True)
    return Experiment(task, algorithm, model, seed=args.seed, config=config,
                      critic_model_config=critic)


def write_curve(experiment: Experiment, args: argparse.Namespace, out: Path) -> None:
    """episodes.csv from BenchMARL's log of each iteration's mean episode return per agent."""
    [log] = Path(experiment.folder_name).rglob("collection_reward_episode_reward_mean.csv")
    with open(log) as f, open(out / "episodes.csv", "w", newline="") as g:
        writer = csv.writer(g)
        writer.writerow(["global_step", "return_team"])
        for iteration, value in csv.reader(f):
            steps = (int(iteration) + 1) * args.frames_per_batch * args.num_agents
            writer.writerow([steps, float(value) * args.num_agents])


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    out = Path(args.out_dir or f"out/benchmarl/{args.run_name or args.task}")
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    experiment = experiment_of(args, out)
    experiment.run()
    wall_time = time.time() - start
    write_curve(experiment, args, out)
    save_policy(experiment, out / "checkpoint.pt", wall_time=wall_time)
    if not args.quiet:
        print(f"{args.algorithm} on {args.task}: {experiment.total_frames} env steps in "
              f"{wall_time:.0f} s; policy in {out / 'checkpoint.pt'}")


if __name__ == "__main__":
    main()
