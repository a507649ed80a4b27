"""The same episode at full scale? Every shipped task (or --tasks) at its largest number of
agents plays one seed with busy random actions (its whole action set) for --steps steps:
in --repeats fresh envs, and once more in the first env after an episode of another seed.
Every run is compared with the first, bit for bit (frames, rewards, flags, infos, state).
--pool instead plays each repeat through a pool of two envs (seeds --seed and --seed + 1)
and compares every env's rows with a single env's (craftium_ma.testing.pool_check).
--pipelined steps pipelined; --load runs another env (open_world, 4 agents, random
actions) beside the runs, loading the CPUs.

    .venv/bin/python benchmarks/determinism.py [--tasks commons_harvest xland] [--repeats 5]

Writes results/determinism[-pipelined][-pool][-load].json and .md: per task, the runs
that differed and, for each, the first differing step and what differed there (the agents
and pixels of their frames). A run of some --tasks keeps the other tasks' rows of an
earlier run of the same settings; each row says when it ran.
Exits 1 when any run differed. See docs/environments.md#clean-episodes.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
import time
from pathlib import Path

import numpy as np

import craftium_ma
from craftium_ma import testing
from craftium_ma.tasks import shipped_tasks

import measure  # benchmarks/measure.py: the machine line


def first_difference(a: list, b: list) -> dict | None:
    """The first record where two played episodes differ, and what differs there."""
    for step, (x, y) in enumerate(zip(a, b)):
        try:
            testing.assert_same(x, y, f"step {step}")
        except AssertionError as error:
            frames = {agent: int((x[0][agent] != y[0][agent]).any(axis=2).sum())
                      for agent in x[0] if agent in y[0]
                      and not np.array_equal(x[0][agent], y[0][agent])}
            said = [line for line in str(error).splitlines() if line.strip()]
            return {"step": step, "frames": frames, "first": said[0] if said else ""}
    return None if len(a) == len(b) else {"step": min(len(a), len(b)), "first": "lengths"}


def where(label: str, difference: dict) -> str:
    """One differing run in words: its first differing step and the pixels per agent."""
    pixels = ", ".join(f"{a} {n} px" for a, n in difference.get("frames", {}).items())
    at = f"step {difference['step']} " if "step" in difference else ""
    return f"{label}: {at}({pixels or difference['first']})"


def fresh_and_used_runs(task: str, steps: int, repeats: int, seed: int, **env_kwargs) -> dict:
    """`repeats` fresh envs' episodes of `seed`, then the first env's after another seed's
    (testing.replays), each compared with the first: the runs that differed, and where."""
    make = functools.partial(craftium_ma.parallel_env, task, max_cycles=steps,
                             num_agents=shipped_tasks()[task].max_agents, **env_kwargs)
    runs = testing.replays(make, seed, steps, repeats, history_seed=seed + 1)
    labels = [f"fresh {k}" for k in range(1, repeats)] + ["after another episode"]
    return {label: diff for label, run in zip(labels, runs[1:])
            if (diff := first_difference(runs[0], run)) is not None}


def pool_runs(task: str, steps: int, repeats: int, seed: int, **env_kwargs) -> dict:
    """`repeats` pools of two envs against single envs: the repeats that differed."""
    differed = {}
    for k in range(repeats):
        try:
            testing.pool_check(task, num_envs=2, seeds=(seed, seed + 1), steps=steps,
                               num_agents=shipped_tasks()[task].max_agents,
                               max_cycles=steps, **env_kwargs)
        except AssertionError as error:
            said = [line for line in str(error).splitlines() if line.strip()]
            differed[f"pool {k}"] = {"first": said[0] if said else ""}
    return differed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", nargs="+", default=sorted(shipped_tasks()))
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3, help="fresh envs per task")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--pipelined", action="store_true")
    p.add_argument("--pool", action="store_true", help="pools of two envs against single envs")
    p.add_argument("--load", action="store_true", help="another engine run loads the CPUs")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args()
    results = {"machine": measure.machine_with_load(), "date": time.strftime("%Y-%m-%d %H:%M"),
               "steps": args.steps, "repeats": args.repeats, "seed": args.seed,
               "pipelined": args.pipelined, "pool": args.pool, "load": args.load, "tasks": {}}
    name = "determinism" + "-pipelined" * args.pipelined + "-pool" * args.pool + "-load" * args.load
    earlier = args.out / f"{name}.json"
    if earlier.exists():
        before = json.loads(earlier.read_text())
        settings = ("steps", "repeats", "seed", "pipelined", "pool", "load")
        if all(before.get(k, False) == results[k] for k in settings):
            results["tasks"] = {t: {"date": before["date"], **r}
                                for t, r in before["tasks"].items()}
    for task in args.tasks:
        start = time.monotonic()
        with testing.another_engine_run() if args.load else contextlib.nullcontext():
            differed = (pool_runs if args.pool else fresh_and_used_runs)(
                task, args.steps, args.repeats, args.seed, pipelined=args.pipelined)
        results["tasks"][task] = {"date": results["date"],
                                  "agents": shipped_tasks()[task].max_agents,
                                  "differed": differed,
                                  "seconds": round(time.monotonic() - start, 1)}
        print(f"{task}: {len(differed)} of {args.repeats} runs differed "
              f"{json.dumps(differed)}", flush=True)
    mode = ", ".join(["pipelined" if args.pipelined else "strict"]
                     + ["a pool of 2 against single envs"] * args.pool
                     + ["beside another engine run"] * args.load)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    rows = [f"| {task} | {r['agents']} | {args.steps} | {len(r['differed'])} of "
            f"{args.repeats} | {'; '.join(where(label, d) for label, d in r['differed'].items())} "
            f"| {r['date']} |" for task, r in sorted(results["tasks"].items())]
    (args.out / f"{name}.md").write_text(
        f"# Determinism at full scale: seed {args.seed}, {args.steps} steps, {mode}"
        f"\n\n{measure.machine_line(results)}\n\n"
        "| task | agents | steps | runs that differed | where | run |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        + "\n".join(rows) + "\n")
    return 1 if any(r["differed"] for r in results["tasks"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
