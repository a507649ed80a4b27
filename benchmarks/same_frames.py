"""Do two engine builds draw the same pictures? For engine changes meant to be fast, not
to look different (docs/engine.md).

    .venv/bin/python benchmarks/same_frames.py OLD_BUILD NEW_BUILD [--steps 200]

A build is what CRAFTIUM_MA_ENGINE names: a build directory under
~/.cache/craftium-ma/engine, or a source tree with bin/luanti. Every shipped task (or
each of --tasks) plays a fixed-seed episode of fixed random actions with each build,
each in its own process; the script lists the steps whose frames differ and exits 1 if
any does, 2 if a build fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import craftium_ma
import measure  # benchmarks/measure.py: RandomActions


def record(out: str, steps: int, tasks: list[str]):
    """Frames of each task's episode (this process's engine), saved to `out`."""
    frames = {}
    for task in tasks:
        env = craftium_ma.parallel_env(task, max_cycles=10**9)
        try:
            obs, _ = env.reset(seed=3)
            act = measure.RandomActions(env, seed=5)
            episode = [np.stack([obs[a] for a in env.possible_agents])]
            for _ in range(steps):
                obs, _, term, trunc, _ = env.step(act())
                episode.append(np.stack([obs[a] for a in env.possible_agents]))
                if any(term.values()) or any(trunc.values()):
                    break
            frames[task] = np.stack(episode)
        finally:
            env.close()
    np.savez_compressed(out, **frames)


def compare(old, new) -> int:
    """Print, per task, the steps whose frames differ; return how many differ."""
    differ = 0
    for task in old:
        a, b = old[task], new[task]
        if a.shape != b.shape:
            print(f"{task}: the episodes differ in length ({len(a)} and {len(b)} frames)")
            differ += 1
            continue
        steps = np.flatnonzero((a != b).any(axis=(1, 2, 3, 4)))
        print(f"{task}: {len(steps)} of {len(a)} steps differ" +
              (f", the first at step {steps[0]}" if len(steps) else ""))
        differ += len(steps)
    return differ


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("builds", nargs="*", metavar="BUILD", help="the two builds to compare")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--tasks", nargs="+", default=craftium_ma.tasks(), help="default: every task")
    p.add_argument("--record", metavar="OUT", help=argparse.SUPPRESS)  # one build's run
    args = p.parse_args(argv)
    if args.record:
        record(args.record, args.steps, args.tasks)
        return 0
    if len(args.builds) != 2:
        p.error("give two builds")
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for i, build in enumerate(args.builds):
            out = str(Path(tmp) / f"{i}.npz")
            run = subprocess.run([sys.executable, __file__, "--record", out,
                                  "--steps", str(args.steps), "--tasks", *args.tasks],
                                 env={**os.environ, "CRAFTIUM_MA_ENGINE": build})
            if run.returncode:
                print(f"the episodes with {build} failed (see above)")
                return 2
            runs.append(np.load(out))
        differ = compare(*runs)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
