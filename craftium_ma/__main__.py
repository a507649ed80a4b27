"""Command line: python -m craftium_ma new-task NAME [--dir PARENT] | tasks"""

import argparse
import sys

from . import tasks
from .scaffold import new_task


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m craftium_ma")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("new-task", help="write a working task folder to edit")
    create.add_argument("name")
    create.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    commands.add_parser("tasks", help="list the shipped tasks")
    args = parser.parse_args(argv)
    if args.command == "new-task":
        try:
            folder = new_task(args.name, args.dir)
        except (ValueError, FileExistsError) as e:
            print(f"new-task: {e}", file=sys.stderr)  # one line, like argparse's errors
            sys.exit(2)
        print(f"wrote {folder}; run it with craftium_ma.parallel_env(task_dir={str(folder)!r})")
    else:
        print("\n".join(tasks()))


if __name__ == "__main__":
    main()
