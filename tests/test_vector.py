"""craftium_ma.vector_env on real engine processes, in EnvPool's manner: every task's pool
against the single env (alignment), two pools of the same seeds (determinism), the async
face, construction and bad input, an engine fault, Gymnasium's vector wrappers and SB3."""

import os
import time
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics

import craftium_ma
from craftium_ma import testing
from craftium_ma.vector import CraftiumVectorEnv
from conftest import engine_thread_cpus, write_lua_error_task

pytestmark = pytest.mark.engine

# 2 agents, tiny frames, episodes of 3 steps: 8 steps see two episode ends and autoresets
OPTIONS = {"num_agents": 2, "obs_size": 16, "max_cycles": 3, "timeout": 30}
STEPS = 8
SEEDS = (11, 12)
IGNORED = {"env_id", "agent_id", "active"}  # the pool's own info keys
# tasks that draw their layout (spawns, targets) from the episode's seed
RANDOM_LAYOUTS = {"duel", "open_world", "pressure_plates", "room", "small_room", "speleo"}


def actions_of(e: int, t: int, n_actions: int, n_agents: int = 2) -> np.ndarray:
    """The actions of env e's t-th step, whichever order the pool serves envs in."""
    return np.random.default_rng([e, t]).integers(n_actions, size=n_agents)


def rows_of(batch, k: int, n: int = 2) -> dict:
    """Rows k*n .. k*n+n-1 of a (obs, rewards, terminations, truncations, infos) batch."""
    obs, rewards, terms, truncs, infos = batch
    rows = slice(k * n, (k + 1) * n)
    info = [{key: infos[key][r] for key in infos if not key.startswith("_") and key not in IGNORED
             and infos["_" + key][r]} for r in range(k * n, (k + 1) * n)]
    return {"obs": obs[rows].copy(), "rewards": rewards[rows].copy(),
            "terminations": terms[rows].copy(), "truncations": truncs[rows].copy(),
            "active": infos["active"][rows].copy(), "infos": info}


def ended(record: dict) -> bool:
    return bool(np.all(record["terminations"] | record["truncations"] | ~record["active"]))


def sync_streams(pool: CraftiumVectorEnv, steps: int = STEPS) -> list[list[dict]]:
    """Each env's records: the reset's, then one per step(), with actions_of()."""
    m = len(pool.envs)
    obs, infos = pool.reset()
    streams = [[rows_of((obs, np.zeros(2 * m), np.zeros(2 * m, bool), np.zeros(2 * m, bool),
                         infos), e)]
               for e in range(m)]
    n_actions = pool.single_action_space.n
    for t in range(steps):
        batch = pool.step(np.concatenate([actions_of(e, t, n_actions) for e in range(m)]))
        assert (batch[4]["env_id"] == np.repeat(np.arange(m), 2)).all()
        for e in range(m):
            streams[e].append(rows_of(batch, e))
    return streams


def assert_closed(pids):
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")], "engine processes left"


@pytest.fixture(scope="module")
def small_room():
    """A 2-env pool of small_room and its streams, for the tests after alignment."""
    pool = craftium_ma.vector_env("small_room", 2, seed=SEEDS[0], **OPTIONS)
    streams = sync_streams(pool)
    yield pool, streams
    pool.close()


@pytest.mark.parametrize("task", sorted(craftium_ma.tasks()))
def test_pool_rows_equal_the_single_env(task):
    """Every task id builds a pool, resets, steps, closes; env e's rows are parallel_env's
    episodes of seed s_e, bit for bit, across episode ends and autoresets."""
    streams = testing.pool_check(task, seeds=SEEDS, steps=STEPS, **OPTIONS)
    assert sum(ended(r) for r in streams[0]) >= 2  # two episode ends, both followed by a reset
    if task in RANDOM_LAYOUTS:  # the two envs' seeds give different episodes
        assert any(not np.array_equal(a["obs"], b["obs"]) for a, b in zip(*streams))


def test_a_pipelined_pool_equals_the_pipelined_env():
    """A pipelined pool plays the pipelined env's episodes (there the server answers
    after the frames, and the pool watches its socket too)."""
    testing.pool_check("small_room", seeds=SEEDS, steps=STEPS, pipelined=True, **OPTIONS)


