"""A scripted planner for the xland task: it reads the ruleset and the grid (env.state()), no
learning.

Every step it plans afresh from the world as it is: to reach its goal it needs certain objects;
one that is missing is made by a rule whose inputs exist (or can be made, recursively); a rule
is fired by doing its event (holding, standing next to, putting down next to). Moves are found
by breadth-first search over cells and directions; other agents are obstacles.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .encoding import COMPASS_OFFSETS, TILE_PAIR_RULES, VANISH, GoalId, RuleId, Tile, is_pickable
from .world import MAX_SIZE, STATE_PER_AGENT, STATE_SHARED

NOOP, FORWARD, TURN_LEFT, TURN_RIGHT, PICK_UP, PUT_DOWN, TOGGLE = range(7)
_MAX_DEPTH = 4  # how deep a chain of rules the planner follows


class GridState:
    """The world as mods/xland's state() describes it."""

    def __init__(self, state: np.ndarray, num_agents: int):
        state = np.asarray(state).astype(int)
        self.width, self.depth = int(state[0]), int(state[1])
        grid = state[2:STATE_SHARED].reshape(MAX_SIZE, MAX_SIZE, 2)[:self.width, :self.depth]
        self.tiles, self.colours = grid[..., 0], grid[..., 1]
        agents = state[STATE_SHARED:STATE_SHARED + STATE_PER_AGENT * num_agents].reshape(
            num_agents, STATE_PER_AGENT)
        self.agents = [(int(x), int(z), int(d)) for x, z, d, _, _ in agents]
        self.held = [None if t == 0 else (int(t), int(c)) for *_, t, c in agents]

    def inside(self, x: int, z: int) -> bool:
        return 0 <= x < self.width and 0 <= z < self.depth

    def object_at(self, x: int, z: int):
        tile = int(self.tiles[x, z])
        return (tile, int(self.colours[x, z])) if tile > Tile.WALL else None

    def find(self, obj) -> list[tuple[int, int]]:
        return [(int(x), int(z)) for x, z in
                np.argwhere((self.tiles == obj[0]) & (self.colours == obj[1]))]

    def empty_floor(self, x: int, z: int) -> bool:
        return (self.inside(x, z) and self.tiles[x, z] == Tile.FLOOR
                and all((x, z) != a[:2] for a in self.agents))


def _neighbours(x, z):
    return [(x + dx, z + dz) for dx, dz in COMPASS_OFFSETS]


