"""capture_the_flag: two teams, two flags (mods/capture_the_flag/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("capture_the_flag")
