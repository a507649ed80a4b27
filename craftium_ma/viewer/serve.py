"""`python -m craftium_ma serve TASK`: a paced run of a task with its live viewer."""

from __future__ import annotations

import secrets
import socket
import threading

import uvicorn

from ..events import EventLog
from ..make import parallel_env
from ..policies import RandomPolicy
from ..record import record_run
from ..runner import Runner
from ..tasks import load_task
from .app import create_app

START_TIMEOUT_S = 180.0  # the first reset starts the engine processes


def env_and_policy(task: str | None, policy: str = "random", humans: int = 0,
                   num_agents: int | None = None, obs_size: int | None = None,
                   seed: int | None = None, task_dir: str | None = None):
    """(the env, the policy) that serve() runs; the env starts nothing yet."""
    env_kwargs = {"num_agents": num_agents, "obs_size": obs_size}
    if policy != "random":
        from ..policies import checkpoint_policy
        task_id = task if task_dir is None else load_task(task_dir).id
        act, env_kwargs = checkpoint_policy(policy, task_id, seed)
    env_kwargs.update(humans=humans or None, task_dir=task_dir)
    env = parallel_env(task, **{k: v for k, v in env_kwargs.items() if v is not None})
    return env, (RandomPolicy(env, seed) if policy == "random" else act)


def serve(task: str | None, policy: str = "random", tick_rate: float | None = 20.0,
          humans: int = 0, port: int = 8000, log: str | None = None,
          num_agents: int | None = None, obs_size: int | None = None, seed: int | None = None,
          max_steps: int | None = None, episodes: int | None = None,
          task_dir: str | None = None, record: str | None = None, out=print) -> str:
    """Run `task` (or the task folder `task_dir`) with `policy` ("random" or a train_ppo.py
    checkpoint) and serve the viewer on 127.0.0.1:port until the run ends or Ctrl-C;
    returns the run's end reason. `record`: write the run's mosaics to this .mp4 or .gif."""
    env, act = env_and_policy(task, policy, humans, num_agents, obs_size, seed, task_dir)
    task = env.task.id
    runner = Runner(env, act, tick_rate=tick_rate, seed=seed)
    recording = record_run(runner, record) if record else None
    if hasattr(act, "on_event"):
        runner.subscribe(act.on_event)
    event_log = EventLog(log) if log else None
    if event_log:
        runner.subscribe(event_log)
    started = threading.Event()
    runner.subscribe(lambda e: e.type == "run_started" and started.set())
    token = secrets.token_urlsafe(16)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # connections wait from now on, before uvicorn takes the socket
    server = uvicorn.Server(uvicorn.Config(create_app(runner, token), log_level="warning",
                                           ws="websockets-sansio"))
    result = {}

    def run():
        try:
            result["reason"] = runner.run(max_steps=max_steps, episodes=episodes)
        finally:
            started.set()
            server.should_exit = True

    thread = threading.Thread(target=run, name="craftium-ma runner")
    try:
        thread.start()
        if not started.wait(START_TIMEOUT_S):
            raise TimeoutError(f"the run of {task!r} did not start within {START_TIMEOUT_S:.0f} s")
        if thread.is_alive():
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
            out(f"craftium-ma: serving {task} at {url}", flush=True)
            out(f"craftium-ma: API token {token} (?token=... or an X-Token header)", flush=True)
            for name, login in runner.human_logins.items():
                out(f"craftium-ma: human {name} joins with: {' '.join(login.join_command())}",
                    flush=True)
            server.run(sockets=[sock])
    finally:
        if thread.is_alive():
            runner.stop(source="serve")
        thread.join(timeout=START_TIMEOUT_S)
        sock.close()
        env.close()
        if event_log:
            event_log.close()
        if recording:
            recording.close()
            out(f"craftium-ma: wrote {recording.frames} frames to {recording.path}", flush=True)
    return result.get("reason", "error")
