"""The measurements of the benchmark: each starts its own engine processes and closes them."""

from __future__ import annotations

import dataclasses
import os
import re
import statistics
import time

import numpy as np

import craftium_ma
from craftium_ma.build import find_engine
from craftium_ma.launcher import EngineProcesses
from craftium_ma.vector import cpus_per_env

# The engine's own frame counter: the client's profiler logs, every interval of
# real time, how many frames called "Irr: drawcalls" (once per drawn frame).
PROFILER_INTERVAL_S = 1.0
PROFILER_FRAMES = re.compile(r"Irr: drawcalls _*\s+(\d+)x")
RENDERER = re.compile(r"Irrlicht: (.*(?:llvmpipe|Mesa|NVIDIA|AMD|Intel).*)")
FREE_RUNNING = {  # what a stock client needs to draw as fast as it can
    "fps_max": "100000", "fps_max_unfocused": "100000", "vsync": "false",
    "profiler_print_interval": str(PROFILER_INTERVAL_S), "debug_log_level": "info",
}


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def make_env(task: str, agents: int, frameskip: int = 1, obs_size: int = 64,
             pipelined: bool = False, cpus=None, observations="rgb"):
    return craftium_ma.parallel_env(task, num_agents=agents, frameskip=frameskip, obs_size=obs_size,
                                    max_cycles=10**9, pipelined=pipelined, cpus=cpus,
                                    observations=observations)


def engine_ceiling(task: str, agents: int, seconds: float, warmup: float = 4.0,
                   obs_size: int = 64) -> dict:
    """N clients of our build on the engine's own random input, no Python in the loop,
    against a normal (free-running) server with the task's world and the same
    render settings as the environment. Returns frames/s summed over clients."""
    config = make_env(task, agents, obs_size=obs_size).launch_config()
    config = dataclasses.replace(config, client_settings={**config.client_settings, **FREE_RUNNING})
    processes = EngineProcesses(config, find_engine())
    try:
        processes.start_server(lockstep=False)
        _wait_for_log(processes, "server", "listening on", timeout=30)
        processes.start_clients(random_input=True)
        for agent in config.agents:  # in the game: the profiler logs its first interval
            _wait_for_log(processes, agent, "Profiler:", timeout=60)
        time.sleep(warmup + seconds)
        processes.check_alive()
        fps, renderer = [], ""
        intervals = int(seconds / PROFILER_INTERVAL_S)  # the last ones, after the warm-up
        for agent in config.agents:
            log = (processes.dir / f"{agent}.log.debug").read_text(errors="replace")
            counts = [int(c) for c in PROFILER_FRAMES.findall(log)]
            if len(counts) < intervals:
                raise RuntimeError(f"the client of {agent} logged {len(counts)} profiler "
                                   f"intervals, expected {intervals}")
            fps.append(statistics.mean(counts[-intervals:]) / PROFILER_INTERVAL_S)
            renderer = renderer or next(iter(RENDERER.findall(log)), "unknown")
        pids = processes.pids
        rss = {"server": rss_mb(pids.pop("server")), "clients": [rss_mb(p) for p in pids.values()]}
        return {"frames_per_s": sum(fps), "per_client": fps, "renderer": renderer, "rss_mb": rss}
    finally:
        processes.close()


def _wait_for_log(processes: EngineProcesses, name: str, text: str, timeout: float):
    path = processes.dir / f"{name}.log.debug"
    deadline = time.monotonic() + timeout
    while not (path.exists() and text in path.read_text(errors="replace")):
        processes.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} did not log {text!r} within {timeout} s")
        time.sleep(0.05)


class RandomActions:
    """Seeded uniform random actions for whichever agents are alive."""

    def __init__(self, env, seed: int = 0):
        self.env = env
        self.rng = np.random.default_rng(seed)

    def __call__(self) -> dict:
        return {a: int(self.rng.integers(self.env.action_space(a).n)) for a in self.env.agents}


def env_throughput(task: str, agents: int, frameskip: int, agent_steps: int,
                   pipelined: bool = False, cpus=None, observations="rgb",
                   obs_size: int = 64) -> dict:
    """parallel_env agent-steps/s (summed over agents) with random actions, and the CPU
    time of the calling thread per agent-step; `observations` as parallel_env's.

    Episodes that end are reset outside the timed spans."""
    env = make_env(task, agents, frameskip, obs_size, pipelined=pipelined, cpus=cpus,
                   observations=observations)
    try:
        env.reset(seed=0)
        act = RandomActions(env)
        for _ in range(20):  # warm-up
            env.step(act())
        done, elapsed, cpu = 0, 0.0, 0.0
        while done < agent_steps:
            if not env.agents:
                env.reset()
            start, start_cpu = time.perf_counter(), time.thread_time()
            env.step(act())
            elapsed += time.perf_counter() - start
            cpu += time.thread_time() - start_cpu
            done += len(env.possible_agents)
        return {"agent_steps_per_s": done / elapsed, "env_steps_per_s": done / agents / elapsed,
                "thread_cpu_us_per_agent_step": 1e6 * cpu / done,
                "observation_shape": list(env.observation_space(env.possible_agents[0]).shape)}
    finally:
        env.close()


