"""commons_harvest: apples regrow only near other apples (mods/commons_harvest/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("commons_harvest")
