"""craftium_ma.testing's checks catch what they are for, on small pure-Python envs (the
suite runs them on every shipped task with the engine: test_env, test_reset, test_vector)."""

import functools

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import ParallelEnv

from craftium_ma import testing


class Toy(ParallelEnv):
    """Two agents on a line; an observation is drawn from the episode's seed and the
    actions. `noise`: also from a generator no seed fixes; `ignores_seed`: the seed is
    not used; `remembers`: the number of earlier episodes shows in the observations."""

    metadata = {"name": "toy_v0"}

    def __init__(self, noise=False, ignores_seed=False, remembers=False, max_cycles=40):
        self.possible_agents = ["agent_0", "agent_1"]
        self.agents, self.render_mode = [], None
        self.noise, self.ignores_seed, self.remembers = noise, ignores_seed, remembers
        self.max_cycles, self.episodes = max_cycles, 0
        self.state_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self._observation_space = spaces.Box(0, 255, (4,), np.uint8)
        self._action_space = spaces.Discrete(3)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(0 if self.ignores_seed or seed is None else seed)
        self.agents, self.cycles = list(self.possible_agents), 0
        self.positions = np.zeros(2, np.float32) + (self.episodes if self.remembers else 0)
        self.episodes += 1
        return self._obs(), {a: {"cycle": 0} for a in self.agents}

    def _obs(self):
        extra = np.random.default_rng().integers(5) if self.noise else 0
        return {a: (self.rng.integers(0, 200, 4) + self.positions[i] + extra).astype(np.uint8)
                for i, a in enumerate(self.agents)}

    def step(self, actions):
        self.cycles += 1
        for i, a in enumerate(self.agents):
            self.positions[i] += actions[a] - 1
        done = self.cycles >= self.max_cycles
        obs = self._obs()
        rewards = {a: float(self.positions[i]) for i, a in enumerate(self.agents)}
        flags = {a: False for a in self.agents}
        truncs = {a: done for a in self.agents}
        infos = {a: {"cycle": self.cycles} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, flags, truncs, infos

    def state(self):
        return self.positions.copy()

    def close(self):
        pass


def test_a_seeded_env_passes_every_check():
    make = functools.partial(Toy)
    testing.api_check(make, num_cycles=20)
    testing.deterministic_check(make, steps=20, repeats=3, history_seed=5)
    testing.different_seed_check(make)
    testing.reset_after_history_check(make, steps=20)


def test_the_deterministic_check_finds_noise_no_seed_fixes():
    with pytest.raises(AssertionError, match="run 1 against run 0"):
        testing.deterministic_check(functools.partial(Toy, noise=True), steps=20)


def test_the_deterministic_check_finds_an_episode_that_remembers_the_history():
    with pytest.raises(AssertionError, match="run 0 after seed 5 against run 0"):
        testing.deterministic_check(functools.partial(Toy, remembers=True), steps=20,
                                    history_seed=5)


def test_the_different_seed_check_finds_a_task_that_ignores_its_seed():
    with pytest.raises(AssertionError, match="seeds 11 and 12 played the same episode"):
        testing.different_seed_check(functools.partial(Toy, ignores_seed=True))


def test_the_reset_check_finds_an_episode_that_remembers_the_history():
    with pytest.raises(AssertionError, match="after a history"):
        testing.reset_after_history_check(functools.partial(Toy, remembers=True), steps=20)


def test_assert_same_names_where_two_records_differ():
    a = [({"agent_0": np.zeros(3)}, {"agent_0": {"hp": 20}})]
    b = [({"agent_0": np.zeros(3)}, {"agent_0": {"hp": 19}})]
    testing.assert_same(a, a)
    with pytest.raises(AssertionError, match=r"\[0\]\[1\]\['agent_0'\]\['hp'\]: 20 != 19"):
        testing.assert_same(a, b)


def test_a_pool_row_and_a_tuple_compare_as_arrays():
    testing.assert_same(np.array([1.0, 2.0, 3.0]), (1.0, 2.0, 3.0))
    with pytest.raises(AssertionError):
        testing.assert_same(np.array([1.0, 2.0, 3.0]), (1.0, 2.0, 4.0))
