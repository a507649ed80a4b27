"""The craftium-ma command (also `python -m craftium_ma`).

    craftium-ma engine build   build the patched engine into the user cache (ninja shows progress)
    craftium-ma engine path    print that build's directory
    craftium-ma doctor         what is installed and what is missing, with the command that adds it
    craftium-ma list           the shipped tasks: agents, kind, one line of description
    craftium-ma new-task NAME  write a working task folder to edit
    craftium-ma serve TASK     run a task with a policy and watch it live in a web page
    craftium-ma evaluate POLICY (--scenario NAME ... | --task TASK) --episodes N
                               score a policy in scenarios (focal per-capita return) or a task
    craftium-ma scenarios      the shipped scenarios: task, players, focal, tags
    craftium-ma join --address A --port P --name N --password-file F [-- ENGINE_ARGS]
                               join an env's world as a human, in a window of our engine
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys

from . import doctor, humans
from .build import EngineNotBuiltError
from .resources import BUILD_SCRIPT
from .scaffold import new_task
from .tasks import options_from_json, shipped_tasks

PROG = "craftium-ma"
BUILD_TIMEOUT_S = 3 * 3600  # a cold build takes about 9 minutes on 2 cores


def _fail(message: str, code: int = 2) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def engine_build(args) -> int:
    """Run engine/build.sh in the foreground; its output (ninja's [n/total]) is the progress."""
    build = subprocess.Popen(["bash", str(BUILD_SCRIPT)], start_new_session=True)
    try:
        return build.wait(timeout=BUILD_TIMEOUT_S)
    except (KeyboardInterrupt, subprocess.TimeoutExpired) as stopped:
        os.killpg(build.pid, signal.SIGTERM)  # the whole build: bash, cmake, ninja, compilers
        build.wait(timeout=60)
        if isinstance(stopped, KeyboardInterrupt):
            return _fail("engine build interrupted", 130)
        return _fail(f"engine build still running after {BUILD_TIMEOUT_S} s; stopped it", 1)


def engine_path(args) -> int:
    directory = doctor.recipe_build()
    if directory is None:
        return _fail("the engine for this craftium-ma is not built; "
                     f"build it with `{PROG} engine build`", 1)
    print(directory)
    return 0


def list_tasks(args) -> int:
    rows = [(t.id, f"{t.min_agents}-{t.max_agents}" if t.min_agents != t.max_agents
             else str(t.min_agents), t.kind, _first_sentence(t.description))
            for t in shipped_tasks().values()]
    rows.insert(0, ("task", "agents", "kind", "description"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for *cells, description in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(cells, widths)), description]))
    return 0


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[:end + 1]


def create_task(args) -> int:
    try:
        folder = new_task(args.name, args.dir)
    except (ValueError, FileExistsError) as e:
        return _fail(str(e))
    print(f"wrote {folder}; run it with craftium_ma.parallel_env(task_dir={str(folder)!r})")
    return 0


