"""Melting Pot's evaluation protocol in 3D: scenarios with background bots, focal
per-capita returns, held-out bots, reference scores (docs/scenarios.md)."""

from .population import BotSpec, World, bots, register_bot
from .catalogue import register_scenario, scenario, scenarios
from .env import ScenarioEnv
from .scoring import SCRIPTED, evaluate, normalised, reference_scores
from .scenario import Scenario


def scenario_env(name: str | Scenario, **env_kwargs) -> ScenarioEnv:
    """A PettingZoo ParallelEnv of the scenario's focal players (ScenarioEnv)."""
    return ScenarioEnv(name, **env_kwargs)


__all__ = ["SCRIPTED", "BotSpec", "Scenario", "ScenarioEnv", "World", "bots", "evaluate",
           "normalised", "reference_scores", "register_bot", "register_scenario", "scenario",
           "scenario_env", "scenarios"]
