"""The scripted planner (craftium_ma.xland.planner) against XLand-MiniGrid itself (the xminigrid
package, CPU JAX; no engine): its model of a step is XLand-MiniGrid's, and playing XLand-MiniGrid's
env on the upstream rulesets of tests/data/xminigrid it reaches far more goals than random play.
"""

import os
from functools import cache
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import xminigrid  # noqa: E402
from xminigrid.core.grid import room  # noqa: E402
from xminigrid.types import AgentState, EnvCarry, RuleSet, State, StepType, TimeStep  # noqa: E402

from craftium_ma.xland.planner import FORWARD, NOOP, TURN_RIGHT, GridState, Planner  # noqa: E402

DATA = Path(__file__).parent / "data" / "xminigrid"
RULESETS = 40  # per level and layout
FIRST = {"R1-9x9": 0, "R4-13x13": 40}  # the first ruleset of each layout's share
BALL, KEY = (3, 1), (7, 3)  # a red ball, a blue key
VANISH = (1, 7)


@cache
def env_functions(layout: str):
    """Params and the jitted reset / step of XLand-MiniGrid's env, batched over rulesets."""
    env, params = xminigrid.make(f"XLand-MiniGrid-{layout}")
    reset = jax.jit(jax.vmap(lambda ruleset, key: env.reset(params.replace(ruleset=ruleset), key)))
    step = jax.jit(jax.vmap(lambda timestep, action: env.step(params, timestep, action)))
    return params, reset, step


def grid_state(state, i: int) -> GridState:
    """Episode i's world, as the planner reads it, from a (batched) XLand-MiniGrid state."""
    agent = state.agent
    return GridState(np.asarray(state.grid)[i], np.asarray(agent.position)[i][None],
                     np.asarray(agent.direction)[i][None], np.asarray(agent.pocket)[i][None])


def play(layout: str, level: str, policy: str) -> np.ndarray:
    """Whether each of the layout's RULESETS rulesets of the level reached its goal within
    max_steps (the episodes played side by side), with the planner or random actions. A
    planner's NOOP ends its episode: alone in the world, it would stay so."""
    params, reset, step = env_functions(layout)
    first = FIRST[layout]
    with np.load(DATA / f"rulesets_{level}.npz") as data:
        goals, rules, tiles = (data[k][first:first + RULESETS]
                               for k in ("goals", "rules", "init_tiles"))
    timestep = reset(RuleSet(goal=jnp.asarray(goals), rules=jnp.asarray(rules),
                             init_tiles=jnp.asarray(tiles)),
                     jax.vmap(jax.random.PRNGKey)(jnp.arange(first, first + RULESETS)))
    planners = [Planner(goal, rule) for goal, rule in zip(goals, rules)]
    rng = np.random.default_rng(first)
    live, reached = np.ones(RULESETS, bool), np.zeros(RULESETS, bool)
    for _ in range(params.max_steps):
        if policy == "random":
            actions = rng.integers(0, 6, RULESETS)
        else:
            actions = np.full(RULESETS, NOOP)
            for i in np.flatnonzero(live):
                actions[i] = planners[i].act(grid_state(timestep.state, i))
            live &= actions != NOOP
            actions[actions == NOOP] = TURN_RIGHT  # XLand-MiniGrid has no noop
        timestep = step(timestep, jnp.asarray(actions, jnp.int32))
        last = np.asarray(timestep.step_type) == StepType.LAST
        reached |= live & last & (np.asarray(timestep.discount) == 0)
        live &= ~last
        if not live.any():
            break
    return reached


@pytest.mark.parametrize("layout, level, least", [
    ("R1-9x9", "trivial", 0.95), ("R1-9x9", "small", 0.85),
    ("R4-13x13", "trivial", 0.9), ("R4-13x13", "small", 0.85)])
def test_planner_reaches_goals_random_play_does_not(layout, level, least):
    """Measured (rulesets 0-39 on R1-9x9, 40-79 on R4-13x13): the planner 100 %, 95 %, 100 %,
    100 %, random play 20 %, 12.5 %, 12.5 %, 7.5 %. A goal can be out of reach: an object
    placed against a wall where its partner must go, or a distractor rule using it up."""
    planner = play(layout, level, "planner").mean()
    random = play(layout, level, "random").mean()
    assert planner >= least, f"the planner reached {planner:.0%} of the goals"
    assert random <= 0.4 and planner - random >= 0.5, (planner, random)


