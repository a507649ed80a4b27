"""chop_tree: +1 for each tree trunk node an agent digs (mods/chop_tree/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("chop_tree")
