"""The XLand vocabulary of our 3D world: objects, rule and goal ids, their vectors, missions.

An object is a ``(tile, colour)`` pair. A goal is 5 values ``[id, a_tile, a_colour, b_tile,
b_colour]``; a rule is 7 values ``[id, a_tile, a_colour, b_tile, b_colour, c_tile, c_colour]``
where ``c`` is what the rule produces. The position goals put a cell ``(x, z)`` where an
object would be (see ``GOAL_ARGS``).

Directions are absolute: up = north (+z), right = east (+x), down = south (-z), left = west
(-x). A directional tile-near condition means "b lies directly <direction> of a" (as in
XLand-MiniGrid); a directional agent-near condition means "a lies directly <direction> of the
agent".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

GOAL_SIZE = 5
RULE_SIZE = 7


class Tile(IntEnum):
    EMPTY = 0
    FLOOR = 1
    WALL = 2
    CUBE = 3
    BALL = 4
    PYRAMID = 5
    HEXAGON = 6
    STAR = 7
    KEY = 8
    DOOR = 9
    PAD = 10


class Colour(IntEnum):
    NONE = 0
    RED = 1
    GREEN = 2
    BLUE = 3
    PURPLE = 4
    YELLOW = 5
    GREY = 6
    WHITE = 7
    ORANGE = 8


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


# up, right, down, left; offsets are (dx, dz) in world cells
COMPASS = ("north", "east", "south", "west")
COMPASS_OFFSETS = ((0, 1), (1, 0), (0, -1), (-1, 0))

PICKABLE_SHAPES = (Tile.CUBE, Tile.BALL, Tile.PYRAMID, Tile.HEXAGON, Tile.STAR, Tile.KEY)
FIXED_SHAPES = (Tile.DOOR, Tile.PAD)  # placed objects that stay where they are
OBJECT_SHAPES = PICKABLE_SHAPES + FIXED_SHAPES
WALKABLE_SHAPES = (Tile.PAD,)  # the agent can stand on these
OBJECT_COLOURS = tuple(c for c in Colour if c != Colour.NONE)
VANISH = (int(Tile.FLOOR), int(Colour.NONE))  # a rule producing this removes its inputs

# What each argument of a goal or rule must be:
#   "pickable" an object the agent can carry, "object" any placed object, "walkable" an object
#   the agent can stand on, "position" a cell (x, z), "product" an object or VANISH,
#   "held product" a pickable object or VANISH, None all zero.
GOAL_ARGS = {
    GoalId.EMPTY: (None, None),
    GoalId.AGENT_HOLD: ("pickable", None),
    GoalId.AGENT_ON_TILE: ("walkable", None),
    GoalId.AGENT_NEAR: ("object", None),
    GoalId.TILE_NEAR: ("object", "object"),
    GoalId.TILE_ON_POSITION: ("pickable", "position"),
    GoalId.AGENT_ON_POSITION: ("position", None),
    **{GoalId(i): ("object", "object") for i in range(7, 11)},
    **{GoalId(i): ("object", None) for i in range(11, 15)},
}
RULE_ARGS = {
    RuleId.EMPTY: (None, None, None),
    RuleId.AGENT_HOLD: ("pickable", None, "held product"),
    RuleId.AGENT_NEAR: ("object", None, "product"),
    **{RuleId(i): ("object", "object", "product") for i in range(3, 8)},
    **{RuleId(i): ("object", None, "product") for i in range(8, 12)},
}
# ids whose two objects must not both be fixed: one of them has to be carried next to the other
_TILE_PAIR_GOALS = {GoalId.TILE_NEAR, *(GoalId(i) for i in range(7, 11))}
TILE_PAIR_RULES = {RuleId.TILE_NEAR, *(RuleId(i) for i in range(4, 8))}


def is_object(tile: int, colour: int) -> bool:
    return tile in OBJECT_SHAPES and colour in OBJECT_COLOURS


def is_pickable(tile: int, colour: int) -> bool:
    return tile in PICKABLE_SHAPES and colour in OBJECT_COLOURS


def object_name(tile: int, colour: int) -> str:
    """'red ball'; (floor, none) is 'nothing'."""
    if (tile, colour) == VANISH:
        return "nothing"
    return f"{Colour(colour).name.lower()} {Tile(tile).name.lower()}"


def _a(tile: int, colour: int) -> str:
    """'a red ball', 'an orange key'."""
    name = object_name(tile, colour)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _describe(tile: int, colour: int) -> str:
    tile_name = Tile(tile).name.lower() if tile in Tile._value2member_map_ else str(tile)
    known = colour in Colour._value2member_map_
    colour_name = Colour(colour).name.lower() if known else str(colour)
    return f"({tile_name}, {colour_name})"


def _check_arg(where: str, name: str, kind: str | None, pair: tuple[int, int]) -> None:
    tile, colour = pair
    if kind is None:
        if pair != (0, 0):
            raise ValueError(f"{where}: argument {name} is unused by this id and must be (0, 0), "
                             f"got {pair}")
        return
    if kind == "position":
        return  # any cell (x, z) in 0..255; the task checks it against its arena
    if tile not in Tile._value2member_map_:
        raise ValueError(f"{where}: argument {name} has unknown tile {tile} "
                         f"(tiles are 0-{max(Tile)})")
    if colour not in Colour._value2member_map_:
        raise ValueError(f"{where}: argument {name} has unknown colour {colour} "
                         f"(colours are 0-{max(Colour)})")
    what = _describe(tile, colour)
    if kind in ("product", "held product") and pair == VANISH:
        return
    if not is_object(tile, colour):
        raise ValueError(f"{where}: argument {name} {what} is not an object the world can place "
                         f"(an object is a shape {min(OBJECT_SHAPES)}-{max(OBJECT_SHAPES)} with a "
                         f"colour {min(OBJECT_COLOURS)}-{max(OBJECT_COLOURS)})")
    if kind in ("pickable", "held product") and not is_pickable(tile, colour):
        raise ValueError(f"{where}: argument {name} {what} cannot be picked up "
                         f"(pickable shapes: {', '.join(s.name.lower() for s in PICKABLE_SHAPES)})")
    if kind == "walkable" and tile not in WALKABLE_SHAPES:
        raise ValueError(f"{where}: argument {name} {what} cannot be stood on "
                         f"(walkable shapes: {', '.join(s.name.lower() for s in WALKABLE_SHAPES)})")


def _as_uint8(where: str, values, shape_text: str, ndim: int, width: int) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != ndim or array.shape[-1] != width:
        raise ValueError(f"{where} has shape {array.shape}; expected {shape_text}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{where} has dtype {array.dtype}; expected integers")
    if array.size and (array.min() < 0 or array.max() > 255):
        raise ValueError(f"{where} has values outside 0-255")
    return array.astype(np.uint8)


def validate_goal(goal, where: str = "goal") -> np.ndarray:
    """The goal as a uint8 vector of 5; ValueError naming what is wrong."""
    goal = _as_uint8(where, goal, f"({GOAL_SIZE},) [id, a_tile, a_colour, b_tile, b_colour]",
                     1, GOAL_SIZE)
    gid = int(goal[0])
    if gid not in GoalId._value2member_map_:
        raise ValueError(f"{where}: unknown goal id {gid} (goal ids are 0-{max(GoalId)})")
    a, b = (int(goal[1]), int(goal[2])), (int(goal[3]), int(goal[4]))
    kind_a, kind_b = GOAL_ARGS[GoalId(gid)]
    where = f"{where} ({GoalId(gid).name.lower()})"
    _check_arg(where, "a", kind_a, a)
    _check_arg(where, "b", kind_b, b)
    if gid in _TILE_PAIR_GOALS and not (is_pickable(*a) or is_pickable(*b)):
        raise ValueError(f"{where}: neither {_describe(*a)} nor {_describe(*b)} can be picked up, "
                         f"so they can never be brought together")
    return goal


def validate_rule(rule, where: str = "rule") -> np.ndarray:
    """The rule as a uint8 vector of 7; ValueError naming what is wrong."""
    rule = _as_uint8(where, rule, f"({RULE_SIZE},) [id, a_tile, a_colour, b_tile, b_colour, "
                     "c_tile, c_colour]", 1, RULE_SIZE)
    rid = int(rule[0])
    if rid not in RuleId._value2member_map_:
        raise ValueError(f"{where}: unknown rule id {rid} (rule ids are 0-{max(RuleId)})")
    pairs = [(int(rule[i]), int(rule[i + 1])) for i in (1, 3, 5)]
    where = f"{where} ({RuleId(rid).name.lower()})"
    for name, kind, pair in zip("abc", RULE_ARGS[RuleId(rid)], pairs):
        _check_arg(where, name, kind, pair)
    if rid in TILE_PAIR_RULES and not (is_pickable(*pairs[0]) or is_pickable(*pairs[1])):
        raise ValueError(f"{where}: neither {_describe(*pairs[0])} nor {_describe(*pairs[1])} "
                         f"can be picked up, so they can never be brought together")
    return rule


def validate_rules(rules, where: str = "rules") -> np.ndarray:
    """The rules as uint8 (R, 7), R may be 0; ValueError naming the first wrong one."""
    rules = np.asarray(rules)
    if rules.size == 0:
        rules = rules.reshape(0, RULE_SIZE)
    rules = _as_uint8(where, rules, f"(R, {RULE_SIZE}) rows of rules", 2, RULE_SIZE)
    for i, rule in enumerate(rules):
        validate_rule(rule, f"{where}[{i}]")
    return rules


def validate_init_tiles(init_tiles, where: str = "init_tiles") -> np.ndarray:
    """The initial objects as uint8 (N, 2); every row must be an object the world can place."""
    init_tiles = np.asarray(init_tiles)
    if init_tiles.size == 0:
        init_tiles = init_tiles.reshape(0, 2)
    init_tiles = _as_uint8(where, init_tiles, "(N, 2) rows of (tile, colour)", 2, 2)
    for i, (tile, colour) in enumerate(init_tiles.tolist()):
        _check_arg(f"{where}[{i}]", "object", "object", (tile, colour))
    return init_tiles


@dataclass(frozen=True, eq=False)
class Ruleset:
    """One task: a goal, the rules of the world and the objects placed at the start."""

    goal: np.ndarray  # (5,) uint8
    rules: np.ndarray  # (R, 7) uint8; R may be 0
    init_tiles: np.ndarray  # (N, 2) uint8

    def __post_init__(self):
        validated = {"goal": validate_goal(self.goal), "rules": validate_rules(self.rules),
                     "init_tiles": validate_init_tiles(self.init_tiles)}
        for name, value in validated.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def key(self) -> tuple[int, ...]:
        """The canonical form: equal for rulesets that pose the same task (see canonical_keys)."""
        keys = canonical_keys(self.goal[None], self.rules[None])[0]
        return (int(keys[0]), *(int(k) for k in keys[1:] if k))


def _pack(fields: np.ndarray) -> np.ndarray:
    """Rows of uint8 fields -> one int64 each, the first field most significant."""
    packed = np.zeros(fields.shape[:-1], dtype=np.int64)
    for i in range(fields.shape[-1]):
        packed = (packed << 8) | fields[..., i].astype(np.int64)
    return packed


def _canonical_pairs(vectors: np.ndarray, symmetric: int, directed: dict[int, int]) -> np.ndarray:
    """Rewrite equivalent forms to one: a symmetric id with (a, b) sorted, and each directed id
    in `directed` (e.g. down) as its opposite (up) with a and b swapped."""
    out = vectors.astype(np.int64, copy=True)
    ids = out[..., 0]
    a, b = out[..., 1:3].copy(), out[..., 3:5].copy()
    a_key, b_key = a[..., 0] * 256 + a[..., 1], b[..., 0] * 256 + b[..., 1]
    swap = (ids == symmetric) & (a_key > b_key)
    for source, target in directed.items():
        is_source = ids == source
        swap |= is_source
        ids[is_source] = target
    out[..., 1:3] = np.where(swap[..., None], b, a)
    out[..., 3:5] = np.where(swap[..., None], a, b)
    return out


def canonical_keys(goals: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """(n, 1 + R) int64 keys; two rulesets pose the same task iff their rows are equal.

    The same task: goals equal up to the symmetry of tile-near (a next to b = b next to a; b
    north of a = a south of b, b east of a = a west of b), and the same multiset of rules up to
    that symmetry, with empty rules ignored. The rules' order does not matter. The initial
    objects are left out: the goal and rules fix them all but the distractor objects, which
    are scenery, not a different task (XLand-MiniGrid's key leaves them out too).
    """
    goals = _canonical_pairs(np.asarray(goals), GoalId.TILE_NEAR,
                             {GoalId.TILE_NEAR_DOWN: GoalId.TILE_NEAR_UP,
                              GoalId.TILE_NEAR_LEFT: GoalId.TILE_NEAR_RIGHT})
    rules = _canonical_pairs(np.asarray(rules), RuleId.TILE_NEAR,
                             {RuleId.TILE_NEAR_DOWN: RuleId.TILE_NEAR_UP,
                              RuleId.TILE_NEAR_LEFT: RuleId.TILE_NEAR_RIGHT})
    rule_keys = np.sort(_pack(rules), axis=1)  # empty rules are 0 and sort first
    return np.concatenate([_pack(goals)[:, None], rule_keys], axis=1)


def _per_direction(first_id: int, template: str) -> dict[int, str]:
    """The four directional ids from first_id (up) on, with {way} the compass word."""
    return {first_id + d: template.replace("{way}", way) for d, way in enumerate(COMPASS)}


_GOAL_TEXT = {
    GoalId.EMPTY: "no goal",
    GoalId.AGENT_HOLD: "pick up the {a}",
    GoalId.AGENT_ON_TILE: "stand on the {a}",
    GoalId.AGENT_NEAR: "go next to the {a}",
    GoalId.TILE_NEAR: "put the {a} next to the {b}",
    GoalId.TILE_ON_POSITION: "put the {a} on cell {b}",
    GoalId.AGENT_ON_POSITION: "go to cell {a}",
    **_per_direction(GoalId.TILE_NEAR_UP, "put the {a} with the {b} directly {way} of it"),
    **_per_direction(GoalId.AGENT_NEAR_UP, "stand with the {a} directly {way} of you"),
}
# {a}, {b} with their article; {becomes}/{become}: the product, said of one object or of two
_RULE_TEXT = {
    RuleId.EMPTY: "nothing happens",
    RuleId.AGENT_HOLD: "{a} you hold {becomes}",
    RuleId.AGENT_NEAR: "{a} next to you {becomes}",
    RuleId.TILE_NEAR: "{a} and {b} next to each other {become}",
    **_per_direction(RuleId.TILE_NEAR_UP,
                     "{a} with {b} directly {way} of it: together they {become}"),
    **_per_direction(RuleId.AGENT_NEAR_UP, "{a} directly {way} of you {becomes}"),
}


def goal_text(goal) -> str:
    """English for a valid goal vector."""
    gid = GoalId(int(goal[0]))
    args = {}
    for name, kind, start in zip("ab", GOAL_ARGS[gid], (1, 3)):
        pair = (int(goal[start]), int(goal[start + 1]))
        args[name] = str(pair) if kind == "position" else object_name(*pair) if kind else ""
    return _GOAL_TEXT[gid].format(**args)


def rule_text(rule) -> str:
    """English for a valid rule vector."""
    rid = RuleId(int(rule[0]))
    a, b, c = ((int(rule[i]), int(rule[i + 1])) for i in (1, 3, 5))
    kind_a, kind_b, kind_c = RULE_ARGS[rid]
    product = _a(*c) if kind_c and c != VANISH else None
    return _RULE_TEXT[rid].format(
        a=_a(*a) if kind_a else "", b=_a(*b) if kind_b else "",
        becomes=f"becomes {product}" if product else "disappears",
        become=f"become {product}" if product else "disappear")


def mission(ruleset: Ruleset) -> str:
    """English for the goal, then each non-empty rule: 'put the red ball next to the blue
    pyramid; rules: a green key you hold becomes a red ball'."""
    text = goal_text(ruleset.goal)
    rules = [rule_text(r) for r in ruleset.rules if r[0] != RuleId.EMPTY]
    return f"{text}; rules: {'; '.join(rules)}" if rules else text


def goal_reward(step: int, max_steps: int) -> float:
    """The reward for reaching the goal at `step` of an episode of `max_steps`: 1 - 0.9 t/T."""
    if max_steps <= 0 or not 0 <= step <= max_steps:
        raise ValueError(f"need 0 <= step <= max_steps and max_steps > 0, got step={step}, "
                         f"max_steps={max_steps}")
    return 1.0 - 0.9 * step / max_steps
