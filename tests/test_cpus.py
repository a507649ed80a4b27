"""The one CPU share-out, for the pool's envs and an env's processes (no engine)."""

import os

import pytest

from craftium_ma.cpus import share_out
from craftium_ma.launcher import LaunchConfig
from craftium_ma.vector import CraftiumVectorEnv, cpus_per_env


def test_with_more_takers_than_cpus_each_taker_gets_one_cpu_in_turn():
    assert share_out([0, 1], 3) == [(0,), (1,), (0,)]
    assert share_out([4, 5], 2) == [(4,), (5,)]


def test_with_more_cpus_than_takers_each_gets_a_run_of_neighbours_and_none_is_left_idle():
    assert share_out(list(range(16)), 8)[7] == (14, 15)
    assert share_out(list(range(8)), 3) == [(0, 1, 2), (3, 4, 5), (6, 7)]


def test_no_cpus_pins_no_taker():
    assert share_out([], 2) == [(), ()]


def test_the_pool_and_the_env_share_out_alike():
    cpus = tuple(range(8))
    config = LaunchConfig(agents=["agent_0", "agent_1"], obs_size=(16, 16), mods=[], cpus=cpus)
    assert [config.cpus_of(p) for p in ("agent_0", "agent_1", "server")] == share_out(cpus, 3)
    assert cpus_per_env(list(sorted(os.sched_getaffinity(0))), 2) == share_out(
        sorted(os.sched_getaffinity(0)), 2)


def test_the_pools_cpu_affinity_is_checked():
    assert cpus_per_env(False, 2) == [None, None]
    for bad in ("all", [10**6]):
        with pytest.raises(ValueError, match="cpu_affinity must be"):
            CraftiumVectorEnv("small_room", 2, cpu_affinity=bad)
    with pytest.raises(ValueError, match="cpu_affinity="):
        CraftiumVectorEnv("small_room", 2, cpus=[0])
