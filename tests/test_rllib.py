"""RLlib PPO with two env runners: each runner is its own Ray worker process with its own
Luanti processes, both feed the learner, and nothing is left running afterwards."""

import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import ray

from craftium_ma.build import find_engine
from craftium_ma.integrations.rllib import (SHARED_MODULE, CraftiumMultiAgentEnv, env_runner_info,
                                            make_env, map_to_shared, ppo_config)

pytestmark = pytest.mark.engine


def engine_processes(marker: str) -> list[int]:
    """Live (not zombie) engine processes whose command line mentions marker."""
    binary = str(find_engine().binary)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if binary in cmdline and marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, timeout: float = 20) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := engine_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_adapter_without_ray_workers():
    """The env creator and wrapper on their own: spaces without starting processes,
    float frames, __all__ and distinct seed streams."""
    class Context(dict):
        worker_index, vector_index = 3, 0

    env = make_env("small_room", {"num_agents": 2, "max_cycles": 3, "obs_size": 32},
                   Context(seed=5, frameskip=4))
    other = make_env("small_room", {"num_agents": 2, "max_cycles": 3, "obs_size": 32},
                     Context(seed=5, frameskip=4))
    try:
        assert isinstance(env, CraftiumMultiAgentEnv)
        assert env.par_env.frameskip == 4 and env.par_env.engine_directory is None
        assert env.get_observation_space("agent_0").shape == (32, 32, 3)
        assert env.get_observation_space("agent_0").dtype.name == "float32"
        assert map_to_shared("agent_1") == SHARED_MODULE
        obs, _ = env.reset(seed=1)
        assert obs["agent_0"].dtype.name == "float32" and 0 <= obs["agent_0"].min() <= 1
        for _ in range(3):
            obs, rewards, terminations, truncations, _ = env.step({a: 0 for a in env.agents})
            assert set(rewards) == {"agent_0", "agent_1"}
        assert truncations["__all__"] and not terminations["__all__"] and not env.agents
        # the same reset seed gives the same stream, another instance (same worker and
        # vector index: RLlib's sub-envs of one runner) another one
        assert env._seed_stream(1).integers(2**31) == env._seed_stream(1).integers(2**31)
        assert env._seed_stream(1).integers(2**31) != other._seed_stream(1).integers(2**31)
    finally:
        env.close()
        other.close()


def test_ppo_two_env_runners():
    # The env runners' temp dirs (and so their engines' command lines) go under `marker`.
    marker = tempfile.mkdtemp(prefix="rllib-test-")
    ray.init(address="local", num_cpus=2, object_store_memory=300 * 2**20, include_dashboard=False,
             runtime_env={"env_vars": {"TMPDIR": marker}}, log_to_driver=False)
    algo = None
    runners_after = []
    try:
        # 32x32 frames need conv_filters of their own (RLlib has defaults for 42, 64, ...)
        config = ppo_config("small_room", num_env_runners=2, num_agents=2, max_cycles=25,
                            obs_size=32, frameskip=4,
                            conv_filters=[[8, 4, 2], [16, 4, 2], [16, 4, 2]],
                            head_fcnet_hiddens=(32,), train_batch_size=100, minibatch_size=50,
                            num_epochs=1, seed=0)
        algo = config.build_algo()
        env_runner_info(algo, new_window=True)  # count each env's steps from here
        result = algo.train()
        runners_after = env_runner_info(algo)

        # two runners, each a Ray worker process apart from this one, each with its own engine
        assert sorted(r["runner"] for r in runners_after) == [1, 2]
        pids = {r["pid"] for r in runners_after}
        assert len(pids) == 2 and os.getpid() not in pids
        engines = [set(r["engine_pids"]) for r in runners_after]
        # a server and two clients each, none shared
        assert all(len(e) == 3 for e in engines) and not engines[0] & engines[1]
        assert all(r["engine_dir"].startswith(marker) for r in runners_after)
        assert len({r["engine_dir"] for r in runners_after}) == 2
        assert set(engine_processes(marker)) == engines[0] | engines[1]  # the check below sees them
        # both sampled for this iteration, and the learner got their steps
        stepped = {r["runner"]: r["window_steps"] for r in runners_after}
        assert all(n > 0 for n in stepped.values()), stepped
        assert all(r["window_s"] > 0 for r in runners_after)
        sampled = result["env_runners"]["num_env_steps_sampled"]
        assert sampled == sum(stepped.values()) >= 100
        stats = result["learners"][SHARED_MODULE]
        for key in ("policy_loss", "vf_loss", "total_loss", "entropy"):
            assert math.isfinite(float(stats[key])), (key, stats[key])
        assert result["learners"]["__all_modules__"]["num_env_steps_trained"] > 0
    finally:
        if algo is not None:
            algo.stop()
        ray.shutdown()
        left = wait_until_gone(marker)  # every engine process the runners started
        dirs_left = [r["engine_dir"] for r in runners_after if Path(r["engine_dir"]).exists()]
        shutil.rmtree(marker, ignore_errors=True)
    assert not left, f"Luanti processes left over: {left}"
    assert not dirs_left, f"engine directories left over: {dirs_left}"


