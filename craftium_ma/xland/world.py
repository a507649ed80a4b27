"""The 3D task's world for one episode: rooms, walls, doorways, where objects and agents start,
each agent's goal; drawn from a seed in Python and passed to the Lua mod (mods/xland) as plain
integer lists.

The grid is at most MAX_SIZE x MAX_SIZE cells, walls included; cell (x, z) grows east and north.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..resources import MODS
from .encoding import (COMPASS_OFFSETS, OBJECT_COLOURS, OBJECT_SHAPES, PICKABLE_SHAPES, VANISH,
                       WALKABLE_SHAPES, Colour, GoalId, RuleId, Ruleset, Tile, is_pickable,
                       validate_goal)

MAX_SIZE = 19
# state(): grid width, depth, (tile, colour) of each cell of the largest grid; per agent x, z,
# direction, held tile and colour (mods/xland/task.toml's state)
STATE_SHARED, STATE_PER_AGENT = 2 + 2 * MAX_SIZE * MAX_SIZE, 5
ROOM_COUNTS = (1, 2, 4, 6, 9)
# rooms -> the (columns, rows) arrangements and the range of a room's inside size (cells)
_ARRANGEMENTS = {1: ((1, 1),), 2: ((2, 1), (1, 2)), 4: ((2, 2),), 6: ((3, 2), (2, 3)),
                 9: ((3, 3),)}
_ROOM_SIZES = {1: (5, 9), 2: (4, 7), 4: (3, 6), 6: (3, 5), 9: (3, 5)}
# layout "test": one 9 x 9 room; agent i starts at TEST_AGENT_CELLS[i] facing north, the i-th
# initial object at TEST_OBJECT_CELLS[i]
TEST_SIZE = 11
TEST_AGENT_CELLS = tuple((x, 1) for x in (1, 3, 5, 7, 9)) + tuple((x, 9) for x in (2, 4, 6))
TEST_OBJECT_CELLS = tuple((x, z) for z in (3, 6, 8) for x in (1, 3, 5, 7, 9))
NORTH = 0
DIRECTION_YAWS = (0.0, 270.0, 180.0, 90.0)  # the engine's yaw (degrees) facing N, E, S, W
LUA_CONSTANTS = MODS / "xland" / "constants.lua"  # lua_constants(), which mods/xland reads


@dataclass(frozen=True)
class World:
    """walls (width, depth) bool; objects [(x, z, tile, colour)]; agents [(x, z, direction)],
    direction 0 north, 1 east, 2 south, 3 west; goals: one goal vector per agent."""

    walls: np.ndarray
    objects: list[tuple[int, int, int, int]]
    agents: list[tuple[int, int, int]]
    goals: list[np.ndarray]
    rules: np.ndarray

    def lua(self) -> dict:
        """The world as mods/xland reads it (options.world)."""
        width, depth = self.walls.shape
        return {"width": width, "depth": depth,
                "walls": self.walls.astype(int).ravel().tolist(),
                "objects": [v for o in self.objects for v in o],
                "agents": [v for a in self.agents for v in a],
                "goals": [int(v) for g in self.goals for v in g],
                "rules": [int(v) for r in self.rules if r[0] for v in r]}


def _rooms(rng: np.random.Generator, rooms: int) -> tuple[np.ndarray, set]:
    """Walls of `rooms` rooms in a grid with a doorway between each two neighbours; and the
    doorway cells."""
    arrangements = _ARRANGEMENTS[rooms]
    columns, rows = arrangements[int(rng.integers(len(arrangements)))]
    low, high = _ROOM_SIZES[rooms]
    size_x, size_z = (int(v) for v in rng.integers(low, high + 1, 2))
    width, depth = columns * (size_x + 1) + 1, rows * (size_z + 1) + 1
    walls = np.zeros((width, depth), dtype=bool)
    walls[::size_x + 1, :] = True
    walls[:, ::size_z + 1] = True
    doorways = set()
    for c in range(columns):
        for r in range(rows):
            x0, z0 = c * (size_x + 1), r * (size_z + 1)
            if c + 1 < columns:  # the wall east of this room
                doorways.add((x0 + size_x + 1, z0 + 1 + int(rng.integers(size_z))))
            if r + 1 < rows:  # the wall north of it
                doorways.add((x0 + 1 + int(rng.integers(size_x)), z0 + size_z + 1))
    for x, z in doorways:
        walls[x, z] = False
    return walls, doorways


def goal_for_others(ruleset: Ruleset, rng: np.random.Generator) -> np.ndarray:
    """A goal on the ruleset's initial objects, for another team or agent: hold a pickable one,
    stand next to one, or put two next to each other (as the generator's goals)."""
    objects = sorted({(int(t), int(c)) for t, c in ruleset.init_tiles})
    pickable = [o for o in objects if is_pickable(*o)]
    kinds = [GoalId.AGENT_NEAR] + ([GoalId.AGENT_HOLD] if pickable else [])
    if pickable and len(objects) > 1:
        kinds.append(GoalId.TILE_NEAR)
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind == GoalId.AGENT_NEAR:
        a, b = objects[int(rng.integers(len(objects)))], (0, 0)
    elif kind == GoalId.AGENT_HOLD:
        a, b = pickable[int(rng.integers(len(pickable)))], (0, 0)
    else:
        a = pickable[int(rng.integers(len(pickable)))]
        others = [o for o in objects if o != a]
        b = others[int(rng.integers(len(others)))]
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


def _check_positions(goals: list[np.ndarray], walls: np.ndarray) -> None:
    """The position goals' cells lie inside the grid, off the walls."""
    width, depth = walls.shape
    for goal in goals:
        gid = int(goal[0])
        if gid in (GoalId.TILE_ON_POSITION, GoalId.AGENT_ON_POSITION):
            x, z = (int(goal[3]), int(goal[4])) if gid == GoalId.TILE_ON_POSITION else \
                (int(goal[1]), int(goal[2]))
            if not (x < width and z < depth) or walls[x, z]:
                where = "outside the grid" if not (x < width and z < depth) else "a wall"
                raise ValueError(f"goal {goal.tolist()}: cell ({x}, {z}) is {where} of this "
                                 f"episode's {width} x {depth} grid")


def make_world(ruleset: Ruleset, num_agents: int, mode: str, seed: int, rooms: int = 0,
               layout: str = "random") -> World:
    """The episode's world, the same for the same arguments. rooms 0 draws the number of rooms
    from the seed. ValueError if the objects and agents do not fit or a position goal's cell
    is off the grid."""
    rng = np.random.default_rng(seed)
    objects_needed = len(ruleset.init_tiles)
    if layout == "test":
        walls = np.zeros((TEST_SIZE, TEST_SIZE), dtype=bool)
        walls[[0, -1], :] = walls[:, [0, -1]] = True
        if objects_needed > len(TEST_OBJECT_CELLS) or num_agents > len(TEST_AGENT_CELLS):
            raise ValueError(f"layout 'test' holds {len(TEST_OBJECT_CELLS)} objects and "
                             f"{len(TEST_AGENT_CELLS)} agents, got {objects_needed} and "
                             f"{num_agents}")
        object_cells = TEST_OBJECT_CELLS[:objects_needed]
        agents = [(x, z, NORTH) for x, z in TEST_AGENT_CELLS[:num_agents]]
    else:
        rooms = rooms or ROOM_COUNTS[int(rng.integers(len(ROOM_COUNTS)))]
        walls, doorways = _rooms(rng, rooms)
        # objects never stand in a doorway or next to one, where they would block it
        blocked = {(x + dx, z + dz) for x, z in doorways for dx in (-1, 0, 1) for dz in (-1, 0, 1)}
        free = [(int(x), int(z)) for x, z in np.argwhere(~walls) if (x, z) not in blocked]
        if objects_needed > len(free):
            raise ValueError(f"{objects_needed} objects do not fit on the {len(free)} free "
                             f"cells of this {rooms}-room layout")
        object_cells = [free[i] for i in rng.choice(len(free), objects_needed, replace=False)]
        taken = set(object_cells)
        rest = [(int(x), int(z)) for x, z in np.argwhere(~walls)
                if (x, z) not in doorways and (x, z) not in taken]
        if num_agents > len(rest):
            raise ValueError(f"{num_agents} agents do not fit on the {len(rest)} cells left "
                             f"by the objects of this {rooms}-room layout")
        # agents start with no object next to them where there is room (a goal next to an
        # agent's start would be reached in the first step)
        near = {(x + dx, z + dz) for x, z in object_cells for dx, dz in COMPASS_OFFSETS}
        apart = [c for c in rest if c not in near]
        rest = apart if len(apart) >= num_agents else rest
        agent_cells = [rest[i] for i in rng.choice(len(rest), num_agents, replace=False)]
        directions = rng.integers(4, size=num_agents)
        agents = [(*cell, int(d)) for cell, d in zip(agent_cells, directions)]
    objects = [(x, z, int(t), int(c)) for (x, z), (t, c) in zip(object_cells, ruleset.init_tiles)]
    goals = agent_goals(ruleset, mode, num_agents, rng)
    _check_positions(goals, walls)
    return World(walls, objects, agents, goals, ruleset.rules)



def lua_constants() -> str:
    """The Lua source of mods/xland/constants.lua: the ids and sizes above and in encoding.py,
    which the Lua mod reads from there (`python -m craftium_ma.xland.world` writes it)."""
    def table(values) -> str:
        return "{" + ", ".join(str(int(v)) for v in values) + "}"

    def ids(enum) -> str:
        return "{\n" + "".join(f"\t\t{m.name} = {int(m)},\n" for m in enum) + "\t}"

    def by_id(members, value) -> str:
        return "{" + ", ".join(f"[{int(m)}] = {value(m)}" for m in members) + "}"

    def name(member) -> str:
        return f'"{member.name.lower()}"'

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
        "\t-- the objects: shapes and colours in order, their names, what agents may do with them",
        f"\tobject_shapes = {table(OBJECT_SHAPES)},",
        f"\tobject_colours = {table(OBJECT_COLOURS)},",
        f"\tshape_name = {by_id(OBJECT_SHAPES, name)},",
        f"\tcolour_name = {by_id(OBJECT_COLOURS, name)},",
        f"\tpickable = {by_id(PICKABLE_SHAPES, lambda _: 'true')},",
        f"\twalkable = {by_id(WALKABLE_SHAPES, lambda _: 'true')},",
        f"\tvanish = {table(VANISH)},  -- a rule's product that removes its inputs",
        "\t-- per direction: north, east, south, west",
        "\toffsets = {" + ", ".join(table(o) for o in COMPASS_OFFSETS) + "},",
        f"\tyaws = {table(DIRECTION_YAWS)},",
        "}",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    LUA_CONSTANTS.write_text(lua_constants())
    print(f"wrote {LUA_CONSTANTS}")
