"""`python -m craftium_ma new-task NAME`: write a working task folder to edit."""

from __future__ import annotations

import re
from pathlib import Path

from .resources import TASK_TEMPLATE as TEMPLATE


def new_task(name: str, parent: str | Path = ".") -> Path:
    """Create parent/name with mod.conf, init.lua and task.toml; returns the folder."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"task name {name!r}: use lower-case letters, digits and _ "
                         "(it is also the Lua mod's name)")
    folder = Path(parent) / name
    if folder.exists():
        raise FileExistsError(f"{folder} exists already")
    folder.mkdir(parents=True)
    for template in sorted(TEMPLATE.glob("*.in")):
        (folder / template.stem).write_text(template.read_text().format(name=name))
    return folder
