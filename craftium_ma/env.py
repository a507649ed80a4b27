"""The PettingZoo ParallelEnv over the lock-step engine, and its split step.

CraftiumParallelEnv runs one task: agents agent_0 .. agent_{n-1} in one Luanti world.
It offers the public stepping contract of craftium_ma.contract (send/recv halves, the
task hooks). Build envs with craftium_ma.parallel_env() (craftium_ma.make), which gives
a task the env class its manifest names. Processes start at the first reset(), so an
env that was never reset pickles, and every copy starts its own server and clients.
"""

from __future__ import annotations

import ipaddress
import os
import warnings

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from . import observations as observing
from . import render as rendering
from .chat import WorldNews
from .contract import StepResult
from .humans import HumanLogin, human_names, login_address
from .infos import ENGINE as ENGINE_INFOS
from .infos import InfoSpec
from .launcher import LaunchConfig
from .lockstep import AgentAction, LockstepSession
from .protocol import KEY_BITS, KEYS
from .tasks import Task, TaskError, find_task, load_task
from .validate import cpu_list, frame_size, is_int, positive_int


class CraftiumParallelEnv(ParallelEnv):
    """Agents agent_0 .. agent_{n-1} act together in one Luanti world.

    Observations are the agents' first-person RGB frames (H x W x 3 uint8), or what
    observations= selects of the task's declared ones (a Dict for a list of names).
    infos[agent] holds the engine's position, yaw, pitch and hp of the agent's
    player, plus the task's own keys, the same keys and dtypes at every reset and
    step (info_schema()); chat() is what each agent heard. humans= lets people join
    the world with a client (docs/humans.md).
    """

    metadata = {"name": "craftium_ma", "render_modes": ["rgb_array", "human"],
                "is_parallelizable": True, "render_fps": 20}

    def __init__(self, task: str | None = None, *, task_dir: str | os.PathLike | None = None,
                 num_agents: int | None = None, max_cycles: int | None = None,
                 obs_size: int | tuple[int, int] | None = None, frameskip: int = 1,
                 render_mode: str | None = None, action_space: str = "discrete",
                 task_options: dict | None = None, frame_dtime: float = 0.05,
                 timeout: float = 60.0, pipelined: bool = False, humans=None,
                 bind_address: str = "127.0.0.1", cpus=None, observations="rgb",
                 frameless_agents=()):
        if task is not None and task_dir is not None:
            raise ValueError(f"give a task id or task_dir=, not both (got {task!r} and "
                             f"task_dir={str(task_dir)!r})")
        if task_dir is not None:
            self.task: Task = load_task(task_dir)
        elif task is not None:
            self.task = find_task(task)
        else:
            raise TaskError("give a task id (see craftium_ma.tasks()) or task_dir=")
        t = self.task
        n = t.default_agents if num_agents is None else num_agents
        if not is_int(n):
            raise TypeError(f"num_agents must be an int, got {type(n).__name__} {n!r}")
        if not t.min_agents <= n <= t.max_agents:
            raise ValueError(f"num_agents={num_agents!r}: task {t.id!r} takes "
                             f"{t.min_agents} to {t.max_agents} agents")
        n = int(n)
        self.max_cycles = positive_int("max_cycles", t.max_cycles if max_cycles is None
                                       else max_cycles)
        self.frameskip = positive_int("frameskip", frameskip)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of "
                             f"{self.metadata['render_modes']}")
        if action_space not in ("discrete", "full"):
            raise ValueError(f"action_space must be 'discrete' or 'full', got {action_space!r}")
        self.obs_size = frame_size(t.obs_size if obs_size is None else obs_size)
        self.pipelined = bool(pipelined)
        self.render_mode = render_mode
        self.action_mode = action_space
        undeclared = t.undeclared_options(task_options or {}, "task_options")
        if undeclared:
            raise ValueError(undeclared)
        self.task_options = dict(task_options or {})
        self.frame_dtime = frame_dtime
        self.timeout = timeout
        self.metadata = dict(self.metadata, name=t.env_id)

        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.humans = human_names(humans)
        try:
            self.bind_address = str(ipaddress.ip_address(bind_address))
        except ValueError:
            raise ValueError(f"bind_address must be an IP address to listen on, got "
                             f"{bind_address!r}") from None
        self.cpus = cpu_list(cpus)
        self._news = WorldNews(self.possible_agents, self.humans)
        self._heard: dict[str, list[dict]] = {a: [] for a in self.possible_agents}
        self._last_infos: dict[str, dict] = {}  # each agent's, for fault_result()
        self._undeclared: set[str] = set()  # info keys Lua set that the manifest lacks
        self._schema: dict[str, InfoSpec] = {}  # info_schema() of the episode
        self.agents = []
        #: the names of what each agent observes ("rgb": its frame; the task's declared ones)
        self.observation_names = observing.select(observations, t.observations, t.id,
                                                  str(t.directory / "task.toml"))
        frames = spaces.Box(0, 255, (*self.obs_size, 3), np.uint8)
        obs_space = observing.observation_space(self.observation_names, frames, t.observations,
                                                as_dict=not isinstance(observations, str))
        self._observation_spaces = {a: obs_space for a in self.possible_agents}
        # clients draw frames only where someone looks at them: observations or render(),
        # but not those of frameless_agents (bots that act on other observations)
        frameless = list(frameless_agents)
        unknown = [a for a in frameless if a not in self.possible_agents]
        if unknown:
            raise ValueError(f"frameless_agents: unknown agents {unknown}; agents are "
                             f"{self.possible_agents}")
        looked_at = observing.RGB in self.observation_names or render_mode is not None
        #: the agents whose clients draw a frame at every step (the others' "rgb" stays
        #: the frame their reset drew; frameless agents' is black)
        self.drawn_agents = [a for a in self.possible_agents
                             if looked_at and a not in frameless]
        #: agents whose clients make no meshes and draw nothing: those asked for, and every
        #: agent where nobody looks at frames
        self.frameless_agents = tuple(frameless if looked_at else self.possible_agents)
        self._dict_observations = not isinstance(observations, str)
        self._action_spaces = {a: self._make_action_space() for a in self.possible_agents}
        size = t.state_size(n)
        if size:
            self.state_space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self._session: LockstepSession | None = None
        self._closed = False
        self._frames: dict[str, np.ndarray] = {}
        self._declared: dict[str, dict[str, np.ndarray]] = {}  # each agent's latest, by name
        self._last_obs: dict = {}  # each agent's latest observation (shaped)
        self._state = None
        self._cycles = 0
        self._episode_seeds = np.random.default_rng()  # episode seeds of resets without one
        self._window = rendering.Window()

    def __init_subclass__(cls, **kwargs):
        """A subclass written for the old private hook `_episode_options` keeps working."""
        super().__init_subclass__(**kwargs)
        if "_episode_options" in cls.__dict__ and "episode_options" not in cls.__dict__:
            warnings.warn(f"{cls.__name__}._episode_options is deprecated: override "
                          "episode_options (craftium_ma.contract.TaskHooks)", DeprecationWarning,
                          stacklevel=2)
            cls.episode_options = cls.__dict__["_episode_options"]

    def _make_action_space(self) -> spaces.Space:
        if self.action_mode == "discrete":
            return spaces.Discrete(len(self.task.actions))
        return spaces.Dict({**{k: spaces.Discrete(2) for k in KEYS},
                            "mouse": spaces.Box(-1.0, 1.0, (2,), np.float32)})

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_spaces[agent]

    # -- episode -----------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None):
        # only a warning: PettingZoo's API test resets with options of its own
        undeclared = self.task.undeclared_options(options or {}, "reset(options=...)")
        if undeclared:
            warnings.warn(undeclared, stacklevel=2)
        restarted = self.fault is not None
        if restarted:
            warnings.warn(f"craftium-ma: restarting the engine processes of {self.task.id!r}, "
                          f"whose last call failed: {self.fault}", RuntimeWarning, stacklevel=2)
            self._session.close()
            self._session = None
        task_options = {**self.task.options, **self.task_options, **(options or {})}
        # Gymnasium's convention: a seed also fixes the episodes reset without one after it
        if seed is not None:
            seed = int(seed) % 2**31
            self._episode_seeds = np.random.default_rng(seed)
        else:
            seed = int(self._episode_seeds.integers(2**31))
        task_options = self.episode_options(task_options, seed)
        self._schema = self.info_schema()
        if self._session is None:
            self._session = LockstepSession(self.launch_config(), self.frameskip, self.pipelined,
                                            chat_outbox=self._news.outbox, drawn=self.drawn_agents)
            # The first reset of new engine processes is a warm-up: it waits for the task
            # area to load and does not show (its episode can differ from later ones in a
            # few pixels), so that every episode is one of a used env (docs/environments.md)
            self._session.reset(0, task_options, self.possible_agents, max_cycles=self.max_cycles)
        observations, result = self._session.reset(seed, task_options, self.possible_agents,
                                                   max_cycles=self.max_cycles)
        self.agents = list(self.possible_agents)
        self._cycles = 0
        self._frames = {a: o.frame for a, o in observations.items()}
        self._declared = {a: self._declared_values(a, result) for a in observations}
        self._state = self._checked_state(result.get("state"))
        lua = result["agents"]
        self._heard = self._take_world_news()
        infos = {a: self._info(a, o, lua[a]) for a, o in observations.items()}
        if restarted:
            for info in infos.values():
                info["engine_restarted"] = np.True_
        return (self._shaped_observations({a: self._observation(a) for a in observations}),
                self._shaped_infos(infos))

    def step(self, actions: dict) -> StepResult:
        if self._session is not None and not self.agents:
            # Nothing left to step. SuperSuit's black_death_v3 (3.11) relies on this: it
            # only ends an episode after one more step on an env without agents.
            self.check_actions(actions)
            return {}, {}, {}, {}, {}
        self.send(actions)
        return self.recv()

    # -- the split step (craftium_ma.contract.SplitStepEnv) ---------------------------------

    def check_actions(self, actions: dict) -> None:
        """Raises the error send() would for these actions; sends nothing."""
        self._engine_actions(actions)

    def send(self, actions: dict) -> list:
        """The first half of step(): checks the live agents' actions and sends them.
        Returns the sockets its answer comes on (see craftium_ma.contract)."""
        engine_actions = self._engine_actions(actions)
        if not engine_actions:
            raise RuntimeError("send() with no live agent: the episode is over, reset() first")
        return self._session.send_step(engine_actions)

    def take_reply(self, sock) -> None:
        self._session.take_reply(sock)

    @property
    def answered(self) -> bool:
        return self._session.answered

    def check_in_flight(self) -> None:
        self._session.check_in_flight()

    def recv(self) -> StepResult:
        """The second half of step(): waits for the step sent and returns step()'s tuple."""
        observations, result = self._session.receive_step()
        self._cycles += 1
        self._frames.update({a: o.frame for a, o in observations.items()})
        self._declared.update({a: self._declared_values(a, result) for a in observations})
        self._state = self._checked_state(result.get("state"))
        lua = result["agents"]
        out_of_time = self._cycles >= self.max_cycles
        rewards = {a: float(lua[a]["reward"]) for a in self.agents}
        terminations = {a: bool(lua[a]["terminated"]) for a in self.agents}
        truncations = {a: bool(lua[a]["truncated"]) or out_of_time for a in self.agents}
        self._heard = self._take_world_news()
        infos = {a: self._info(a, observations[a], lua[a]) for a in self.agents}
        obs = {a: self._observation(a) for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        if self.render_mode == "human":
            self.render()
        return (self._shaped_observations(obs), self.shape_rewards(rewards), terminations,
                truncations, self._shaped_infos(infos))

    @property
    def fault(self) -> str | None:
        return self._session.fault if self._session is not None else None

    def fault_result(self) -> StepResult:
        live, self.agents = self.agents, []
        return ({a: self._last_obs[a] for a in live}, dict.fromkeys(live, 0.0),
                dict.fromkeys(live, False), dict.fromkeys(live, True),
                {a: dict(self._last_infos[a], engine_restarted=np.True_) for a in live})

    @property
    def last_frames(self) -> dict[str, np.ndarray]:
        return dict(self._frames)

    @property
    def last_observations(self) -> dict:
        return dict(self._last_obs)

    # -- the task's hooks (craftium_ma.contract.TaskHooks) ----------------------------------

    def episode_options(self, task_options: dict, seed: int) -> dict:
        """The options Lua gets for the episode of this seed; a task's env class may draw
        more from them (craftium_ma.envs.xland_v1 draws its world)."""
        return task_options

    def shape_observations(self, observations: dict) -> dict:
        return observations

    def shape_rewards(self, rewards: dict) -> dict:
        return rewards

    def shape_infos(self, infos: dict) -> dict:
        return infos

    # -- inside the step ---------------------------------------------------------------------

    def _engine_actions(self, actions: dict) -> dict[str, AgentAction]:
        """step()'s actions checked and turned into the engine's, for the live agents."""
        if self._session is None:
            if self._closed:
                raise RuntimeError("step() after close(): the env is closed; reset() starts "
                                   "it again")
            raise RuntimeError("step() before reset(): call reset() first")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict {{agent: action}}, got "
                            f"{type(actions).__name__}")
        if not self.agents:
            return {}
        unknown = set(actions) - set(self.possible_agents)
        if unknown:
            raise ValueError(f"actions for unknown agents {sorted(unknown)}; "
                             f"agents are {self.possible_agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"no action for live agents {missing}")
        return {a: self._engine_action(a, actions[a]) for a in self.agents}

    def _engine_action(self, agent, action) -> AgentAction:
        space = self._action_spaces[agent]
        if not space.contains(action):
            raise ValueError(f"action {action!r} for {agent} is outside its action space "
                             f"{space}{why_outside(space, action)}")
        if self.action_mode == "discrete":
            a = self.task.actions[int(action)]
            return AgentAction(a.keys, a.dx, a.dy)
        keys = sum(KEY_BITS[k] for k in KEYS if action[k])
        dx, dy = (float(v) for v in action["mouse"])
        return AgentAction(keys, dx, dy)

    def info_schema(self) -> dict[str, InfoSpec]:
        """Each key of infos[agent] with its dtype, shape and default: the engine's, "team"
        (an index into the manifest's teams, -1 for none) where the task has teams, and
        the task's own (its manifest's [infos]); a task's env class may add keys."""
        team = {"team": InfoSpec("int64", default=-1)} if self.task.teams else {}
        return {**ENGINE_INFOS, **team, **self.task.infos}

    def team_of(self, agent: str) -> str | None:
        """The agent's team: agent_i is on the manifest's teams[i % len(teams)]; None in a
        task without teams. Known before the first reset (for policy mappings)."""
        if agent not in self.possible_agents:
            raise ValueError(f"team_of(): unknown agent {agent!r}; agents are "
                             f"{self.possible_agents}")
        teams = self.task.teams
        return teams[self.possible_agents.index(agent) % len(teams)] if teams else None

    def chat(self) -> dict[str, list[dict]]:
        """What each agent heard in-game in the last reset or step: a list of {"from",
        "text", "step"} per agent (docs/humans.md)."""
        return {a: list(m) for a, m in self._heard.items()}

    def _info(self, agent: str, observation, lua_result: dict) -> dict:
        """infos[agent] by the schema, from the engine's observation and Lua's result."""
        lua_info = dict(lua_result.get("info") or {})
        given = {"position": observation.position, "yaw": observation.yaw % 360.0,
                 "pitch": observation.pitch, "hp": lua_result["hp"]}
        team = lua_info.pop("team", None)
        if self.task.teams:
            if team != self.team_of(agent):
                raise TaskError(f"task {self.task.id!r}: Lua put {agent} on team {team!r}; its "
                                f"manifest's teams {list(self.task.teams)} deal it to "
                                f"{self.team_of(agent)!r} (agent_i: teams[i % len(teams)])")
            given["team"] = -1 if team is None else self.task.teams.index(team)
        elif team is not None:
            lua_info["team"] = team
        info = {}
        for key, spec in self._schema.items():
            value = given[key] if key in given else lua_info.pop(key, None)
            try:
                info[key] = spec.value(value)
            except (TypeError, ValueError) as e:
                raise TaskError(f"task {self.task.id!r}: info {key!r} of {agent} is {value!r}, "
                                f"which {e if isinstance(e, ValueError) else 'is not a number'} "
                                f"(its schema: {spec})") from None
        for key in lua_info.keys() - self._undeclared:
            self._undeclared.add(key)
            declare = ("teams = [...], its agents dealt to them in turn" if key == "team"
                       else "the key to [infos]")
            warnings.warn(f"task {self.task.id!r} sets info {key!r}, which its manifest does not "
                          f"declare: add {declare} in {self.task.directory / 'task.toml'} "
                          "(undeclared keys break consumers that build specs from the reset)",
                          UserWarning, stacklevel=4)
        info.update(lua_info)
        return info

    def _observation(self, agent: str):
        """The agent's observation as observation_names select it, from its latest frame
        and declared values."""
        values = {name: self._frames[agent] if name == observing.RGB
                  else self._declared[agent][name] for name in self.observation_names}
        return values if self._dict_observations else values[self.observation_names[0]]

    def _declared_values(self, agent: str, result: dict) -> dict[str, np.ndarray]:
        """The agent's declared observations that observation_names select, from Lua's
        result (mods/craftium_ma/observations.lua), as their dtype and shape."""
        given = (result.get("observations") or {}).get(agent) or {}
        t, values = self.task, {}
        for name in self.observation_names:
            if name == observing.RGB:
                continue
            if name not in given:
                raise TaskError(f"task {t.id!r}: its Lua gives {agent} no observation {name!r}, "
                                f"which its manifest declares: register it with "
                                f"craftium_ma.register_observation({name!r}, function(player) "
                                f"... end)")
            try:
                values[name] = t.observations[name].value(given[name])
            except ValueError as e:
                raise TaskError(f"task {t.id!r}: observation {name!r} of {agent} {e} (declared "
                                f"in {t.directory / 'task.toml'})") from None
        return values

    def _shaped_observations(self, observations: dict) -> dict:
        """shape_observations(observations), each agent's kept for last_observations."""
        observations = self.shape_observations(observations)
        self._last_obs.update(observations)
        return observations

    def _shaped_infos(self, infos: dict) -> dict:
        """shape_infos(infos), each agent's kept for fault_result()."""
        infos = self.shape_infos(infos)
        self._last_infos.update((a, dict(info)) for a, info in infos.items())
        return infos

    def _checked_state(self, values) -> np.ndarray | None:
        """The state vector Lua returned (its numbers in one string, separated by spaces),
        checked against the manifest's size."""
        values = np.fromstring(values or "", np.float64, sep=" ").astype(np.float32)
        expected = self.state_space.shape[0] if hasattr(self, "state_space") else 0
        if values.ndim != 1 or values.size != expected:
            t = self.task
            raise TaskError(
                f"task {t.id!r}: its Lua state vector has {values.size} values, its manifest "
                f"says {expected} (state = {{ shared = {t.state_shared}, per_agent = "
                f"{t.state_per_agent} }} with {len(self.possible_agents)} agents, in "
                f"{t.directory / 'task.toml'})")
        return values if expected else None

    def state(self) -> np.ndarray:
        if not hasattr(self, "state_space"):
            raise NotImplementedError(f"task {self.task.id!r} provides no global state")
        if self._state is None:
            raise RuntimeError("state() before reset(): call reset() first")
        return self._state.copy()

    # -- humans and chat (docs/humans.md) ---------------------------------------------

    def human_login(self, name: str) -> HumanLogin:
        """Address, port, name and password with which the human `name` joins; the
        password is new at every start of the engine processes (the first reset)."""
        if name not in self.humans:
            raise ValueError(f"{name!r} is not a human of this env; its humans are "
                             f"{', '.join(self.humans) or 'none (pass humans=...)'}")
        if self._session is None:
            raise RuntimeError("human_login() before reset(): the server starts at the "
                               "first reset")
        p = self._session.processes
        return HumanLogin(login_address(self.bind_address), p.port, name, p.password(name),
                          p.password_file(name))

    def post_chat(self, text: str, sender: str = "viewer"):
        """Say text in-game as sender (a human, the viewer), at the next step; it
        reaches that step's infos[agent]["chat"] of every agent, or of agent_k alone
        when it starts with "@agent_k". Safe to call from another thread."""
        self._news.post(text, sender)

    def say(self, agent: str, text: str):
        """The agent's player says text in the in-game chat at the next step; the
        other agents hear it as they hear a human (see post_chat)."""
        self._news.say(agent, text)

    def world_events(self) -> list[dict]:
        """What happened in the world since the last call, in order: chat
        ({"type": "chat", "from", "to" (an agent, or None for all), "text", "step"}),
        humans joining and leaving ({"type": "human_joined" | "human_left", "name"})."""
        return self._news.events()

    def humans_state(self) -> dict[str, dict]:
        """Each human's position [x, y, z], yaw (degrees), hp, score in the episode
        and whether connected, as of the last step (position and yaw are None until
        it first joined)."""
        return self._news.humans_state()

    def _take_world_news(self) -> dict[str, list[dict]]:
        news, self._session.world_news = self._session.world_news, []
        return self._news.take(news, self._cycles)

    # -- rendering ---------------------------------------------------------------------

    def render(self):
        """The mosaic of every agent's last frame, labelled (craftium_ma.render)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        blank = np.zeros((*self.obs_size, 3), np.uint8)
        picture = rendering.mosaic([self._frames.get(a, blank) for a in self.possible_agents],
                                   labels=self.possible_agents)
        if self.render_mode == "rgb_array":
            return picture
        self._window.show(picture)
        return None

    # -- lifecycle ---------------------------------------------------------------------

    def launch_config(self) -> LaunchConfig:
        """What the engine processes of this env are started with."""
        return LaunchConfig(
            agents=list(self.possible_agents), obs_size=self.obs_size, mods=[self.task.mod],
            frame_dtime=self.frame_dtime, timeout=self.timeout,
            turn_degrees=self.task.turn_degrees,
            server_settings={**self.task.server_settings, **self.task.bridge_settings(),
                             "craftium_ma_observe": ",".join(
                                 n for n in self.observation_names if n != observing.RGB)},
            client_settings=self.task.client_settings, world_template=self.task.world_template,
            humans=list(self.humans), bind_address=self.bind_address, cpus=self.cpus,
            frameless_agents=self.frameless_agents)

    def engine_pids(self) -> dict[str, int]:
        """Process ids of the running Luanti server ("server") and each agent's
        client; empty before the first reset and after close()."""
        return self._session.pids if self._session is not None else {}

    @property
    def engine_directory(self):
        """The private temporary folder of the running engine processes (world, logs);
        None before the first reset and after close()."""
        return self._session.directory if self._session is not None else None

    def close(self):
        """Stop the engine processes and remove their files. Safe to call again."""
        if self._session is not None:
            self._session.close()
            self._session = None
            self._closed = True
            self._news.disconnected()
        self.agents = []
        self._window.close()

    def __getstate__(self):
        """A copy carries the configuration only; it starts its own processes."""
        return dict(self.__dict__, _session=None, _closed=False, _frames={}, _declared={},
                    _last_obs={}, _window=rendering.Window(), agents=[], _episode_seeds=None)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._episode_seeds = np.random.default_rng()  # copies must not share episode seeds


def why_outside(space: spaces.Space, action) -> str:
    """What about an action outside the space is wrong, where it can be said."""
    if isinstance(space, spaces.Discrete):
        shape = np.shape(action)
        if shape != ():
            return f": it has shape {shape}, the space takes one int"
        if not is_int(action):
            return f": it is a {type(action).__name__}, the space takes an int"
        return f": it takes 0 to {space.n - 1}"
    if not isinstance(action, dict):
        return f": it is a {type(action).__name__}, the space takes a dict"
    missing, extra = set(space.spaces) - set(action), set(action) - set(space.spaces)
    if missing or extra:
        return f": keys missing {sorted(missing)}, unknown {sorted(extra, key=str)}"
    for key, sub in space.spaces.items():
        if not sub.contains(action[key]):
            if isinstance(sub, spaces.Box) and np.shape(action[key]) != sub.shape:
                return f": {key!r} has shape {np.shape(action[key])}, the space takes {sub.shape}"
            return f": {key!r} is outside {sub}"
    return ""




_MOVED = {"parallel_env": "craftium_ma.make", "raw_env": "craftium_ma.make",
          "env": "craftium_ma.make", "task_module": "craftium_ma.make",
          "mosaic": "craftium_ma.render", "mosaic_columns": "craftium_ma.render"}


def __getattr__(name: str):
    """Names that moved out of this module keep working, with a DeprecationWarning."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    warnings.warn(f"craftium_ma.env.{name} moved to {_MOVED[name]}.{name}", DeprecationWarning,
                  stacklevel=2)
    if name == "mosaic_columns":
        return lambda n: rendering.grid(n)[1]
    return getattr(importlib.import_module(_MOVED[name]), name)
