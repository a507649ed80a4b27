"""The long alignment run: the xland task against XLand-MiniGrid (xminigrid, CPU JAX) on many
of its own generator's rulesets (tests/data/xminigrid), every level, two layouts, with
craftium_ma.testing.xland_align_check (tests/test_xland_align.py runs a share of it in CI).

    .venv/bin/python benchmarks/xland_align.py --per-level 125

plays per-level rulesets of each level on each layout (125: 1,000 episodes) and writes
benchmarks/results/xland_align.{json,md}. Any difference stops it with the step it is at.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import craftium_ma  # noqa: E402
from craftium_ma.testing import xland_align_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "xminigrid"
RESULTS = ROOT / "benchmarks" / "results"
LEVELS = ("trivial", "small", "medium", "high")
LAYOUTS = ("R1-9x9", "R4-13x13")


def rulesets(level: str, count: int) -> list[tuple]:
    with np.load(DATA / f"rulesets_{level}.npz") as data:
        return [(data["goals"][i], data["rules"][i], data["init_tiles"][i]) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-level", type=int, default=125,
                        help="rulesets of each level per layout (at most 500)")
    args = parser.parse_args()
    rows, start = [], time.time()
    for layout in LAYOUTS:
        env = craftium_ma.parallel_env("xland", task_options={"layout": layout},
                                       observations=["symbolic", "direction", "pocket"])
        try:
            for level in LEVELS:
                t0 = time.time()
                counts = xland_align_check(env, rulesets(level, args.per_level), layout,
                                           seed=10_000)
                rows.append({"layout": layout, "level": level, **counts,
                             "seconds": round(time.time() - t0, 1)})
                print(rows[-1], flush=True)
        finally:
            env.close()
    total = {k: sum(r[k] for r in rows) for k in ("episodes", "steps", "goals")}
    machine = f"{platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}"
    result = {"rows": rows, "total": total, "seconds": round(time.time() - start),
              "machine": machine, "command": f"benchmarks/xland_align.py --per-level "
                                             f"{args.per_level}"}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "xland_align.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# xland against XLand-MiniGrid: {total['episodes']} episodes, "
             f"{total['steps']} steps, all equal", "",
             f"`{result['command']}` on {machine}, {result['seconds']} s. Every step's grid, "
             "positions, directions, pockets, rewards, terminations, truncations and the "
             "symbolic view, direction and pocket observations equal xminigrid 0.9.3's.", "",
             "| layout | level | episodes | steps | goals reached | seconds |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['layout']} | {r['level']} | {r['episodes']} | {r['steps']} | {r['goals']} | "
              f"{r['seconds']} |" for r in rows]
    (RESULTS / "xland_align.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