def serve(args) -> int:
    try:
        from .viewer.serve import serve as serve_task
    except ImportError as e:
        return _fail(f"serve needs the viewer extra ({e.name} is missing): "
                     f"{doctor.install_command('viewer')}")
    tick_rate = None if args.tick_rate == 0 else args.tick_rate
    if (args.task is None) == (args.task_dir is None):
        return _fail("serve takes a task id or --task-dir FOLDER, one of the two")
    try:
        reason = serve_task(args.task, task_dir=args.task_dir, policy=args.policy,
                            tick_rate=tick_rate,
                            humans=args.humans, port=args.port, log=args.log,
                            num_agents=args.num_agents, obs_size=args.obs_size, seed=args.seed,
                            max_steps=args.max_steps, episodes=args.episodes,
                            record=args.record)
    except (ValueError, TypeError, OSError, ImportError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        return 130
    print(f"craftium-ma: the run ended: {reason}")
    return 0 if reason in ("max_steps", "episodes", "stopped") else 1


def evaluate(args) -> int:
    from .evaluation import evaluate as run_evaluation
    try:
        env_kwargs = ({"task_options": options_from_json(args.task_options)}
                      if args.task_options else {})
        if args.observations:
            env_kwargs["observations"] = args.observations.split(",")
        results = run_evaluation(args.policy, args.scenario, task=args.task,
                                 episodes=args.episodes, seed=args.seed, records=args.out,
                                 **env_kwargs)
    except (ValueError, TypeError, EngineNotBuiltError) as e:
        return _fail(str(e))
    for result in results:
        if args.json:
            print(json.dumps(result))
        elif "scenario" in result:
            low, high = result["focal_per_capita_return_ci95"]
            print(f"{result['scenario']}: focal per-capita return "
                  f"{result['focal_per_capita_return']:.3f} [{low:.3f}, {high:.3f}] over "
                  f"{result['episodes']} episodes (background "
                  f"{result['background_per_capita_return']:.3f}; config "
                  f"{result['config_hash'][:12]})")
        else:
            low, high = result["mean_return_ci95"]
            print(f"{result['task']}: mean return {result['mean_return']:.3f} "
                  f"[{low:.3f}, {high:.3f}] over {result['episodes']} episodes")
    return 0


def list_scenarios(args) -> int:
    from .evaluation import scenario, scenarios
    for name in scenarios():
        s = scenario(name)
        tags = ", ".join(sorted(s.tags))
        print(f"{name:20} {s.task:17} {len(s.focal_slots):2} of {s.num_players:2} focal  "
              f"[{tags}]  {s.description}")
    return 0


def join(args) -> int:
    """Start our engine as an ordinary windowed client of an env's server."""
    engine_args = args.engine_args[1:] if args.engine_args[:1] == ["--"] else args.engine_args
    try:
        return humans.join(args.address, args.port, args.name, args.password_file, engine_args)
    except (FileNotFoundError, EngineNotBuiltError, RuntimeError) as e:
        return _fail(str(e))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="craftium-ma: multi-agent tasks in Luanti")
    commands = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    engine = commands.add_parser("engine", help="the patched Luanti build")
    engine_commands = engine.add_subparsers(dest="engine_command", required=True, metavar="COMMAND")
    engine_commands.add_parser(
        "build", help="build it into the user cache (once; about 9 minutes cold on 2 cores)"
    ).set_defaults(run=engine_build)
    engine_commands.add_parser(
        "path", help="print the build's directory"
    ).set_defaults(run=engine_path)
    commands.add_parser(
        "doctor", help="what is installed and what is missing"
    ).set_defaults(run=lambda args: doctor.main())
    commands.add_parser(
        "list", aliases=["tasks"], help="the shipped tasks"
    ).set_defaults(run=list_tasks)
    create = commands.add_parser("new-task", help="write a working task folder to edit")
    create.add_argument("name")
    create.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    create.set_defaults(run=create_task)
    view = commands.add_parser("serve", help="run a task and watch it live in a web page")
    view.add_argument("task", nargs="?", help="a shipped task (see list), or give --task-dir")
    view.add_argument("--task-dir", help="a task folder of your own (see new-task)")
    view.add_argument("--policy", default="random",
                      help="random, or a checkpoint.pt of examples/train_ppo.py (default: random)")
    view.add_argument("--tick-rate", type=float, default=20.0,
                      help="env steps per second (default 20: realtime; 0: as fast as possible)")
    view.add_argument("--humans", type=int, default=0, help="seats for human players")
    view.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free one)")
    view.add_argument("--log", help="write every event to this JSONL file")
    view.add_argument("--num-agents", type=int)
    view.add_argument("--obs-size", type=int, help="frame size in pixels (default: the task's)")
    view.add_argument("--seed", type=int, help="seed of the first episode and the random policy")
    view.add_argument("--max-steps", type=int, help="end the run after this many env steps")
    view.add_argument("--episodes", type=int, help="end the run after this many episodes")
    view.add_argument("--record", metavar="PATH",
                      help="write every step's views to this .mp4 or .gif (the record extra)")
    view.set_defaults(run=serve)
    scoring = commands.add_parser(
        "evaluate", help="score a policy in scenarios or a task",
        description="Play a policy as the focal population of scenarios (focal per-capita "
                    "return, 95% interval) or as every agent of a task (mean return).")
    scoring.add_argument("policy", help="random, scripted, a bot's name, or a checkpoint.pt "
                                        "(of examples/train_ppo.py, or a BenchMARL policy "
                                        "saved by save_policy)")
    where = scoring.add_mutually_exclusive_group(required=True)
    where.add_argument("--scenario", action="append", metavar="NAME",
                       help="a scenario (repeat for more; see `scenarios`)")
    where.add_argument("--task", help="a shipped task, played by the policy alone (a checkpoint "
                                      "plays in the env of its training)")
    scoring.add_argument("--episodes", type=int, default=10)
    scoring.add_argument("--seed", type=int, default=0, help="episode k has seed SEED + k")
    scoring.add_argument("--json", action="store_true", help="one JSON line per result")
    scoring.add_argument("--out", metavar="FILE", help="write one JSON line per episode here")
    scoring.add_argument("--task-options", help="a JSON object of task options (with --scenario: "
                                                "over its own, another configuration)")
    scoring.add_argument("--observations", help="with --task: observation names, comma-"
                                                "separated (a checkpoint brings its own)")
    scoring.set_defaults(run=evaluate)
    commands.add_parser(
        "scenarios", help="the shipped scenarios"
    ).set_defaults(run=list_scenarios)
    joining = commands.add_parser(
        "join", help="join an env's world as a human (see env.human_login)",
        description="Start the engine as a windowed client logged in as one of an env's "
                    "humans. Arguments after -- go to the engine (e.g. --config FILE).")
    joining.add_argument("--address", required=True, help="the server's address")
    joining.add_argument("--port", required=True, type=int, help="the server's UDP port")
    joining.add_argument("--name", required=True, help="the human's player name")
    joining.add_argument("--password-file", required=True, help="file holding the password")
    joining.add_argument("engine_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    joining.set_defaults(run=join)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)
