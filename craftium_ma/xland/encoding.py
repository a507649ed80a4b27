"""XLand-MiniGrid's encoding (xminigrid 0.9.3), bit for bit: objects, goals, rules, missions.

An object is a ``(tile, colour)`` pair. A goal is 5 values ``[id, a_tile, a_colour, b_tile,
b_colour]``, a rule 7 values; which slots an id uses is in ``GOAL_LAYOUT`` and ``RULE_LAYOUT``
(one-object rules put their product in slots 3-4, two-object rules in slots 5-6). Positions are
``(row, col)``; direction 0 is up (row - 1), then right, down, left. A directional tile-near
condition means "b lies one cell <direction> from a"; a directional agent-near condition means
"a lies one cell <direction> from the agent".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

GOAL_SIZE = 5
RULE_SIZE = 7


class Tile(IntEnum):
    """XLand-MiniGrid's 13 tile ids; CUBE and HEXAGON are readable aliases."""

    EMPTY = 0
    FLOOR = 1
    WALL = 2
    BALL = 3
    SQUARE = 4
    PYRAMID = 5
    GOAL = 6
    KEY = 7
    DOOR_LOCKED = 8
    DOOR_CLOSED = 9
    DOOR_OPEN = 10
    HEX = 11
    STAR = 12
    CUBE = 4
    HEXAGON = 11


class Colour(IntEnum):
    """XLand-MiniGrid's 12 colour ids; NONE is a readable alias of EMPTY."""

    EMPTY = 0
    RED = 1
    GREEN = 2
    BLUE = 3
    PURPLE = 4
    YELLOW = 5
    GREY = 6
    BLACK = 7
    ORANGE = 8
    WHITE = 9
    BROWN = 10
    PINK = 11
    NONE = 0


class RuleId(IntEnum):
    EMPTY = 0
    AGENT_HOLD = 1
    AGENT_NEAR = 2
    TILE_NEAR = 3
    TILE_NEAR_UP = 4
    TILE_NEAR_RIGHT = 5
    TILE_NEAR_DOWN = 6
    TILE_NEAR_LEFT = 7
    AGENT_NEAR_UP = 8
    AGENT_NEAR_RIGHT = 9
    AGENT_NEAR_DOWN = 10
    AGENT_NEAR_LEFT = 11


class GoalId(IntEnum):
    EMPTY = 0
    AGENT_HOLD = 1
    AGENT_ON_TILE = 2
    AGENT_NEAR = 3
    TILE_NEAR = 4
    TILE_ON_POSITION = 5
    AGENT_ON_POSITION = 6
    TILE_NEAR_UP = 7
    TILE_NEAR_RIGHT = 8
    TILE_NEAR_DOWN = 9
    TILE_NEAR_LEFT = 10
    AGENT_NEAR_UP = 11
    AGENT_NEAR_RIGHT = 12
    AGENT_NEAR_DOWN = 13
    AGENT_NEAR_LEFT = 14


class Action(IntEnum):
    """XLand-MiniGrid's actions, in its order; NOOP (ours) follows them."""

    FORWARD = 0
    TURN_RIGHT = 1
    TURN_LEFT = 2
    PICK_UP = 3
    PUT_DOWN = 4
    TOGGLE = 5
    NOOP = 6


# Directions 0 up, 1 right, 2 down, 3 left; a cell is (row, column), up is row - 1.
DIRECTIONS = ((-1, 0), (0, 1), (1, 0), (0, -1))
DIRECTION_NAMES = ("up", "right", "down", "left")

FLOOR = (int(Tile.FLOOR), int(Colour.BLACK))  # an empty cell; what a pick-up leaves
WALL = (int(Tile.WALL), int(Colour.GREY))  # the layouts' walls
VANISH = FLOOR  # a rule producing this removes its inputs (a floor in the hand blocks pick-up)
PICKABLE_TILES = (Tile.BALL, Tile.SQUARE, Tile.PYRAMID, Tile.KEY, Tile.HEX, Tile.STAR)
WALKABLE_TILES = (Tile.FLOOR, Tile.GOAL, Tile.DOOR_OPEN)
PUT_DOWN_TILES = (Tile.FLOOR,)  # a cell something can be put down on
DOOR_TILES = (Tile.DOOR_LOCKED, Tile.DOOR_CLOSED, Tile.DOOR_OPEN)

# The slots of each id, pair by pair (slots 1-2, 3-4[, 5-6]): an object's role ("a", "b",
# "product"), "position" (row, col) or None (must be zero).
GOAL_LAYOUT = {
    GoalId.EMPTY: (None, None),
    GoalId.AGENT_HOLD: ("a", None),
    GoalId.AGENT_ON_TILE: ("a", None),
    GoalId.AGENT_NEAR: ("a", None),
    GoalId.TILE_NEAR: ("a", "b"),
    GoalId.TILE_ON_POSITION: ("a", "position"),
    GoalId.AGENT_ON_POSITION: ("position", None),
    **{GoalId(i): ("a", "b") for i in range(7, 11)},
    **{GoalId(i): ("a", None) for i in range(11, 15)},
}
RULE_LAYOUT = {
    RuleId.EMPTY: (None, None, None),
    RuleId.AGENT_HOLD: ("a", "product", None),
    RuleId.AGENT_NEAR: ("a", "product", None),
    **{RuleId(i): ("a", "b", "product") for i in range(3, 8)},
    **{RuleId(i): ("a", "product", None) for i in range(8, 12)},
}


