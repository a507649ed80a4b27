"""The xland task in the engine: the scripted planner's success on rulesets sampled from
XLand-MiniGrid's benchmarks, the soft reset's time (a new ruleset and layout each) and
agent-steps per second on random actions.

    .venv/bin/python benchmarks/xland_task.py          # 100 rulesets a benchmark and layout
    .venv/bin/python benchmarks/xland_task.py --rulesets 50 --json out.json

The planner (craftium_ma.xland.planner) plays one agent on layouts R1-9x9 and R4-13x13 with
max_cycles the layout's default (3 * height * width), acting on env.grid_state(); an episode
in which it answers no-op on a state that the no-op leaves unchanged is stopped there and
counted unsolved (deterministic planner and step: it would no-op to the end). Prints a
Markdown summary with the machine; see docs/xland.md.
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
from craftium_ma import decode_text  # noqa: E402
from craftium_ma.xland import load_benchmark  # noqa: E402
from craftium_ma.xland.encoding import Action  # noqa: E402
from craftium_ma.xland.planner import Planner  # noqa: E402

BENCHMARKS = ("trivial-21k", "small-1m")
LAYOUTS = ("R1-9x9", "R4-13x13")
AGENTS = (1, 4, 8)
NOOP = int(Action.NOOP)


def _same(a: dict, b: dict) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in a)


def planner_figures(layout: str, benchmarks: dict, rulesets: int) -> list[dict]:
    """The planner on `rulesets` rulesets sampled from each benchmark, one agent, the layout's
    default max_cycles; symbolic observations (the planner reads grid_state(), not frames)."""
    env = craftium_ma.parallel_env("xland", num_agents=1, observations="symbolic",
                                   task_options={"layout": layout})
    out = []
    try:
        for name, bench in benchmarks.items():
            rng = np.random.default_rng(0)
            returns, lengths, gave_up, truncated = [], [], [], 0
            start = time.perf_counter()
            for i in range(rulesets):
                _, infos = env.reset(seed=1000 + i,
                                     options={"ruleset": bench.sample_ruleset(rng)})
                planner = Planner(infos["agent_0"]["goal"], infos["agent_0"]["rules"], index=0)
                total, steps = 0.0, 0
                while env.agents:
                    before = env.grid_state()
                    action = planner.act(before)
                    _, rewards, _, truncations, _ = env.step({"agent_0": action})
                    total += rewards["agent_0"]
                    steps += 1
                    if truncations.get("agent_0") and total <= 0:
                        truncated += 1
                    if env.agents and action == NOOP and _same(before, env.grid_state()):
                        gave_up.append({"seed": 1000 + i, "step": steps,
                                        "mission": decode_text(infos["agent_0"]["mission"])})
                        break
                returns.append(total)
                lengths.append(steps)
            solved = [r > 0 for r in returns]
            out.append({
                "benchmark": name, "layout": layout, "rulesets": rulesets,
                "solved": int(sum(solved)), "solved_rate": float(np.mean(solved)),
                "gave_up": len(gave_up), "gave_up_on": gave_up, "truncated": truncated,
                "mean_return": float(np.mean(returns)),
                "mean_steps_solved": float(np.mean([n for n, s in zip(lengths, solved) if s]))
                if any(solved) else float("nan"),
                "max_cycles": env.max_cycles, "env_steps": int(sum(lengths)),
                "seconds": time.perf_counter() - start})
    finally:
        env.close()
    return out


def reset_figures(agents: int, resets: int, bench) -> dict:
    """Soft resets, each to a new ruleset sampled from `bench` and a new R1-9x9 layout, after
    three steps of the episode before; 64 x 64 frames."""
    env = craftium_ma.parallel_env("xland", num_agents=agents)
    rng = np.random.default_rng(0)
    times = []
    try:
        env.reset(seed=0, options={"ruleset": bench.sample_ruleset(rng)})
        for seed in range(1, resets + 1):
            for _ in range(3):
                if env.agents:
                    env.step({a: int(Action.TURN_RIGHT) for a in env.agents})
            ruleset = bench.sample_ruleset(rng)
            start = time.perf_counter()
            env.reset(seed=seed, options={"ruleset": ruleset})
            times.append(time.perf_counter() - start)
    finally:
        env.close()
    return {"agents": agents, "resets": resets, "median_ms": 1000 * statistics.median(times),
            "p90_ms": 1000 * float(np.percentile(times, 90)), "max_ms": 1000 * max(times)}


def step_figures(agents: int, steps: int) -> dict:
    """Uniformly random actions (0-6) at 64 x 64 on R1-9x9, rulesets sampled from trivial-21k
    by the seed; the resets where episodes end are included in the time."""
    env = craftium_ma.parallel_env("xland", num_agents=agents)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        done, episodes, seed = 0, 0, 0
        start = time.perf_counter()
        while done < steps:
            if not env.agents:
                seed += 1
                episodes += 1
                env.reset(seed=seed)
            env.step({a: int(rng.integers(len(Action))) for a in env.agents})
            done += 1
        seconds = time.perf_counter() - start
    finally:
        env.close()
    return {"agents": agents, "env_steps": steps, "resets": episodes,
            "agent_steps_per_s": agents * steps / seconds, "env_steps_per_s": steps / seconds}


def markdown(results: dict) -> str:
    lines = [measure.machine_line(results), "",
             "| planner on | layout | rulesets | solved | gave up | ran out of steps "
             "| mean return | mean steps (solved) | time (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["planner"]:
        lines.append(f"| `{r['benchmark']}` | {r['layout']} | {r['rulesets']} | {r['solved']} "
                     f"({100 * r['solved_rate']:.0f} %) | {r['gave_up']} | {r['truncated']} | "
                     f"{r['mean_return']:.3f} | {r['mean_steps_solved']:.1f} | "
                     f"{r['seconds']:.0f} |")
    lines += ["", "| agents | soft resets | median (ms) | p90 (ms) | max (ms) |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for r in results["reset"]:
        lines.append(f"| {r['agents']} | {r['resets']} | {r['median_ms']:.1f} | "
                     f"{r['p90_ms']:.1f} | {r['max_ms']:.1f} |")
    lines += ["", "| agents | env steps | resets among them | agent-steps/s | env steps/s |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for r in results["steps"]:
        lines.append(f"| {r['agents']} | {r['env_steps']} | {r['resets']} | "
                     f"{r['agent_steps_per_s']:.0f} | {r['env_steps_per_s']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rulesets", type=int, default=100,
                        help="planner episodes per benchmark and layout")
    parser.add_argument("--resets", type=int, default=100, help="soft resets per agent count")
    parser.add_argument("--steps", type=int, default=1000, help="env steps per agent count")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    benchmarks = {name: load_benchmark(name) for name in BENCHMARKS}
    results = {"machine": measure.machine_with_load(), "date": time.strftime("%Y-%m-%d %H:%M"),
               "command": " ".join(sys.argv),
               "planner": [r for layout in LAYOUTS
                           for r in planner_figures(layout, benchmarks, args.rulesets)],
               "reset": [reset_figures(n, args.resets, benchmarks["small-1m"]) for n in AGENTS],
               "steps": [step_figures(n, args.steps) for n in AGENTS]}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