def test_planner_models_xland_minigrids_step():
    """The planner's one-step model (actions, rules in order, goals) gives XLand-MiniGrid's
    outcome on its hand-built scenarios and on recorded random episodes of both layouts."""
    with np.load(DATA / "scenarios_R1-9x9.npz") as data:
        s = {k: data[k] for k in data.files}
    cases = [(s["goal"][i], s["rules"][i], s["grid_before"][i], s["position_before"][i],
              s["direction_before"][i], s["pocket_before"][i], s["action"][i], s["grid_after"][i],
              s["position_after"][i], s["pocket_after"][i], s["discount"][i] == 0)
             for i in range(len(s["name"]))]
    for layout in FIRST:
        with np.load(DATA / f"episodes_{layout}.npz") as data:
            e = {k: data[k] for k in data.files}
        for i in range(0, len(e["num_steps"]), 10):
            cases += [(e["ruleset_goal"][i], e["ruleset_rules"][i], e["grid"][i, t],
                       e["agent_position"][i, t], e["agent_direction"][i, t],
                       e["agent_pocket"][i, t], e["actions"][i, t], e["grid"][i, t + 1],
                       e["agent_position"][i, t + 1], e["agent_pocket"][i, t + 1],
                       e["terminated"][i, t + 1]) for t in range(e["num_steps"][i])]
    for (goal, rules, grid, position, direction, pocket, action, grid_after, position_after,
         pocket_after, reached) in cases:
        planner = Planner(goal, rules)
        planner._observe(GridState(grid, position[None], direction[None], pocket[None]))
        out = planner._simulate(*planner.me, int(action))
        assert np.array_equal(np.reshape(out.cells, grid.shape), grid_after)
        assert out.position == tuple(position_after) and out.pocket == tuple(pocket_after)
        assert planner._goal_met(out) == reached
    assert len(cases) > 5000


def hand_built(objects: dict, position, direction: int, pocket=(0, 0)) -> dict:
    """A 9x9 room with the objects {(row, col): (tile, colour)}, as grid_state() gives it."""
    grid = np.asarray(room(9, 9)).copy()
    for cell, obj in objects.items():
        grid[cell] = obj
    return {"grid": grid, "positions": np.array([position]), "directions": np.array([direction]),
            "pockets": np.array([pocket], np.uint8)}


def play_hand_built(world: dict, goal, rules, max_steps: int = 30) -> bool:
    """Whether the planner reaches the goal in XLand-MiniGrid's env from the hand-built world."""
    env, params = xminigrid.make("XLand-MiniGrid-R1-9x9")
    agent = AgentState(position=jnp.asarray(world["positions"][0], jnp.int32),
                       direction=jnp.asarray(world["directions"][0], jnp.int32),
                       pocket=jnp.asarray(world["pockets"][0]))
    state = State(key=jax.random.PRNGKey(0), step_num=jnp.asarray(0),
                  grid=jnp.asarray(world["grid"]), agent=agent,
                  goal_encoding=jnp.asarray(goal, jnp.uint8),
                  rule_encoding=jnp.asarray(rules, jnp.uint8), carry=EnvCarry())
    timestep = TimeStep(state=state, step_type=StepType.FIRST, reward=jnp.asarray(0.0),
                        discount=jnp.asarray(1.0), observation=jnp.zeros((5, 5, 2), jnp.uint8))
    step, planner = jax.jit(env.step), Planner(goal, rules)
    for _ in range(max_steps):
        state = timestep.state
        action = planner.act({"grid": np.asarray(state.grid),
                              "positions": np.asarray(state.agent.position)[None],
                              "directions": np.asarray(state.agent.direction)[None],
                              "pockets": np.asarray(state.agent.pocket)[None]})
        if action == NOOP:
            return False
        timestep = step(params, timestep, action)
        if timestep.step_type == StepType.LAST:
            return bool(timestep.discount == 0)
    return False


def test_planner_frees_its_hand_and_makes_what_the_goal_needs():
    """A vanish product in the pocket blocks picking up: the planner puts it down, picks up
    the ball, which an agent-hold rule turns into the key the goal asks to hold."""
    world = hand_built({(4, 6): BALL}, (4, 4), 1, pocket=VANISH)
    assert play_hand_built(world, goal=[1, *KEY, 0, 0], rules=[[1, *BALL, *KEY, 0, 0]])


def test_other_agents_are_obstacles_and_noop_when_nothing_helps():
    world = hand_built({(4, 7): BALL}, (4, 4), 1)
    goal = [3, *BALL, 0, 0]  # go next to the ball
    assert Planner(goal, []).act(world) == FORWARD
    two = {**world, "positions": np.array([(4, 5), (4, 4)]), "directions": np.array([0, 1]),
           "pockets": np.zeros((2, 2), np.uint8)}
    assert Planner(goal, [], index=1).act(two) not in (FORWARD, NOOP)
    assert Planner([3, *KEY, 0, 0], []).act(world) == NOOP  # no key, no rule makes one
