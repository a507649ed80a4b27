"""duel: two agents with steel swords fight in a closed arena (mods/duel/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("duel")
