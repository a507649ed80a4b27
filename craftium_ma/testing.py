"""Checks for your own tasks, as pettingzoo.test is for PettingZoo envs: our own suite
runs these on every shipped task, and the scaffold's test template runs them on yours.

Each takes an `env_fn` that returns a new env (e.g. `functools.partial(
craftium_ma.parallel_env, task_dir=TASK, max_cycles=40)`), starts real engine processes,
closes every env it made, and raises AssertionError saying where two episodes differ.

    api_check(env_fn)                  PettingZoo's parallel and AEC API tests
    deterministic_check(env_fn)        the same seed and actions give the same episode,
                                       in fresh envs and after another episode
    different_seed_check(env_fn)       another seed gives another episode
    reset_after_history_check(env_fn)  reset(seed) after any history = a fresh env's episode
    pool_check(task, ...)              each row of a vector_env pool = the single env's
    another_engine_run()               a context: another env loads the CPUs meanwhile
    replays(env_fn, seed, steps)       the episodes deterministic_check compares
    xland_align_check(env, rulesets)   the xland task = XLand-MiniGrid (xminigrid), step
                                       for step, from its own reset states

Episodes are compared bit for bit: observations, rewards, terminations, truncations,
infos and state() (assert_same).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

import numpy as np
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from .make import parallel_env
from .observations import batch_rows, empty_batch, set_row
from .vector import vector_env


def assert_same(a, b, where: str = "episode"):
    """Nested episode records (dicts, tuples, lists, arrays, numbers) are equal, bit for
    bit; the message names the first place they differ."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys differ"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):  # a pool's row, a tuple
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def random_actions(seed: int):
    """A policy of uniformly random discrete actions drawn from a generator of `seed`."""
    rng = np.random.default_rng(seed)
    return lambda env: {a: int(rng.integers(env.action_space(a).n)) for a in env.agents}


def play(env, seed: int | None, steps: int | None = None, policy=None,
         options: dict | None = None) -> list[tuple]:
    """reset(seed) and up to `steps` steps (None: until every agent is done) of `policy`
    (env -> actions; by default random_actions(seed)). The record: the reset's
    (observations, infos, state), then each step's tuple with its state() added (None for
    a task without state)."""
    policy = policy or random_actions(seed or 0)
    state = env.state if hasattr(env, "state_space") else lambda: None
    obs, infos = env.reset(seed=seed, options=options)
    record = [(obs, infos, state())]
    while env.agents and (steps is None or len(record) <= steps):
        record.append((*env.step(policy(env)), state()))
    return record


def _played(env_fn, seed: int, steps: int | None, **kwargs) -> list[tuple]:
    env = env_fn()
    try:
        return play(env, seed, steps, **kwargs)
    finally:
        env.close()


def api_check(env_fn, num_cycles: int = 40):
    """PettingZoo's parallel_api_test, and api_test on the AEC form of another env."""
    for test, wrap in ((parallel_api_test, lambda e: e), (api_test, parallel_to_aec_wrapper)):
        env = env_fn()
        try:
            test(wrap(env), num_cycles=num_cycles)
        finally:
            env.close()


