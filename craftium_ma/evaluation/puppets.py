"""Scripted bots ("puppets") of the shipped tasks, acting on privileged information:
every player's position and yaw (infos), the task's state(), and a task's privileged
observations (commons_harvest's apple_map, spiders_attack's nearest_spider).

Positions are (x, y, z) with y up; a player of yaw Y (degrees) looks along
(-sin Y, cos Y) in (x, z), and turning left raises Y. Each bot is made anew for each
episode; registering one is `register_bot(BotSpec(...))` (docs/scenarios.md).
"""

from __future__ import annotations

import math

import numpy as np

from ..tasks import find_task
from ..xland.encoding import Action
from ..xland.planner import Planner
from .population import BotSpec, World, register_bot


def actions_of(task: str) -> dict[str, int]:
    """The task's discrete actions by name."""
    return {a.name: i for i, a in enumerate(find_task(task).actions)}


def where(info: dict) -> tuple[float, float]:
    x, _, z = info["position"]
    return float(x), float(z)


def bearing(info: dict, target) -> tuple[float, float]:
    """(degrees to turn left to face `target` (x, z), in (-180, 180]; its distance)."""
    x, z = where(info)
    dx, dz = target[0] - x, target[1] - z
    facing = math.degrees(math.atan2(-dx, dz))
    turn = (facing - float(info["yaw"]) + 180.0) % 360.0 - 180.0
    return turn, math.hypot(dx, dz)


def walk_to(info: dict, target, act: dict[str, int], within: float = 0.3) -> int | None:
    """The action that brings a player that strafes (forward, backward, left, right) and
    turns its camera (camera_left, camera_right) to `target`: it first faces +z (yaw 0,
    to within half a turn), then lines up x, then z; None within `within` of it."""
    turning = turn_towards(-((float(info["yaw"]) + 180.0) % 360.0 - 180.0), act,
                           "camera_left", "camera_right", 8.0)
    if turning is not None:
        return turning
    x, z = where(info)
    dx, dz = target[0] - x, target[1] - z
    if abs(dx) > within:
        return act["right"] if dx > 0 else act["left"]
    if abs(dz) > within:
        return act["forward"] if dz > 0 else act["backward"]
    return None


def turn_towards(turn: float, act: dict[str, int], left: str, right: str,
                 tolerance: float) -> int | None:
    """The turn action towards a bearing outside `tolerance` degrees; None within it."""
    if abs(turn) <= tolerance:
        return None
    return act[left] if turn > 0 else act[right]


def others(world: World, agent: str) -> list[str]:
    return [a for a in world.infos if a != agent]


class Striker:
    """Hits with a fresh press: a held punch hits a player once, so a hit follows a step
    without one."""

    struck = False

    def strike(self, hit: int, otherwise: int) -> int:
        self.struck = not self.struck
        return hit if self.struck else otherwise


# -- commons_harvest -----------------------------------------------------------------------

class Harvester:
    """Walks to the nearest apple and digs it. With `keep` > 0 it takes only apples that
    leave at least `keep` apples within the regrowth radius (2) around them, so a patch is
    never harvested bare (it waits where none is left to take)."""

    DIG_FROM, DIG_TO = 1.0, 2.4  # nodes: at pitch 30 the crosshair meets apples this far

    def __init__(self, rng, keep: int = 0):
        self.keep = keep
        self.act_ = actions_of("commons_harvest")

    def target(self, apples: np.ndarray, here) -> tuple[int, int] | None:
        zs, xs = np.nonzero(apples)
        if self.keep:
            near = np.array([((np.abs(xs - x) + np.abs(zs - z)) <= 2).sum() - 1
                             for x, z in zip(xs, zs)], int)
            xs, zs = xs[near >= self.keep], zs[near >= self.keep]
        if not len(xs):
            return None
        d = (xs - here[0]) ** 2 + (zs - here[1]) ** 2
        i = int(np.lexsort((zs, xs, d))[0])  # nearest; ties by x, then z
        return int(xs[i]), int(zs[i])

    def act(self, agent: str, observation: dict, world: World) -> int:
        act, info = self.act_, world.infos[agent]
        target = self.target(observation["apple_map"], where(info))
        if target is None:
            return act["noop"]
        turn, distance = bearing(info, target)
        tolerance = 25.0 if distance > self.DIG_TO + 1 else 10.0
        turning = turn_towards(turn, act, "turn_left", "turn_right", tolerance)
        if turning is not None:
            return turning
        if self.DIG_FROM <= distance <= self.DIG_TO:
            return act["dig"]
        return act["forward"]


