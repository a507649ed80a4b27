"""The one way to build an env of a task: its manifest's env class, in every form.

parallel_env() is what the pool, the runner, `serve`, the RLlib and SB3 adapters and
the task modules (craftium_ma.envs) all build with, so that a task whose manifest says
`env_class = "module:Class"` (xland) gets that class everywhere.
"""

from __future__ import annotations

import importlib

from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .env import CraftiumParallelEnv
from .tasks import TaskError, find_task, load_task


def env_class(task: str | None = None, task_dir=None) -> type[CraftiumParallelEnv]:
    """The class parallel_env() builds for the task: the manifest's env class, or
    CraftiumParallelEnv where there is none (and where the task cannot be loaded: the
    constructor then says why)."""
    try:
        spec = load_task(task_dir) if task_dir is not None else find_task(task)
    except (TaskError, TypeError):
        return CraftiumParallelEnv
    if task is not None and task_dir is not None or spec.env_class is None:
        return CraftiumParallelEnv
    module, _, name = spec.env_class.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, CraftiumParallelEnv)):
        raise TaskError(f"task {spec.id!r}: env_class {spec.env_class!r} is not a "
                        f"CraftiumParallelEnv subclass")
    return cls


def parallel_env(task: str | None = None, **kwargs) -> CraftiumParallelEnv:
    """The task as a PettingZoo ParallelEnv (see CraftiumParallelEnv for kwargs), of the
    class env_class() names."""
    return env_class(task, kwargs.get("task_dir"))(task, **kwargs)


def raw_env(task: str | None = None, **kwargs):
    """The task as an AEC env, converted from the parallel one."""
    return parallel_to_aec_wrapper(parallel_env(task, **kwargs))


def env(task: str | None = None, **kwargs):
    """The task as an AEC env with PettingZoo's usual wrappers (order enforcing)."""
    return OrderEnforcingWrapper(raw_env(task, **kwargs))


def task_module(task_id: str):
    """env, parallel_env and raw_env of one task, for its craftium_ma.envs module."""
    def _env(**kwargs):
        return env(task_id, **kwargs)

    def _parallel_env(**kwargs):
        return parallel_env(task_id, **kwargs)

    def _raw_env(**kwargs):
        return raw_env(task_id, **kwargs)

    for f, base in ((_env, env), (_parallel_env, parallel_env), (_raw_env, raw_env)):
        f.__doc__ = f"{base.__doc__} Task: {task_id}."
    return _env, _parallel_env, _raw_env
