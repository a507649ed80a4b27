"""PPO with Ray RLlib on a craftium-ma task: several env runners (Ray worker processes, each
with its own Luanti server and clients), one policy shared by all agents.

    .venv/bin/python examples/train_rllib.py                      # starts a local Ray
    .venv/bin/python examples/train_rllib.py --num-env-runners 1 --iterations 5

On an existing Ray cluster (one machine here, on loopback; docs/scaling.md for several):

    .venv/bin/ray start --head --node-ip-address=127.0.0.1 --port=6379 --num-cpus=2 \\
        --object-store-memory=300000000 --include-dashboard=false
    RAY_AUTH_MODE=token .venv/bin/python examples/train_rllib.py --address 127.0.0.1:6379
    .venv/bin/ray stop      # stops every Ray process on this machine

(RAY_AUTH_MODE=token: Ray 2.60's head node requires its token once ~/.ray/auth_token exists,
and a driver given an explicit address only sends it in token mode; `--address auto` on
the head node enables it by itself.)

Prints where every env runner runs (host, worker pid, its Luanti pids), then per iteration
the env steps each runner sampled, the sampling throughput, returns and the learner's losses.
Needs the rllib extra: pip install 'craftium-ma[rllib]'.
"""

import argparse
import os
import socket
import time

import ray

from craftium_ma.integrations.rllib import SHARED_MODULE, env_runner_info, ppo_config


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--task", default="small_room")
    p.add_argument("--num-env-runners", type=int, default=2)
    p.add_argument("--num-envs-per-env-runner", type=int, default=1)
    p.add_argument("--num-agents", type=int, default=2)
    p.add_argument("--max-cycles", type=int, default=100)
    p.add_argument("--obs-size", type=int, default=64,
                   help="42, 64, 84 or 96 use RLlib's default conv filters")
    p.add_argument("--frameskip", type=int, default=4)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--train-batch-size", type=int, default=400, help="env steps per iteration")
    p.add_argument("--minibatch-size", type=int, default=100)
    p.add_argument("--num-epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--address", default=None,
                   help="an existing Ray cluster (e.g. 127.0.0.1:6379); else start a local one")
    p.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs of the local Ray (default: one per env runner, at least 2)")
    p.add_argument("--object-store-mb", type=int, default=300)
    return p.parse_args()


def cpu_seconds(pids) -> float | None:
    """CPU seconds the processes used so far, from /proc (None off this machine)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main():
    args = parse_args()
    if args.address:
        try:
            ray.init(address=args.address)
        except ConnectionError as e:
            hint = ("" if os.environ.get("RAY_AUTH_MODE") else
                    "; if the cluster uses token authentication, set RAY_AUTH_MODE=token "
                    "(and the token: ~/.ray/auth_token or RAY_AUTH_TOKEN)")
            raise SystemExit(f"could not connect to the Ray cluster at {args.address}: "
                             f"{e}{hint}") from None
    else:
        # address="local": a new Ray even where `ray start` left one running
        ray.init(address="local", num_cpus=args.num_cpus or max(2, args.num_env_runners),
                 object_store_memory=args.object_store_mb * 2**20, include_dashboard=False)
    print(f"ray: {len(ray.nodes())} node(s), {ray.cluster_resources().get('CPU', 0):g} CPUs; "
          f"driver and learner: pid {os.getpid()} on {socket.gethostname()}")

    config = ppo_config(
        args.task, num_env_runners=args.num_env_runners,
        num_envs_per_env_runner=args.num_envs_per_env_runner,
        train_batch_size=args.train_batch_size, minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs, lr=args.lr, seed=args.seed,
        num_agents=args.num_agents, max_cycles=args.max_cycles, obs_size=args.obs_size,
        frameskip=args.frameskip)
    algo = config.build_algo()
    try:
        envs = env_runner_info(algo)
        print("env runners (each a Ray worker process with its own Luanti processes):")
        for e in envs:
            print(f"  runner {e['runner']} env {e['instance']}: host {e['host']} pid {e['pid']}"
                  f"  luanti pids {e['engine_pids']}  dir {e['engine_dir']}")
        # a runner's processes: its worker and its envs' Luanti processes, where on this host
        runner_pids = {}
        for e in envs:
            if e["host"] == socket.gethostname():
                runner_pids.setdefault(e["runner"], {e["pid"]}).update(e["engine_pids"])
        cpu = {r: cpu_seconds(p) for r, p in runner_pids.items()}
        env_runner_info(algo, new_window=True)  # count steps and time from here
        rates = []
        for it in range(1, args.iterations + 1):
            t0 = time.perf_counter()
            result = algo.train()
            wall = time.perf_counter() - t0
            # each env's steps in this iteration and the seconds from its first to last step
            per_runner = {}
            for e in env_runner_info(algo, new_window=True):
                steps, seconds = per_runner.get(e["runner"], (0, 0.0))
                per_runner[e["runner"]] = (steps + e["window_steps"], max(seconds, e["window_s"]))
            stepped = sum(n for n, _ in per_runner.values())
            sampling_s = max(s for _, s in per_runner.values())
            rate = stepped / sampling_s
            rates.append(rate)
            runners = result["env_runners"]
            sampled = int(runners["num_env_steps_sampled"])  # what the learner received
            learn = result["learners"][SHARED_MODULE]
            ret = runners.get("episode_return_mean", float("nan"))
            shares = ", ".join(f"runner {r}: {n} in {sec:.2f} s"
                               for r, (n, sec) in sorted(per_runner.items()))
            cores = []  # CPU the runner's processes used while it sampled, in cores
            for r, pids in sorted(runner_pids.items()):
                now = cpu_seconds(pids)
                if now is not None and cpu[r] is not None and per_runner[r][1] > 0:
                    cores.append(f"runner {r} {(now - cpu[r]) / per_runner[r][1]:.2f}")
                cpu[r] = now
            print(f"iter {it}: {sampled} env steps sampled ({shares}) = {rate:.1f} env steps/s "
                  f"while sampling" + (f"; cores used then: {', '.join(cores)}" if cores else ""))
            print(f"  iteration {wall:.2f} s ({sampled / wall:.1f} env steps/s overall); "
                  f"return mean {ret:.1f}; loss {float(learn['total_loss']):.3f} "
                  f"(policy {float(learn['policy_loss']):.3f}, vf {float(learn['vf_loss']):.3f}, "
                  f"entropy {float(learn['entropy']):.3f})")
        if len(rates) > 1:
            later = rates[1:]  # the first iteration includes warm-up
            print(f"sampling throughput, iterations 2-{len(rates)}: "
                  f"{sum(later) / len(later):.1f} env steps/s "
                  f"({args.num_env_runners} runner(s) x {args.num_envs_per_env_runner} env(s), "
                  f"{args.num_agents} agents)")
    finally:
        algo.stop()  # closes every runner's envs, which stops their Luanti processes
        ray.shutdown()


if __name__ == "__main__":
    main()