for name, keep, held_out, about in (
        ("greedy", 0, False, "takes the nearest apple, always"),
        ("sustainable", 3, False, "takes only apples with 3 others within 2 nodes: a patch "
                                  "keeps enough apples to regrow"),
        ("rationer", 5, True, "takes only apples with 5 others within 2 nodes")):
    register_bot(BotSpec(
        f"commons_harvest.{name}", "commons_harvest", 1,
        make=lambda rng, keep=keep: Harvester(rng, keep), observations=("apple_map",),
        description=about, held_out=held_out))


# -- duel ------------------------------------------------------------------------------------

class Fighter(Striker):
    """Faces the opponent and hits it within reach (turns are 15 degrees: a hit needs the
    opponent within 2 nodes). `aggressive` walks up to it; `evasive` backs off inside
    1.5 nodes and strafes beyond reach; `counter` waits for it."""

    REACH = 2.0

    def __init__(self, rng, style: str):
        self.style = style
        self.act_ = actions_of("duel")
        self.rng = rng

    def act(self, agent: str, observation: dict, world: World) -> int:
        act, info = self.act_, world.infos[agent]
        opponent = world.infos[others(world, agent)[0]]
        turn, distance = bearing(info, where(opponent))
        turning = turn_towards(turn, act, "camera_left", "camera_right", 12.0)
        if turning is not None:
            return turning
        if self.style == "evasive" and distance < 1.5:
            return act["backward"]
        if distance <= self.REACH:
            return self.strike(act["attack"], act["noop"])
        if self.style == "aggressive":
            return act["forward"]
        if self.style == "evasive":
            return act["left"] if self.rng.random() < 0.5 else act["right"]
        return act["noop"]


for name, held_out, about in (
        ("aggressive", False, "walks up to the opponent and hits it"),
        ("evasive", False, "keeps its distance, strafing, and hits what comes within reach"),
        ("counter", True, "waits facing the opponent and hits it within reach")):
    register_bot(BotSpec(
        f"duel.{name}", "duel", 1, make=lambda rng, style=name: Fighter(rng, style),
        description=about, held_out=held_out))


# -- pressure_plates ---------------------------------------------------------------------------

PLATE_A, PLATE_B = (2.0, 2.0), (5.0, 7.0)  # (x, z) of the red and blue plates
GOAL = (5.0, 10.0)  # beyond the door (x 5, z 8)


class PlateHelper:
    """Goes to the red plate (far from the door) after `delay` steps and waits on it."""

    def __init__(self, rng, delay: int = 0):
        self.delay = delay
        self.act_ = actions_of("pressure_plates")

    def act(self, agent: str, observation: dict, world: World) -> int:
        self.delay -= 1
        move = None if self.delay >= 0 else walk_to(world.infos[agent], PLATE_A, self.act_)
        return self.act_["noop"] if move is None else move


class DoorRunner:
    """Stands on the blue plate by the door and goes through it once the door is open."""

    def __init__(self, rng):
        self.act_ = actions_of("pressure_plates")

    def act(self, agent: str, observation: dict, world: World) -> int:
        info, door_open = world.infos[agent], world.state()[0] > 0.5
        move = walk_to(info, GOAL if door_open else PLATE_B, self.act_, within=0.15)
        return self.act_["noop"] if move is None else move


register_bot(BotSpec("pressure_plates.helper", "pressure_plates", 1, make=PlateHelper,
                     description="goes to the red plate (far from the door) and waits on it"))
