"""craftium-ma benchmark of the paced runner and the live viewer, in one run.

    .venv/bin/python benchmarks/live.py                 # 20 steps/s for 60 s
    .venv/bin/python benchmarks/live.py --seconds 10    # a short check

A Runner steps small_room at --tick-rate with random actions while its viewer app
serves a websocket client. Reports the wall time of the run against its schedule
(target: within 1 % of seconds), the steps' lateness, and the mosaics per second the
client got (target: at least 10). Writes live.json to --out. See docs/humans.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import threading
import time
from pathlib import Path

import numpy as np
import uvicorn
from websockets.sync.client import connect

import craftium_ma
from craftium_ma.viewer import create_app

TOKEN = "benchmark"


def measure(args) -> dict:
    env = craftium_ma.parallel_env(args.task, num_agents=args.agents, obs_size=args.obs_size)
    rng = np.random.default_rng(0)
    runner = craftium_ma.Runner(env, lambda a, o, i: int(rng.integers(env.action_space(a).n)),
                                tick_rate=args.tick_rate, seed=0)
    step_times = []
    runner.subscribe(lambda e: e.type == "step" and step_times.append(time.monotonic()))
    server = uvicorn.Server(uvicorn.Config(create_app(runner, TOKEN), port=0,
                                           log_level="warning", ws="websockets-sansio"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    mosaics = []
    steps = round(args.seconds * args.tick_rate) + 1

    def watch():
        with connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}", open_timeout=30) as ws:
            while runner.snapshot().status != "ended":
                if isinstance(ws.recv(timeout=30), bytes):
                    mosaics.append(time.monotonic())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        runner.run(max_steps=steps)
    finally:
        watcher.join(timeout=60)
        server.should_exit = True
        env.close()
    t = np.array(step_times)
    schedule = t[0] + np.arange(len(t)) / args.tick_rate
    wall = float(t[-1] - t[0])
    seen = [m for m in mosaics if t[0] <= m <= t[-1]]
    return {"task": args.task, "agents": args.agents, "obs_size": args.obs_size,
            "tick_rate": args.tick_rate, "steps": len(t), "scheduled_s": args.seconds,
            "wall_s": wall, "error_percent": 100 * (wall - args.seconds) / args.seconds,
            "lateness_ms": {"median": float(np.median(t - schedule) * 1e3),
                            "max": float(np.max(t - schedule) * 1e3)},
            "mosaics_per_s": len(seen) / wall, "machine": platform.node(),
            "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="small_room")
    p.add_argument("--agents", type=int, default=2)
    p.add_argument("--obs-size", type=int, default=64)
    p.add_argument("--tick-rate", type=float, default=20.0)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args(argv)
    result = measure(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "live.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
