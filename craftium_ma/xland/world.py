"""The 3D task's world for one episode, in XLand-MiniGrid's encoding: its layouts by name, where
objects and agents start, each agent's goal; drawn from a seed in Python and passed to the Lua
mod (mods/xland) as plain integer lists.

A grid is (height, width, 2) uint8 of (tile, colour), indexed [row, column]; row 0 is the
north edge (up), column 0 the west edge (left). Layouts are XLand-MiniGrid's grid types and
sizes ("R4-13x13": four rooms, 13 x 13 cells, walls included); the doors' places and colours and
the starting cells are drawn by our random numbers, from the same distributions as its.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..resources import MODS
from .encoding import (DIRECTIONS, FLOOR, WALL, Action, Colour, GoalId, RuleId, Ruleset, Tile,
                       PICKABLE_TILES, WALKABLE_TILES, validate_goal)

MAX_SIZE = 25  # the largest layout's side (R9-25x25)
# state(): height, width, then (tile, colour) of each cell of a MAX_SIZE x MAX_SIZE grid (rows
# first); per agent row, column, direction, pocket tile and colour (mods/xland/task.toml)
STATE_SHARED, STATE_PER_AGENT = 2 + 2 * MAX_SIZE * MAX_SIZE, 5
# XLand-MiniGrid's registered layouts: rooms -> sides
LAYOUT_SIZES = {1: (9, 11, 13, 15, 17), 2: (9, 11, 13, 15, 17), 4: (9, 11, 13, 15, 17),
                6: (13, 17, 19), 9: (16, 19, 25)}
LAYOUTS = tuple(f"R{rooms}-{size}x{size}" for rooms, sizes in LAYOUT_SIZES.items()
                for size in sizes)
DEFAULT_LAYOUT = "R1-9x9"
# the colours of the doors between rooms
DOOR_COLOURS = (Colour.RED, Colour.GREEN, Colour.BLUE, Colour.PURPLE, Colour.YELLOW, Colour.GREY)
DIRECTION_YAWS = (0.0, 270.0, 180.0, 90.0)  # the engine's yaw (degrees) facing up, right, ...
LUA_CONSTANTS = MODS / "xland" / "constants.lua"  # lua_constants(), which mods/xland reads
_LAYOUT_NAME = re.compile(r"R(\d)-(\d+)x(\d+)")


def parse_layout(name: str) -> tuple[int, int, int]:
    """"R4-13x13" -> (rooms, height, width); ValueError naming the layouts."""
    match = _LAYOUT_NAME.fullmatch(str(name))
    if name not in LAYOUTS or match is None:
        raise ValueError(f"unknown layout {name!r}; layouts are {', '.join(LAYOUTS)}")
    rooms, height, width = (int(v) for v in match.groups())
    return rooms, height, width


def max_steps(layout: str) -> int:
    """XLand-MiniGrid's default episode length for a layout: 3 * height * width."""
    _, height, width = parse_layout(layout)
    return 3 * height * width


def _door(grid: np.ndarray, row: int, col: int, colour: int) -> None:
    grid[row, col] = (Tile.DOOR_CLOSED, colour)