def test_a_server_reply_read_by_the_in_flight_check_still_ends_the_step():
    """The in-flight check reads a server's reply when it has come, also one that the
    pool's poll of a pipelined step has not yet seen: the step still ends at once,
    whether the agents' frames were read before the check or after it (it used to wait
    for the reply's poll event, which never came, until the timeout)."""
    pool = craftium_ma.vector_env("small_room", 2, seed=list(SEEDS), pipelined=True,
                                  **dict(OPTIONS, timeout=10))
    try:
        pool.reset()
        for frames_read_first in (False, True):
            pool.send(np.zeros(4, np.int64))
            for env in pool.envs:
                session = env._session
                assert session._control.poll(10_000)  # the server's reply comes, unread
                if frames_read_first:  # as the pool's poll of the agents' sockets would
                    for agent in env.agents:
                        assert session._agents[agent].poll(10_000)
                        session.take_reply(session._agents[agent])
            pool._check_in_flight()  # reads the servers' replies before the pool's poll
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a fault would warn
                _, rewards, _, truncs, infos = pool.recv()
            assert rewards.tolist() == [-1.0] * 4 and not truncs.any()
            assert sorted(infos["env_id"].tolist()) == [0, 0, 1, 1]
    finally:
        pool.close()


def test_same_seeds_same_streams_async_and_every_env_served(small_room):
    """A second pool of the same seeds, driven through send/recv one env at a time, gives
    the first pool's streams bit for bit; a different seed gives another episode."""
    _, sync = small_room
    pool = craftium_ma.vector_env("small_room", 2, batch_size=1, seed=list(SEEDS), **OPTIONS)
    try:
        streams, served = [[], []], []
        pool.async_reset()
        zeros = np.zeros(2)
        for _ in range(2):
            obs, _, _, _, infos = batch = pool.recv()
            assert obs.shape[0] == 2 and (infos["agent_id"] == [0, 1]).all()
            e = int(infos["env_id"][0])
            assert (infos["env_id"] == e).all()
            streams[e].append(rows_of((obs, zeros, zeros > 0, zeros > 0, infos), 0))
        n_actions = pool.single_action_space.n
        for e in (0, 1):
            pool.send(actions_of(e, 0, n_actions), [e])
        with pytest.raises(RuntimeError, match="in flight"):
            pool.send(actions_of(0, 1, n_actions), 0)
        with pytest.raises(RuntimeError, match="in flight"):
            pool.step(np.zeros(4, np.int64))
        while min(len(s) for s in streams) <= STEPS:
            batch = pool.recv()
            e = int(batch[4]["env_id"][0])
            served.append(e)
            streams[e].append(rows_of(batch, 0))
            if len(streams[e]) <= STEPS:
                pool.send(actions_of(e, len(streams[e]) - 1, n_actions), [e])
        assert set(served) == {0, 1}
        for e in (0, 1):
            testing.assert_same(streams[e], sync[e], f"async env {e}")
        with pytest.raises(RuntimeError, match="nothing sent"):
            pool.recv()
        obs, _ = pool.reset(seed=[99, SEEDS[1]])  # small_room draws the spawn points
        assert not np.array_equal(obs[:2], sync[0][0]["obs"])
        np.testing.assert_array_equal(obs[2:], sync[1][0]["obs"])
    finally:
        pool.close()


def test_bad_input_raises_clearly(small_room):
    pool, _ = small_room
    pool.reset()
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        pool.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="integers"):
        pool.step(np.zeros(4))
    with pytest.raises(ValueError, match=r"row 2 \(env 1, agent_0\).*outside"):
        pool.step(np.array([0, 1, 7, 0]))
    with pytest.raises(ValueError, match="env_ids"):
        pool.send(np.zeros(2, np.int64), [5])
    with pytest.raises(ValueError, match="one int per env"):
        pool.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="reset_mask"):
        pool.reset(options={"reset_mask": np.array([True, False, False, False])})
    with pytest.raises(ValueError, match="num_envs"):
        CraftiumVectorEnv("small_room", 0)
    for bad in (0, 3):
        with pytest.raises(ValueError, match="batch_size"):
            CraftiumVectorEnv("small_room", 2, batch_size=bad)
    pool.step(np.zeros(4, np.int64))  # the pool still works


