"""Tasks: a Lua mod plus a manifest (task.toml) in one folder.

The shipped tasks live in mods/<task>/; a user's task can live anywhere and
is passed as task_dir. The manifest says what Python needs to know: agents
allowed, episode length, the discrete action set, the frame size, world and
client settings, the size of the global state, the task options it takes,
the HUD parts its agents see, and the info keys and observations it declares.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .infos import InfoSpec, parse_schema
from .observations import ObservationSpec, parse_observations
from .protocol import DEFAULT_TURN_DEGREES, KEYS, key_bits
from .resources import MODS

BRIDGE_MOD_NAME = "craftium_ma"

#: Luanti's HUD parts a manifest's `hud` list may switch on for the agents
#: (chat, minimap and debug text are never drawn for agents); the bridge mod
#: gets them from bridge_settings() and switches every other part off.
HUD_PARTS = ("hotbar", "healthbar", "breathbar", "crosshair", "wielditem")
#: What agents see when the manifest says nothing: the world, the crosshair and
#: the wielded item; no hotbar or bars, which cover most of a small frame.
DEFAULT_HUD = ("crosshair", "wielditem")


class TaskError(ValueError):
    """An unknown task, or a task folder whose manifest is wrong."""


@dataclass(frozen=True)
class DiscreteAction:
    name: str
    keys: int = 0  # bitmask over protocol.KEYS
    dx: float = 0.0
    dy: float = 0.0


@dataclass(frozen=True)
class Task:
    id: str
    version: int
    directory: Path
    mod: Path  # the Lua mod folder (the task folder itself unless the manifest says mod =)
    description: str
    kind: str  # e.g. "cooperative", "team vs team", "mixed-motive" (the manifest's kind =)
    min_agents: int
    max_agents: int
    default_agents: int
    max_cycles: int
    obs_size: tuple[int, int]
    actions: tuple[DiscreteAction, ...]
    state_shared: int = 0  # state() = shared values + per_agent values for each agent
    state_per_agent: int = 0
    server_settings: dict[str, str] = field(default_factory=dict)
    client_settings: dict[str, str] = field(default_factory=dict)
    options: dict = field(default_factory=dict)  # defaults of task_options
    world_template: Path | None = None  # a world folder every env starts from (manifest: world =)
    options_without_default: tuple[str, ...] = ()  # task_options that have no default
    hud: tuple[str, ...] = DEFAULT_HUD  # HUD_PARTS the agents see
    nametags: bool = False  # whether agents see each other's name tags
    turn_degrees: float = DEFAULT_TURN_DEGREES  # the camera turn of an action's dx = 1
    # "module:Class", a CraftiumParallelEnv subclass (manifest: env_class =)
    env_class: str | None = None
    infos: dict[str, InfoSpec] = field(default_factory=dict)  # the task's own info keys
    teams: tuple[str, ...] = ()  # team names; agent_i is on teams[i % len(teams)]
    # the task's own observations beside the frames (manifest: [observations])
    observations: dict[str, ObservationSpec] = field(default_factory=dict)

    @property
    def env_id(self) -> str:
        return f"{self.id}_v{self.version}"

    def bridge_settings(self) -> dict[str, str]:
        """The server settings the bridge mod reads at start-up (mods/craftium_ma/init.lua):
        what it shows agents at every reset, and the constants Lua shares with Python."""
        return {"craftium_ma_hud": ",".join(self.hud),
                "craftium_ma_hud_parts": ",".join(HUD_PARTS),
                "craftium_ma_nametags": str(self.nametags).lower(),
                "craftium_ma_teams": ",".join(self.teams),
                "craftium_ma_observations": ",".join(self.observations)}

    def state_size(self, num_agents: int) -> int:
        return self.state_shared + self.state_per_agent * num_agents

    def declared_options(self) -> list[str]:
        return sorted({*self.options, *self.options_without_default})

    def undeclared_options(self, options: dict, where: str) -> str | None:
        """What to say of keys of `options` that the manifest does not declare, or None."""
        if not isinstance(options, dict):
            raise TypeError(f"{where} must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(self.declared_options()), key=str)
        if not unknown:
            return None
        return (f"{where}: task {self.id!r} takes no option {', '.join(map(repr, unknown))}; "
                f"its options are: {', '.join(self.declared_options()) or 'none'} "
                f"(declared in {self.directory / 'task.toml'})")


def load_task(directory: str | Path) -> Task:
    """Read a task folder (mod.conf, init.lua, task.toml)."""
    directory = Path(directory).resolve()
    manifest = directory / "task.toml"
    if not manifest.is_file():
        raise TaskError(f"{directory} is not a task folder: it has no task.toml")
    try:
        m = tomllib.loads(manifest.read_text())
        mod = (directory / m.get("mod", ".")).resolve()  # variants may share a mod
        if not (mod / "init.lua").is_file() or not (mod / "mod.conf").is_file():
            raise TaskError(f"{mod} is not a Lua mod: a task needs mod.conf and init.lua")
        agents = m.get("agents", {})
        actions = []
        for a in m["actions"]:
            unknown = set(a.get("keys", [])) - set(KEYS)
            if unknown:
                raise TaskError(f"{manifest}: action {a['name']!r} holds unknown keys "
                                f"{sorted(unknown)}")
            actions.append(DiscreteAction(a["name"], key_bits(a.get("keys", [])),
                                          float(a.get("dx", 0)), float(a.get("dy", 0))))
        size = m.get("obs_size", [64, 64])
        world = (directory / m["world"]).resolve() if "world" in m else None
        if world and not (world / "world.mt").is_file():
            raise TaskError(f"{manifest}: world {m['world']!r} is not a world template "
                            f"(no world.mt in {world})")
        hud = tuple(m.get("hud", DEFAULT_HUD))
        unknown = sorted(set(hud) - set(HUD_PARTS))
        if unknown:
            raise TaskError(f"{manifest}: hud holds unknown parts {unknown}; "
                            f"the parts are {', '.join(HUD_PARTS)}")
        if not isinstance(m.get("nametags", False), bool):
            raise TaskError(f"{manifest}: nametags must be true or false")
        turn = m.get("turn_degrees", Task.turn_degrees)
        if isinstance(turn, bool) or not isinstance(turn, (int, float)) or not 0 < turn <= 180:
            raise TaskError(f"{manifest}: turn_degrees must be a number in (0, 180], got {turn!r}")
        teams = m.get("teams", [])
        if not isinstance(teams, list) or not all(isinstance(t, str) and t for t in teams):
            raise TaskError(f"{manifest}: teams must be a list of team names")
        teams = tuple(teams)
        try:
            infos = parse_schema(m.get("infos", {}), str(manifest))
            observations = parse_observations(m.get("observations", {}), str(manifest))
        except ValueError as e:
            raise TaskError(str(e)) from None
        if mod.name == BRIDGE_MOD_NAME:
            raise TaskError(f"{mod}: a task's mod cannot be called {BRIDGE_MOD_NAME!r}, "
                            "the name of the bridge mod")
        return Task(
            id=m["id"], version=int(m.get("version", 0)), directory=directory, mod=mod,
            description=m.get("description", ""), kind=m.get("kind", ""),
            min_agents=int(agents.get("min", 1)), max_agents=int(agents.get("max", 8)),
            default_agents=int(agents.get("default", 2)),
            max_cycles=int(m.get("max_cycles", 1000)),
            obs_size=(int(size[0]), int(size[1])), actions=tuple(actions),
            state_shared=int(m.get("state", {}).get("shared", 0)),
            state_per_agent=int(m.get("state", {}).get("per_agent", 0)),
            server_settings={k: str(v) for k, v in m.get("server", {}).items()},
            client_settings={k: str(v) for k, v in m.get("client", {}).items()},
            options=dict(m.get("options", {})), world_template=world,
            options_without_default=tuple(m.get("options_without_default", ())),
            hud=hud, nametags=m.get("nametags", False), turn_degrees=float(turn),
            env_class=m.get("env_class"), infos=infos, teams=teams, observations=observations)
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as e:
        raise TaskError(f"{manifest}: malformed manifest ({e!r})") from None


def shipped_tasks() -> dict[str, Task]:
    """The tasks in mods/, by id."""
    tasks = {}
    for manifest in sorted(MODS.glob("*/task.toml")):
        task = load_task(manifest.parent)
        tasks[task.id] = task
    return tasks


def tasks() -> list[str]:
    """The ids of the shipped tasks."""
    return list(shipped_tasks())


def find_task(task: str) -> Task:
    found = shipped_tasks()
    if task not in found:
        raise TaskError(f"unknown task {task!r}; the tasks are: {', '.join(found) or 'none'} "
                        "(or pass task_dir= for a task folder of your own)")
    return found[task]


def options_from_json(text: str) -> dict:
    """A task's options as a command line gives them, a JSON object: '{"size": 5}'."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError:
        options = None
    if not isinstance(options, dict):
        raise TaskError(f"task options must be a JSON object such as '{{\"size\": 5}}', "
                        f"got {text!r}")
    return options
