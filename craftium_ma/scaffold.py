"""`python -m craftium_ma new-task NAME`: write a working task folder to edit."""

from __future__ import annotations

import re
from pathlib import Path

from .build import cache_dir
from .resources import TASK_TEMPLATE as TEMPLATE
from .tasks import BRIDGE_MOD_NAME, shipped_tasks


def _taken_names() -> dict[str, str]:
    """Names a new task's Lua mod cannot have, with what holds each."""
    taken = {name: "a shipped task" for task in shipped_tasks().values()
             for name in (task.id, task.mod.name)}
    game_mods = cache_dir() / "games" / "minetest_game" / "mods"
    if game_mods.is_dir():  # the game's mods are loaded beside the task (engine/build.sh)
        taken.update({p.name: "a mod of minetest_game" for p in game_mods.iterdir()})
    taken[BRIDGE_MOD_NAME] = "the bridge mod"
    return taken


def new_task(name: str, parent: str | Path = ".") -> Path:
    """Create parent/name with mod.conf, init.lua, task.toml and test_<name>.py;
    returns the folder. Raises ValueError for a bad name and FileExistsError for a
    taken folder, each with a one-line message."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"task name {name!r}: use lower-case letters, digits and _, "
                         "starting with a letter (it is also the Lua mod's name)")
    holder = _taken_names().get(name)
    if holder:
        raise ValueError(f"task name {name!r} is taken by {holder}; choose another")
    folder = Path(parent) / name
    if folder.exists():
        raise FileExistsError(f"{folder} exists already; choose another name or folder")
    folder.mkdir(parents=True)
    title = name.replace("_", " ")
    for template in sorted(TEMPLATE.glob("*.in")):
        target = folder / template.stem.replace("NAME", name)
        target.write_text(template.read_text().format(name=name, title=title))
    return folder
