"""What agents see of the HUD: only the parts a task's manifest asks for (hud =
[...], nametags = true), on every shipped task and the scaffold's.

Each task runs beside tests/mods/hud_probe, whose reset hook runs after the
task's: the same seed is reset three times, as the task leaves the HUD, with
exactly the manifest's parts and with every part and the name tags shown.
"""

from pathlib import Path

import numpy as np
import pytest

import craftium_ma
from craftium_ma.lockstep import LockstepSession
from craftium_ma.scaffold import new_task

pytestmark = pytest.mark.engine

PROBE = Path(__file__).parent / "mods" / "hud_probe"


def reset_frames(env, seed: int) -> dict[str, np.ndarray]:
    """Every agent's reset frame, stacked, as the task leaves the HUD ("task"),
    with the manifest's parts only ("asked"), with all of them ("all"). "task"
    and "asked" are each the second reset of a fresh session, after the same
    first one (a first reset's frame may now and then lack a map block while
    the machine is busy)."""
    config = env.launch_config()
    config.mods.append(PROBE)
    task = env.task
    asked = ",".join([*task.hud, *(["nametags"] if task.nametags else [])]) or "none"
    frames = {}
    for probes in ([("task", None)], [("asked", asked), ("all", "all")]):
        with LockstepSession(config) as session:
            session.reset(seed, dict(task.options), env.possible_agents, env.max_cycles)
            for name, probe in probes:
                options = dict(task.options, **({"hud_probe": probe} if probe else {}))
                obs, _ = session.reset(seed, options, env.possible_agents, env.max_cycles)
                frames[name] = np.stack([obs[a].frame for a in env.possible_agents])
    return frames


def check_hud(env, seed=0):
    frames = reset_frames(env, seed)
    # the HUD would show, in every agent's frame: the comparison means something
    shown = (frames["all"] != frames["asked"]).any(axis=-1).sum(axis=(1, 2))
    assert (shown > 100).all(), shown  # patch 0012: a small HUD
    # and nothing of it shows but what the manifest asks for
    np.testing.assert_array_equal(frames["task"], frames["asked"])


@pytest.mark.parametrize("task", craftium_ma.tasks())
def test_a_shipped_task_shows_only_the_hud_its_manifest_asks_for(task):
    check_hud(craftium_ma.parallel_env(task))


def test_the_scaffold_shows_only_the_crosshair_and_the_wielded_item(tmp_path):
    env = craftium_ma.parallel_env(task_dir=new_task("fresh", tmp_path))
    assert env.task.hud == ("crosshair", "wielditem") and not env.task.nametags
    check_hud(env)


def first_frame(folder, hud: str) -> np.ndarray:
    manifest = folder / "task.toml"
    manifest.write_text(manifest.read_text().replace("max_cycles = 300\n",
                                                     f"max_cycles = 300\nhud = {hud}\n"))
    env = craftium_ma.parallel_env(task_dir=folder, num_agents=1)
    try:
        obs, _ = env.reset(seed=0)
        return obs["agent_0"]
    finally:
        env.close()


def test_a_hud_part_that_is_shown_is_sized_to_the_frame(tmp_path):
    """At 64 x 64, Luanti's smallest hud_scaling (0.5) gives a hotbar and hearts over 57
    of the 64 rows; patch 0012 lets it go down to the frame's size."""
    bars = first_frame(new_task("bars", tmp_path / "a"), '["hotbar", "healthbar"]')
    bare = first_frame(new_task("bars", tmp_path / "b"), "[]")
    rows = (bars != bare).any(axis=-1).any(axis=1)
    assert 3 <= rows.sum() <= 12, rows.sum()  # shown, in the bottom fifth
    assert not rows[: 64 - 16].any()
