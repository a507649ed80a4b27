"""craftium-ma benchmark: our agent-steps/s against the engine's own ceiling, in one run.

    .venv/bin/python benchmarks/run.py            # the full run, about 6 minutes
    .venv/bin/python benchmarks/run.py --quick    # a short check of the harness
    .venv/bin/python benchmarks/run.py --only vector   # the vector_env pool alone (vector.*)
    .venv/bin/python benchmarks/run.py --only observations   # declared observations, no
                                                             # frames drawn (observations-<task>.*)
    .venv/bin/python benchmarks/run.py --only scenarios   # 16 players, bots that draw
                                                          # nothing (scenarios.*)
    .venv/bin/python benchmarks/run.py --only frames --agents 1 2   # the ceiling and
                                    # parallel_env at 64, 128 and 256 pixels (frames.*)

Writes results.json, results.md and results.png to --out. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402

from craftium_ma.tasks import find_task  # noqa: E402

TARGET_EFFICIENCY = 0.9
#: (label, observe the task's declared observation instead of the frames, pipelined)
OBSERVATION_CASES = (("rgb", False, False), ("declared", True, False),
                     ("rgb_pipelined", False, True), ("declared_pipelined", True, True))


def configs(args) -> list[tuple[str, int, bool]]:
    """(label, frameskip, pipelined) of each parallel_env measurement."""
    return ([(f"fs{fs}", fs, False) for fs in args.frameskips]
            + [(f"pipelined_fs{fs}", fs, True) for fs in args.pipelined_frameskips])


def labels(r: dict) -> list[str]:
    return [k[: -len("_agent_steps_per_s")] for k in r["throughput"][0]
            if k.endswith("_agent_steps_per_s")]


class Phases:
    """The run's measurements in turn: a progress bar on a terminal, else a line each."""

    def __init__(self, total: int):
        self.bar = tqdm(total=total, unit="phase", disable=not sys.stderr.isatty())
        self.started = False

    def start(self, text: str):
        if self.started:  # the previous phase is done
            self.bar.update()
        self.started = True
        if self.bar.disable:
            print(f"[bench] {text}", flush=True)
        else:
            self.bar.set_description(text)

    def close(self):
        self.bar.update()
        self.bar.close()


def ceiling_window(args) -> tuple[float, float]:
    """(seconds measured, seconds of warm-up) of an engine ceiling: short with --quick."""
    return (1.5, 1.0) if args.quick else (10.0, 4.0)


def timed_agent_steps(args) -> int:
    """Agent steps timed for each parallel_env figure: fewer with --quick."""
    return 100 if args.quick else 3000


def run(args) -> dict:
    quick = args.quick
    seconds, warmup = ceiling_window(args)
    agent_steps = timed_agent_steps(args)
    results = {"task": args.task, "obs": "64x64", "machine": measure.machine(),
               "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M"),
               "quick": quick, "throughput": [], "lifecycle": [], "memory": None, "supersuit": None}

    phases = Phases(len(args.agents) * (len(configs(args)) + 2) + 5 + len(args.vector_envs)
                    + len(args.observation_agents) * len(OBSERVATION_CASES)
                    * args.observation_rounds)
    for n in args.agents:
        phases.start(f"{n} agent(s): engine ceiling")
        ceiling = measure.engine_ceiling(args.task, n, seconds, warmup)
        results["machine"]["renderer"] = ceiling["renderer"]
        row = {"agents": n, "ceiling_frames_per_s": ceiling["frames_per_s"],
               "ceiling_rss_mb": ceiling["rss_mb"]}
        for label, fs, pipelined in configs(args):
            phases.start(f"{n} agent(s): parallel_env, {label}")
            t = measure.env_throughput(args.task, n, fs, agent_steps, pipelined)
            row[f"{label}_agent_steps_per_s"] = t["agent_steps_per_s"]
            row[f"{label}_efficiency"] = t["agent_steps_per_s"] / ceiling["frames_per_s"]
        results["throughput"].append(row)

        phases.start(f"{n} agent(s): cold start, {args.resets} soft resets, close")
        results["lifecycle"].append({"agents": n, **measure.lifecycle(args.task, n, args.resets)})

    phases.start(f"memory over {args.memory_steps} steps")
    results["memory"] = {"agents": 2, **measure.memory(args.task, 2, args.memory_steps)}
    phases.start("SuperSuit concat_vec_envs_v1, 2 envs x 2 agents, 2 processes")
    results["supersuit"] = measure.supersuit_throughput(args.task, 2, 2, 100 if quick else 1000)
    results["vector"] = run_vector(args, phases, results)
    results["observations"] = run_observations(args, phases)
    phases.close()
    return results


