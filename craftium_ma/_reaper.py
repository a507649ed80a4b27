"""Kills an environment's engine processes and removes its directory when the
Python parent dies. Reads pids from stdin; EOF without "done" means the
parent is gone."""

import os
import shutil
import signal
import sys


def main():
    directory = sys.argv[1]
    pids = []
    for line in sys.stdin:
        if line.strip() == "done":
            return
        pids.append(int(line))
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
