"""spiders_attack: a team with swords survives rounds of spiders (mods/spiders_attack/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("spiders_attack")