def run_frames(args, phases: Phases) -> list[dict]:
    """The engine ceiling and parallel_env agent-steps/s (frameskip 1, strict) at each of
    --obs-sizes for each of --agents: what drawing bigger frames costs the renderer. A
    measurement that fails leaves its error in its row, and the others still run (on a
    machine met for the first time, one failure does not cost every figure)."""
    seconds, warmup = ceiling_window(args)
    agent_steps = timed_agent_steps(args)
    rows = []
    for size in args.obs_sizes:
        for n in args.agents:
            phases.start(f"{size}x{size}, {n} agent(s): engine ceiling, parallel_env")
            row = {"obs_size": size, "agents": n}
            try:
                ceiling = measure.engine_ceiling(args.task, n, seconds, warmup, obs_size=size)
                row.update(renderer=ceiling["renderer"],
                           ceiling_frames_per_s=ceiling["frames_per_s"])
                steps = measure.env_throughput(args.task, n, 1, agent_steps, obs_size=size)
                row.update(observation_shape=steps["observation_shape"],
                           agent_steps_per_s=steps["agent_steps_per_s"])
            except Exception as e:  # noqa: BLE001 - reported in the row, and by the exit status
                row["error"] = f"{type(e).__name__}: {e}"
            rows.append(row)
    return rows