class Planner:
    """The next action of agent `index` towards `goal` under `rules` (the env's infos)."""

    def __init__(self, goal, rules, index: int = 0):
        self.goal = [int(v) for v in goal]
        self.rules = [[int(v) for v in r] for r in rules if r[0]]
        self.index = index

    def act(self, state: np.ndarray, num_agents: int) -> int:
        """The action of agent `index` in the world of `state` (env.state() of an env of
        `num_agents` agents: the number, which says how state is laid out, not an agent)."""
        self.world = GridState(state, num_agents)
        self.me = self.world.agents[self.index]
        self.hand = self.world.held[self.index]
        action = self._goal()
        return NOOP if action is None else action

    # -- moving ---------------------------------------------------------------------

    def _walkable(self, x, z) -> bool:
        w = self.world
        if not w.inside(x, z) or any((x, z) == a[:2] for i, a in enumerate(w.agents)
                                     if i != self.index):
            return False
        return w.tiles[x, z] == Tile.FLOOR or w.tiles[x, z] == Tile.PAD

    def _go(self, targets) -> int | None:
        """The first action of a shortest way to one of the targets (x, z, direction or None);
        None if the agent is at one already or none can be reached."""
        targets = set(targets)

        def arrived(s):
            return (s[0], s[1], s[2]) in targets or (s[0], s[1], None) in targets

        start = self.me
        if arrived(start):
            return None
        first = {start: None}
        queue = deque([start])
        while queue:
            s = queue.popleft()
            x, z, d = s
            dx, dz = COMPASS_OFFSETS[d]
            moves = [(TURN_LEFT, (x, z, (d + 3) % 4)), (TURN_RIGHT, (x, z, (d + 1) % 4))]
            if self._walkable(x + dx, z + dz):
                moves.insert(0, (FORWARD, (x + dx, z + dz, d)))
            for action, nxt in moves:
                if nxt not in first:
                    first[nxt] = action if s == start else first[s]
                    if arrived(nxt):
                        return first[nxt]
                    queue.append(nxt)
        return None

    def _face(self, cells, action: int) -> int | None:
        """Stand next to one of the cells, facing it, and do the action."""
        targets = []
        for cx, cz in cells:
            for d, (dx, dz) in enumerate(COMPASS_OFFSETS):
                sx, sz = cx - dx, cz - dz
                if self._walkable(sx, sz) or (sx, sz) == self.me[:2]:
                    targets.append((sx, sz, d))
        if not targets:
            return None
        if self.me in set(targets):
            return action
        return self._go(targets)

    def _stand(self, cells) -> int | None:
        """Go onto one of the cells (a NOOP once there)."""
        step = self._go([(x, z, None) for x, z in cells])
        return NOOP if step is None and self.me[:2] in set(cells) else step

    # -- objects --------------------------------------------------------------------

    def _exists(self, obj) -> bool:
        return self.hand == obj or bool(self.world.find(obj))

    def _makeable(self, obj, depth: int = _MAX_DEPTH) -> bool:
        if self._exists(obj):
            return True
        return depth > 0 and any(self._inputs_makeable(r, depth - 1) for r in self._makers(obj))

    def _makers(self, obj):
        return [r for r in self.rules if (r[5], r[6]) == obj and obj != VANISH]

    def _inputs_makeable(self, rule, depth) -> bool:
        inputs = [(rule[1], rule[2])] + ([(rule[3], rule[4])] if rule[0] in TILE_PAIR_RULES else [])
        return all(self._makeable(o, depth) for o in inputs)

    def _make(self, obj, depth: int = _MAX_DEPTH) -> int | None:
        """An action towards obj's existence, by the first rule whose inputs can be made."""
        for rule in self._makers(obj):
            if self._inputs_makeable(rule, depth - 1):
                return self._fire(rule, depth - 1)
        return None

    def _drop(self) -> int | None:
        """Put the held object down on an empty cell, away from other objects if possible."""
        w = self.world
        cells = [(x, z) for x in range(w.width) for z in range(w.depth) if w.empty_floor(x, z)]
        quiet = [c for c in cells if not any(w.inside(*n) and w.object_at(*n)
                                             for n in _neighbours(*c))]
        return self._face(quiet or cells, PUT_DOWN)

    def _in_world(self, obj, depth: int = _MAX_DEPTH) -> int | None:
        """None once obj lies somewhere; else an action towards that."""
        if self.world.find(obj):
            return None
        if self.hand == obj:
            return self._drop()
        return self._make(obj, depth)

    def _held(self, obj, depth: int = _MAX_DEPTH) -> int | None:
        """None once obj is in hand; else an action towards that."""
        if self.hand == obj:
            return None
        cells = self.world.find(obj)
        if not cells:
            return self._make(obj, depth)
        if self.hand is not None:
            return self._drop()
        return self._face(cells, PICK_UP)

    def _near(self, obj, direction, depth) -> int | None:
        """Stand with obj next to the agent (directly `direction` of it, if given)."""
        action = self._in_world(obj, depth)
        if action is not None:
            return action
        cells = []
        for x, z in self.world.find(obj):
            for d, (dx, dz) in enumerate(COMPASS_OFFSETS):
                if direction is None or d == direction:
                    cells.append((x - dx, z - dz))
        return self._stand([c for c in cells if self._walkable(*c) or c == self.me[:2]])

    def _pair(self, a, b, direction, depth) -> int | None:
        """Put a and b next to each other (b directly `direction` of a, if given)."""
        if self.hand in (a, b):
            mover = self.hand
        else:
            mover = a if is_pickable(*a) else b
        target = b if mover == a else a
        action = self._in_world(target, depth)
        if action is not None:
            return action
        if self.hand != mover:
            return self._held(mover, depth)
        offsets = COMPASS_OFFSETS if direction is None else [COMPASS_OFFSETS[direction]]
        sign = -1 if mover == a else 1  # a goes to b - offset, b to a + offset
        cells = [(x + sign * dx, z + sign * dz) for x, z in self.world.find(target)
                 for dx, dz in offsets]
        return self._face([c for c in cells if self.world.empty_floor(*c)], PUT_DOWN)

    def _fire(self, rule, depth) -> int | None:
        rid, a, b = rule[0], (rule[1], rule[2]), (rule[3], rule[4])
        if rid == RuleId.AGENT_HOLD:
            return self._held(a, depth)
        if rid == RuleId.AGENT_NEAR:
            return self._near(a, None, depth)
        if RuleId.AGENT_NEAR_UP <= rid <= RuleId.AGENT_NEAR_LEFT:
            return self._near(a, rid - RuleId.AGENT_NEAR_UP, depth)
        direction = None if rid == RuleId.TILE_NEAR else rid - RuleId.TILE_NEAR_UP
        return self._pair(a, b, direction, depth)

    def _goal(self) -> int | None:
        gid, a, b = self.goal[0], tuple(self.goal[1:3]), tuple(self.goal[3:5])
        if gid == GoalId.AGENT_HOLD:
            return self._held(a)
        if gid == GoalId.AGENT_ON_TILE:
            return _first(lambda: self._in_world(a), lambda: self._stand(self.world.find(a)))
        if gid == GoalId.AGENT_NEAR:
            return self._near(a, None, _MAX_DEPTH)
        if GoalId.AGENT_NEAR_UP <= gid <= GoalId.AGENT_NEAR_LEFT:
            return self._near(a, gid - GoalId.AGENT_NEAR_UP, _MAX_DEPTH)
        if gid == GoalId.TILE_NEAR:
            return self._pair(a, b, None, _MAX_DEPTH)
        if GoalId.TILE_NEAR_UP <= gid <= GoalId.TILE_NEAR_LEFT:
            return self._pair(a, b, gid - GoalId.TILE_NEAR_UP, _MAX_DEPTH)
        if gid == GoalId.TILE_ON_POSITION:
            return _first(lambda: self._held(a), lambda: self._face([b], PUT_DOWN))
        if gid == GoalId.AGENT_ON_POSITION:
            return self._stand([a])
        return None


def _first(*steps) -> int | None:
    """The first action one of the steps gives (a step gives None when it is done)."""
    for step in steps:
        action = step()
        if action is not None:
            return action
    return None
