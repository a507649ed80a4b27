"""Vectorize small_room with SuperSuit: 2 envs x 2 agents over 2 processes, as one
Gymnasium-style vector env with grey, resized, stacked frames."""

import numpy as np
import supersuit as ss

import craftium_ma

env = craftium_ma.parallel_env("small_room", num_agents=2, max_cycles=200)
env = ss.color_reduction_v0(env, mode="full")
env = ss.resize_v1(env, 48, 48)
env = ss.frame_stack_v1(env, 4)
env = ss.black_death_v3(env)  # agents that reached the block keep a zero observation
vec = ss.pettingzoo_env_to_vec_env_v1(env)
vec = ss.concat_vec_envs_v1(vec, 2, num_cpus=2, base_class="gymnasium")

obs, infos = vec.reset(seed=0)
print("observations:", obs.shape, obs.dtype)  # (4, 48, 48, 4)
total = np.zeros(vec.num_envs)
for _ in range(300):
    obs, rewards, terminations, truncations, infos = vec.step(
        np.array([vec.action_space.sample() for _ in range(vec.num_envs)]))
    total += rewards
vec.close()
print("summed rewards per agent slot:", total)
