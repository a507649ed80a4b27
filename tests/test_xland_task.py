"""The xland task in the real engine, where it is ours rather than XLand-MiniGrid's (its single
agent step is tests/test_xland_align.py): several agents act in order and block each other, the
game modes, the layouts by name, a given state in and grid_state() out, every tile and colour
drawn, the same seed giving the same episode, the planner in 3D, bad input refused before
anything reaches Lua."""

import contextlib

import numpy as np
import pytest

import craftium_ma
from craftium_ma.envs.xland_v1 import XLandEnv, split_benchmark
from craftium_ma.testing import assert_same
from craftium_ma.xland import Ruleset, generate_benchmark, goal_reward
from craftium_ma.xland.encoding import FLOOR, WALL, Action, Colour, Tile
from craftium_ma.xland.planner import Planner
from craftium_ma.xland.world import LAYOUTS, make_world, max_steps, parse_layout

FORWARD, RIGHT, LEFT, PICK, PUT, TOGGLE, NOOP = (int(a) for a in Action)
RED_BALL, BLUE_SQUARE = (int(Tile.BALL), int(Colour.RED)), (int(Tile.SQUARE), int(Colour.BLUE))
UP, RIGHTWARD, DOWN, LEFTWARD = range(4)
NEAR_RED_BALL = Ruleset(np.array([3, *RED_BALL, 0, 0]), np.zeros((0, 7), np.uint8),
                        np.array([RED_BALL, BLUE_SQUARE], np.uint8))


def room(objects: dict) -> np.ndarray:
    """A 9 x 9 room (XLand-MiniGrid's R1-9x9 walls) with objects {(row, col): (tile, colour)}."""
    grid = np.empty((9, 9, 2), np.uint8)
    grid[...] = FLOOR
    grid[[0, -1], :] = grid[:, [0, -1]] = WALL
    for cell, obj in objects.items():
        grid[cell] = obj
    return grid


def xland_env(num_agents: int, **task_options):
    return contextlib.closing(craftium_ma.parallel_env(
        "xland", num_agents=num_agents, obs_size=32, task_options=task_options))


@pytest.fixture(scope="module")
def env():
    with xland_env(2) as e:
        yield e


@pytest.fixture(scope="module")
def env4():
    with xland_env(4) as e:
        yield e


def start(env, cells, directions, objects=None, ruleset=NEAR_RED_BALL, mode="cooperative",
          pockets=None):
    """reset() into a 9 x 9 room with the red ball at (4, 6) (or `objects`), the agents at
    `cells` facing `directions`."""
    return env.reset(seed=0, options={
        "ruleset": ruleset, "mode": mode, "grid": room(objects or {(4, 6): RED_BALL}),
        "agent_positions": cells, "agent_directions": directions,
        **({"agent_pockets": pockets} if pockets else {})})


# -- several agents ----------------------------------------------------------------------

@pytest.mark.engine
def test_agents_act_in_order_and_block_each_other(env):
    # both step into (4, 5): agent_0 acts first and gets there; agent_1 stays
    start(env, [(4, 4), (4, 6)], [RIGHTWARD, LEFTWARD], objects={(2, 2): RED_BALL})
    env.step({"agent_0": FORWARD, "agent_1": FORWARD})
    state = env.grid_state()
    np.testing.assert_array_equal(state["positions"], [(4, 5), (4, 6)])
    # nothing is put down onto an agent
    start(env, [(4, 4), (4, 5)], [RIGHTWARD, UP], pockets=[RED_BALL, (0, 0)])
    env.step({"agent_0": PUT, "agent_1": NOOP})
    np.testing.assert_array_equal(env.grid_state()["pockets"][0], RED_BALL)
    # an open door with an agent in it does not close, and nobody walks into it
    door = (int(Tile.DOOR_OPEN), int(Colour.RED))
    start(env, [(4, 5), (3, 5)], [UP, UP], objects={(3, 5): door})
    env.step({"agent_0": TOGGLE, "agent_1": NOOP})
    env.step({"agent_0": FORWARD, "agent_1": NOOP})
    state = env.grid_state()
    assert tuple(state["grid"][3, 5]) == door
    np.testing.assert_array_equal(state["positions"], [(4, 5), (3, 5)])


