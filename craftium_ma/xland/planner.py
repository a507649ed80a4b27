"""A scripted player of XLand-MiniGrid rulesets (no learning): it reads the goal, the rules and
the world in XLand-MiniGrid's encoding (the env's grid_state(), or XLand-MiniGrid's own state).

Every step it plans afresh. The goal, and each rule, is an event: an action in a certain place
(pick up while holding a, step next to a, put a down next to b). The planner searches breadth
first over (cell, direction) for the nearest place where that action, simulated with XLand-
MiniGrid's step and every rule, reaches the goal (or makes the object a rule should make), and
takes the first action on the way there. An object the event needs but the world lacks is made by
a rule whose inputs exist or can be made (to a bounded depth); an object in a bad place is moved
first. Closed doors are opened; other agents are obstacles. Only if no plan is found otherwise
are objects in the way picked up, and then steps that fire a rule using up a needed object
allowed. Searches are bounded by the grid; when nothing leads to the goal it answers NOOP.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .encoding import (
    DIRECTIONS, FLOOR, PICKABLE_TILES, PUT_DOWN_TILES, WALKABLE_TILES, Action, GoalId, RuleId, Tile,
)

FORWARD, TURN_RIGHT, TURN_LEFT, PICK_UP, PUT_DOWN, TOGGLE, NOOP = (int(a) for a in Action)
MAX_DEPTH = 4  # the longest chain of rules followed to make a missing object
EMPTY = (0, 0)  # an empty pocket; outside the grid
_PICKABLE = frozenset(int(t) for t in PICKABLE_TILES)
_WALKABLE = frozenset(int(t) for t in WALKABLE_TILES)
_PUTTABLE = frozenset(int(t) for t in PUT_DOWN_TILES)
_NEAR_RULES = {RuleId.AGENT_NEAR: None, **{RuleId(8 + k): k for k in range(4)}}
_PAIR_RULES = {RuleId.TILE_NEAR: None, **{RuleId(4 + k): k for k in range(4)}}
# tried in turn: (whether objects in the way may be picked up, whether steps may fire rules
# that use up needed objects)
_EFFORTS = ((False, False), (True, False), (True, True))


@dataclass
class GridState:
    """The world in XLand-MiniGrid's encoding, as the env's grid_state() gives it: grid (H, W, 2)
    (tile, colour) by [row, col]; positions (N, 2) (row, col); directions (N,) (0 up, 1 right,
    2 down, 3 left); pockets (N, 2) ((0, 0) an empty hand)."""

    grid: np.ndarray
    positions: np.ndarray
    directions: np.ndarray
    pockets: np.ndarray

    @classmethod
    def of(cls, state: GridState | dict) -> GridState:
        """The state itself, or one made of grid_state()'s dict."""
        return state if isinstance(state, GridState) else cls(**state)


class _Outcome(NamedTuple):
    """The world after one simulated action of the planning agent."""

    cells: list  # (tile, colour) per cell, row by row
    position: tuple[int, int]
    pocket: tuple[int, int]
    action: int
    changed: tuple[int, int]  # the cell the action acted on (XLand-MiniGrid's changed_position)
    fired: bool  # a rule changed the grid or the pocket


def _object(values) -> tuple[int, int]:
    return int(values[0]), int(values[1])


