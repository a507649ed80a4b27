"""open_world: generated terrain (mapgen v7, the worlds/open_world template), wood and stone
rewards, and the soft reset that restores the terrain around spawn."""

import shutil

import numpy as np
import pytest

import craftium_ma
from craftium_ma.resources import MODS
from craftium_ma.tasks import TaskError, load_task

DIG = 3  # the manifest's action "dig"
TEST = {"layout": "test"}  # agent_0 faces a trunk, agent_1 looks down at the shallowest stone


@pytest.fixture(scope="module")
def env():
    e = craftium_ma.parallel_env("open_world", num_agents=2, task_options=TEST)
    yield e
    e.close()


def dig(env, steps):
    rewards = {a: [] for a in env.possible_agents}
    infos = {}
    for _ in range(steps):
        _, r, _, _, infos = env.step({a: DIG for a in env.agents})
        for a in r:
            rewards[a].append(r[a])
    return rewards, infos


@pytest.mark.engine
def test_the_world_template_fixes_the_terrain(env):
    assert env.task.world_template.name == "open_world"
    assert (env.task.world_template / "map_meta.txt").read_text().startswith(
        "mg_name = v7\nseed = 31\n")


def test_a_manifest_naming_a_missing_world_template_is_refused(tmp_path):
    task = shutil.copytree(MODS / "open_world", tmp_path / "open_world")
    manifest = task / "task.toml"
    manifest.write_text(manifest.read_text().replace('world = "../../worlds/open_world"',
                                                     'world = "no_such_world"'))
    with pytest.raises(TaskError, match="'no_such_world' is not a world template"):
        load_task(task)


@pytest.mark.engine
def test_digging_wood_and_stone_is_rewarded_and_counted(env):
    env.reset(seed=0)
    rewards, infos = dig(env, 60)
    wood, stone = sum(rewards["agent_0"]), sum(rewards["agent_1"])
    assert wood >= 1 and stone >= 1  # the trunk in front; the stone under the dirt
    assert set(rewards["agent_0"]) | set(rewards["agent_1"]) <= {0.0, 1.0}
    assert infos["agent_0"]["wood"] == wood and infos["agent_0"]["stone"] == 0
    assert infos["agent_1"]["stone"] == stone and infos["agent_1"]["wood"] == 0
    # digging down through grass and dirt takes steps before the first stone
    assert rewards["agent_1"].index(1.0) > 5


@pytest.mark.engine
def test_nothing_outside_the_area_can_be_dug(env):
    """agent_1 digs straight down and stops on the area's floor (y = -8), whatever it holds."""
    env.reset(seed=0)
    dig(env, 200)
    assert env.state()[5] == pytest.approx(-8.5, abs=0.05)  # agent_1's y: on the node at y = -9


@pytest.mark.engine
def test_the_invisible_wall_stops_an_agent(env):
    """agent_1 stands in the corner (-19, -19): it walks -x, then -z, into the wall."""
    env.reset(seed=0)
    for _ in range(2):
        for _ in range(6):  # 6 x 15 degrees: facing -x, then -z
            env.step({"agent_0": 0, "agent_1": 4})
        for _ in range(30):  # 30 steps forward would walk 6 nodes
            env.step({"agent_0": 0, "agent_1": 1})
    # the player's 0.3-node radius against the wall's faces at x, z = -20.5
    assert env.state()[4] == pytest.approx(-20.2, abs=0.01)
    assert env.state()[6] == pytest.approx(-20.2, abs=0.01)


@pytest.mark.engine
def test_a_soft_reset_restores_the_terrain_and_the_frames(env):
    first, _ = env.reset(seed=4)
    state = env.state()
    _, infos = dig(env, 100)
    assert infos["agent_0"]["wood"] >= 1 and infos["agent_1"]["stone"] >= 1
    again, _ = env.reset(seed=4)
    for agent in env.possible_agents:  # the trunk and the dug shaft are back, bit for bit
        assert np.array_equal(first[agent], again[agent])
    assert np.array_equal(env.state(), state)


@pytest.mark.engine
def test_random_spawns_stand_on_the_ground():
    e = craftium_ma.parallel_env("open_world", num_agents=4)
    try:
        e.reset(seed=1)
        positions = e.state().reshape(4, 4)[:, :3]
        for _ in range(10):
            e.step({a: 0 for a in e.agents})
        # nobody falls: each stands on ground inside the wall
        assert np.allclose(e.state().reshape(4, 4)[:, :3], positions, atol=0.01)
        assert (np.abs(positions[:, [0, 2]]) <= 19).all()
        assert len({(x, z) for x, _, z in positions}) == 4
    finally:
        e.close()
