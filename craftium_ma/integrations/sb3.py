"""Stable-Baselines3 (2.x) adapter: a craftium-ma pool as an SB3 VecEnv.

    from stable_baselines3 import PPO
    from craftium_ma.integrations.sb3 import vec_env
    venv = vec_env("small_room", 4, num_agents=2, obs_size=48)
    PPO("CnnPolicy", venv).learn(10_000)

Every agent of every env is one of SB3's envs (parameter sharing): row e * num_agents + i
is agent i of env e. An agent's episode ends its row's episode: done, with
"terminal_observation" (and "TimeLimit.truncated") in its info. Until its env's episode
ends too, the row pads: a zero frame, reward 0, done at every step (so that no padding
step bootstraps a value or joins an episode) and info["padding"] True. Wrap the VecEnv in
CraftiumVecMonitor, which counts only the agents' own steps, so that every episode it
reports is one agent's, from its reset to its end. When the env's episode is over, SB3's
convention holds: the observations returned are the next episode's (docs/vector.md).
"""

from __future__ import annotations

import time

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("craftium_ma.integrations.sb3 needs Stable-Baselines3: pip install "
                      f"'craftium-ma[sb3]'; importing it failed with: {e}") from e

from ..vector import CraftiumVectorEnv, vector_env


class CraftiumSB3VecEnv(VecEnv):
    """An SB3 VecEnv over a CraftiumVectorEnv (see the module doc)."""

    def __init__(self, pool: CraftiumVectorEnv):
        self.pool = pool
        super().__init__(pool.num_envs, pool.single_observation_space, pool.single_action_space)
        self._actions = None

    def reset(self):
        n = self.pool.num_agents
        seeds = self._seeds[::n]  # SB3 seeds rows; the pool takes one seed per env
        options = self._options[0] or None
        obs, infos = self.pool.reset(seed=None if seeds[0] is None else seeds, options=options)
        self.reset_infos = self._info_list(infos)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray):
        self._actions = actions

    def step_wait(self):
        obs, rewards, terms, truncs, infos = self.pool.step(self._actions)
        finished, padding = terms | truncs, ~infos["active"]
        info_list = self._info_list(infos)
        for row in np.flatnonzero(finished):
            info_list[row]["terminal_observation"] = obs[row].copy()
            info_list[row]["TimeLimit.truncated"] = bool(truncs[row] and not terms[row])
        for row in np.flatnonzero(padding):
            info_list[row].update(padding=True, **{"TimeLimit.truncated": False})
        dones = finished | padding
        obs[finished] = 0  # a done agent's row pads until its env's episode ends
        ended = dones.reshape(-1, self.pool.num_agents).all(axis=1)
        if ended.any():
            reset_obs, reset_infos = self.pool.reset(options={"reset_mask": ended})
            rows = np.repeat(ended, self.pool.num_agents)
            obs[rows] = reset_obs[rows]
            for row, info in enumerate(self._info_list(reset_infos)):
                if rows[row]:
                    self.reset_infos[row] = info
        return obs, rewards.astype(np.float32), dones, info_list

    @staticmethod
    def _info_list(infos: dict) -> list[dict]:
        """Gymnasium's dict of arrays (with "_key" masks) as SB3's list of dicts."""
        rows = len(infos["env_id"])
        out = [{} for _ in range(rows)]
        for key, values in infos.items():
            if key.startswith("_"):
                continue
            mask = infos["_" + key]
            for row in np.flatnonzero(mask):
                out[row][key] = values[row]
        return out

    def close(self):
        self.pool.close()

    def _envs(self, indices):
        """The CraftiumParallelEnv of each row of `indices`."""
        return [self.pool.envs[row // self.pool.num_agents] for row in self._get_indices(indices)]

    def get_attr(self, attr_name, indices=None):
        return [getattr(env, attr_name) for env in self._envs(indices)]

    def set_attr(self, attr_name, value, indices=None):
        for env in self._envs(indices):
            setattr(env, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        return [getattr(env, method_name)(*method_args, **method_kwargs)
                for env in self._envs(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._get_indices(indices))


class CraftiumVecMonitor(VecMonitor):
    """SB3's VecMonitor over a CraftiumSB3VecEnv: a padding row adds no step, no reward
    and no episode, so each episode it reports (info["episode"], SB3's ep_info_buffer) is
    one agent's, its length and return as the agent had them."""

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        live = np.array([not info.get("padding", False) for info in infos])
        self.episode_returns += np.where(live, rewards, 0)
        self.episode_lengths += live
        infos = list(infos)
        for i in np.flatnonzero(dones & live):
            episode = {"r": self.episode_returns[i], "l": self.episode_lengths[i],
                       "t": round(time.time() - self.t_start, 6)}
            episode.update({key: infos[i][key] for key in self.info_keywords})
            infos[i] = {**infos[i], "episode": episode}
            self.episode_count += 1
            self.episode_returns[i] = self.episode_lengths[i] = 0
            if self.results_writer:
                self.results_writer.write_row(episode)
        return obs, rewards, dones, infos


def vec_env(task: str, num_envs: int, **kwargs) -> CraftiumSB3VecEnv:
    """`num_envs` envs of `task` as one SB3 VecEnv of num_envs * num_agents rows;
    `kwargs` are vector_env()'s (seed, batch_size) and parallel_env()'s."""
    return CraftiumSB3VecEnv(vector_env(task, num_envs, **kwargs))