def layout_grid(name: str, rng: np.random.Generator) -> np.ndarray:
    """The walls and closed doors of a layout, doors placed and coloured from rng."""
    rooms, h, w = parse_layout(name)
    grid = np.empty((h, w, 2), np.uint8)
    grid[...] = FLOOR
    grid[[0, -1], :] = grid[:, [0, -1]] = WALL

    def colour() -> int:
        return int(DOOR_COLOURS[int(rng.integers(len(DOOR_COLOURS)))])

    if rooms == 2:
        grid[:, w // 2] = WALL
        _door(grid, int(rng.integers(1, h - 1)), w // 2, colour())
    elif rooms == 4:
        grid[:, w // 2] = grid[h // 2, :] = WALL
        offsets = rng.integers(1, h // 2, 4)
        for (row, col), c in zip([(h // 2, offsets[0]), (h // 2, w // 2 + offsets[1]),
                                  (offsets[2], w // 2), (h // 2 + offsets[3], w // 2)],
                                 [colour() for _ in range(4)]):
            _door(grid, int(row), int(col), c)
    elif rooms == 6:
        grid[:, w // 2 - 2] = grid[:, w // 2 + 2] = WALL
        for i in (1, 2):
            grid[i * (h // 3), :w // 2 - 2] = grid[i * (h // 3), w // 2 + 2:][:w // 2 - 2] = WALL
        for col in (w // 2 - 2, w // 2 + 2):
            for row in (h // 2 - h // 3, h // 2, h // 2 + h // 3):
                _door(grid, row, col, colour())
    elif rooms == 9:
        room_w, room_h = w // 3, h // 3
        grid[:, room_w] = grid[:, 2 * room_w] = grid[room_h, :] = grid[2 * room_h, :] = WALL
        for i in range(3):
            for j in range(3):
                left, top = i * room_w, j * room_h
                if i < 2:
                    _door(grid, top + int(rng.integers(1, room_w)), left + room_w, colour())
                if j < 2:
                    _door(grid, top + room_h, left + int(rng.integers(1, room_w)), colour())
    return grid


@dataclass(frozen=True)
class World:
    """grid (height, width, 2) uint8; agents [(row, col, direction)], direction 0 up, 1 right,
    2 down, 3 left; pockets [(tile, colour)], (0, 0) an empty hand; goals: one goal vector per
    agent; rules (R, 7)."""

    grid: np.ndarray
    agents: list[tuple[int, int, int]]
    pockets: list[tuple[int, int]]
    goals: list[np.ndarray]
    rules: np.ndarray

    def lua(self) -> dict:
        """The world as mods/xland reads it (options.world)."""
        height, width = self.grid.shape[:2]
        return {"height": height, "width": width,
                "grid": self.grid.astype(int).ravel().tolist(),
                "agents": [int(v) for a in self.agents for v in a],
                "pockets": [int(v) for p in self.pockets for v in p],
                "goals": [int(v) for g in self.goals for v in g],
                "rules": [int(v) for r in self.rules if r[0] for v in r]}


def goal_for_others(ruleset: Ruleset, rng: np.random.Generator) -> np.ndarray:
    """A goal on the ruleset's initial objects, for another team or agent: hold a pickable one,
    stand next to one, or put a pickable one next to another (kinds the generator draws)."""
    objects = sorted({(int(t), int(c)) for t, c in ruleset.init_tiles if t})
    pickable = [o for o in objects if o[0] in PICKABLE_TILES]
    kinds = ([GoalId.AGENT_NEAR] if objects else []) + ([GoalId.AGENT_HOLD] if pickable else [])
    if pickable and len(objects) > 1:
        kinds.append(GoalId.TILE_NEAR)
    if not kinds:
        return np.zeros(5, np.uint8)
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind == GoalId.AGENT_NEAR:
        a, b = objects[int(rng.integers(len(objects)))], (0, 0)
    elif kind == GoalId.AGENT_HOLD:
        a, b = pickable[int(rng.integers(len(pickable)))], (0, 0)
    else:
        b = pickable[int(rng.integers(len(pickable)))]
        others = [o for o in objects if o != b]
        a = others[int(rng.integers(len(others)))]
    return validate_goal([int(kind), *a, *b])


def agent_goals(ruleset: Ruleset, mode: str, num_agents: int,
                rng: np.random.Generator) -> list[np.ndarray]:
    """Each agent's goal: the ruleset's for all (cooperative); the ruleset's for team_0 and one
    drawn by goal_for_others for team_1, agents dealt out in turn (competitive); the ruleset's
    for agent_0 and one drawn for each other agent (independent)."""
    if mode == "cooperative":
        return [ruleset.goal] * num_agents
    if mode == "competitive":
        other = goal_for_others(ruleset, rng)
        return [ruleset.goal if i % 2 == 0 else other for i in range(num_agents)]
    return [ruleset.goal] + [goal_for_others(ruleset, rng) for _ in range(num_agents - 1)]


def _check_positions(goals: list[np.ndarray], height: int, width: int) -> None:
    """The position goals' cells lie inside the grid."""
    for goal in goals:
        gid = int(goal[0])
        if gid in (GoalId.TILE_ON_POSITION, GoalId.AGENT_ON_POSITION):
            row, col = (goal[3], goal[4]) if gid == GoalId.TILE_ON_POSITION else (goal[1], goal[2])
            if not (row < height and col < width):
                raise ValueError(f"goal {goal.tolist()}: cell ({row}, {col}) is outside this "
                                 f"episode's {height} x {width} grid")


def check_grid(grid) -> np.ndarray:
    """A given grid as (H, W, 2) uint8 with known tiles and colours; ValueError otherwise."""
    grid = np.asarray(grid)
    if grid.ndim != 3 or grid.shape[2] != 2 or not 3 <= min(grid.shape[:2]) or \
            max(grid.shape[:2]) > MAX_SIZE:
        raise ValueError(f"grid has shape {grid.shape}; expected (height, width, 2) with sides "
                         f"3 to {MAX_SIZE}")
    if not np.issubdtype(grid.dtype, np.integer) or grid[..., 0].max() > max(Tile) or \
            grid[..., 1].max() > max(Colour) or grid.min() < 0:
        raise ValueError(f"grid must hold integer (tile, colour) pairs, tiles 0-{max(Tile)} and "
                         f"colours 0-{max(Colour)}")
    return grid.astype(np.uint8)


def _agent_placement(grid: np.ndarray, num_agents: int, positions, directions, pockets,
                     rng: np.random.Generator):
    """Given agents' cells, directions and pockets, checked; those not given drawn."""
    height, width = grid.shape[:2]
    if positions is None:
        free = np.argwhere(grid[..., 0] == Tile.FLOOR)
        if num_agents > len(free):
            raise ValueError(f"{num_agents} agents do not fit on the {len(free)} free cells")
        positions = free[rng.choice(len(free), num_agents, replace=False)]
    positions = [tuple(int(v) for v in p) for p in np.asarray(positions).reshape(-1, 2)]
    if len(positions) != num_agents or len(set(positions)) != num_agents:
        raise ValueError(f"agent_positions must be {num_agents} distinct (row, col) cells, got "
                         f"{positions}")
    for row, col in positions:
        if not (0 <= row < height and 0 <= col < width) or \
                grid[row, col, 0] not in WALKABLE_TILES:
            raise ValueError(f"agent_positions: cell ({row}, {col}) is not a walkable cell of "
                             f"the {height} x {width} grid")
    if directions is None:
        directions = rng.integers(4, size=num_agents)
    directions = [int(d) for d in np.asarray(directions).reshape(-1)]
    if len(directions) != num_agents or any(not 0 <= d < 4 for d in directions):
        raise ValueError(f"agent_directions must be {num_agents} directions in 0-3 (up, right, "
                         f"down, left), got {directions}")
    pockets = [(0, 0)] * num_agents if pockets is None else \
        [tuple(int(v) for v in p) for p in np.asarray(pockets).reshape(-1, 2)]
    if len(pockets) != num_agents:
        raise ValueError(f"agent_pockets must be {num_agents} (tile, colour) pairs, got {pockets}")
    return [(*p, d) for p, d in zip(positions, directions)], pockets


def make_world(ruleset: Ruleset, num_agents: int, mode: str, seed: int,
               layout: str = DEFAULT_LAYOUT, grid=None, agent_positions=None,
               agent_directions=None, agent_pockets=None) -> World:
    """The episode's world, the same for the same arguments.

    Without `grid`, the layout's walls and doors, then the ruleset's initial objects and the
    agents on distinct free cells drawn uniformly, and directions drawn uniformly (as
    XLand-MiniGrid's reset). With `grid` (H, W, 2), that grid as it is (its objects; the
    ruleset's init_tiles are not placed), and the agents where given or drawn.
    """
    rng = np.random.default_rng(seed)
    if grid is None:
        grid = layout_grid(layout, rng)
        objects = [tuple(o) for o in ruleset.init_tiles if o[0] != Tile.EMPTY]
        free = np.argwhere(grid[..., 0] == Tile.FLOOR)
        needed = len(objects) + (num_agents if agent_positions is None else 0)
        if needed > len(free):
            raise ValueError(f"{len(objects)} objects and {num_agents} agents do not fit on the "
                             f"{len(free)} free cells of layout {layout}")
        cells = free[rng.choice(len(free), needed, replace=False)]
        for (row, col), obj in zip(cells, objects):
            grid[row, col] = obj
        if agent_positions is None:
            agent_positions = cells[len(objects):]
    else:
        grid = check_grid(grid).copy()
    agents, pockets = _agent_placement(grid, num_agents, agent_positions, agent_directions,
                                       agent_pockets, rng)
    goals = agent_goals(ruleset, mode, num_agents, rng)
    _check_positions(goals, *grid.shape[:2])
    return World(grid, agents, pockets, goals, ruleset.rules)


def lua_constants() -> str:
    """The Lua source of mods/xland/constants.lua: the ids and sizes above and in encoding.py,
    which the Lua mod reads from there (`python -m craftium_ma.xland.world` writes it)."""
    def table(values) -> str:
        return "{" + ", ".join(str(int(v)) for v in values) + "}"

    def ids(enum) -> str:
        return "{\n" + "".join(f"\t\t{name} = {int(m)},\n"
                               for name, m in enum.__members__.items()) + "\t}"

    def flags(members) -> str:
        return "{" + ", ".join(f"[{int(m)}] = true" for m in members) + "}"

    lines = [
        "-- The ids and sizes mods/xland shares with craftium_ma/xland (encoding.py, world.py).",
        "-- Generated by `python -m craftium_ma.xland.world`: do not edit (tests/test_lua.py",
        "-- checks that it is current).",
        "return {",
        f"\tmax_size = {MAX_SIZE},",
        f"\ttile = {ids(Tile)},",
        f"\tcolour = {ids(Colour)},",
        f"\trule = {ids(RuleId)},",
        f"\tgoal = {ids(GoalId)},",
        f"\taction = {ids(Action)},",
        f"\tpickable = {flags(PICKABLE_TILES)},",
        f"\twalkable = {flags(WALKABLE_TILES)},",
        f"\tfloor = {table(FLOOR)},  -- an empty cell, what a pick-up leaves, the vanish product",
        "\t-- per direction: up, right, down, left as (row, column) offsets",
        "\tdirections = {" + ", ".join(table(d) for d in DIRECTIONS) + "},",
        f"\tyaws = {table(DIRECTION_YAWS)},",
        "}",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    LUA_CONSTANTS.write_text(lua_constants())
    print(f"wrote {LUA_CONSTANTS}")
