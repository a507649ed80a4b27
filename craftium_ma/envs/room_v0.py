"""room: find the red block in a closed room (mods/room/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("room")
