"""The craftium-ma command (also `python -m craftium_ma`).

    craftium-ma engine build   build the patched engine into the user cache (ninja shows progress)
    craftium-ma engine path    print that build's directory
    craftium-ma doctor         what is installed and what is missing, with the command that adds it
    craftium-ma list           the shipped tasks: agents, kind, one line of description
    craftium-ma new-task NAME  write a working task folder to edit
    craftium-ma join --address A --port P --name N --password-file F [-- ENGINE_ARGS]
                               join an env's world as a human, in a window of our engine
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

from . import doctor, humans
from .build import EngineNotBuiltError
from .resources import BUILD_SCRIPT
from .scaffold import new_task
from .tasks import shipped_tasks

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


def join(args) -> int:
    """Start our engine as an ordinary windowed client of an env's server."""
    engine_args = args.engine_args[1:] if args.engine_args[:1] == ["--"] else args.engine_args
    try:
        return humans.join(args.address, args.port, args.name, args.password_file, engine_args)
    except (FileNotFoundError, EngineNotBuiltError) as e:
        return _fail(str(e))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="craftium-ma: multi-agent tasks in Luanti")
    commands = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    engine = commands.add_parser("engine", help="the patched Luanti build")
    engine_commands = engine.add_subparsers(dest="engine_command", required=True, metavar="COMMAND")
    engine_commands.add_parser(
        "build", help="build it into the user cache (once; about 9 minutes cold on 2 cores)"
    ).set_defaults(run=engine_build)
    engine_commands.add_parser("path", help="print the build's directory").set_defaults(run=engine_path)
    commands.add_parser(
        "doctor", help="what is installed and what is missing"
    ).set_defaults(run=lambda args: doctor.main())
    commands.add_parser("list", aliases=["tasks"], help="the shipped tasks").set_defaults(run=list_tasks)
    create = commands.add_parser("new-task", help="write a working task folder to edit")
    create.add_argument("name")
    create.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    create.set_defaults(run=create_task)
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
