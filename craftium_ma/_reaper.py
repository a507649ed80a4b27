"""Kills an environment's engine processes and removes its directory when the
Python parent dies. Reads pids from stdin; EOF without "done" means the
parent is gone. It ignores SIGTERM and SIGINT, so that `pkill -f` of a pattern
that also names it (craftium, the venv) leaves it to clean up after its parent."""

import os
import shutil
import signal
import sys


def main():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
