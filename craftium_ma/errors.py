"""Lua errors as a task's author reads them: the author's file and line first.

The server runs each task from a copy of its folder inside a temporary world
(<dir>/world/worldmods/<mod>/); Lua cuts long file names to their last 60
characters, "...". Both are mapped back to the task's own folder. Luanti's
"Runtime error from mod 'craftium_ma' in callback ..." preamble (the bridge
runs every hook) is dropped, so the message starts with the Lua message, whose
file and line are those of the code that raised it.
"""

from __future__ import annotations

import re
from pathlib import Path

_RUNTIME_PREAMBLE = re.compile(r"^Runtime error from mod '[^']*' in callback [^\n]*?\(\): ")
_CUT_PATH = re.compile(r"\.\.\.(\S+?\.lua)(?=:)")
_LOG_ERROR = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d: ERROR\[\w+\]: (.*)$")
_LOAD_FAILED = "ModError: Failed to load and run script from "
_FATAL = "ServerError: AsyncErr: Lua: "
LOG_CHUNK = 256  # Luanti's log stream flushes a long line in pieces of this length


class LuaErrorText:
    """Rewrites the paths of one world's mod copies back to the mods' own folders."""

    def __init__(self, world: Path, mods: list[Path]):
        self._copies = {f"{world}/worldmods/{Path(m).name}/": Path(m).resolve() for m in mods}

    def paths(self, text: str) -> str:
        """The text with the world copy's paths replaced by the mods' folders."""
        for copy, real in self._copies.items():
            text = text.replace(copy, f"{real}/")
        return _CUT_PATH.sub(lambda m: self._uncut(m.group(1)) or m.group(0), text)

    def _uncut(self, tail: str) -> str | None:
        """The real path of a "...tail" that Lua cut from a copy's path."""
        for copy, real in self._copies.items():
            for k in range(len(tail) - 1, -1, -1):
                if copy.endswith(tail[:k]) and (real / tail[k:]).is_file():
                    return str(real / tail[k:])
        return None

    def runtime_error(self, text: str) -> str:
        """A Lua error of a hook: the Lua message and its traceback, the paths the
        task's own."""
        return self.paths(_RUNTIME_PREAMBLE.sub("", text, count=1))

    def is_runtime_error(self, text: str) -> bool:
        return bool(_RUNTIME_PREAMBLE.match(text))

    def stop_error(self, log: str) -> str | None:
        """The Lua error that stopped the server, from its log, or None: one while
        loading the mods, or one in a callback outside the hooks (a globalstep, an
        area's on_loaded, ...), which Luanti treats as fatal."""
        lines = log.splitlines()
        for i, line in enumerate(lines):
            m = _LOG_ERROR.match(line)
            if m and m.group(1).startswith(_LOAD_FAILED):
                message = _joined(lines[i + 1:])  # the Lua message follows
            elif m and m.group(1).startswith(_FATAL):
                message = _joined(lines[i:])[len(_FATAL):]
            else:
                continue
            return self.runtime_error(message) if message else None
        return None


def _joined(lines: list[str]) -> str:
    """The message Luanti logged over the first ERROR lines of `lines`, whole again."""
    message = ""
    for line in lines:
        m = _LOG_ERROR.match(line)
        if not m or (message and m.group(1).startswith(("Check debug.txt", _LOAD_FAILED))):
            break
        message += m.group(1) + ("" if len(m.group(1)) == LOG_CHUNK else "\n")
    return message.rstrip("\n")
