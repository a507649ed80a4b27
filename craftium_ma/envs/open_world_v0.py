"""open_world: +1 a wood or stone node dug in generated terrain (mods/open_world/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("open_world")