@pytest.mark.engine
@pytest.mark.parametrize("fixture", ["env", "env4"])
def test_cooperative_rewards_everyone_and_ends(fixture, request):
    env = request.getfixturevalue(fixture)
    n = len(env.possible_agents)
    cells = [(4, 4), (2, 2), (6, 2), (6, 4)][:n]
    _, infos = start(env, cells, [RIGHTWARD] + [UP] * (n - 1))
    assert len({str(i["goal"]) for i in infos.values()}) == 1
    _, rewards, terminations, _, _ = env.step({a: FORWARD if a == "agent_0" else NOOP
                                               for a in env.agents})
    assert rewards == dict.fromkeys(env.possible_agents, goal_reward(1, env.max_cycles))
    assert all(terminations.values()) and env.agents == []


@pytest.mark.engine
@pytest.mark.parametrize("fixture", ["env", "env4"])
def test_competitive_winner_team_gets_the_reward_the_other_its_negative(fixture, request):
    env = request.getfixturevalue(fixture)
    n = len(env.possible_agents)
    cells = [(4, 4), (2, 2), (6, 2), (6, 4)][:n]
    _, infos = start(env, cells, [RIGHTWARD] + [UP] * (n - 1), mode="competitive")
    for i in range(2, n):  # teams dealt out in turn; a team's members share its goal
        np.testing.assert_array_equal(infos[f"agent_{i}"]["goal"], infos[f"agent_{i % 2}"]["goal"])
    np.testing.assert_array_equal(infos["agent_0"]["goal"], NEAR_RED_BALL.goal)
    _, rewards, terminations, _, _ = env.step({a: FORWARD if a == "agent_0" else NOOP
                                               for a in env.agents})
    r = goal_reward(1, env.max_cycles)
    assert rewards == {f"agent_{i}": r if i % 2 == 0 else -r for i in range(n)}
    assert all(terminations.values()) and env.agents == []


@pytest.mark.engine
def test_independent_agents_end_alone(env4):
    start(env4, [(4, 4), (2, 2), (6, 2), (6, 4)], [RIGHTWARD, UP, UP, UP], mode="independent")
    _, rewards, terminations, _, _ = env4.step({a: FORWARD if a == "agent_0" else NOOP
                                                for a in env4.agents})
    assert rewards["agent_0"] > 0 and terminations["agent_0"]
    assert all(rewards[a] == 0 and not terminations[a] for a in rewards if a != "agent_0")
    assert env4.agents == ["agent_1", "agent_2", "agent_3"]


# -- layouts, state in and out --------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_are_xland_minigrids_grid_types_and_sizes(layout):
    rooms, height, width = parse_layout(layout)
    init = np.array([RED_BALL, BLUE_SQUARE, (Tile.KEY, Colour.PINK)], np.uint8)
    ruleset = Ruleset(np.array([1, *RED_BALL, 0, 0]), np.zeros((0, 7), np.uint8), init)
    world = make_world(ruleset, 8, "cooperative", seed=rooms, layout=layout)
    grid = world.grid
    assert grid.shape == (height, width, 2)
    assert (grid[[0, -1]] == WALL).all() and (grid[:, [0, -1]] == WALL).all()
    doors = grid[..., 0] == Tile.DOOR_CLOSED
    assert doors.sum() == {1: 0, 2: 1, 4: 4, 6: 6, 9: 12}[rooms]
    objects = grid[(grid[..., 0] != Tile.FLOOR) & (grid[..., 0] != Tile.WALL) & ~doors]
    assert sorted(map(tuple, objects.tolist())) == sorted(map(tuple, init.tolist()))
    cells = {a[:2] for a in world.agents}
    assert len(cells) == 8 and all(tuple(grid[c]) == FLOOR for c in cells)
    assert max_steps(layout) == 3 * height * width


