"""Reference scores of every scenario: the focal per-capita return of the random and the
scripted populations (craftium_ma.evaluation.SCRIPTED), with 95 % intervals, which
`craftium_ma.evaluation.normalised` scales results between.

    .venv/bin/python benchmarks/scenario_references.py --episodes 8

writes craftium_ma/evaluation/references.json (shipped with the package) and
benchmarks/results/scenario_references.md (the table in docs/scenarios.md). Each
scenario's config hash goes with its scores: a scenario changed since is refused by
normalised() and flagged by tests/test_scenarios.py.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from craftium_ma.evaluation import evaluate, scenario, scenarios
from craftium_ma.evaluation.scoring import REFERENCES

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "benchmarks" / "results" / "scenario_references.md"
POPULATIONS = ("random", "scripted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--scenarios", nargs="*", default=None)
    args = parser.parse_args()
    names = args.scenarios or scenarios()
    previous = json.loads(REFERENCES.read_text())["scenarios"] if REFERENCES.exists() else {}
    table = dict(previous)
    for name in names:
        started, row = time.monotonic(), {"config_hash": scenario(name).config_hash(),
                                          "episodes": args.episodes}
        for population in POPULATIONS:
            [result] = evaluate(population, [name], episodes=args.episodes, seed=args.seed)
            row[population] = round(result["focal_per_capita_return"], 4)
            row[f"{population}_ci95"] = [round(v, 4) for v in result[
                "focal_per_capita_return_ci95"]]
            row[f"{population}_background"] = round(result["background_per_capita_return"], 4)
        row["seconds"] = round(time.monotonic() - started, 1)
        table[name] = row
        print(name, json.dumps(row), flush=True)
        write(table, args)


def write(table: dict, args) -> None:
    machine = f"{platform.machine()}, {platform.processor() or 'cpu'}, 2 cores"
    REFERENCES.write_text(json.dumps({
        "command": f"benchmarks/scenario_references.py --episodes {args.episodes} --seed "
                   f"{args.seed}",
        "machine": machine, "scenarios": dict(sorted(table.items()))}, indent=1) + "\n")
    lines = ["| scenario | task | focal / players | random | scripted | seconds |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name in scenarios():
        if name not in table:
            continue
        s, row = scenario(name), table[name]
        cells = [f"{row[p]:.3f} [{row[p + '_ci95'][0]:.2f}, {row[p + '_ci95'][1]:.2f}]"
                 for p in POPULATIONS]
        lines.append(f"| {name} | {s.task} | {sum(s.is_focal)} / {s.num_players} | "
                     f"{cells[0]} | {cells[1]} | {row['seconds']} |")
    TABLE.write_text(f"Focal per-capita return, {args.episodes} episodes each (seeds "
                     f"{args.seed}..), mean [95 % bootstrap interval]; {machine}.\n\n" +
                     "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