def _pairs(vector, layout) -> dict[str, tuple[int, int]]:
    """The named pairs of a goal or rule vector: {"a": (tile, colour), ...}."""
    return {name: (int(vector[1 + 2 * i]), int(vector[2 + 2 * i]))
            for i, name in enumerate(layout) if name}


def goal_objects(goal) -> list[tuple[int, int]]:
    """The objects a goal names, a then b."""
    pairs = _pairs(goal, GOAL_LAYOUT[GoalId(int(goal[0]))])
    return [pairs[name] for name in ("a", "b") if name in pairs]


def rule_inputs(rule) -> list[tuple[int, int]]:
    """The objects a rule consumes, a then b."""
    pairs = _pairs(rule, RULE_LAYOUT[RuleId(int(rule[0]))])
    return [pairs[name] for name in ("a", "b") if name in pairs]


def rule_product(rule) -> tuple[int, int] | None:
    """What a rule produces (VANISH: nothing); None for the empty rule."""
    return _pairs(rule, RULE_LAYOUT[RuleId(int(rule[0]))]).get("product")


def _as_uint8(where: str, values, shape_text: str, ndim: int, width: int) -> np.ndarray:
    """A read-only uint8 copy of integer values in 0-255 of the given shape."""
    array = np.asarray(values)
    if array.size == 0 and ndim == 2:
        array = array.reshape(0, width)
    if array.ndim != ndim or array.shape[-1] != width:
        raise ValueError(f"{where} has shape {array.shape}; expected {shape_text}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{where} has dtype {array.dtype}; expected integers")
    if array.size and (array.min() < 0 or array.max() > 255):
        raise ValueError(f"{where} has values outside 0-255")
    array = array.astype(np.uint8)
    array.setflags(write=False)
    return array


def _check_object(where: str, pair: tuple[int, int]) -> None:
    tile, colour = pair
    if tile > max(Tile):
        raise ValueError(f"{where} has unknown tile {tile} (tiles are 0-{max(Tile)})")
    if colour > max(Colour):
        raise ValueError(f"{where} has unknown colour {colour} (colours are 0-{max(Colour)})")


def _check_slots(where: str, vector: np.ndarray, layout) -> None:
    for i, name in enumerate(layout):
        pair = (int(vector[1 + 2 * i]), int(vector[2 + 2 * i]))
        slots = f"slots {1 + 2 * i}-{2 + 2 * i}"
        if name is None and pair != (0, 0):
            raise ValueError(f"{where}: {slots} are unused by this id and must be zero, "
                             f"got {pair}")
        if name not in (None, "position"):
            _check_object(f"{where}: {name} ({slots})", pair)


def validate_goal(goal, where: str = "goal") -> np.ndarray:
    """The goal as a read-only uint8 vector of 5; ValueError naming what is wrong."""
    goal = _as_uint8(where, goal, f"({GOAL_SIZE},) [id, a_tile, a_colour, b_tile, b_colour]",
                     1, GOAL_SIZE)
    if goal[0] not in GoalId._value2member_map_:
        raise ValueError(f"{where}: unknown goal id {goal[0]} (goal ids are 0-{max(GoalId)})")
    gid = GoalId(int(goal[0]))
    _check_slots(f"{where} ({gid.name.lower()})", goal, GOAL_LAYOUT[gid])
    return goal


def validate_rules(rules, where: str = "rules") -> np.ndarray:
    """The rules as read-only uint8 (R, 7), R may be 0; ValueError naming the first wrong one."""
    rules = _as_uint8(where, rules, f"(R, {RULE_SIZE}) rows of rules", 2, RULE_SIZE)
    for i, rule in enumerate(rules):
        if rule[0] not in RuleId._value2member_map_:
            raise ValueError(f"{where}[{i}]: unknown rule id {rule[0]} "
                             f"(rule ids are 0-{max(RuleId)})")
        rid = RuleId(int(rule[0]))
        _check_slots(f"{where}[{i}] ({rid.name.lower()})", rule, RULE_LAYOUT[rid])
    return rules


def validate_init_tiles(init_tiles, where: str = "init_tiles") -> np.ndarray:
    """The initial objects as read-only uint8 (N, 2), N may be 0; (0, 0) rows are padding."""
    init_tiles = _as_uint8(where, init_tiles, "(N, 2) rows of (tile, colour)", 2, 2)
    for i, (tile, colour) in enumerate(init_tiles.tolist()):
        _check_object(f"{where}[{i}]", (tile, colour))
    return init_tiles