@pytest.mark.engine
def test_a_given_state_goes_in_and_grid_state_reads_it_back():
    """The largest layout with the most agents, one drawn by us: grid_state() is the world
    drawn; a state passed to reset() comes back as it was given."""
    benchmark = generate_benchmark("small", 20, seed=3)
    with xland_env(8, layout="R9-25x25") as env:
        assert env.max_cycles == max_steps("R9-25x25")
        env.reset(seed=5, options={"ruleset": benchmark.get_ruleset(0)})
        state, world = env.grid_state(), env.world
        np.testing.assert_array_equal(state["grid"], world.grid)
        np.testing.assert_array_equal(state["positions"], [a[:2] for a in world.agents])
        np.testing.assert_array_equal(state["directions"], [a[2] for a in world.agents])
        np.testing.assert_array_equal(state["pockets"], np.zeros((8, 2)))
        given = {"grid": state["grid"], "agent_positions": state["positions"][::-1],
                 "agent_directions": (state["directions"] + 1) % 4,
                 "agent_pockets": [BLUE_SQUARE] * 8}
        env.reset(seed=6, options={"ruleset": benchmark.get_ruleset(1), **given})
        again = env.grid_state()
        for ours, theirs in (("grid", "grid"), ("positions", "agent_positions"),
                             ("directions", "agent_directions"), ("pockets", "agent_pockets")):
            np.testing.assert_array_equal(again[ours], given[theirs], err_msg=ours)


@pytest.mark.engine
def test_every_tile_and_colour_is_drawn():
    """Each tile, and each colour of a ball, in front of the agent changes its frame, and
    no two look the same."""
    with xland_env(1) as env:
        def frame(obj):
            objects = {(3, 4): obj} if obj else {}
            observations, _ = env.reset(seed=0, options={
                "ruleset": NEAR_RED_BALL, "grid": room(objects), "agent_positions": [(5, 4)],
                "agent_directions": [UP]})
            return observations["agent_0"]

        empty = frame(None)
        looks = [frame((tile, Colour.GREEN)) for tile in Tile if tile > Tile.FLOOR]
        looks += [frame((Tile.BALL, colour)) for colour in Colour if colour != Colour.GREEN]
    for look in looks:
        assert (look != empty).any()
    distinct = {look.tobytes() for look in looks}
    assert len(distinct) == len(looks)


# -- episodes -----------------------------------------------------------------------------

def record(env, seed, options, steps=12):
    rng = np.random.default_rng(seed)
    out = [env.reset(seed=seed, options=options)]
    for _ in range(steps):
        if not env.agents:
            break
        out.append(env.step({a: int(rng.integers(7)) for a in env.agents}))
        out.append(env.state())
    return out


@pytest.fixture(scope="module")
def small():
    return generate_benchmark("small", 500, seed=7)


@pytest.mark.engine
def test_same_seed_and_ruleset_same_episode(env, small):
    options = {"ruleset": small.get_ruleset(5)}
    first = record(env, 11, options)
    record(env, 12, {"ruleset": small.get_ruleset(6)})
    assert_same(first, record(env, 11, options))
    # without a ruleset the seed samples it, and the world, from the benchmark
    env.reset(seed=21, options={"benchmark": small})
    ruleset_21, world_21 = env.ruleset, env.world.lua()
    env.reset(seed=22, options={"benchmark": small})
    assert env.world.lua() != world_21
    env.reset(seed=21, options={"benchmark": small})
    assert_same(env.ruleset.goal, ruleset_21.goal)
    assert env.world.lua() == world_21


@pytest.mark.engine
def test_trial_episodes_keep_ruleset_and_layout(env, small):
    options = {"benchmark": small, "trial_episodes": 3}
    worlds = []
    for seed in (1, 2, 3, 4):
        _, infos = env.reset(seed=seed, options=options)
        worlds.append((str(env.world.lua()), craftium_ma.decode_text(infos["agent_0"]["mission"])))
    assert worlds[0] == worlds[1] == worlds[2] != worlds[3]


