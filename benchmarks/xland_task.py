"""The xland task in the engine: the scripted planner's success on sampled rulesets, the soft
reset's time (a new ruleset and layout each) and agent-steps per second.

    .venv/bin/python benchmarks/xland_task.py               # 100 trivial + 100 small rulesets
    .venv/bin/python benchmarks/xland_task.py --episodes 20 --json out.json

Prints a Markdown summary with the machine; see docs/xland.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

import craftium_ma  # noqa: E402
from craftium_ma.xland import load_benchmark  # noqa: E402
from craftium_ma.xland.planner import Planner  # noqa: E402

BENCHMARKS = {"trivial": "trivial-2008", "small": "small-1m"}


def planner_figures(level: str, episodes: int) -> dict:
    """The planner playing `episodes` rulesets sampled from the level's benchmark, one agent,
    layouts of 1 to 9 rooms drawn from the seed."""
    bench = load_benchmark(BENCHMARKS[level])
    env = craftium_ma.parallel_env("xland", num_agents=1, task_options={"benchmark": bench})
    rng = np.random.default_rng(0)
    returns, lengths = [], []
    start = time.perf_counter()
    try:
        for i in range(episodes):
            _, infos = env.reset(seed=1000 + i, options={"ruleset": bench.sample_ruleset(rng)})
            planner = Planner(infos["agent_0"]["goal"], infos["agent_0"]["rules"])
            total, steps = 0.0, 0
            while env.agents:
                _, rewards, *_ = env.step({"agent_0": planner.act(env.state(), 1)})
                total += rewards["agent_0"]
                steps += 1
            returns.append(total)
            lengths.append(steps)
    finally:
        env.close()
    solved = [r > 0 for r in returns]
    return {"level": level, "benchmark": BENCHMARKS[level], "episodes": episodes,
            "solved": int(sum(solved)), "solved_rate": float(np.mean(solved)),
            "mean_return": float(np.mean(returns)),
            "mean_steps_solved": float(np.mean([n for n, s in zip(lengths, solved) if s])),
            "max_cycles": env.max_cycles, "seconds": time.perf_counter() - start}


def reset_figures(agents: int, resets: int) -> dict:
    """Soft resets with a new ruleset (sampled from small-1m by the seed) and layout each."""
    env = craftium_ma.parallel_env("xland", num_agents=agents)
    times = []
    try:
        env.reset(seed=0)
        for seed in range(1, resets + 1):
            for _ in range(3):
                if env.agents:
                    env.step({a: 1 for a in env.agents})
            start = time.perf_counter()
            env.reset(seed=seed)
            times.append(time.perf_counter() - start)
    finally:
        env.close()
    return {"agents": agents, "resets": resets, "median_ms": 1000 * statistics.median(times),
            "p90_ms": 1000 * float(np.percentile(times, 90)), "max_ms": 1000 * max(times)}


def step_figures(agents: int, steps: int) -> dict:
    """Random actions at 64 x 64, strict steps; resets included where episodes end."""
    env = craftium_ma.parallel_env("xland", num_agents=agents)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        done = 0
        start = time.perf_counter()
        while done < steps:
            if not env.agents:
                env.reset()
            env.step({a: int(rng.integers(7)) for a in env.agents})
            done += 1
        seconds = time.perf_counter() - start
    finally:
        env.close()
    return {"agents": agents, "env_steps": steps, "agent_steps_per_s": agents * steps / seconds,
            "env_steps_per_s": steps / seconds}


def markdown(results: dict) -> str:
    lines = [measure.machine_line(results), "",
             "| planner on | rulesets | solved | mean return | mean steps (solved) | time (s) |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["planner"]:
        lines.append(f"| `{r['benchmark']}` | {r['episodes']} | {r['solved']} "
                     f"({100 * r['solved_rate']:.0f} %) | {r['mean_return']:.3f} | "
                     f"{r['mean_steps_solved']:.1f} | {r['seconds']:.1f} |")
    lines += ["", "| agents | soft resets | median (ms) | p90 (ms) | max (ms) |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for r in results["reset"]:
        lines.append(f"| {r['agents']} | {r['resets']} | {r['median_ms']:.1f} | "
                     f"{r['p90_ms']:.1f} | {r['max_ms']:.1f} |")
    lines += ["", "| agents | env steps | agent-steps/s | env steps/s |",
              "| ---: | ---: | ---: | ---: |"]
    for r in results["steps"]:
        lines.append(f"| {r['agents']} | {r['env_steps']} | {r['agent_steps_per_s']:.0f} | "
                     f"{r['env_steps_per_s']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100, help="planner episodes a level")
    parser.add_argument("--resets", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1000, help="env steps per agent count")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    results = {"machine": measure.machine_with_load(), "date": time.strftime("%Y-%m-%d %H:%M"),
               "planner": [planner_figures(level, args.episodes) for level in BENCHMARKS],
               "reset": [reset_figures(n, args.resets) for n in (1, 4, 8)],
               "steps": [step_figures(n, args.steps) for n in (1, 2, 4, 8)]}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