def _pinned_env_steps(task: str, agents: int, cpus: list, seed: int, seconds: float, ready, out):
    """In a process of its own: one env on `cpus`, stepped for `seconds` once every such
    process is ready (the barrier `ready`); puts its agent-steps/s on `out`."""
    env = make_env(task, agents, cpus=cpus)
    try:
        env.reset(seed=seed)
        act = RandomActions(env, seed=seed)
        for _ in range(20):  # warm-up
            env.step(act())
        ready.wait(timeout=120)
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            if not env.agents:
                env.reset()
            env.step(act())
            done += agents
        out.put(done / (time.perf_counter() - start))
    finally:
        env.close()


def separate_envs_throughput(task: str, envs: int, agents: int, seconds: float) -> dict:
    """`envs` envs in as many Python processes, each env pinned to its share of the CPUs
    as a pool shares them out, stepped at the same time: what the machine does with that
    many envs and no pool, the ceiling a pool of them can approach. Summed agent-steps/s."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    ready, out = ctx.Barrier(envs), ctx.Queue()
    shares = cpus_per_env(True, envs)
    workers = [ctx.Process(target=_pinned_env_steps,
                           args=(task, agents, shares[e], e, seconds, ready, out))
               for e in range(envs)]
    for w in workers:
        w.start()
    try:
        rates = [out.get(timeout=seconds + 180) for _ in workers]
    finally:
        for w in workers:  # one that failed leaves the others at the barrier
            w.join(timeout=60)
            if w.is_alive():
                w.terminate()
    return {"envs": envs, "agents": agents, "agent_steps_per_s": sum(rates)}


def lifecycle(task: str, agents: int, resets: int, steps_between: int = 5) -> dict:
    """Cold start (construction plus first reset), soft reset latency, close time."""
    start = time.perf_counter()
    env = make_env(task, agents)
    try:
        env.reset(seed=0)
        cold = time.perf_counter() - start
        act = RandomActions(env)
        latencies = []
        for i in range(resets):
            for _ in range(steps_between):
                if env.agents:
                    env.step(act())
            start = time.perf_counter()
            env.reset(seed=i + 1)
            latencies.append(time.perf_counter() - start)
    finally:
        start = time.perf_counter()
        env.close()
        close = time.perf_counter() - start
    return {"cold_start_s": cold, "close_s": close,
            "reset_median_ms": 1000 * statistics.median(latencies),
            "reset_p95_ms": 1000 * float(np.percentile(latencies, 95))}


def memory(task: str, agents: int, steps: int, checkpoints: int = 5) -> dict:
    """Resident memory of the server and each client along `steps` random steps."""
    env = make_env(task, agents)
    try:
        env.reset(seed=0)
        act = RandomActions(env)
        pids = list(env.engine_pids().values())  # server first
        samples = []
        for i in range(steps + 1):
            if i % (steps // checkpoints) == 0:
                rss = [rss_mb(pid) for pid in pids]
                samples.append({"step": i, "server_mb": rss[0], "clients_mb": rss[1:]})
            if not env.agents:
                env.reset()
            env.step(act())
        return {"samples": samples,
                "client_growth_mb": max(samples[-1]["clients_mb"][k] - samples[1]["clients_mb"][k]
                                        for k in range(agents)),
                "server_growth_mb": samples[-1]["server_mb"] - samples[1]["server_mb"]}
    finally:
        env.close()


class PoolPythonCost:
    """Time of the pool's own Python: the wall time of its calls less what one env pays
    too, which the pool counts in `env_seconds` (the envs' split-step calls: ZeroMQ,
    JSON, frame decoding, action checks, result dicts; and the poller's waits). On a
    busy machine the figure includes preemptions. `thread_cpu` is all the CPU time of
    the calling thread, the env's part included."""

    def __init__(self, pool):
        self.pool = pool

    def __enter__(self):
        self.per_call, self.cpu = [], time.thread_time()
        return self

    def call(self, f, *args):
        env_seconds, start = self.pool.env_seconds, time.perf_counter()
        f(*args)
        self.per_call.append(time.perf_counter() - start - (self.pool.env_seconds - env_seconds))

    def __exit__(self, *exc):
        self.thread_cpu = time.thread_time() - self.cpu


def pool_throughput(task: str, envs: int, agents: int, agent_steps: int,
                    batch_size: int | None = None, cpu_affinity: bool = True) -> dict:
    """craftium_ma.vector_env agent-steps/s (summed over rows) with random actions: step()
    of all envs at once (sync), and, with batch_size < envs, send()/recv() of batch_size
    envs at a time (async). Also the pool's own Python time per agent-step (sync), and the
    first reset's time (the engine processes of all envs start then)."""
    start = time.perf_counter()
    pool = craftium_ma.vector_env(task, envs, batch_size=batch_size or envs, seed=0,
                                  cpu_affinity=cpu_affinity, num_agents=agents, obs_size=64,
                                  max_cycles=10**9)
    try:
        rng = np.random.default_rng(0)
        n = pool.single_action_space.n
        pool.reset()
        first_reset = time.perf_counter() - start
        for _ in range(20):  # warm-up
            pool.step(rng.integers(n, size=pool.num_envs))
        done, start = 0, time.perf_counter()
        with PoolPythonCost(pool) as cost:
            while done < agent_steps:
                cost.call(pool.step, rng.integers(n, size=pool.num_envs))
                done += pool.num_envs
        out = {"envs": envs, "agents": agents, "batch_size": pool.batch_size,
               "cpu_affinity": cpu_affinity,
               "first_reset_s": first_reset,
               "sync_agent_steps_per_s": done / (time.perf_counter() - start),
               "python_us_per_agent_step": 1e6 * statistics.median(cost.per_call) / pool.num_envs,
               "thread_cpu_us_per_agent_step": 1e6 * cost.thread_cpu / done}
        if pool.batch_size < envs:
            pool.send(rng.integers(n, size=pool.num_envs))
            done, start = 0, time.perf_counter()
            while done < agent_steps:
                _, _, _, _, infos = pool.recv()
                ids = infos["env_id"][::agents]
                pool.send(rng.integers(n, size=len(ids) * agents), ids)
                done += len(ids) * agents
            out["async_agent_steps_per_s"] = done / (time.perf_counter() - start)
        return out
    finally:
        pool.close()


def supersuit_throughput(task: str, envs: int, agents: int, steps: int) -> dict:
    """SuperSuit concat_vec_envs_v1: `envs` envs x `agents` agents over `envs` processes."""
    import supersuit as ss

    env = ss.black_death_v3(make_env(task, agents))
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), envs,
                                num_cpus=envs, base_class="gymnasium")
    try:
        vec.reset(seed=0)
        rng = np.random.default_rng(0)
        n = vec.action_space.n
        for _ in range(20):
            vec.step(rng.integers(n, size=vec.num_envs))
        start = time.perf_counter()
        for _ in range(steps):
            vec.step(rng.integers(n, size=vec.num_envs))
        elapsed = time.perf_counter() - start
    finally:
        vec.close()
    return {"agent_steps_per_s": steps * vec.num_envs / elapsed, "slots": vec.num_envs}


