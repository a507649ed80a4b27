"""Where the data craftium_ma ships lives: the bridge mod, the tasks, the task
template and the engine recipe (build.sh and its patches).

In a checkout (and an editable install) they are the repository's own mods/
and engine/; a wheel or sdist install carries copies of them in
craftium_ma/_data/, made at build time (setup.py). The task template is package
data in both.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
_PACKAGED = PACKAGE / "_data"
DATA = _PACKAGED if _PACKAGED.is_dir() else PACKAGE.parent

MODS = DATA / "mods"
BRIDGE_MOD = MODS / "craftium_ma"
ENGINE_RECIPE = DATA / "engine"
BUILD_SCRIPT = ENGINE_RECIPE / "build.sh"
TASK_TEMPLATE = PACKAGE / "templates" / "task"