class Planner:
    """The next action of agent `index` towards `goal` (5 values) under `rules` (R x 7, empty
    rules allowed), both in XLand-MiniGrid's encoding."""

    def __init__(self, goal, rules, index: int = 0):
        self.goal = tuple(int(v) for v in goal)
        self.rules = [tuple(int(v) for v in rule) for rule in rules if int(rule[0])]
        self.index = index
        self.needed = self._needed()

    def act(self, state: GridState | dict) -> int:
        """The action of agent `index` in `state` (a GridState or grid_state()'s dict); NOOP
        when nothing leads to the goal."""
        self._observe(GridState.of(state))
        for self.clearing, self.firing_allowed in _EFFORTS:
            action = self._towards_goal()
            if action is not None:
                return action
        return NOOP

    # -- the world --------------------------------------------------------------------

    def _observe(self, state: GridState) -> None:
        grid = np.asarray(state.grid)
        self.height, self.width = grid.shape[:2]
        self.cells = [tuple(v) for v in grid.reshape(-1, 2).astype(int).tolist()]
        positions = [tuple(p) for p in np.asarray(state.positions).astype(int).tolist()]
        row, col = positions[self.index]
        self.me = (row, col, int(state.directions[self.index]))
        self.pocket = _object(state.pockets[self.index])
        self.others = {p for i, p in enumerate(positions) if i != self.index}
        self.firing = self._firing_cells()

    def _at(self, cells: list, cell: tuple[int, int]) -> tuple[int, int]:
        row, col = cell
        if 0 <= row < self.height and 0 <= col < self.width:
            return cells[row * self.width + col]
        return EMPTY

    def _where(self, obj) -> list[tuple[int, int]]:
        return [divmod(i, self.width) for i, v in enumerate(self.cells) if v == obj]

    def _count(self, cells: list, pocket, obj) -> int:
        return cells.count(obj) + (pocket == obj)

    def _exists(self, obj) -> bool:
        return self.pocket == obj or obj in self.cells

    def _free(self, cell) -> bool:
        """Whether something can be put down on the cell."""
        return self._at(self.cells, cell)[0] in _PUTTABLE and cell not in self.others

    def _walkable(self, cell) -> bool:
        return self._at(self.cells, cell)[0] in _WALKABLE and cell not in self.others

    def _passable(self, cell) -> bool:
        """Walkable, or a door the agent can open."""
        tile, colour = self._at(self.cells, cell)
        return cell not in self.others and (
            tile in _WALKABLE or tile == Tile.DOOR_CLOSED
            or (tile == Tile.DOOR_LOCKED and self.pocket == (Tile.KEY, colour)))

    def _firing_cells(self) -> set[tuple[int, int]]:
        """The cells where stepping fires an agent-near rule that uses up a needed object."""
        cells = set()
        for rule in self.rules:
            if rule[0] in _NEAR_RULES and rule[1:3] in self.needed:
                direction = _NEAR_RULES[rule[0]]
                cells |= self._near_cells(rule[1:3], direction)
        return cells

    def _near_cells(self, obj, direction) -> set[tuple[int, int]]:
        """The cells with obj next to them (`direction` of them, if given)."""
        cells = set()
        for row, col in self._where(obj):
            for k, (dr, dc) in enumerate(DIRECTIONS):
                if direction is None or k == direction:
                    cells.add((row - dr, col - dc))
        return cells

    # -- XLand-MiniGrid's step --------------------------------------------------------

    def _post_forward(self, row, col, direction) -> tuple[int, int]:
        dr, dc = DIRECTIONS[direction]
        ahead = (row + dr, col + dc)
        return ahead if self._walkable(ahead) else (row, col)

    def _simulate(self, row, col, direction, action) -> _Outcome:
        """The world after the action of the agent standing at (row, col, direction)."""
        cells, pocket, position = list(self.cells), self.pocket, (row, col)
        dr, dc = DIRECTIONS[direction]
        ahead = (row + dr, col + dc)
        obj = self._at(cells, ahead)
        index = ahead[0] * self.width + ahead[1]
        changed = ahead
        if action == FORWARD:
            position = changed = self._post_forward(row, col, direction)
        elif action in (TURN_RIGHT, TURN_LEFT):
            changed = position
        elif action == PICK_UP and pocket[0] == Tile.EMPTY and obj[0] in _PICKABLE:
            cells[index], pocket = FLOOR, obj
        elif action == PUT_DOWN and pocket[0] != Tile.EMPTY and self._free(ahead):
            cells[index], pocket = pocket, EMPTY
        elif action == TOGGLE:
            if obj[0] == Tile.DOOR_CLOSED or (obj[0] == Tile.DOOR_LOCKED
                                              and pocket == (Tile.KEY, obj[1])):
                cells[index] = (int(Tile.DOOR_OPEN), obj[1])
            elif obj[0] == Tile.DOOR_OPEN:
                cells[index] = (int(Tile.DOOR_CLOSED), obj[1])
        fired = False
        for rule in self.rules:
            pocket, hit = self._apply(rule, cells, position, pocket, action, changed)
            fired = fired or hit
        return _Outcome(cells, position, pocket, action, changed, fired)

    def _apply(self, rule, cells, position, pocket, action, changed):
        """One rule after the action, in place on cells; (the pocket, whether it fired)."""
        rid, a = rule[0], rule[1:3]
        if rid == RuleId.AGENT_HOLD:
            hit = action == PICK_UP and pocket == a
            return (rule[3:5] if hit else pocket), hit
        writes = []
        if rid in _NEAR_RULES:
            direction = _NEAR_RULES[rid]
            if action == FORWARD or (direction is not None and action == PUT_DOWN):
                for k, (dr, dc) in enumerate(DIRECTIONS):
                    cell = (position[0] + dr, position[1] + dc)
                    if (direction is None or k == direction) and self._at(cells, cell) == a:
                        writes.append((cell, rule[3:5]))
        else:
            b, product, tile = rule[3:5], rule[5:7], self._at(cells, changed)
            if action == PUT_DOWN and tile in (a, b):
                row, col = changed
                direction = _PAIR_RULES[rid]
                if direction is None:
                    sides = [((row + dr, col + dc), b if tile == a else a)
                             for dr, dc in DIRECTIONS]
                else:
                    dr, dc = DIRECTIONS[direction]
                    sides = [((row - dr, col - dc), a)] if tile == b else []
                    sides += [((row + dr, col + dc), b)] if tile == a else []
                for cell, partner in sides:
                    if self._at(cells, cell) == partner:
                        writes += [(cell, product), (changed, FLOOR)]
        for (row, col), value in writes:
            cells[row * self.width + col] = value
        return pocket, bool(writes)

    def _goal_met(self, out: _Outcome) -> bool:
        """XLand-MiniGrid's goal check after the simulated action."""
        gid, a, b = self.goal[0], self.goal[1:3], self.goal[3:5]
        row, col = out.position
        around = [self._at(out.cells, (row + dr, col + dc)) for dr, dc in DIRECTIONS]
        if gid == GoalId.AGENT_HOLD:
            return out.action == PICK_UP and out.pocket == a
        if gid == GoalId.AGENT_ON_TILE:
            return out.action == FORWARD and self._at(out.cells, out.position) == a
        if gid == GoalId.AGENT_NEAR:
            return out.action == FORWARD and a in around
        if gid == GoalId.TILE_ON_POSITION:
            return self._at(out.cells, b) == a
        if gid == GoalId.AGENT_ON_POSITION:
            return out.position == a
        if GoalId.AGENT_NEAR_UP <= gid <= GoalId.AGENT_NEAR_LEFT:
            return out.action in (FORWARD, PUT_DOWN) and around[gid - GoalId.AGENT_NEAR_UP] == a
        if gid == GoalId.TILE_NEAR or GoalId.TILE_NEAR_UP <= gid <= GoalId.TILE_NEAR_LEFT:
            direction = None if gid == GoalId.TILE_NEAR else gid - GoalId.TILE_NEAR_UP
            return out.action == PUT_DOWN and self._related(
                out.cells, self._at(out.cells, out.changed), out.changed, a, b, direction)
        return False

    def _related(self, cells, obj, cell, a, b, direction) -> bool:
        """Whether obj at cell has its partner beside it: b `direction` of a (any side)."""
        row, col = cell
        if direction is None:
            around = [self._at(cells, (row + dr, col + dc)) for dr, dc in DIRECTIONS]
            return (obj == a and b in around) or (obj == b and a in around)
        dr, dc = DIRECTIONS[direction]
        return ((obj == a and self._at(cells, (row + dr, col + dc)) == b)
                or (obj == b and self._at(cells, (row - dr, col - dc)) == a))

    # -- moving -----------------------------------------------------------------------

    def _route(self, trigger: Callable) -> int | None:
        """The first action towards the nearest (row, col, direction) where trigger gives an
        action (that action, if the agent is there); None if there is none within reach. While
        clearing, with an empty hand, one object may be picked up out of the way if there is
        no way around it."""
        start = (*self.me, False)  # row, col, direction, whether an object was cleared
        for through in (False, True) if self.clearing and self.pocket == EMPTY else (False,):
            first = {start: None}
            queue = deque([start])
            while queue:
                state = queue.popleft()
                row, col, d, cleared = state
                # stepping onto a firing cell changes the world the trigger would see
                if state == start or (row, col) not in self.firing:
                    action = trigger(row, col, d)
                    if action is not None:
                        return action if state == start else self._first_step(first[state])
                dr, dc = DIRECTIONS[d]
                ahead = (row + dr, col + dc)
                moves = [(TURN_RIGHT, (row, col, (d + 1) % 4, cleared)),
                         (TURN_LEFT, (row, col, (d - 1) % 4, cleared))]
                if self.firing_allowed or ahead not in self.firing:
                    if self._passable(ahead):
                        moves.append((FORWARD, (*ahead, d, cleared)))
                    elif through and not cleared and self._movable(ahead):
                        moves.append((FORWARD, (*ahead, d, True)))
                for move, nxt in moves:
                    if nxt not in first:
                        first[nxt] = move if state == start else first[state]
                        queue.append(nxt)
        return None

    def _movable(self, cell) -> bool:
        """Whether the cell holds an object that may be cleared out of the way."""
        obj = self._at(self.cells, cell)
        return obj[0] in _PICKABLE and obj not in self.needed and cell not in self.others

    def _first_step(self, action: int) -> int:
        """The action, or before stepping forward: TOGGLE to open a shut door; PICK_UP to
        clear an object away."""
        row, col, d = self.me
        dr, dc = DIRECTIONS[d]
        ahead = (row + dr, col + dc)
        if action != FORWARD:
            return action
        if self._at(self.cells, ahead)[0] in (Tile.DOOR_CLOSED, Tile.DOOR_LOCKED):
            return TOGGLE
        return PICK_UP if self._movable(ahead) else action

    def _facing(self, cells: set, action: int, ok: Callable) -> Callable:
        """A trigger: facing one of the cells, doing the action gives ok(outcome)."""
        def trigger(row, col, d):
            dr, dc = DIRECTIONS[d]
            if (row + dr, col + dc) in cells and ok(self._simulate(row, col, d, action)):
                return action
            return None
        return trigger

    def _stepping(self, cells: set, ok: Callable, put_too: bool = False) -> Callable:
        """A trigger: FORWARD ending on one of the cells (or, with put_too, PUT_DOWN standing
        on one) gives ok(outcome)."""
        def trigger(row, col, d):
            if (self._post_forward(row, col, d) in cells
                    and ok(self._simulate(row, col, d, FORWARD))):
                return FORWARD
            if put_too and (row, col) in cells and ok(self._simulate(row, col, d, PUT_DOWN)):
                return PUT_DOWN
            return None
        return trigger

    # -- what to do -------------------------------------------------------------------

    def _towards_goal(self) -> int | None:
        gid, a, b = self.goal[0], self.goal[1:3], self.goal[3:5]
        ok = self._goal_met
        if gid == GoalId.AGENT_HOLD:
            return self._hold(a, ok, MAX_DEPTH)
        if gid == GoalId.AGENT_NEAR:
            return self._near(a, None, ok, MAX_DEPTH)
        if GoalId.AGENT_NEAR_UP <= gid <= GoalId.AGENT_NEAR_LEFT:
            return self._near(a, gid - GoalId.AGENT_NEAR_UP, ok, MAX_DEPTH)
        if gid == GoalId.TILE_NEAR:
            return self._pair(a, b, None, ok, MAX_DEPTH)
        if GoalId.TILE_NEAR_UP <= gid <= GoalId.TILE_NEAR_LEFT:
            return self._pair(a, b, gid - GoalId.TILE_NEAR_UP, ok, MAX_DEPTH)
        if gid == GoalId.AGENT_ON_TILE:
            if a not in self.cells:
                return self._put_or_make(a, MAX_DEPTH, self._near_spot(None))
            return self._route(self._stepping(set(self._where(a)), ok))
        if gid == GoalId.TILE_ON_POSITION:
            if self.pocket != a:
                return self._hold(a, lambda out: out.pocket == a, MAX_DEPTH)
            return self._route(self._facing({b}, PUT_DOWN, ok))
        if gid == GoalId.AGENT_ON_POSITION:
            return self._route(self._stepping({a}, ok))
        return None

    def _hold(self, obj, ok: Callable, depth: int) -> int | None:
        """Towards a pick-up that leaves obj in the pocket with ok(outcome)."""
        if self.pocket == obj:
            row, col, d = self.me
            return PICK_UP if ok(self._simulate(row, col, d, PICK_UP)) else None
        if obj not in self.cells:
            return self._make(obj, depth)
        if self.pocket != EMPTY:
            return self._drop()
        return self._route(self._facing(set(self._where(obj)), PICK_UP, ok))

    def _put_or_make(self, obj, depth: int, spot: Callable) -> int | None:
        """Towards obj, which is not on the grid, lying there (made where spot allows)."""
        return self._drop() if self.pocket == obj else self._make(obj, depth, spot)

    def _near(self, obj, direction, ok: Callable, depth: int) -> int | None:
        """Towards the agent-near event: obj next to the agent (`direction` of it). If that
        cannot be reached, obj is moved: put down ahead (facing `direction`) or elsewhere."""
        if obj in self.cells:
            action = self._route(self._stepping(self._near_cells(obj, direction), ok,
                                                put_too=direction is not None))
            if action is not None:
                return action
        if self.pocket == obj:
            if direction is not None:
                action = self._route(self._facing(self._free_cells(), PUT_DOWN, ok))
                if action is not None:
                    return action
            return self._drop()
        if obj in self.cells:
            if obj[0] not in _PICKABLE:
                return None
            return self._hold(obj, lambda out: out.pocket == obj, depth)
        return self._make(obj, depth, self._near_spot(direction))

    def _pair(self, a, b, direction, ok: Callable, depth: int) -> int | None:
        """Towards the tile-near event: a put down (or found) with b beside it, b `direction`
        of a. The one picked up to be put is one that can be put so; if neither can, one is
        first moved aside."""
        action = self._place(a, b, direction, ok)
        if action is not None:
            return action
        for obj in (a, b):
            if self._count(self.cells, self.pocket, obj) < (2 if a == b else 1):
                return self._make(obj, depth, self._pair_spot(obj, a, b, direction))
        portable = [m for m in (a, b) if m == self.pocket or self._portable(m)]
        if self.pocket in (a, b):  # no place for it: set it down for its partner to come
            return self._drop() if len(portable) == 2 else None
        sources = {cell for m in set(portable) for cell in self._where(m)}
        placeable = {cell for cell in sources
                     if self._holding(cell)._place(a, b, direction, ok) is not None}
        options = [placeable]
        if self.clearing:  # clear a cell where one of them could be put
            options.append({cell for cell in self._where_movable() for m in set(portable)
                            if self._related(self.cells, m, cell, a, b, direction)})
        if not placeable and len(portable) == 2:  # move one aside for the other to come
            options.append(sources)
        if self.pocket != EMPTY:
            return self._drop() if any(options) else None
        for cells in options:
            action = self._route(self._facing(cells, PICK_UP, lambda out: out.pocket != EMPTY))
            if action is not None:
                return action
        return None

    def _place(self, a, b, direction, ok: Callable) -> int | None:
        """Towards a put-down that does the tile-near event: facing a or b that lies beside
        its partner, or holding one and facing a free cell beside its partner."""
        cells = {cell for cell in self._where(a) + self._where(b)
                 if self._related(self.cells, self._at(self.cells, cell), cell, a, b, direction)}
        if self.pocket in (a, b):
            cells |= self._put_cells(self.pocket, a, b, direction)
        return self._route(self._facing(cells, PUT_DOWN, ok))

    def _holding(self, cell) -> Planner:
        """This planner as if the agent had picked up the object at cell."""
        twin = copy.copy(self)
        index = cell[0] * self.width + cell[1]
        twin.cells = list(self.cells)
        twin.pocket, twin.cells[index] = self._picked(self.cells[index]), FLOOR
        return twin

    def _picked(self, obj) -> tuple[int, int]:
        """What the pocket holds after picking obj up (agent-hold rules apply)."""
        for rule in self.rules:
            if rule[0] == RuleId.AGENT_HOLD and obj == rule[1:3]:
                obj = rule[3:5]
        return obj

    def _portable(self, obj) -> bool:
        """Whether obj can be picked up and stays itself in the pocket."""
        return obj[0] in _PICKABLE and self._picked(obj) == obj

    def _where_movable(self) -> list[tuple[int, int]]:
        cells = (divmod(i, self.width) for i in range(len(self.cells)))
        return [cell for cell in cells if self._movable(cell)]

    def _put_cells(self, obj, a, b, direction) -> set[tuple[int, int]]:
        """The free cells, beside one the agent can reach, where obj put down would have its
        partner beside it."""
        reach = self._reachable()
        return {cell for cell in self._free_cells()
                if self._related(self.cells, obj, cell, a, b, direction)
                and any((cell[0] + dr, cell[1] + dc) in reach for dr, dc in DIRECTIONS)}

    def _free_cells(self) -> set[tuple[int, int]]:
        return {divmod(i, self.width) for i, v in enumerate(self.cells)
                if v[0] in _PUTTABLE and divmod(i, self.width) not in self.others}

    def _reachable(self, start=None, blocked=None) -> set[tuple[int, int]]:
        """The cells the agent can walk to (opening doors) from start (where it stands), not
        through the blocked cell."""
        start = start or self.me[:2]
        seen, queue = {start}, deque([start])
        while queue:
            row, col = queue.popleft()
            for dr, dc in DIRECTIONS:
                cell = (row + dr, col + dc)
                if cell not in seen and cell != blocked and self._passable(cell):
                    seen.add(cell)
                    queue.append(cell)
        return seen

    def _drop(self) -> int | None:
        """Towards putting the held object down where no rule fires and it cuts no way off,
        away from other things if possible."""
        reach = len(self._reachable())

        def harmless(out):
            return (out.pocket == EMPTY and (not out.fired or self._goal_met(out))
                    and len(self._reachable(out.position, out.changed)) == reach - 1)

        free = self._free_cells()
        quiet = {(r, c) for r, c in free
                 if all(self._at(self.cells, (r + dr, c + dc))[0] in _PUTTABLE
                        for dr, dc in DIRECTIONS)}
        for cells in (quiet, free):
            action = self._route(self._facing(cells, PUT_DOWN, harmless))
            if action is not None:
                return action
        return None

    # -- rules ------------------------------------------------------------------------

    def _makers(self, obj) -> list[tuple]:
        """The rules that make obj (none make VANISH, which is no object)."""
        if obj == FLOOR:
            return []
        return [r for r in self.rules if _product(r) == obj]

    def _needed(self) -> set[tuple[int, int]]:
        """The goal's objects and, transitively, the inputs of the rules that make them."""
        gid, a, b = self.goal[0], self.goal[1:3], self.goal[3:5]
        pair = gid == GoalId.TILE_NEAR or GoalId.TILE_NEAR_UP <= gid <= GoalId.TILE_NEAR_LEFT
        todo = [a, b] if pair else [] if gid in (GoalId.EMPTY, GoalId.AGENT_ON_POSITION) else [a]
        needed = set()
        while todo:
            obj = todo.pop()
            if obj not in needed:
                needed.add(obj)
                todo += [i for rule in self._makers(obj) for i in _inputs(rule)]
        return needed

    def _makeable(self, obj, depth: int) -> bool:
        return self._exists(obj) or depth > 0 and any(
            all(self._makeable(o, depth - 1) for o in _inputs(r)) for r in self._makers(obj))

    def _make(self, obj, depth: int, spot: Callable | None = None) -> int | None:
        """Towards obj's existence, by the first rule that can be fired. An object that cannot
        be picked up stays where it is made: there spot(cells, cell) must hold."""
        if depth <= 0:
            return None
        for rule in self._makers(obj):
            if all(self._makeable(o, depth - 1) for o in _inputs(rule)):
                action = self._fire(rule, depth - 1, spot)
                if action is not None:
                    return action
        return None

    def _fire(self, rule, depth: int, spot: Callable | None) -> int | None:
        """Towards the rule's event (its inputs made first), making its product where spot
        allows."""
        rid, a, product = rule[0], rule[1:3], _product(rule)
        before = self._count(self.cells, self.pocket, product)

        def ok(out):
            if self._count(out.cells, out.pocket, product) <= before:
                return False
            return spot is None or product[0] in _PICKABLE or all(
                spot(out.cells, divmod(i, self.width)) for i, v in enumerate(out.cells)
                if v == product and self.cells[i] != product)

        if rid == RuleId.AGENT_HOLD:
            return self._hold(a, ok, depth)
        if rid in _NEAR_RULES:
            return self._near(a, _NEAR_RULES[rid], ok, depth)
        return self._pair(a, rule[3:5], _PAIR_RULES[rid], ok, depth)

    def _near_spot(self, direction) -> Callable:
        """A spot where the agent can stand next to the object (`direction` of it)."""
        def spot(cells, cell):
            return any(self._at(cells, (cell[0] - dr, cell[1] - dc))[0] in _WALKABLE
                       for k, (dr, dc) in enumerate(DIRECTIONS)
                       if direction is None or k == direction)
        return spot

    def _pair_spot(self, obj, a, b, direction) -> Callable:
        """A spot where obj's partner (b `direction` of a) can be put or lies beside it."""
        partner, sign = (b, 1) if obj == a else (a, -1)

        def spot(cells, cell):
            return any(self._at(cells, (cell[0] + sign * dr, cell[1] + sign * dc))
                       in (partner, FLOOR)
                       for k, (dr, dc) in enumerate(DIRECTIONS)
                       if direction is None or k == direction)
        return spot


def _inputs(rule) -> list[tuple[int, int]]:
    return [rule[1:3], rule[3:5]] if rule[0] in _PAIR_RULES else [rule[1:3]]


def _product(rule) -> tuple[int, int]:
    return rule[5:7] if rule[0] in _PAIR_RULES else rule[3:5]
