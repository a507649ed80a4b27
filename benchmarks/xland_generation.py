"""How long our generator takes to make XLand-MiniGrid's benchmarks, save and load them (no
engine).

    .venv/bin/python benchmarks/xland_generation.py            # every registered benchmark
    .venv/bin/python benchmarks/xland_generation.py --quick    # 10 000 rulesets a benchmark

Works in a temporary cache (CRAFTIUM_MA_CACHE) with no XLand-MiniGrid files
(XLAND_MINIGRID_DATA), so load_benchmark reads what we generated and the user's files are left
alone. Prints a Markdown table with the machine; see docs/xland.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402

from craftium_ma.xland import generate_benchmark, load_benchmark, registered_benchmarks  # noqa: E402
from craftium_ma.xland.benchmark import BENCHMARK_SEED, benchmark_path  # noqa: E402


def run(quick: bool) -> dict:
    rows = []
    for name, (level, n) in registered_benchmarks().items():
        n = min(n, 10_000) if quick else n
        start = time.perf_counter()
        bench = generate_benchmark(level, n, BENCHMARK_SEED)
        generated = time.perf_counter()
        if quick:  # load_benchmark only reads files made with the registered size
            path = Path(os.environ["CRAFTIUM_MA_CACHE"]) / f"{name}.npz"
            bench.save(path)
            saved = time.perf_counter()
            type(bench).load(path)
        else:
            path = benchmark_path(name)
            bench.save(path)
            saved = time.perf_counter()
            with warnings.catch_warnings():  # that it was generated locally
                warnings.simplefilter("ignore")
                load_benchmark(name)
        loaded = time.perf_counter()
        rows.append({"benchmark": name, "rulesets": n, "generate_s": generated - start,
                     "save_s": saved - generated, "load_s": loaded - saved,
                     "file_mb": path.stat().st_size / 2**20,
                     "rules_shape": list(bench.rules.shape),
                     "init_tiles_shape": list(bench.init_tiles.shape)})
        print(json.dumps(rows[-1]), file=sys.stderr)
    return {"machine": measure.machine_with_load(), "quick": quick,
            "date": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}


def markdown(results: dict) -> str:
    lines = [measure.machine_line(results), "",
             "| benchmark | rulesets | generate (s) | save (s) | load (s) | file (MiB) "
             "| rules | init tiles |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in results["rows"]:
        lines.append(f"| `{r['benchmark']}` | {r['rulesets']:,} | {r['generate_s']:.1f} | "
                     f"{r['save_s']:.1f} | {r['load_s']:.2f} | {r['file_mb']:.1f} | "
                     f"{tuple(r['rules_shape'][1:])} | {tuple(r['init_tiles_shape'][1:])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 000 rulesets a benchmark")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CRAFTIUM_MA_CACHE"] = cache
        os.environ["XLAND_MINIGRID_DATA"] = os.path.join(cache, "xland_minigrid")
        results = run(args.quick)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
