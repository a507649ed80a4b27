"""craftium-ma: PettingZoo multi-agent environments in a shared Luanti world."""

from .build import EngineNotBuiltError
from .env import CraftiumParallelEnv
from .events import Event, EventBus, replay
from .infos import decode_text
from .make import env, env_class, parallel_env, raw_env
from .protocol import EngineError
from .runner import Runner, Snapshot
from .evaluation import Scenario, evaluate, scenario, scenario_env, scenarios
from .tasks import TaskError, tasks
from .vector import CraftiumVectorEnv, vector_env

__all__ = ["CraftiumParallelEnv", "CraftiumVectorEnv", "EngineError", "EngineNotBuiltError",
           "Event", "EventBus", "Runner", "Scenario", "Snapshot", "TaskError", "decode_text",
           "env", "env_class", "evaluate", "parallel_env", "raw_env", "replay", "scenario",
           "scenario_env", "scenarios", "tasks", "vector_env"]
__version__ = "0.1.0"


def _register_with_pettingzoo():
    """pettingzoo.make("parallel", "craftium/<task>-v<N>") where PettingZoo has a registry."""
    import functools

    import pettingzoo
    if not hasattr(pettingzoo, "register"):
        return
    from .tasks import shipped_tasks
    for task in shipped_tasks().values():
        env_id = f"craftium/{task.id}-v{task.version}"
        pettingzoo.register("parallel", env_id, functools.partial(parallel_env, task.id))
        pettingzoo.register("aec", env_id, functools.partial(env, task.id))


_register_with_pettingzoo()
