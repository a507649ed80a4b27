"""XLand-MiniGrid's rulesets in its own encoding: the encoding, the generator, the benchmarks,
its layouts and the episode's world (world.py) and a scripted planner (planner.py).

Engine-free: the 3D task that plays the rulesets is the mod mods/xland with its env
craftium_ma.envs.xland_v1.
"""

from .benchmark import Benchmark, load_benchmark, load_benchmark_from_path, registered_benchmarks
from .encoding import Colour, GoalId, RuleId, Ruleset, Tile, goal_reward, mission
from .generator import LEVELS, LevelParams, generate_benchmark

__all__ = ["LEVELS", "Benchmark", "Colour", "GoalId", "LevelParams", "RuleId", "Ruleset", "Tile",
           "generate_benchmark", "goal_reward", "load_benchmark", "load_benchmark_from_path",
           "mission", "registered_benchmarks"]