def replays(env_fn, seed: int, steps: int, repeats: int = 2, policy_seed: int | None = None,
            history_seed: int | None = None) -> list[list[tuple]]:
    """The records of `repeats` fresh envs playing seed `seed` with the same random actions,
    then, with `history_seed`, of the first env playing it again after `steps // 2` steps
    of an episode of that seed."""
    def policy():
        return random_actions(seed if policy_seed is None else policy_seed)

    first = env_fn()
    try:
        runs = [play(first, seed, steps, policy=policy())]
        runs += [_played(env_fn, seed, steps, policy=policy()) for _ in range(1, repeats)]
        if history_seed is not None:
            play(first, history_seed, steps // 2)
            runs.append(play(first, seed, steps, policy=policy()))
    finally:
        first.close()
    return runs


def deterministic_check(env_fn, seed: int = 11, steps: int = 60, repeats: int = 2,
                        policy_seed: int | None = None, history_seed: int | None = None):
    """`repeats` fresh envs play the same episode from the same seed and actions; with
    `history_seed`, the first env plays it once more after an episode of that seed."""
    runs = replays(env_fn, seed, steps, repeats, policy_seed, history_seed)
    labels = [f"run {k}" for k in range(1, repeats)] + [f"run 0 after seed {history_seed}"]
    for label, run in zip(labels, runs[1:]):
        assert_same(runs[0], run, f"seed {seed}, {label} against run 0")


def different_seed_check(env_fn, seeds: tuple[int, int] = (11, 12), steps: int = 20):
    """Two seeds, the same actions: the episodes differ (for a task that draws anything
    at random from the episode's seed, as EnvPool's run_different_seed_check)."""
    first, second = (_played(env_fn, s, steps, policy=random_actions(0)) for s in seeds)
    try:
        assert_same(first, second)
    except AssertionError:
        return
    raise AssertionError(f"seeds {seeds[0]} and {seeds[1]} played the same episode")


def reset_after_history_check(env_fn, seed: int = 11, steps: int = 30,
                              history: tuple[int, ...] = (3, 4, 5),
                              history_options: dict | None = None):
    """An env's episode of `seed` is played again, bit for bit, after a history: one
    episode cut off by a reset after 10 steps (with `history_options`, if given), then
    episodes of the other `history` seeds played until every agent is done."""
    env = env_fn()
    try:
        fresh = play(env, seed, steps)
        play(env, history[0], 10, options=history_options)
        for other in history[1:]:
            play(env, other)
        used = play(env, seed, steps)
    finally:
        env.close()
    assert len(fresh) == steps + 1, f"the episode of seed {seed} ended before {steps} steps"
    assert_same(fresh, used, f"seed {seed} after a history")


def pool_check(task: str | None = None, *, num_envs: int = 2, seeds: tuple[int, ...] = (11, 12),
               steps: int = 8, **env_kwargs):
    """Env e of a vector_env pool (seed seeds[e]) gives the single env's episodes, row
    for row, across the episode ends and autoresets of `steps` steps; returns each env's
    rows (a list of records of observations, rewards, flags, activity and infos)."""
    pool = vector_env(task, num_envs, seed=list(seeds[:num_envs]), **env_kwargs)
    try:
        streams = _pool_streams(pool, steps)
        states = pool.state() if hasattr(pool, "state_space") else None
    finally:
        pool.close()
    env = parallel_env(task, **env_kwargs)
    try:
        for e, seed in enumerate(seeds[:num_envs]):
            assert_same(streams[e], _single_stream(env, e, seed, steps), f"pool env {e}")
            if states is not None:
                np.testing.assert_array_equal(states[e], env.state(), err_msg=f"state of env {e}")
    finally:
        env.close()
    return streams


POOL_INFOS = {"env_id", "agent_id", "active"}  # the pool's own info keys


def _actions_of(e: int, t: int, n_actions: int, n_agents: int) -> np.ndarray:
    """The actions of env e's t-th step, whichever order the pool serves envs in."""
    return np.random.default_rng([e, t]).integers(n_actions, size=n_agents)


def _rows(batch, k: int, n: int) -> dict:
    obs, rewards, terms, truncs, infos = batch
    rows = slice(k * n, (k + 1) * n)
    info = [{key: infos[key][r] for key in infos if not key.startswith("_")
             and key not in POOL_INFOS and infos["_" + key][r]} for r in range(k * n, (k + 1) * n)]
    return {"obs": batch_rows(obs, rows), "rewards": rewards[rows].copy(),
            "terminations": terms[rows].copy(), "truncations": truncs[rows].copy(),
            "active": infos["active"][rows].copy(), "infos": info}


def _ended(record: dict) -> bool:
    return bool(np.all(record["terminations"] | record["truncations"] | ~record["active"]))


def _pool_streams(pool, steps: int) -> list[list[dict]]:
    m, n = len(pool.envs), pool.num_agents
    obs, infos = pool.reset()
    no = np.zeros(m * n, bool)
    streams = [[_rows((obs, np.zeros(m * n), no, no, infos), e, n)] for e in range(m)]
    n_actions = pool.single_action_space.n
    for t in range(steps):
        batch = pool.step(np.concatenate([_actions_of(e, t, n_actions, n) for e in range(m)]))
        for e in range(m):
            streams[e].append(_rows(batch, e, n))
    return streams


def _single_stream(env, e: int, seed: int, steps: int) -> list[dict]:
    """Env e's rows played by one env: reset with the seed, the same actions, and a reset
    (without a seed) wherever the pool autoresets."""
    agents, n = env.possible_agents, len(env.possible_agents)

    def record(obs, rewards, terms, truncs, infos):
        rec = {"obs": empty_batch(env.observation_space(agents[0]), n),
               "rewards": np.zeros(n), "terminations": np.zeros(n, bool),
               "truncations": np.zeros(n, bool), "active": np.zeros(n, bool),
               "infos": [{} for _ in agents]}
        for i, a in enumerate(agents):
            if a in obs:
                set_row(rec["obs"], i, obs[a])
                rec["rewards"][i] = rewards.get(a, 0.0)
                rec["terminations"][i] = terms.get(a, False)
                rec["truncations"][i] = truncs.get(a, False)
                rec["active"][i], rec["infos"][i] = True, dict(infos[a])
        return rec

    obs, infos = env.reset(seed=seed)
    stream = [record(obs, {}, {}, {}, infos)]
    n_actions = env.action_space(agents[0]).n
    for t in range(steps):
        if _ended(stream[-1]):
            obs, infos = env.reset()
            stream.append(record(obs, {}, {}, {}, infos))
            continue
        acts = _actions_of(e, t, n_actions, n)
        stream.append(record(*env.step({a: int(acts[agents.index(a)]) for a in env.agents})))
    return stream


_LOAD = """import sys, craftium_ma
from craftium_ma import testing
env = craftium_ma.parallel_env(sys.argv[1], num_agents=int(sys.argv[2]))
seed = 0
while True:
    testing.play(env, seed)
    seed += 1
"""


@contextlib.contextmanager
def another_engine_run(task: str = "open_world", num_agents: int = 4):
    """While the block runs, another env plays random episodes in a process of its own:
    a check inside it holds on a loaded machine too (races show more often there)."""
    other = subprocess.Popen([sys.executable, "-c", _LOAD, task, str(num_agents)])
    try:
        yield
    finally:
        other.terminate()  # its engine processes go with it (craftium_ma._reaper)
        other.wait(timeout=60)



def xland_align_check(env, rulesets, layout: str, seed: int = 0) -> dict:
    """XLand-MiniGrid step for step, as EnvPool's align tests: for each ruleset (goal, rules,
    init_tiles in its encoding, padded as in its benchmark files), reset its env
    (`XLand-MiniGrid-<layout>`, xminigrid and CPU JAX needed), start the xland `env` (one
    agent, that layout) from its state, and step both with the same uniformly random actions
    to the episode's end: grid, positions, directions, pockets, rewards, terminations,
    truncations and, where `env` observes them, the symbolic view, the direction and the
    pocket are equal at every step.
    Returns counts: episodes, steps, goals reached, steps where the grid or pocket changed
    other than by the action."""
    import jax
    import jax.numpy as jnp
    import xminigrid
    from xminigrid.types import RuleSet

    from .xland import Ruleset

    upstream, params = xminigrid.make(f"XLand-MiniGrid-{layout}")
    reset, step = jax.jit(upstream.reset), jax.jit(upstream.step)
    counts = {"episodes": 0, "steps": 0, "goals": 0}
    for k, (goal, rules, init_tiles) in enumerate(rulesets):
        where = f"{layout}, ruleset {k}"
        ruleset = RuleSet(goal=jnp.asarray(goal), rules=jnp.asarray(rules),
                          init_tiles=jnp.asarray(init_tiles))
        episode = params.replace(ruleset=ruleset)
        timestep = reset(episode, jax.random.PRNGKey(seed + k))
        agent = timestep.state.agent
        observations, _ = env.reset(seed=seed + k, options={
            "ruleset": Ruleset(goal, rules, init_tiles), "grid": np.asarray(timestep.state.grid),
            "agent_positions": [np.asarray(agent.position)],
            "agent_directions": [int(agent.direction)]})
        _assert_aligned(env, timestep, observations, f"{where}, reset")
        rng = np.random.default_rng(seed + k)
        for t in range(params.max_steps):
            action = int(rng.integers(6))
            timestep = step(episode, timestep, action)
            observations, rewards, terminations, truncations, _ = env.step({"agent_0": action})
            at = f"{where}, step {t + 1} (action {action})"
            _assert_aligned(env, timestep, observations, at)
            assert np.isclose(rewards["agent_0"], float(timestep.reward), rtol=0, atol=1e-6), \
                f"{at}: reward {rewards['agent_0']} != {float(timestep.reward)}"
            assert terminations["agent_0"] == (float(timestep.discount) == 0.0), \
                f"{at}: terminated {terminations['agent_0']}"
            assert truncations["agent_0"] == (int(timestep.state.step_num) == params.max_steps), \
                f"{at}: truncated {truncations['agent_0']}"
            counts["steps"] += 1
            if int(timestep.step_type) == 2:  # its LAST
                counts["goals"] += int(terminations["agent_0"])
                assert not env.agents, f"{at}: its episode ended, ours goes on"
                break
        counts["episodes"] += 1
    return counts


def _assert_aligned(env, timestep, observations, where: str) -> None:
    """The env's grid_state(), symbolic view, direction and pocket equal XLand-MiniGrid's
    timestep."""
    state, ours = timestep.state, env.grid_state()
    theirs = {"grid": state.grid, "positions": state.agent.position[None],
              "directions": state.agent.direction[None], "pockets": state.agent.pocket[None]}
    for key, value in theirs.items():
        np.testing.assert_array_equal(ours[key], np.asarray(value), err_msg=f"{where}: {key}")
    view = np.asarray(timestep.observation)
    observation = observations.get("agent_0")
    if isinstance(observation, dict):
        if "direction" in observation:
            np.testing.assert_array_equal(observation["direction"], [int(state.agent.direction)],
                                          err_msg=f"{where}: direction observation")
        if "pocket" in observation:
            np.testing.assert_array_equal(observation["pocket"], np.asarray(state.agent.pocket),
                                          err_msg=f"{where}: pocket observation")
        observation = observation.get("symbolic")
    if observation is not None and observation.shape == view.shape:  # not an RGB frame
        np.testing.assert_array_equal(observation, view, err_msg=f"{where}: symbolic view")