@pytest.mark.engine
def test_split_samples_only_its_own_rulesets(env, small):
    """split "train" and "held-out": 80 % and 20 % of the benchmark, apart; each reset draws
    from its own part (a draw from the whole would land in the other part 1 time in 5)."""
    def key(ruleset):
        return ruleset.goal.tobytes() + ruleset.rules.tobytes() + ruleset.init_tiles.tobytes()
    parts = {split: split_benchmark(small, split) for split in ("train", "held-out")}
    assert {s: b.num_rulesets() for s, b in parts.items()} == {"train": 400, "held-out": 100}
    keys = {s: {key(b.get_ruleset(i)) for i in range(b.num_rulesets())} for s, b in parts.items()}
    assert not keys["train"] & keys["held-out"]
    for split in parts:
        for seed in range(12):
            env.reset(seed=seed, options={"benchmark": small, "split": split})
            assert key(env.ruleset) in keys[split]
    # a trial drawn from one split ends where the next reset draws from the other
    env.reset(seed=0, options={"benchmark": small, "split": "train", "trial_episodes": 3})
    env.reset(seed=1, options={"benchmark": small, "split": "held-out", "trial_episodes": 3})
    assert key(env.ruleset) in keys["held-out"]


# -- the planner in 3D ---------------------------------------------------------------

@pytest.mark.engine
def test_planner_solves_trivial_rulesets_in_3d(env):
    """The planner (tests/test_xland_planner.py plays it in XLand-MiniGrid itself) acting on
    grid_state() for agent_1 while agent_0 waits: 10 of 10 trivial rulesets solved."""
    benchmark = generate_benchmark("trivial", 50, seed=5)
    solved = 0
    for i in range(10):
        _, infos = env.reset(seed=i, options={"ruleset": benchmark.get_ruleset(i)})
        planner = Planner(infos["agent_1"]["goal"], infos["agent_1"]["rules"], index=1)
        while env.agents:
            action = planner.act(env.grid_state())
            _, rewards, *_ = env.step({"agent_0": NOOP, "agent_1": action})
            solved += rewards["agent_1"] > 0
    assert solved == 10


# -- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    ({"ruleset": {"goal": [15, 0, 0, 0, 0], "rules": np.zeros((0, 7)), "init_tiles": [RED_BALL]}},
     "goal id 15"),
    ({"ruleset": {"goal": [1, *RED_BALL, 0, 0]}}, "missing"),
    ({"ruleset": "red ball"}, "ruleset must be"),
    ({"ruleset": NEAR_RED_BALL, "grid": np.zeros((9, 9))}, "grid has shape"),
    ({"ruleset": NEAR_RED_BALL, "grid": room({}), "agent_positions": [(0, 0)]},
     "not a walkable cell"),
    ({"ruleset": NEAR_RED_BALL, "agent_directions": [4]}, "agent_directions"),
    ({"ruleset": Ruleset(np.array([6, 40, 2, 0, 0]), np.zeros((0, 7)), np.zeros((0, 2)))},
     "outside"),
])
def test_malformed_state_or_ruleset_raises_before_the_engine(bad, message):
    env = XLandEnv()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options=bad)
    assert env.engine_pids() == {}
    env.close()


@pytest.mark.parametrize("options, message", [
    ({"mode": "teams"}, "mode must be one of"), ({"layout": "maze"}, "layout must be"),
    ({"trial_episodes": 0}, "trial_episodes"),
    ({"benchmark": 5}, "benchmark must be"), ({"split": "test"}, "split must be one of"),
])
def test_bad_task_options(options, message):
    with pytest.raises(ValueError, match=message):
        craftium_ma.parallel_env("xland", task_options=options)
    with pytest.raises(ValueError, match="needs at least 2 agents"):
        craftium_ma.parallel_env("xland", num_agents=1, task_options={"mode": "competitive"})
    assert craftium_ma.parallel_env("xland", max_cycles=40).max_cycles == 40
    assert craftium_ma.parallel_env("xland", task_options={"layout": "R4-13x13"}).max_cycles == 507