def test_each_env_runs_on_its_share_of_the_cpus(small_room):
    """cpu_affinity=True (the default) shares the CPUs out among the envs: with as many
    envs as CPUs or more, each env's engine processes, every thread, on one CPU."""
    pool, _ = small_room
    cpus = sorted(os.sched_getaffinity(0))
    shares = [list(env.cpus) for env in pool.envs]
    assert shares == ([cpus[:len(cpus) // 2], cpus[len(cpus) // 2:2 * (len(cpus) // 2)]]
                      if len(cpus) >= 2 else [cpus, cpus])
    for env, share in zip(pool.envs, shares):
        config = env.launch_config()
        for name, pid in env.engine_pids().items():
            placed = engine_thread_cpus(pid)
            assert placed == set(config.cpus_of(name)) and placed <= set(share), (name, placed)


def test_engine_fault_restarts_only_that_env(small_room):
    pool, _ = small_room
    pool.reset(seed=SEEDS[0])
    survivor_pids = pool.envs[0].engine_pids()
    os.kill(pool.envs[1].engine_pids()["agent_1"], 9)
    with pytest.warns(RuntimeWarning, match="env 1 of the pool failed"):
        _, rewards, terms, truncs, infos = pool.step(np.zeros(4, np.int64))
    assert list(truncs) == [False, False, True, True] and not terms.any()
    assert list(infos["engine_restarted"]) == [False, False, True, True]  # every row has it
    assert infos["_engine_restarted"].all()
    assert rewards[:2].tolist() == [-1.0, -1.0] and rewards[2:].tolist() == [0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # env.reset's note of the restart
        _, rewards, _, _, infos = pool.step(np.zeros(4, np.int64))
    assert infos["engine_restarted"][2:].all() and not infos["engine_restarted"][:2].any()
    assert rewards[:2].tolist() == [-1.0, -1.0]
    assert pool.envs[0].engine_pids() == survivor_pids
    _, rewards, _, truncs, _ = pool.step(np.zeros(4, np.int64))
    assert rewards.tolist() == [-1.0] * 4


def test_a_lua_error_in_one_env_is_seen_at_once_and_the_others_go_on(tmp_path):
    """The pool does not watch the server's socket in a strict step (its reply comes
    before the frames), yet a Lua error in a tick, where no frame follows, is seen
    within a poll slice, not at the agents' timeout."""
    pool = craftium_ma.vector_env(None, 2, seed=0, task_dir=write_lua_error_task(tmp_path),
                                  num_agents=1, timeout=20)
    try:
        pool.reset()
        pool.reset(options={"reset_mask": np.array([False, True]), "fail_at": 2})
        pool.step(np.zeros(2, np.int64))
        start = time.monotonic()
        with pytest.warns(RuntimeWarning, match="env 1 of the pool failed.*the step hook failed"):
            _, _, _, truncs, infos = pool.step(np.zeros(2, np.int64))
        assert time.monotonic() - start < 5  # the agents' own timeout is 20 s
        assert truncs.tolist() == [False, True] and infos["engine_restarted"][1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # env.reset's note of the restart
            _, _, _, truncs, infos = pool.step(np.zeros(2, np.int64))
        assert (truncs.tolist() == [False, False]
                and infos["engine_restarted"].tolist() == [False, True])
    finally:
        pool.close()


def test_masked_reset_gymnasium_wrappers_and_close(small_room):
    """Also after the fault above: closing the wrappers closes every engine process."""
    pool, _ = small_room
    obs, infos = pool.reset(seed=SEEDS[0])
    assert "chat" not in infos and infos["hp"].dtype == np.int64  # numbers only (the schema)
    # the row ids and the masks of keys every row has are read-only arrays shared by every call
    assert not any(infos[k].flags.writeable for k in ("env_id", "agent_id", "_position"))
    assert pool.observation_space.contains(obs) and pool.metadata["autoreset_mode"] == \
        gymnasium.vector.AutoresetMode.NEXT_STEP
    moved = pool.step(np.full(4, 1))[0]  # every agent walks
    again, infos = pool.reset(options={"reset_mask": np.array([False, True])})
    np.testing.assert_array_equal(again[:2], moved[:2])  # env 0 went on, env 1 was reset
    assert list(infos["_position"]) == [False, False, True, True]
    wrapped = DictInfoToList(RecordEpisodeStatistics(pool))
    wrapped.reset(seed=SEEDS[0])
    episodes = []
    for _ in range(OPTIONS["max_cycles"]):
        _, _, _, truncs, infos = wrapped.step(np.zeros(4, np.int64))
        assert isinstance(infos, list) and len(infos) == 4 and infos[3]["env_id"] == 1
        episodes += [i["episode"] for i in infos if "episode" in i]
    assert truncs.all() and [e["l"] for e in episodes] == [3] * 4
    assert [e["r"] for e in episodes] == [-3.0] * 4  # small_room: -1 a step
    pids = [p for env in pool.envs for p in env.engine_pids().values()]
    wrapped.close()
    assert pool.closed and len(pids) == 6
    assert_closed(pids)


def test_sb3_ppo_learns_a_few_hundred_steps():
    from stable_baselines3 import PPO

    from craftium_ma.integrations.sb3 import vec_env

    venv = vec_env("small_room", 2, num_agents=2, obs_size=36, max_cycles=20, timeout=30)
    try:
        venv.seed(5)
        obs = venv.reset()
        assert obs.shape == (4, 36, 36, 3)
        ends = []
        for _ in range(21):
            obs, rewards, dones, infos = venv.step(np.zeros(4, np.int64))
            ends += [i for i, d in zip(infos, dones) if d]
        assert len(ends) == 4 and all(i["terminal_observation"].shape == (36, 36, 3) and
                                      i["TimeLimit.truncated"] for i in ends)
        model = PPO("CnnPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
        model.learn(total_timesteps=256)
        assert model.num_timesteps == 256
    finally:
        venv.close()