def test_agents_map_to_one_module_per_team_or_per_agent_or_one_shared():
    import craftium_ma
    from craftium_ma.integrations.rllib import agent_modules

    ctf = craftium_ma.parallel_env("capture_the_flag", num_agents=4)
    assert agent_modules(ctf, "per_team") == {"agent_0": "red", "agent_1": "blue",
                                              "agent_2": "red", "agent_3": "blue"}
    assert agent_modules(ctf, "per_agent") == {a: a for a in ctf.possible_agents}
    assert set(agent_modules(ctf, "shared").values()) == {SHARED_MODULE}
    with pytest.raises(ValueError, match="task 'small_room' has no teams"):
        agent_modules(craftium_ma.parallel_env("small_room"), "per_team")
    with pytest.raises(ValueError, match="policies must be one of"):
        agent_modules(ctf, "per_group")
    with pytest.raises(ValueError, match="self_play_every needs policies='per_team'"):
        ppo_config("small_room", self_play_every=2)


SMALL = {"obs_size": 32, "conv_filters": [[8, 4, 2], [16, 4, 2], [16, 4, 2]],
         "head_fcnet_hiddens": (16,), "num_env_runners": 1, "minibatch_size": 40,
         "num_epochs": 1, "seed": 0}


def test_per_team_self_play_on_capture_the_flag_and_xland_with_its_own_env_class():
    """One PPO iteration each: capture_the_flag's teams as modules, red learning against a
    frozen copy of itself (blue), both teams' returns reported; xland trained on XLandEnv,
    its rulesets, not on the plain env's empty room."""
    marker = tempfile.mkdtemp(prefix="rllib-test-")
    ray.init(address="local", num_cpus=2, object_store_memory=300 * 2**20, include_dashboard=False,
             runtime_env={"env_vars": {"TMPDIR": marker}}, log_to_driver=False)
    algos = []
    try:
        algo = ppo_config("capture_the_flag", num_agents=2, max_cycles=10, train_batch_size=40,
                          policies="per_team", self_play_every=2, **SMALL).build_algo()
        algos.append(algo)

        def weights(module):  # the learner's
            state = algo.learner_group.get_weights([module])[module]
            return {k: np.array(v) for k, v in state.items()}

        result = algo.train()  # red learns; then blue becomes a copy of it
        returns = result["env_runners"]["module_episode_returns_mean"]
        assert set(returns) == {"red", "blue"} and all(math.isfinite(r) for r in returns.values())
        assert result["frozen_opponents_refreshed_at"] == 1
        red, blue = weights("red"), weights("blue")
        assert all((red[k] == blue[k]).all() for k in red)
        result = algo.train()  # red learns on; blue, frozen, stays as it was (no refresh at 2)
        assert result.get("frozen_opponents_refreshed_at") is None
        assert all((weights("blue")[k] == blue[k]).all() for k in blue)
        assert any((weights("red")[k] != red[k]).any() for k in red)

        algos.append(ppo_config("xland", num_agents=1, max_cycles=10, train_batch_size=40,
                                **SMALL).build_algo())
        result = algos[-1].train()
        classes = algos[-1].env_runner_group.foreach_env_runner(
            lambda runner: [type(e.unwrapped.par_env).__name__ for e in runner.env.envs],
            local_env_runner=False)
        assert classes == [["XLandEnv"]]
        assert math.isfinite(result["env_runners"]["episode_return_mean"])
    finally:
        for algo in algos:
            algo.stop()
        ray.shutdown()
        left = wait_until_gone(marker)
        shutil.rmtree(marker, ignore_errors=True)
    assert not left, f"Luanti processes left over: {left}"
