"""The shipped scenarios (docs/scenarios.md has their table), and the registry.

Names follow Melting Pot's: `<task>_<n>`. Resident scenarios have a focal majority,
visitor ones a focal minority; those tagged "held_out" draw bots that `bots()` does
not list, so no training code meets them.
"""

from __future__ import annotations

import functools

from .scenario import HELD_OUT, RESIDENT, VISITOR, Scenario

_SCENARIOS: dict[str, Scenario] = {}
FIELD = {"length": 24, "width": 16}  # capture_the_flag's field (the task's: 40 x 24)
INDEPENDENT = {"mode": "independent"}  # xland: each player its own goal


def register_scenario(scenario: Scenario) -> Scenario:
    """Adds a scenario under its name (a name taken already is an error)."""
    if scenario.name in _SCENARIOS:
        raise ValueError(f"a scenario named {scenario.name!r} is registered already")
    _SCENARIOS[scenario.name] = scenario
    return scenario


def scenarios(task: str | None = None) -> list[str]:
    """The names of the scenarios (of `task`, or all)."""
    _load_shipped()
    return [n for n, s in _SCENARIOS.items() if task is None or s.task == task]


def scenario(name: str) -> Scenario:
    """The scenario called `name`."""
    _load_shipped()
    if name not in _SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; the scenarios are {', '.join(_SCENARIOS)}")
    return _SCENARIOS[name]


def _focal_first(focal: int, players: int) -> tuple[bool, ...]:
    return tuple(i < focal for i in range(players))


def _teams(players: int) -> tuple[str, ...]:
    """capture_the_flag's roles: agent_i plays for red if i is even, else for blue."""
    return tuple("red" if i % 2 == 0 else "blue" for i in range(players))