def frames_markdown(r: dict) -> str:
    m, rows = r["machine"], r["frames"]
    renderer = next((row["renderer"] for row in rows if "renderer" in row), "?")
    lines = [f"# Frame sizes: {r['task']}, frameskip 1, {r['date']}", "",
             f"Machine: {m['cores']} cores ({m['cpu']}), renderer {renderer}, "
             f"LP_NUM_THREADS={m['lp_num_threads']}, Python {r['python']}", "",
             "| frame | agents | engine ceiling frames/s | parallel_env agent-steps/s "
             "| efficiency |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        ceiling, steps = row.get("ceiling_frames_per_s"), row.get("agent_steps_per_s")
        cells = [f"{v:.0f}" if v else "-" for v in (ceiling, steps)]
        cells.append(f"{steps / ceiling:.2f}" if steps else "-")
        lines.append(f"| {row['obs_size']}x{row['obs_size']} | {row['agents']} | "
                     + " | ".join(cells) + " |")
    for row in rows:
        if "error" in row:
            lines.append(f"\n{row['obs_size']}x{row['obs_size']}, {row['agents']} agent(s) "
                         f"failed: {row['error'].splitlines()[0]}")
    return "\n".join(lines)


def run_observations(args, phases: Phases) -> dict:
    """parallel_env agent-steps/s observing the task's declared observation alone (the
    clients draw no frame) against its frames, strict and pipelined, at each of
    --observation-agents: --observation-rounds rounds of the four cases one after the
    other, each case's median of them."""
    name = args.observation or next(iter(find_task(args.task).observations), None)
    if name is None:
        raise SystemExit(f"task {args.task!r} declares no observation: give another --task")
    agent_steps = timed_agent_steps(args)
    rows = []
    for n in args.observation_agents:
        runs = {label: [] for label, _, _ in OBSERVATION_CASES}
        for k in range(args.observation_rounds):
            for label, declared, pipelined in OBSERVATION_CASES:
                phases.start(f"{n} agent(s), round {k + 1}: observations="
                             f"{name if declared else 'rgb'!r}"
                             + (", pipelined" if pipelined else ""))
                runs[label].append(measure.env_throughput(
                    args.task, n, 1, agent_steps, pipelined,
                    observations=name if declared else "rgb")["agent_steps_per_s"])
        row = {"agents": n}
        for label, values in runs.items():
            row[f"{label}_agent_steps_per_s"] = statistics.median(values)
            row[f"{label}_runs"] = values
        rows.append(row)
    return {"observation": name, "rounds": args.observation_rounds, "rows": rows}


def observations_markdown(o: dict) -> str:
    name = f"`{o['observation']}`"
    lines = [f"| agents | rgb | {name} | x | rgb pipelined | {name} pipelined | x "
             f"| {name} pipelined x rgb |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in o["rows"]:
        rgb, declared = row["rgb_agent_steps_per_s"], row["declared_agent_steps_per_s"]
        rgb_p, declared_p = (row["rgb_pipelined_agent_steps_per_s"],
                             row["declared_pipelined_agent_steps_per_s"])
        lines.append(f"| {row['agents']} | {rgb:.0f} | {declared:.0f} | {declared / rgb:.2f} | "
                     f"{rgb_p:.0f} | {declared_p:.0f} | {declared_p / rgb_p:.2f} | "
                     f"{declared_p / rgb:.2f} |")
    return "\n".join(lines + ["", f"(agent-steps/s summed over agents, frameskip 1; the median "
                                f"of {o['rounds']} interleaved rounds)"])


def scenarios_markdown(r: dict) -> str:
    f = r["scenarios"]
    lines = [f"# Scenario {f['scenario']}: {f['players']} players, {f['focal']} focal, "
             f"{r['steps']} random steps, {r['date']}, {r['machine']['cores']} cores\n",
             "| world | players' steps/s | memory (MB, all processes) | server CPU ms/step "
             "| drawing client CPU ms/step | frameless client CPU ms/step |",
             "| --- | --- | --- | --- | --- | --- |"]
    for label, what in (("with_bots", "the scenario (bots draw nothing)"),
                        ("all_drawn", "the task, every client drawing")):
        row = f[label]
        frameless = row["frameless_client_cpu_ms_per_step"]
        lines.append(f"| {what} | {row['player_steps_per_s']:.0f} | {row['memory_mb']:.0f} | "
                     f"{row['server_cpu_ms_per_step']:.2f} | "
                     f"{row['drawing_client_cpu_ms_per_step']:.2f} | "
                     f"{'-' if frameless is None else f'{frameless:.2f}'} |")
    drawing = f["with_bots"]["drawing_client_cpu_ms_per_step"]
    frameless = f["with_bots"]["frameless_client_cpu_ms_per_step"]
    return "\n".join(lines + ["", f"A frameless bot's client costs {frameless / drawing:.2f} of "
                                 "a drawing client's CPU per step (target: at most a third)."])


def run_vector(args, phases: Phases, results: dict | None = None) -> dict:
    """The vector_env pool at M envs x 2 agents, sync and async (batch_size M/2), each env
    pinned to its share of the CPUs (the default), and at M = 2 unpinned too; against one
    env of 2 agents (as parallel_env starts it, and with cpus= every CPU), SuperSuit's
    2 x 2 over 2 processes (from `results` where the run measured them already) and the
    ceiling of 2 separate envs in 2 processes, each on its share of the CPUs."""
    quick = args.quick
    agent_steps = timed_agent_steps(args)
    single = next((row["fs1_agent_steps_per_s"] for row in (results or {}).get("throughput", [])
                   if row["agents"] == 2 and "fs1_agent_steps_per_s" in row), None)
    if single is None:
        phases.start("vector baseline: one env of 2 agents")
        single = measure.env_throughput(args.task, 2, 1, agent_steps)["agent_steps_per_s"]
    phases.start("vector baseline: one env of 2 agents, pinned to the CPUs (cpus=)")
    pinned = measure.env_throughput(args.task, 2, 1, agent_steps,
                                    cpus=sorted(os.sched_getaffinity(0)))
    supersuit = (results or {}).get("supersuit")
    if supersuit is None:
        phases.start("vector baseline: SuperSuit concat_vec_envs_v1, 2 envs x 2 agents")
        supersuit = measure.supersuit_throughput(args.task, 2, 2, 100 if quick else 1000)
    phases.start("vector ceiling: 2 envs x 2 agents in 2 processes, "
                 "each env on its share of the CPUs")
    separate = measure.separate_envs_throughput(args.task, 2, 2, 2 if quick else 10)
    pools = []
    for m, affinity in [(m, True) for m in args.vector_envs] + [(2, False)]:
        phases.start(f"vector_env: {m} envs x 2 agents, sync" + (", async" if m > 1 else "")
                     + ("" if affinity else ", not pinned"))
        pools.append(measure.pool_throughput(args.task, m, 2, agent_steps, cpu_affinity=affinity,
                                             batch_size=m // 2 if m > 1 else None))
    return {"single_env_agent_steps_per_s": single,
            "single_env_pinned_agent_steps_per_s": pinned["agent_steps_per_s"],
            "single_env_pinned_thread_cpu_us_per_agent_step":
                pinned["thread_cpu_us_per_agent_step"],
            "supersuit_agent_steps_per_s": supersuit["agent_steps_per_s"],
            "separate_envs_agent_steps_per_s": separate["agent_steps_per_s"], "pools": pools}


def vector_markdown(v: dict) -> str:
    one, pinned, ss = (v["single_env_agent_steps_per_s"], v["single_env_pinned_agent_steps_per_s"],
                       v["supersuit_agent_steps_per_s"])
    lines = ["| pool | pinned | sync agent-steps/s | x one env | x one env pinned | x SuperSuit "
             "| async (batch M/2) agent-steps/s | async x one env | async x SuperSuit "
             "| pool's Python us/agent-step | main thread CPU us/agent-step | first reset s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in v["pools"]:
        sync = p["sync_agent_steps_per_s"]
        asyn = p.get("async_agent_steps_per_s")
        async_cells = ("- | - | -" if asyn is None
                       else f"{asyn:.0f} | {asyn / one:.2f} | {asyn / ss:.2f}")
        lines.append(f"| {p['envs']} x {p['agents']} | {'yes' if p['cpu_affinity'] else 'no'} | "
                     f"{sync:.0f} | {sync / one:.2f} | {sync / pinned:.2f} | {sync / ss:.2f} | "
                     f"{async_cells} | {p['python_us_per_agent_step']:.1f} | "
                     f"{p['thread_cpu_us_per_agent_step']:.0f} | {p['first_reset_s']:.2f} |")
    separate = v["separate_envs_agent_steps_per_s"]
    lines += ["", f"One env of 2 agents: {one:.0f} agent-steps/s; pinned (cpus= every CPU): "
              f"{pinned:.0f}, its main thread "
              f"{v['single_env_pinned_thread_cpu_us_per_agent_step']:.0f} us CPU per agent-step; "
              f"SuperSuit concat_vec_envs_v1 (2 envs x 2 agents, 2 processes): {ss:.0f}; "
              f"2 envs x 2 agents in 2 processes, each env on its share of the CPUs "
              f"(no pool, the machine's ceiling for 2 envs): {separate:.0f} "
              f"({separate / ss:.2f} x SuperSuit)", ""]
    return "\n".join(lines)


def markdown(r: dict) -> str:
    m = r["machine"]
    names = labels(r)
    lines = [f"# Benchmark: {r['task']}, {r['obs']} frames, {r['date']}", "",
             f"Machine: {m['cores']} cores ({m['cpu']}), renderer {m.get('renderer', '?')}, "
             f"LP_NUM_THREADS={m['lp_num_threads']}, Python {r['python']}"
             + (" (quick run: short windows, figures are rough)" if r["quick"] else ""), "",
             "fsN: frameskip N (strict steps, the default); "
             "pipelined_fsN: the same with `pipelined=True`.", "",
             "| agents | engine ceiling frames/s | "
             + " | ".join(f"agent-steps/s {k} | efficiency {k}" for k in names) + " |",
             "| --- | --- | " + " | ".join("--- | ---" for _ in names) + " |"]
    for row in r["throughput"]:
        lines.append(f"| {row['agents']} | {row['ceiling_frames_per_s']:.0f} | " + " | ".join(
            f"{row[f'{k}_agent_steps_per_s']:.0f} | {row[f'{k}_efficiency']:.2f}"
            for k in names) + " |")
    lines += ["", "| agents | cold start s | soft reset median ms | p95 ms | close s |",
              "| --- | --- | --- | --- | --- |"]
    for row in r["lifecycle"]:
        lines.append(f"| {row['agents']} | {row['cold_start_s']:.2f} "
                     f"| {row['reset_median_ms']:.1f} | {row['reset_p95_ms']:.1f} "
                     f"| {row['close_s']:.2f} |")
    mem = r["memory"]
    first, last = mem["samples"][1], mem["samples"][-1]
    lines += ["", f"Memory, {mem['agents']} agents, resident MB at step {first['step']} -> "
              f"{last['step']}: server {first['server_mb']:.0f} -> {last['server_mb']:.0f}, "
              "clients " + ", ".join(f"{a:.0f} -> {b:.0f}"
                                     for a, b in zip(first["clients_mb"], last["clients_mb"])),
              "", f"SuperSuit concat_vec_envs_v1 (2 envs x 2 agents, 2 processes): "
              f"{r['supersuit']['agent_steps_per_s']:.0f} agent-steps/s", "",
              "vector_env pool (docs/vector.md):", "", vector_markdown(r["vector"]),
              "", "Declared observations, no frame drawn (docs/environments.md#observations):",
              "", observations_markdown(r["observations"])]
    return "\n".join(lines)


def plot(r: dict, path: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = r["throughput"]
    n = [row["agents"] for row in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(n, [row["ceiling_frames_per_s"] for row in rows], "k-o",
             label="engine ceiling (frames/s)")
    for k in labels(r):
        ax1.plot(n, [row[f"{k}_agent_steps_per_s"] for row in rows], "-o",
                 label=f"parallel_env {k} (agent-steps/s)")
        ax2.plot(n, [row[f"{k}_efficiency"] for row in rows], "-o", label=k)
    ax2.axhline(TARGET_EFFICIENCY, color="grey", ls="--", label="target")
    for ax, title in ((ax1, "throughput, summed over agents"), (ax2, "bridge efficiency")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(n, [str(x) for x in n])
        ax.set_xlabel("agents")
        ax.set_title(title)
        ax.legend(fontsize=8)
    ax2.set_ylim(0, 1.1)
    fig.suptitle(f"{r['task']} {r['obs']}, {r['machine']['cores']} cores, "
                 f"{r['machine'].get('renderer', '')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="commons_harvest",
                   help="a task that takes up to max(--agents) agents")
    p.add_argument("--agents", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--frameskips", type=int, nargs="+", default=[1, 4])
    p.add_argument("--pipelined-frameskips", type=int, nargs="*", default=[1, 4],
                   help="frameskips to measure with pipelined=True too")
    p.add_argument("--resets", type=int, default=50)
    p.add_argument("--memory-steps", type=int, default=10_000)
    p.add_argument("--vector-envs", type=int, nargs="+", default=[1, 2, 4],
                   help="envs (of 2 agents) in the vector_env pools measured")
    p.add_argument("--observation-agents", type=int, nargs="+", default=[1, 2],
                   help="agents of the envs that observe a declared observation, not frames")
    p.add_argument("--observation", help="the declared observation they observe (default: "
                   "the task's first)")
    p.add_argument("--observation-rounds", type=int, default=3,
                   help="interleaved rounds of those measurements (each figure their median)")
    p.add_argument("--scenario", default="commons_harvest_2",
                   help="the scenario of --only scenarios (default: 16 players, 4 focal)")
    p.add_argument("--scenario-steps", type=int, default=600)
    p.add_argument("--obs-sizes", type=int, nargs="+", default=[64, 128, 256],
                   help="frame sizes of --only frames (square, in pixels)")
    p.add_argument("--only", choices=["vector", "observations", "scenarios", "frames"],
                   help="measure only this part; writes <part>.json and <part>.md to --out")
    p.add_argument("--quick", action="store_true", help="short windows, to check the harness")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args(argv)
    if args.quick:
        args.resets, args.memory_steps = min(args.resets, 5), min(args.memory_steps, 200)
        args.observation_rounds = 1
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only:
        results = {"task": args.task, "machine": measure.machine(),
                   "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M"),
                   "quick": args.quick}
        title = f"{args.task}, 64x64 frames, {results['date']}, {results['machine']['cores']} cores"
        if args.only == "vector":
            name, phases = "vector", Phases(len(args.vector_envs) + 5)
            results["vector"] = run_vector(args, phases)
            md = f"# vector_env pool: {title}\n\n" + vector_markdown(results["vector"])
        elif args.only == "observations":
            name = f"observations-{args.task}"
            phases = Phases(len(args.observation_agents) * len(OBSERVATION_CASES)
                            * args.observation_rounds)
            results["observations"] = run_observations(args, phases)
            md = f"# Declared observations: {title}\n\n" + observations_markdown(
                results["observations"])
        elif args.only == "frames":
            name, phases = "frames", Phases(len(args.obs_sizes) * len(args.agents))
            results["frames"] = run_frames(args, phases)
            md = frames_markdown(results)
        else:
            name, phases = "scenarios", Phases(1)
            results["steps"] = 50 if args.quick else args.scenario_steps
            phases.start(f"scenario {args.scenario}, {results['steps']} random steps")
            results["scenarios"] = measure.scenario_figures(args.scenario, results["steps"])
            md = scenarios_markdown(results)
        phases.close()
        (args.out / f"{name}.json").write_text(json.dumps(results, indent=1))
        (args.out / f"{name}.md").write_text(md)
        print(md)
        print(f"[bench] wrote {args.out}/{name}.json, {name}.md")
        if any("error" in row for row in results.get("frames", [])):
            raise SystemExit("[bench] some measurements failed: their errors are in "
                             f"{args.out}/{name}.json")
        return results
    results = run(args)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    (args.out / "results.md").write_text(markdown(results))
    plot(results, args.out / "results.png")
    print(markdown(results))
    print(f"[bench] wrote {args.out}/results.json, results.md, results.png")
    return results


if __name__ == "__main__":
    main()
