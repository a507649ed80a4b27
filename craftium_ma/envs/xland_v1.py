"""xland: XLand-MiniGrid step for step in a 3D grid world (mods/xland/task.toml, docs/xland.md).

XLandEnv draws each episode's world in Python (craftium_ma.xland.world) from the ruleset and
the seed, or takes a given state, checks it, and passes it to the Lua mod as plain integer
lists; infos carry each agent's goal, the rules (padded to 18 rows, with their count) and the
mission text as UTF-8 bytes (craftium_ma.decode_text). grid_state() reads the world back in
XLand-MiniGrid's encoding.
"""

from __future__ import annotations

import functools

import numpy as np

from craftium_ma.env import CraftiumParallelEnv
from craftium_ma.infos import InfoSpec, encode_text
from craftium_ma.make import task_module
from craftium_ma.validate import positive_int
from craftium_ma.xland.benchmark import Benchmark, load_benchmark
from craftium_ma.xland.encoding import GOAL_SIZE, RULE_SIZE, Ruleset, mission
from craftium_ma.xland.world import (DIRECTION_YAWS, LAYOUTS, MAX_SIZE, STATE_PER_AGENT,
                                     STATE_SHARED, make_world, max_steps)

MODES = ("cooperative", "competitive", "independent")
# task option split: the benchmark's rulesets shuffled with numpy's default_rng(SPLIT_SEED),
# the first TRAIN_FRACTION of them "train" and the rest "held-out" (as XLand-MiniGrid's
# training scripts hold rulesets out: shuffle, then split)
SPLITS = ("all", "train", "held-out")
SPLIT_SEED, TRAIN_FRACTION = 0, 0.8
# reset(options=...) keys that give the episode's state (craftium_ma.xland.world.make_world)
STATE_OPTIONS = ("grid", "agent_positions", "agent_directions", "agent_pockets")

MISSION_BYTES = 1024  # infos["mission"]: the mission text's UTF-8, zero-padded
# the rows of infos["rules"] and of the rules observation (mods/xland/task.toml): the most a
# ruleset of XLand-MiniGrid's top level has (a chain of depth 3, 2 + 4 + 8 rules, and 4
# distractor rules)
RULE_ROWS = 18

_load_benchmark = functools.lru_cache(maxsize=4)(load_benchmark)


def split_benchmark(benchmark: Benchmark, split: str) -> Benchmark:
    """The rulesets of `split` (SPLITS) of the benchmark."""
    if split == "all":
        return benchmark
    train, held_out = benchmark.shuffle(np.random.default_rng(SPLIT_SEED)).split(TRAIN_FRACTION)
    return train if split == "train" else held_out


@functools.lru_cache(maxsize=8)
def _named_benchmark(name: str, split: str) -> Benchmark:
    return split_benchmark(_load_benchmark(name), split)


def as_ruleset(value) -> Ruleset:
    """A Ruleset, or its encoding: a dict with goal, rules and init_tiles, or such a triple."""
    if isinstance(value, Ruleset):
        return value
    if isinstance(value, dict):
        missing = {"goal", "rules", "init_tiles"} - set(value)
        if missing:
            raise ValueError(f"ruleset: a dict ruleset needs goal, rules and init_tiles; "
                             f"missing {sorted(missing)}")
        return Ruleset(value["goal"], value["rules"], value["init_tiles"])
    if isinstance(value, (tuple, list)) and len(value) == 3:
        return Ruleset(*value)
    raise ValueError(f"ruleset must be a Ruleset, a dict of goal, rules and init_tiles, or a "
                     f"(goal, rules, init_tiles) triple; got {type(value).__name__}")


def _check_options(options: dict, num_agents: int) -> None:
    """ValueError naming a task option of a wrong value."""
    if options["mode"] not in MODES:
        raise ValueError(f"task option mode must be one of {', '.join(MODES)}, "
                         f"got {options['mode']!r}")
    if options["mode"] == "competitive" and num_agents < 2:
        raise ValueError("mode 'competitive' needs at least 2 agents (two teams)")
    if options["layout"] not in LAYOUTS:
        raise ValueError(f"task option layout must be one of {', '.join(LAYOUTS)}, "
                         f"got {options['layout']!r}")
    positive_int("task option trial_episodes", options["trial_episodes"])
    if options["split"] not in SPLITS:
        raise ValueError(f"task option split must be one of {', '.join(SPLITS)}, "
                         f"got {options['split']!r}")
    benchmark = options["benchmark"]
    if not isinstance(benchmark, (str, Benchmark)):
        raise ValueError(f"task option benchmark must be a benchmark name or a Benchmark, "
                         f"got {type(benchmark).__name__}")


