"""The xland task against XLand-MiniGrid itself (the xminigrid package, CPU JAX), in EnvPool's
manner (its minigrid_align_test): from its reset states, with the same random actions, every
step's grid, positions, directions, pockets, rewards, terminations and symbolic view are
equal; and its one-step scenarios (tests/data/xminigrid/scenarios_R1-9x9.npz) play the same.

The long run (1,000 episodes and more) is benchmarks/xland_align.py; its count is in
docs/xland.md.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import craftium_ma  # noqa: E402
from craftium_ma.testing import xland_align_check  # noqa: E402
from craftium_ma.xland import Ruleset  # noqa: E402
from craftium_ma.xland.encoding import Action  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "xminigrid")
LEVELS = ("trivial", "small", "medium", "high")
EPISODES_PER_LEVEL = 2  # benchmarks/xland_align.py plays 1,000 episodes and more
NOOP = int(Action.NOOP)


def upstream_rulesets(level: str, first: int, count: int) -> list[tuple]:
    """Rulesets made by XLand-MiniGrid's own generator, padded as its files keep them."""
    with np.load(os.path.join(DATA, f"rulesets_{level}.npz")) as data:
        return [(data["goals"][i], data["rules"][i], data["init_tiles"][i])
                for i in range(first, first + count)]


@pytest.mark.engine
@pytest.mark.parametrize("layout", ["R1-9x9", "R4-13x13"])
def test_xland_plays_xland_minigrid_step_for_step(layout):
    rulesets = [r for level in LEVELS for r in upstream_rulesets(level, 100, EPISODES_PER_LEVEL)]
    env = craftium_ma.parallel_env("xland", task_options={"layout": layout},
                                   observations=["symbolic", "direction", "pocket"])
    try:
        counts = xland_align_check(env, rulesets, layout, seed=1000)
    finally:
        env.close()
    assert counts["episodes"] == len(rulesets)


@pytest.mark.engine
def test_xland_minigrid_scenarios_play_the_same():
    """Each of its one-step scenarios: a hand-built state, one action (rules in order, goals,
    vanish, doors, the reward at the first and last step, truncation). Our episode reaches the
    scenario's step count with noops, which change nothing."""
    with np.load(os.path.join(DATA, "scenarios_R1-9x9.npz")) as data:
        s = {k: data[k] for k in data.files}
    env = craftium_ma.parallel_env("xland", observations=["symbolic"])
    try:
        for i, name in enumerate(s["name"]):
            env.reset(seed=i, options={
                "ruleset": Ruleset(s["goal"][i], s["rules"][i], np.zeros((0, 2), np.uint8)),
                "grid": s["grid_before"][i], "agent_positions": [s["position_before"][i]],
                "agent_directions": [s["direction_before"][i]],
                "agent_pockets": [s["pocket_before"][i]]})
            for _ in range(s["step_num_before"][i]):
                env.step({"agent_0": NOOP})
            observations, rewards, terminations, truncations, _ = env.step(
                {"agent_0": int(s["action"][i])})
            ours = env.grid_state()
            for key, theirs in (("grid", s["grid_after"][i]), ("positions", s["position_after"][i]),
                                ("directions", s["direction_after"][i]),
                                ("pockets", s["pocket_after"][i])):
                np.testing.assert_array_equal(ours[key] if key == "grid" else ours[key][0],
                                              theirs, err_msg=f"{name}: {key}")
            np.testing.assert_array_equal(observations["agent_0"]["symbolic"],
                                          s["observation_after"][i], err_msg=f"{name}: view")
            assert terminations["agent_0"] == (s["discount"][i] == 0), name
            assert truncations["agent_0"] == (s["step_num_after"][i] == s["max_steps"]), name
            assert np.isclose(rewards["agent_0"], s["reward"][i], rtol=0, atol=1e-6), name
    finally:
        env.close()