def _shipped() -> list[Scenario]:
    mixed, competitive, cooperative = "mixed-motive", "competitive", "cooperative"
    teams, independent = "team vs team", "independent"
    default = "default"
    return [
        # commons_harvest: does the focal population keep the commons alive beside others?
        Scenario("commons_harvest_0", "commons_harvest", 8, _focal_first(6, 8), (default,) * 8,
                 {default: ("commons_harvest.greedy",)}, {RESIDENT, mixed},
                 "6 focal players and 2 greedy harvesters", max_cycles=300),
        Scenario("commons_harvest_1", "commons_harvest", 8, _focal_first(2, 8), (default,) * 8,
                 {default: ("commons_harvest.sustainable",)}, {VISITOR, mixed},
                 "2 focal players visit 6 sustainable harvesters: do they keep to it?",
                 max_cycles=300),
        Scenario("commons_harvest_2", "commons_harvest", 16, _focal_first(4, 16),
                 (default,) * 16,
                 {default: ("commons_harvest.greedy", "commons_harvest.sustainable")},
                 {VISITOR, mixed},
                 "4 focal players among 12 harvesters, each greedy or sustainable",
                 max_cycles=300),
        Scenario("commons_harvest_3", "commons_harvest", 4, _focal_first(1, 4), (default,) * 4,
                 {default: ("commons_harvest.rationer",)}, {VISITOR, mixed, HELD_OUT},
                 "1 focal player visits 3 strict rationers (held out)", max_cycles=300),
        # duel: one focal fighter against a scripted one
        Scenario("duel_0", "duel", 2, (True, False), (default,) * 2,
                 {default: ("duel.aggressive",)}, {VISITOR, competitive},
                 "against a fighter that walks up and hits", max_cycles=300),
        Scenario("duel_1", "duel", 2, (True, False), (default,) * 2,
                 {default: ("duel.evasive",)}, {VISITOR, competitive},
                 "against a fighter that keeps its distance", max_cycles=300),
        Scenario("duel_2", "duel", 2, (True, False), (default,) * 2,
                 {default: ("duel.counter",)}, {VISITOR, competitive, HELD_OUT},
                 "against a fighter that waits and counters (held out)", max_cycles=300),
        # pressure_plates: the door opens only with both plates held
        Scenario("pressure_plates_0", "pressure_plates", 2, (True, False), (default,) * 2,
                 {default: ("pressure_plates.helper",)}, {VISITOR, cooperative},
                 "a helper holds the far plate: the focal player must take the door",
                 max_cycles=300),
        Scenario("pressure_plates_1", "pressure_plates", 3, (True, True, False),
                 (default,) * 3, {default: ("pressure_plates.helper",
                                            "pressure_plates.runner")},
                 {RESIDENT, cooperative},
                 "2 focal players with a helper or a runner", max_cycles=300),
        Scenario("pressure_plates_2", "pressure_plates", 2, (True, False), (default,) * 2,
                 {default: ("pressure_plates.late_helper",)},
                 {VISITOR, cooperative, HELD_OUT},
                 "a helper that comes to the far plate late (held out)", max_cycles=300),
        # spiders_attack: fight spiders together
        Scenario("spiders_attack_0", "spiders_attack", 3, _focal_first(2, 3), (default,) * 3,
                 {default: ("spiders_attack.fighter",)}, {RESIDENT, cooperative},
                 "2 focal players and a fighter", max_cycles=500),
        Scenario("spiders_attack_1", "spiders_attack", 4, _focal_first(1, 4), (default,) * 4,
                 {default: ("spiders_attack.fighter",)}, {VISITOR, cooperative},
                 "1 focal player joins 3 fighters", max_cycles=500),
        Scenario("spiders_attack_2", "spiders_attack", 3, _focal_first(1, 3), (default,) * 3,
                 {default: ("spiders_attack.guard",)}, {VISITOR, cooperative, HELD_OUT},
                 "1 focal player with 2 guards that only hit what comes near (held out)",
                 max_cycles=500),
        # capture_the_flag: red is focal where the slot is; a field a round trip of which
        # takes about 120 steps
        Scenario("capture_the_flag_0", "capture_the_flag", 4,
                 (True, False, True, False), _teams(4),
                 {"blue": ("capture_the_flag.attacker", "capture_the_flag.defender")},
                 {VISITOR, teams}, "a focal red team against scripted blue players",
                 task_options=FIELD, max_cycles=500),
        Scenario("capture_the_flag_1", "capture_the_flag", 6,
                 (True, True, True, False, True, False), _teams(6),
                 {"blue": ("capture_the_flag.attacker", "capture_the_flag.defender")},
                 {RESIDENT, teams},
                 "a focal red team against a blue team of one focal player and 2 bots",
                 task_options=FIELD, max_cycles=500),
        Scenario("capture_the_flag_2", "capture_the_flag", 4,
                 (True, False, True, False), _teams(4),
                 {"blue": ("capture_the_flag.raider", "capture_the_flag.defender")},
                 {VISITOR, teams, HELD_OUT},
                 "a focal red team against raiders and defenders (held out)",
                 task_options=FIELD, max_cycles=500),
        # xland: each player its own goal (mode independent) beside a planner
        Scenario("xland_0", "xland", 2, (True, False), (default,) * 2,
                 {default: ("xland.planner",)}, {VISITOR, independent},
                 "beside a planner that pursues its own goal, on trivial rulesets",
                 task_options=INDEPENDENT),
        Scenario("xland_1", "xland", 3, _focal_first(2, 3), (default,) * 3,
                 {default: ("xland.planner",)}, {RESIDENT, independent},
                 "2 focal players and a planner, each its own goal, on trivial rulesets",
                 task_options=INDEPENDENT),
        Scenario("xland_2", "xland", 2, (True, False), (default,) * 2,
                 {default: ("xland.slow_planner",)}, {VISITOR, independent, HELD_OUT},
                 "beside a planner that idles half of its steps (held out)",
                 task_options=INDEPENDENT),
    ]


@functools.cache
def _load_shipped():
    for s in _shipped():
        register_scenario(s)
