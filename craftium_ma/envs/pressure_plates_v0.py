"""pressure_plates: both plates held at once open the goal room (mods/pressure_plates/task.toml)."""

from craftium_ma.make import task_module

env, parallel_env, raw_env = task_module("pressure_plates")