register_bot(BotSpec("pressure_plates.runner", "pressure_plates", 1, make=DoorRunner,
                     description="waits on the blue plate and goes through the door when "
                                 "it opens"))
register_bot(BotSpec("pressure_plates.late_helper", "pressure_plates", 1,
                     make=lambda rng: PlateHelper(rng, delay=60), held_out=True,
                     description="waits 60 steps, then goes to the red plate and waits on it"))


# -- spiders_attack ------------------------------------------------------------------------

class SpiderFighter:
    """Faces the nearest spider, walks up to it and hits it; `guard` stays where it is and
    hits only spiders within reach."""

    REACH = 2.2

    def __init__(self, rng, guard: bool = False):
        self.guard = guard
        self.act_ = actions_of("spiders_attack")

    def act(self, agent: str, observation: dict, world: World) -> int:
        act, info = self.act_, world.infos[agent]
        x, z, alive = (float(v) for v in observation["nearest_spider"])
        if not alive:
            return act["noop"]
        turn, distance = bearing(info, (x, z))
        if self.guard and distance > self.REACH + 1:
            return act["noop"]
        turning = turn_towards(turn, act, "turn_left", "turn_right", 15.0)
        if turning is not None:
            return turning
        return act["attack"] if distance <= self.REACH else act["forward"]


register_bot(BotSpec("spiders_attack.fighter", "spiders_attack", 1, make=SpiderFighter,
                     observations=("nearest_spider",),
                     description="walks up to the nearest spider and hits it"))
register_bot(BotSpec("spiders_attack.guard", "spiders_attack", 1,
                     make=lambda rng: SpiderFighter(rng, guard=True),
                     observations=("nearest_spider",), held_out=True,
                     description="stays where it is and hits spiders that come near"))


# -- capture_the_flag ---------------------------------------------------------------------

class FlagPlayer(Striker):
    """`attacker`: runs to the enemy flag while it is home and back to its own base with
    it, going round an enemy in its way. `defender`: stands guard in front of its flag and
    tags enemies that come near, then goes back to its post for REST steps. `raider`: an
    attacker that also tags enemies within reach in its own half."""

    TAG_REACH = 2.0  # turns are 15 degrees: a tag lands from 2 nodes
    REST = 40

    def __init__(self, rng, style: str):
        self.style = style
        self.act_ = actions_of("capture_the_flag")
        self.resting = 0
        self.field = None  # (length, width), read at the first step

    def act(self, agent: str, observation: dict, world: World) -> int:
        act, info = self.act_, world.infos[agent]
        if self.field is None:  # the task's options do not change within an episode
            options = {**find_task("capture_the_flag").options, **world.env.task_options}
            self.field = int(options["length"]), int(options["width"])
        length, width = self.field
        mid_x = width // 2 + 1
        team = int(info["team"])  # 0 red (z < length / 2), 1 blue
        bases = [(mid_x, 2.0), (mid_x, length - 1.0)]
        state, i = world.state(), world.env.possible_agents.index(agent)
        carrying = state[2 + 4 * i + 3] > 0.5
        enemy_home = state[1 - team] > 0.5
        in_my_half = [a for a in others(world, agent) if int(world.infos[a]["team"]) != team
                      and (where(world.infos[a])[1] < length / 2) == (team == 0)]
        guard = (mid_x, 5.0 if team == 0 else length - 4.0)
        self.resting = max(0, self.resting - 1)
        if self.style in ("defender", "raider") and in_my_half and not self.resting:
            enemy = min(in_my_half, key=lambda a: bearing(info, where(world.infos[a]))[1])
            turn, distance = bearing(info, where(world.infos[enemy]))
            if self.style == "defender" or distance <= self.TAG_REACH:
                turning = turn_towards(turn, act, "turn_left", "turn_right", 15.0)
                if turning is not None:
                    return turning
                if distance <= self.TAG_REACH:
                    action = self.strike(act["tag"], act["noop"])
                    self.resting = self.REST if action == act["tag"] else 0
                    return action
                return act["forward"]
        if self.style == "defender":
            target = guard
        elif carrying:
            target = bases[team]
        elif enemy_home:
            target = bases[1 - team]
        else:
            target = guard
        if self.style != "defender":
            target = self.round_enemies(info, target, world, agent, team, width, length)
        turn, distance = bearing(info, target)
        if distance < 0.5:
            return act["noop"]
        turning = turn_towards(turn, act, "turn_left", "turn_right", 20.0)
        return act["forward"] if turning is None else turning

    @staticmethod
    def round_enemies(info, target, world: World, agent: str, team: int, width: int,
                      length: int):
        """`target`, or, with an enemy in its own half (one that can tag) less than 4 nodes
        ahead on the way to it, a point 4 nodes beside that enemy, on the side with more
        room."""
        x, z = where(info)
        for other in others(world, agent):
            ex, ez = where(world.infos[other])
            if int(world.infos[other]["team"]) == team or (ez < length / 2) == (team == 0):
                continue
            ahead = (ez - z) * (1 if target[1] > z else -1)
            if 0 < ahead < 4 and abs(ex - x) < 2.5 and abs(target[1] - z) > ahead:
                side = 4.0 if ex < (width + 1) / 2 else -4.0
                return (ex + side, ez)
        return target


