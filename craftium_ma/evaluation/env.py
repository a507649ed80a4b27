"""A scenario as a PettingZoo ParallelEnv whose agents are its focal players.

The whole world is one env of the scenario's task (every player a slot); its background
players are bots, drawn at every reset from their roles' pools by the episode's seed
and stepped inside this env: a focal `step` sends the focal actions with the bots'
(craftium_ma.contract's split step, so a pool drives a scenario as it drives a task).
Focal players see only their own observations (no privileged one) and infos that name
the scenario; bots see the world (craftium_ma.evaluation.bots.World).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from .. import observations as observing
from ..contract import StepResult
from ..make import parallel_env
from ..tasks import find_task
from . import population as botlib
from .catalogue import scenario as find_scenario
from .scenario import HELD_OUT, Scenario

#: env options a scenario fixes itself
FIXED = ("task", "task_dir", "num_agents", "action_space", "frameless_agents", "humans")


class ScenarioEnv(ParallelEnv):
    """The focal players of `scenario` (a Scenario or a name); `observations` as
    parallel_env's, of the task's non-privileged ones; other kwargs go to the task's env.
    `focal_bots` ({role: bot name}) plays the focal slots of those roles with a bot
    (the scripted reference populations): step() then takes no action for them.

    `max_cycles` and `frameskip` replace the scenario's, `task_options` go over its, and
    `bots` ({role: pool of bot names}) replace its pools of those roles: each makes a
    scenario of its own (another config hash, which the reference scores do not hold for),
    as a training pool may want (examples/train_ppo.py --scenario)."""

    def __init__(self, scenario: Scenario | str, *, observations="rgb",
                 focal_bots: dict[str, str] | None = None, max_cycles: int | None = None,
                 frameskip: int | None = None, task_options: dict | None = None,
                 bots: dict[str, list[str]] | None = None, **env_kwargs):
        s = find_scenario(scenario) if isinstance(scenario, str) else scenario
        for argument, by_role in (("focal_bots", focal_bots), ("bots", bots)):
            unknown = sorted(set(by_role or {}) - set(s.roles))
            if unknown:
                raise ValueError(f"{argument}: scenario {s.name!r} has no role {unknown}; its "
                                 f"roles are {sorted(set(s.roles))}")
        if any(isinstance(pool, str) for pool in (bots or {}).values()):
            raise TypeError(f"bots: a pool of bot names per role, e.g. {{'default': "
                            f"['duel.aggressive']}}, got {bots!r}")
        changes = {"max_cycles": max_cycles, "frameskip": frameskip,
                   "task_options": {**s.task_options, **task_options} if task_options else None,
                   "bots": {**s.bots, **bots} if bots else None}
        s = dataclasses.replace(s, **{k: v for k, v in changes.items() if v is not None})
        self.scenario = s
        fixed = sorted(set(env_kwargs) & set(FIXED))
        if fixed:
            raise ValueError(f"scenario {s.name!r} fixes {', '.join(fixed)} itself")
        #: the task (its actions) and the frameskip, as a task's env has them
        task = self.task = find_task(s.task)
        self.frameskip = s.frameskip
        names = observing.select(observations, task.observations, task.id,
                                 str(task.directory / "task.toml"))
        privileged = [n for n in names if n != observing.RGB and task.observations[n].privileged]
        if privileged:
            raise ValueError(f"observations: {', '.join(map(repr, privileged))} of task "
                             f"{task.id!r} is privileged: bots may read it, focal players not")
        self._names, self._as_dict = names, not isinstance(observations, str)
        held_out = HELD_OUT in s.tags
        self._pools = {slot: [botlib.spec(b, s.task, held_out) for b in s.bots[s.roles[slot]]]
                       for slot in s.background_slots}
        focal_bots = dict(focal_bots or {})
        self._pools.update({slot: [botlib.spec(focal_bots[s.roles[slot]], s.task)]
                            for slot in s.focal_slots if s.roles[slot] in focal_bots})
        read = [n for pool in self._pools.values() for b in pool for n in b.observations]
        frameless = [f"agent_{slot}" for slot, pool in self._pools.items()
                     if not any(observing.RGB in b.observations for b in pool)]
        self._env = parallel_env(s.task, num_agents=s.num_players, task_options=s.task_options,
                                 max_cycles=s.max_cycles, frameskip=s.frameskip,
                                 observations=list(dict.fromkeys([*names, *read])),
                                 frameless_agents=frameless, **env_kwargs)
        everyone = self._env.possible_agents
        self.possible_agents = [everyone[i] for i in s.focal_slots]
        self._played = [everyone[i] for i in sorted(self._pools)]  # by bots
        #: the focal players whose actions step() takes (not played by focal_bots)
        self.acting = [a for a in self.possible_agents if a not in self._played]
        self._slot = {a: i for i, a in enumerate(everyone)}
        self.agents: list[str] = []
        self.metadata = dict(self._env.metadata, name=s.name)
        self.render_mode = self._env.render_mode
        inner = self._env.observation_space(everyone[0])
        space = spaces.Dict({n: inner[n] for n in names}) if self._as_dict else inner[names[0]]
        self._observation_spaces = dict.fromkeys(self.possible_agents, space)
        self._episode_seeds = np.random.default_rng()
        self._bots: dict[str, botlib.Bot] = {}
        #: the episode's seed, the bot each background player drew, and every player's
        #: return so far (for evaluation records; not in focal observations or infos)
        self.episode_seed: int | None = None
        self.bots_drawn: dict[str, str] = {}
        self.returns: dict[str, float] = {}
        self._world = botlib.World(self._env)

    @property
    def world(self) -> botlib.World:
        """What the bots see: the whole world's env, every player's infos (privileged: for
        bots, tools and tests, not for focal policies)."""
        return self._world

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._env.action_space(agent)

    # -- episode -----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None):
        """A new episode: its seed fixes the bots drawn and the world, bit for bit."""
        if seed is not None:
            self._episode_seeds = np.random.default_rng(int(seed) % 2**31)
            episode = int(seed) % 2**31
        else:
            episode = int(self._episode_seeds.integers(2**31))
        draws = np.random.default_rng([episode, 0])
        self.episode_seed, self.bots_drawn, self._bots = episode, {}, {}
        for agent in self._played:
            slot = self._slot[agent]
            pool = self._pools[slot]
            bot = pool[int(draws.integers(len(pool)))]
            self.bots_drawn[agent] = bot.name
            self._bots[agent] = bot.make(np.random.default_rng([episode, 1, slot]))
            if bot.file_sha256:  # a saved policy: its spaces must be this env's, its pace kept
                policy = self._bots[agent].policy
                policy.check_fits(self._bot_space(bot), self.action_space(agent),
                                  f"{agent} of scenario {self.scenario.name!r}")
                policy.hold_actions(self.frameskip, self.task.actions)
        observations, infos = self._env.reset(seed=episode, options=options)
        self.returns = dict.fromkeys(self._env.possible_agents, 0.0)
        self._see(observations, infos)
        self.agents = [a for a in self.possible_agents if a in self._env.agents]
        return ({a: self._focal(observations[a]) for a in self.agents},
                {a: self._info(infos[a]) for a in self.agents})

    def step(self, actions: dict) -> StepResult:
        if not self.agents:
            return {}, {}, {}, {}, {}
        self.send(actions)
        return self.recv()

    # -- the split step (craftium_ma.contract.SplitStepEnv) -------------------------------------

    def check_actions(self, actions: dict) -> None:
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict {{agent: action}}, got "
                            f"{type(actions).__name__}")
        unknown = sorted(set(actions) - set(self.acting))
        if unknown:
            raise ValueError(f"actions for unknown agents {unknown}; the focal players of "
                             f"scenario {self.scenario.name!r} that take actions are "
                             f"{self.acting}")
        live_bots = [a for a in self._played if a in self._env.agents]
        self._env.check_actions({**dict.fromkeys(live_bots, 0), **actions})

    def send(self, actions: dict) -> list:
        self.check_actions(actions)
        return self._env.send({**actions, **self._bot_actions()})

    def take_reply(self, sock) -> None:
        self._env.take_reply(sock)

    @property
    def answered(self) -> bool:
        return self._env.answered

    def check_in_flight(self) -> None:
        self._env.check_in_flight()

    def recv(self) -> StepResult:
        observations, rewards, terminations, truncations, infos = self._env.recv()
        for agent, reward in rewards.items():
            self.returns[agent] += reward
        self._see(observations, infos)
        live = self.agents
        self.agents = [a for a in live if a in self._env.agents]
        return self._focal_result(live, observations, rewards, terminations, truncations, infos)

    @property
    def fault(self) -> str | None:
        return self._env.fault

    def fault_result(self) -> StepResult:
        live, self.agents = self.agents, []
        return self._focal_result(live, *self._env.fault_result())

    @property
    def last_frames(self) -> dict[str, np.ndarray]:
        frames = self._env.last_frames
        return {a: frames[a] for a in self.possible_agents if a in frames}

    @property
    def last_observations(self) -> dict:
        last = self._env.last_observations
        return {a: self._focal(last[a]) for a in self.possible_agents if a in last}

    # -- rendering and lifecycle ------------------------------------------------------------

    def render(self):
        """Every player's view, bots' included (their frameless clients show their reset's)."""
        return self._env.render()

    def close(self):
        self._env.close()
        self.agents = []

    # -- inside --------------------------------------------------------------------------

    def _bot_space(self, bot: botlib.BotSpec):
        inner = self._env.observation_space(self._played[0])
        names = list(bot.observations)
        return inner[names[0]] if names == [observing.RGB] else spaces.Dict(
            {n: inner[n] for n in names})

    def _see(self, observations: dict, infos: dict) -> None:
        """The world as bots see it after a reset or a step."""
        self._world.infos.update(infos)
        for agent in self._bots:
            if agent in observations:
                self._world.observations[agent] = observations[agent]

    def _bot_actions(self) -> dict:
        """The live bots' actions at this step."""
        live = [a for a in self._played if a in self._env.agents]
        return {a: self._bots[a].act(a, self._world.observations[a], self._world) for a in live}

    def _focal_result(self, live: list[str], observations, rewards, terminations, truncations,
                      infos) -> StepResult:
        """A step's result of the whole world, cut to the focal players in `live`."""
        return ({a: self._focal(observations[a]) for a in live}, {a: rewards[a] for a in live},
                {a: terminations[a] for a in live}, {a: truncations[a] for a in live},
                {a: self._info(infos[a]) for a in live})

    def _focal(self, observation: dict):
        """A focal player's observation: what it selected of the world env's dict."""
        if self._as_dict:
            return {n: observation[n] for n in self._names}
        return observation[self._names[0]]

    def _info(self, info: dict) -> dict:
        return dict(info, scenario=self.scenario.name)