@dataclass(frozen=True, eq=False)
class Ruleset:
    """One task: a goal, the rules in the order they apply, the objects placed at the start.

    Any integer arrays are taken (XLand-MiniGrid's goals are int32); they are stored as given,
    padding included (empty rules, (0, 0) tiles, as a benchmark row holds them), as read-only
    uint8 arrays: goal (5,), rules (R, 7), init_tiles (N, 2). Validation is structural: known
    ids, tiles 0-12, colours 0-11, the slots an id does not use zero.
    """

    goal: np.ndarray
    rules: np.ndarray
    init_tiles: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "goal", validate_goal(self.goal))
        object.__setattr__(self, "rules", validate_rules(self.rules))
        object.__setattr__(self, "init_tiles", validate_init_tiles(self.init_tiles))

    def key(self) -> tuple[int, ...]:
        """The goal's values, then the non-empty rules' in order: what XLand-MiniGrid's
        generator compares to reject a duplicate ruleset (empty rules are padding)."""
        rules = self.rules[self.rules[:, 0] != RuleId.EMPTY]
        return tuple(int(v) for v in np.concatenate([self.goal, rules.ravel()]))


def object_name(tile: int, colour: int) -> str:
    """'red ball', 'green door locked'; VANISH (floor, black) is 'nothing'."""
    if (tile, colour) == VANISH:
        return "nothing"
    return f"{Colour(colour).name.lower()} {Tile(tile).name.lower().replace('_', ' ')}"


def _a(pair: tuple[int, int]) -> str:
    """'a red ball', 'an orange key'."""
    name = object_name(*pair)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _per_direction(first_id: int, template: str) -> dict[int, str]:
    """The four directional ids from first_id (up) on, with {way} the direction's name."""
    return {first_id + d: template.replace("{way}", way) for d, way in enumerate(DIRECTION_NAMES)}


_GOAL_TEXT = {
    GoalId.EMPTY: "no goal",
    GoalId.AGENT_HOLD: "pick up the {a}",
    GoalId.AGENT_ON_TILE: "stand on the {a}",
    GoalId.AGENT_NEAR: "go next to the {a}",
    GoalId.TILE_NEAR: "put the {a} next to the {b}",
    GoalId.TILE_ON_POSITION: "put the {a} on cell {position}",
    GoalId.AGENT_ON_POSITION: "go to cell {position}",
    **_per_direction(GoalId.TILE_NEAR_UP, "put the {b} one cell {way} from the {a}"),
    **_per_direction(GoalId.AGENT_NEAR_UP, "stand with the {a} one cell {way} from you"),
}
# {a}, {b} with their article; {becomes}/{become}: the product, said of one object or of two
_RULE_TEXT = {
    RuleId.EMPTY: "nothing happens",
    RuleId.AGENT_HOLD: "{a} you hold {becomes}",
    RuleId.AGENT_NEAR: "{a} next to you {becomes}",
    RuleId.TILE_NEAR: "{a} and {b} next to each other {become}",
    **_per_direction(RuleId.TILE_NEAR_UP, "{b} one cell {way} from {a}: together they {become}"),
    **_per_direction(RuleId.AGENT_NEAR_UP, "{a} one cell {way} from you {becomes}"),
}


def goal_text(goal) -> str:
    """English for a valid goal vector; positions are (row, col)."""
    gid = GoalId(int(goal[0]))
    pairs = _pairs(goal, GOAL_LAYOUT[gid])
    words = {name: str(pair) if name == "position" else object_name(*pair)
             for name, pair in pairs.items()}
    return _GOAL_TEXT[gid].format(**words)


def rule_text(rule) -> str:
    """English for a valid rule vector."""
    rid = RuleId(int(rule[0]))
    pairs = _pairs(rule, RULE_LAYOUT[rid])
    product = pairs.get("product", VANISH)
    words = {name: _a(pair) for name, pair in pairs.items() if name != "product"}
    made = None if product == VANISH else _a(product)
    return _RULE_TEXT[rid].format(**words, becomes=f"becomes {made}" if made else "disappears",
                                  become=f"become {made}" if made else "disappear")


def mission(ruleset: Ruleset) -> str:
    """English for the goal, then each non-empty rule: 'put the red ball next to the blue
    square; rules: a green key you hold becomes a red ball'."""
    text = goal_text(ruleset.goal)
    rules = [rule_text(r) for r in ruleset.rules if r[0] != RuleId.EMPTY]
    return f"{text}; rules: {'; '.join(rules)}" if rules else text


def goal_reward(step: int, max_steps: int) -> float:
    """The reward for reaching the goal at `step` of an episode of `max_steps`: 1 - 0.9 t/T."""
    if max_steps <= 0 or not 0 <= step <= max_steps:
        raise ValueError(f"need 0 <= step <= max_steps and max_steps > 0, got step={step}, "
                         f"max_steps={max_steps}")
    return 1.0 - 0.9 * step / max_steps