class TeamPlayer:
    """An attacker or a defender by its place in its team: agent_0 and agent_1 attack,
    agent_2 and agent_3 defend, agent_4 and agent_5 attack, and so on."""

    def __init__(self, rng):
        self.rng, self.player = rng, None

    def act(self, agent: str, observation: dict, world: World) -> int:
        if self.player is None:
            place = world.env.possible_agents.index(agent) // 2
            self.player = FlagPlayer(self.rng, "attacker" if place % 2 == 0 else "defender")
        return self.player.act(agent, observation, world)


register_bot(BotSpec("capture_the_flag.team", "capture_the_flag", 1, make=TeamPlayer,
                     description="attacks or defends by its place in its team, in turn"))

for name, held_out, about in (
        ("attacker", False, "takes the enemy flag home whenever it is there"),
        ("defender", False, "guards its flag and tags enemies in its half"),
        ("raider", True, "an attacker that also tags enemies within reach at home")):
    register_bot(BotSpec(
        f"capture_the_flag.{name}", "capture_the_flag", 2,
        make=lambda rng, style=name: FlagPlayer(rng, style), description=about,
        held_out=held_out))


# -- xland ---------------------------------------------------------------------------------

class XLandPlanner:
    """The scripted planner (craftium_ma.xland.planner) on the agent's own goal and rules;
    with `idle` > 0 it plays a no-op with that probability instead (a slower partner)."""

    def __init__(self, rng, idle: float = 0.0):
        self.rng, self.idle = rng, idle
        self.planner = None

    def act(self, agent: str, observation: dict, world: World) -> int:
        info = world.infos[agent]
        if self.planner is None:
            self.planner = Planner(info["goal"], info["rules"],
                                   index=world.env.possible_agents.index(agent))
        action = self.planner.act(world.env.grid_state())
        return int(Action.NOOP) if self.idle and self.rng.random() < self.idle else action


register_bot(BotSpec("xland.planner", "xland", 1, make=XLandPlanner,
                     description="plans its way to its goal under the rules"))
register_bot(BotSpec("xland.slow_planner", "xland", 1,
                     make=lambda rng: XLandPlanner(rng, idle=0.5), held_out=True,
                     description="the planner, idle half of its steps"))


# -- every task ----------------------------------------------------------------------------

class RandomBot:
    """Uniformly random actions."""

    def __init__(self, rng, n: int):
        self.rng, self.n = rng, n

    def act(self, agent: str, observation: dict, world: World) -> int:
        return int(self.rng.integers(self.n))


for task_id in ("capture_the_flag", "commons_harvest", "duel", "pressure_plates",
                "spiders_attack", "xland"):
    actions = len(find_task(task_id).actions)
    register_bot(BotSpec(f"{task_id}.random", task_id, 1,
                         make=lambda rng, n=actions: RandomBot(rng, n),
                         description="uniformly random actions"))
