"""speleo: -y per step, descend into a torch-lit cave (mods/speleo/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("speleo")
