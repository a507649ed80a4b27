"""Every shipped task and a new task from the scaffold, unmodified, in the consumers
researchers train with: infos that keep one schema from the reset on (keys, dtypes,
shapes), PettingZoo's parallel_seed_test, and TorchRL's PettingZooWrapper with and
without masks, its check_env_specs and a rollout that spans a chat message and episode
ends (docs/environments.md#infos). PettingZoo's API tests run on every task in test_env
(the scaffold's in its own generated test), BenchMARL in test_benchmarl, RLlib in
test_rllib and test_structure, SB3 in test_sb3."""

import functools
import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_seed_test

import craftium_ma
from craftium_ma.scaffold import new_task
from craftium_ma.tasks import shipped_tasks

pytestmark = pytest.mark.engine

STEPS = 6  # max_cycles: the rollouts below see episode ends and the metrics of the last step


def assert_schema(env, infos):
    schema = env.info_schema()
    for agent, info in infos.items():
        assert list(info) == list(schema), agent
        for key, value in info.items():
            spec = schema[key]
            assert np.asarray(value).dtype == np.dtype(spec.dtype), (agent, key, value)
            assert np.shape(value) == spec.shape, (agent, key, value)


@pytest.mark.parametrize("task", [*sorted(shipped_tasks()), "a new task from the scaffold"])
def test_infos_keep_one_schema_and_pettingzoo_and_torchrl_take_the_task(task, tmp_path):
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    where = ({"task_dir": new_task("mine", tmp_path)} if task not in shipped_tasks()
             else {"task": task})
    make = functools.partial(craftium_ma.parallel_env, **where, max_cycles=STEPS, obs_size=16)
    parallel_seed_test(make, num_cycles=STEPS)
    env = make()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # no key outside the manifest's schema
            _, infos = env.reset(seed=0)
            assert_schema(env, infos)
            while env.agents:
                actions = {a: env.action_space(a).sample() for a in env.agents}
                assert_schema(env, env.step(actions)[4])
        wrappers = []  # kept alive: a collected TorchRL env closes the env it wraps
        for use_mask in (False, True):
            wrapped = PettingZooWrapper(env, use_mask=use_mask,
                                        return_state=hasattr(env, "state_space"))
            wrappers.append(wrapped)
            check_env_specs(wrapped)
            wrapped.reset()
            env.post_chat("hello agents")
            rollout = wrapped.rollout(STEPS + 2, break_when_any_done=False)
            assert rollout["next", "done"].any()  # an episode ended inside the rollout
    finally:
        env.close()