def machine() -> dict:
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cores": os.cpu_count(), "cpu": model,
            # the launcher's default for the engine processes, unless set here
            "lp_num_threads": os.environ.get("LP_NUM_THREADS", "0")}


def machine_with_load() -> dict:
    """machine() and its load, for a benchmark's figures (the xland benchmarks')."""
    return {**machine(), "nproc": len(os.sched_getaffinity(0)), "load_average": os.getloadavg()}


def machine_line(results: dict) -> str:
    """The machine_with_load() of `results` in a line of Markdown."""
    m = results["machine"]
    return (f"Machine: {m['nproc']} cores (nproc), {m['cpu']}, load average "
            f"{m['load_average'][0]:.2f} at the start; {results['date']}.")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scenario_figures(name: str, steps: int) -> dict:
    """A scenario's random focal players for `steps` steps: players' steps/s, the engine
    processes' memory, and the CPU per step of a drawing (focal) and a frameless (bot)
    client, against the same world with every client drawing (a plain env of the task)."""
    from craftium_ma.evaluation import scenario_env
    s = craftium_ma.scenario(name)
    scenario = scenario_env(name, max_cycles=10**9)
    plain = craftium_ma.parallel_env(s.task, num_agents=s.num_players, max_cycles=10**9,
                                     task_options=s.task_options)
    figures = {"scenario": name, "players": s.num_players, "focal": sum(s.is_focal)}
    try:
        for label, env, world in (("with_bots", scenario, scenario.world.env),
                                  ("all_drawn", plain, plain)):
            env.reset(seed=0)
            act = RandomActions(env)
            pids = world.engine_pids()
            before = {a: cpu_seconds(p) for a, p in pids.items()}
            start = time.perf_counter()
            for _ in range(steps):
                if not env.agents:
                    env.reset()
                env.step(act())
            elapsed = time.perf_counter() - start
            cpu = {a: (cpu_seconds(p) - before[a]) / steps for a, p in pids.items()}
            drawn = [cpu[a] for a in world.drawn_agents]
            frameless = [cpu[a] for a in world.possible_agents if a not in world.drawn_agents]
            figures[label] = {
                "player_steps_per_s": steps * s.num_players / elapsed,
                "memory_mb": sum(rss_mb(p) for p in pids.values()),
                "server_cpu_ms_per_step": 1000 * cpu["server"],
                "drawing_client_cpu_ms_per_step": 1000 * statistics.mean(drawn),
                "frameless_client_cpu_ms_per_step": (1000 * statistics.mean(frameless)
                                                     if frameless else None)}
    finally:
        scenario.close()
        plain.close()
    return figures
