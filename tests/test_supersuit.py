"""SuperSuit vectorization over real engine processes."""

import numpy as np
import pytest
import supersuit as ss

import craftium_ma

pytestmark = pytest.mark.engine


def make_vec_env(base_class, wrappers=()):
    env = craftium_ma.parallel_env("small_room", num_agents=2, max_cycles=50)
    for wrap in wrappers:
        env = wrap(env)
    env = ss.black_death_v3(env)
    vec = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(vec, 2, num_cpus=2, base_class=base_class)


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
def test_concat_vec_envs_runs_200_steps(base_class):
    if base_class == "stable_baselines3":
        pytest.importorskip("stable_baselines3",
                            reason="install the test extra: pip install -e .[test]")
    vec = make_vec_env(base_class)
    try:
        # SB3's VecEnv.reset() takes no seed and returns only observations
        obs = vec.reset() if base_class == "stable_baselines3" else vec.reset(seed=0)[0]
        num_envs = vec.num_envs
        assert num_envs == 4  # 2 envs x 2 agents
        assert obs.shape == (4, 64, 64, 3) and obs.dtype == np.uint8
        for _ in range(200):
            actions = np.array([vec.action_space.sample() for _ in range(num_envs)])
            result = vec.step(actions)
            obs, rewards = result[0], result[1]
            assert obs.shape == (4, 64, 64, 3) and rewards.shape == (4,)
    finally:
        vec.close()


def test_observation_wrappers_compose():
    wrappers = [lambda e: ss.color_reduction_v0(e, mode="full"),
                lambda e: ss.resize_v1(e, 32, 32),
                lambda e: ss.frame_stack_v1(e, 3)]
    vec = make_vec_env("gymnasium", wrappers)
    try:
        obs, _ = vec.reset(seed=1)
        assert obs.shape == (4, 32, 32, 3)  # grey, resized, 3 frames stacked
        for _ in range(20):
            obs, *_ = vec.step(np.array([vec.action_space.sample() for _ in range(vec.num_envs)]))
        assert obs.shape == (4, 32, 32, 3)
    finally:
        vec.close()