class XLandEnv(CraftiumParallelEnv):
    """The xland task. reset(options={"ruleset": ...}) plays that ruleset; without one the
    episode's seed samples it from the task option benchmark. reset(options={"grid": (H, W, 2),
    "agent_positions": [(row, col), ...], "agent_directions": [d, ...], "agent_pockets":
    [(tile, colour), ...]}) starts from that state (any of them; the rest drawn). task_options
    trial_episodes=k keeps a ruleset and its layout seed for k episodes. max_cycles defaults to
    XLand-MiniGrid's 3 * height * width of the task option layout."""

    def __init__(self, task: str | None = "xland", **kwargs):
        super().__init__(task, **kwargs)
        options = {**self.task.options, **self.task_options}
        _check_options(options, len(self.possible_agents))
        if kwargs.get("max_cycles") is None:
            self.max_cycles = max_steps(options["layout"])
        self._next_ruleset: Ruleset | None = None
        self._next_state: dict = {}
        # ruleset, layout seed, episodes left, the rulesets it was drawn from
        self._trial: tuple[Ruleset, int, int, Benchmark | None] | None = None
        self._split = (None, None, None)  # a given Benchmark, the split, its rulesets
        self.ruleset: Ruleset | None = None  # the current episode's
        self.world = None
        self._extra_infos: dict[str, dict] = {}
        self._episode_task_options = options  # the episode's

    def reset(self, seed=None, options=None):
        options = dict(options or {})
        ruleset = options.pop("ruleset", None)
        self._next_ruleset = None if ruleset is None else as_ruleset(ruleset)
        self._next_state = {k: options.pop(k) for k in STATE_OPTIONS if k in options}
        return super().reset(seed=seed, options=options)

    def grid_state(self) -> dict[str, np.ndarray]:
        """The world now, in XLand-MiniGrid's encoding: grid (H, W, 2) uint8, positions (N, 2)
        (row, col), directions (N,) (0 up, 1 right, 2 down, 3 left), pockets (N, 2) (tile,
        colour; (0, 0) an empty hand)."""
        state = self.state().astype(np.int64)
        height, width = int(state[0]), int(state[1])
        grid = state[2:STATE_SHARED].reshape(MAX_SIZE, MAX_SIZE, 2)[:height, :width]
        agents = state[STATE_SHARED:].reshape(-1, STATE_PER_AGENT)
        return {"grid": grid.astype(np.uint8), "positions": agents[:, :2].copy(),
                "directions": agents[:, 2].copy(), "pockets": agents[:, 3:5].astype(np.uint8)}

    def info_schema(self) -> dict[str, InfoSpec]:
        """The base keys, and each agent's goal, the rules padded to RULE_ROWS with their count,
        and the mission's UTF-8 bytes."""
        return {**super().info_schema(), "goal": InfoSpec("uint8", (GOAL_SIZE,)),
                "rules": InfoSpec("uint8", (RULE_ROWS, RULE_SIZE)),
                "num_rules": InfoSpec("int64"), "mission": InfoSpec("uint8", (MISSION_BYTES,))}

    def team_of(self, agent: str) -> str | None:
        """team_0 or team_1, dealt in turn, in mode "competitive"; None in the others."""
        team = super().team_of(agent)
        return team if self._episode_task_options["mode"] == "competitive" else None

    def shape_infos(self, infos: dict) -> dict:
        """Each agent's goal, rules and mission; its position and yaw are its cell and
        direction in the task (a pipelined client reports the task's moves a step later)."""
        state = self.state()
        height = int(state[0])
        cells = state[STATE_SHARED:].reshape(-1, STATE_PER_AGENT)
        out = {}
        for i, agent in enumerate(self.possible_agents):
            if agent in infos:
                row, col, direction = (int(v) for v in cells[i, :3])
                out[agent] = {**infos[agent],
                              "position": np.array([col, 0.5, height - 1 - row], np.float64),
                              "yaw": np.float64(DIRECTION_YAWS[direction]),
                              **self._extra_infos[agent]}
        return out

    def _benchmark(self, benchmark, split: str) -> Benchmark:
        if isinstance(benchmark, str):
            return _named_benchmark(benchmark, split)
        given, given_split, rulesets = self._split  # a Benchmark is split once, not every reset
        if given is not benchmark or given_split != split:
            rulesets = split_benchmark(benchmark, split)
            self._split = (benchmark, split, rulesets)
        return rulesets

    def episode_options(self, task_options: dict, seed: int) -> dict:
        _check_options(task_options, len(self.possible_agents))  # reset(options=...) may set them
        if self._next_ruleset is not None:
            ruleset, layout_seed, drawn_from = self._next_ruleset, seed, None
            left = task_options["trial_episodes"] - 1
        else:
            benchmark = self._benchmark(task_options["benchmark"], task_options["split"])
            # a trial goes on while the rulesets are those it was drawn from (a given
            # ruleset's, any): a held-out split never replays a training ruleset
            if self._trial is not None and self._trial[2] > 0 and (
                    self._trial[3] is None or self._trial[3] is benchmark):
                ruleset, layout_seed, left, drawn_from = self._trial
                left -= 1
            else:
                ruleset = benchmark.sample_ruleset(np.random.default_rng(seed))
                layout_seed, drawn_from = seed, benchmark
                left = task_options["trial_episodes"] - 1
        world = make_world(ruleset, len(self.possible_agents), task_options["mode"], layout_seed,
                           task_options["layout"], **self._next_state)
        self._trial = (ruleset, layout_seed, left, drawn_from)
        self.ruleset, self.world, self._episode_task_options = ruleset, world, task_options
        active = ruleset.rules[ruleset.rules[:, 0] != 0]  # without the empty rules' padding
        if len(active) > RULE_ROWS:
            raise ValueError(f"the ruleset has {len(active)} rules, more than the {RULE_ROWS} "
                             "rows of infos['rules'] and of the rules observation")
        rules = np.zeros((RULE_ROWS, RULE_SIZE), np.uint8)
        rules[:len(active)] = active
        count = np.int64(len(active))
        self._extra_infos = {
            agent: {"goal": goal.copy(), "rules": rules, "num_rules": count,
                    "mission": encode_text(mission(Ruleset(goal, ruleset.rules,
                                                           ruleset.init_tiles)), MISSION_BYTES)}
            for agent, goal in zip(self.possible_agents, world.goals)}
        options = {k: v for k, v in task_options.items() if k != "benchmark"}
        return {**options, "world": world.lua()}


env, parallel_env, raw_env = task_module("xland")
