"""Start and stop one environment's Luanti processes: a server and its agent clients.

Everything lives in a private temporary directory (world copy, configs, logs,
ipc sockets). A small reaper process watches the Python parent through a pipe:
if the parent dies, even by SIGKILL, the reaper kills the engine processes and
removes the directory. Engine processes started from the main thread also get
PR_SET_PDEATHSIG (it fires when the starting *thread* exits, so processes started
from another thread, e.g. a worker's, rely on the reaper alone).
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from .build import EngineBuild, cache_dir
from .cpus import share_out
from .errors import LuaErrorText
from .protocol import DEFAULT_TURN_DEGREES, EngineError
from .resources import BRIDGE_MOD

MEDIA_CACHE = cache_dir() / "media"
LOG_TAIL_BYTES = 4000


@dataclass
class LaunchConfig:
    """What the processes of one environment are started with."""
    agents: list[str]
    obs_size: tuple[int, int]  # (height, width)
    mods: list[Path]  # task mod folders, copied into the world beside the bridge mod
    frame_dtime: float = 0.05
    turn_degrees: float = DEFAULT_TURN_DEGREES
    timeout: float = 60.0
    server_settings: dict[str, str] = field(default_factory=dict)
    client_settings: dict[str, str] = field(default_factory=dict)
    # agents whose clients never draw nor mesh (bots that need no pixels; patch 0024)
    frameless_agents: tuple[str, ...] = ()
    world_template: Path | None = None
    gameid: str = "minetest"
    humans: list[str] = field(default_factory=list)  # players who may join with a password
    bind_address: str = "127.0.0.1"  # where the server listens (humans connect there)
    cpus: tuple[int, ...] = ()  # CPUs the processes are pinned to (cpus_of); () for no pinning

    def cpus_of(self, name: str) -> tuple[int, ...]:
        """The CPUs process `name` ("server" or an agent) runs on: `cpus` shared out
        (craftium_ma.cpus.share_out) among the agents in order, then the server.
        () where not pinned."""
        processes = [*self.agents, "server"]
        return share_out(self.cpus, len(processes))[processes.index(name)]


# Settings every server and client gets; a task's own settings override them.
SERVER_DEFAULTS = {
    "server_announce": "false",
    "secure.enable_security": "true",
    "disable_anticheat": "true",
    "time_speed": "0",
    "enable_damage": "true",
    "creative_mode": "false",
    "default_privs": "interact, shout",
    "give_initial_stuff": "false",
    "enable_rollback_recording": "false",
    "ask_reconnect_on_crash": "false",
    "active_block_range": "2",
    "max_block_send_distance": "3",
    "max_simultaneous_block_sends_per_client": "128",
    # occlusion culling guesses from 9 rays per map block whether it is hidden: a
    # block seen through a small opening is wrongly culled, and a guess the server
    # made before a reset moved the agent can keep a visible block unsent for 2 s
    # of game time (a reset frame that lacks it, now and then)
    "server_side_occlusion_culling": "false",
    "mg_name": "singlenode",
    "fixed_map_seed": "1",
    # the world is a throw-away copy: never spend a tick writing it to disk
    "server_map_save_interval": "1e9",
    "sqlite_synchronous": "0",
    "server_unload_unused_data_timeout": "1e9",
}
CLIENT_DEFAULTS = {
    "enable_sound": "false",
    "pause_on_lost_focus": "false",
    "enable_register_confirmation": "false",
    "show_debug": "false",
    "menu_clouds": "false",
    "enable_minimap": "false",
    "camera_smoothing": "0",
    "cinematic": "false",
    "fullscreen": "false",
    "enable_clouds": "false",
    "enable_particles": "false",
    # with no bloom, exposure or tone mapping, post-processing only dithers
    # (debanding, +-2 levels) at the cost of a second pass over the frame
    "enable_post_processing": "false",
    "smooth_lighting": "true",
    # the client's own ray guess, see server_side_occlusion_culling
    "enable_raytraced_culling": "false",
    "viewing_range": "60",
    "mesh_generation_threads": "1",
    "texture_path": "",
    # the pointed node's black outline is no part of the world: off in agents' frames
    # (a task's manifest turns it on with [client] node_highlighting = "box")
    "node_highlighting": "none",
}


def _conf(settings: dict[str, str]) -> str:
    return "".join(f"{k} = {v}\n" for k, v in settings.items())


def share_media_cache(user: Path):
    """Gives the client user data folder `user` the media cache every client shares."""
    media = user / "cache" / "media"
    if not media.exists():
        MEDIA_CACHE.mkdir(parents=True, exist_ok=True)
        media.parent.mkdir(parents=True, exist_ok=True)
        media.symlink_to(MEDIA_CACHE)


def process_title(name: str) -> str:
    """How messages name an engine process: "server", or "client of agent_1"."""
    return "server" if name == "server" else f"client of {name}"


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """preexec_fn: the engine process gets SIGKILL when the thread that started it
    exits; use it from the main thread only, where that means Python went away."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill_and_remove(processes: list[subprocess.Popen], directory: str, reaper):
    for p in processes:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for p in processes:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    shutil.rmtree(directory, ignore_errors=True)
    if reaper is not None and reaper.poll() is None:
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
        reaper.wait(timeout=5)


class EngineProcesses:
    """The running server and agent clients of one environment instance."""

    def __init__(self, config: LaunchConfig, build: EngineBuild):
        self.config = config
        self.dir = Path(tempfile.mkdtemp(prefix="craftium-ma-"))
        self._processes: list[subprocess.Popen] = []
        self._names: list[str] = []
        self._reaper = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_reaper.py")), str(self.dir)],
            stdin=subprocess.PIPE, start_new_session=True)
        self._finalizer = weakref.finalize(
            self, _kill_and_remove, self._processes, str(self.dir), self._reaper)
        self.control_endpoint = f"ipc://{self.dir}/control.sock"
        self.agent_endpoints = {a: f"ipc://{self.dir}/{a}.sock" for a in config.agents}
        self._build = build
        self._lua_errors = LuaErrorText(self.dir / "world", [BRIDGE_MOD, *config.mods])
        self._port = _free_udp_port()
        self._passwords = {a: secrets.token_hex(12) for a in [*config.agents, *config.humans]}
        self._env = dict(os.environ, MINETEST_GAME_PATH=str(build.games),
                         SDL_VIDEODRIVER="offscreen")
        # llvmpipe rasterizes in the client's own thread: at agent frame sizes its
        # worker threads cost more in hand-offs than they save (docs/benchmarks.md)
        self._env.setdefault("LP_NUM_THREADS", "0")

    def start_server(self, lockstep: bool = True):
        """Start the server; it answers on control_endpoint once it listens.

        lockstep=False starts a normal, free-running server with no control
        socket (the benchmarks' engine ceiling)."""
        cfg = self.config
        world = self.dir / "world"
        if cfg.world_template:
            shutil.copytree(cfg.world_template, world)
        else:
            world.mkdir()
        if not (world / "world.mt").exists():
            (world / "world.mt").write_text(
                f"gameid = {cfg.gameid}\nbackend = sqlite3\nplayer_backend = sqlite3\n"
                "auth_backend = sqlite3\nmod_storage_backend = sqlite3\n")
        for mod in [BRIDGE_MOD, *cfg.mods]:
            shutil.copytree(mod, world / "worldmods" / Path(mod).name)

        passwords = self._passwords
        server_conf = self.dir / "server.conf"
        settings = {
            **SERVER_DEFAULTS, **cfg.server_settings,
            "craftium_ma_agents": ",".join(f"{a}:{passwords[a]}" for a in cfg.agents),
            "craftium_ma_humans": ",".join(f"{h}:{passwords[h]}" for h in cfg.humans),
            # not a task's to choose: who can reach the server can try the logins
            "bind_address": cfg.bind_address,
            # every agent and human gets in (Luanti's default is 15 players)
            "max_users": str(len(cfg.agents) + len(cfg.humans)),
            "craftium_ma_timeout_ms": str(int(cfg.timeout * 1000)),
        }
        if lockstep:
            settings["craftium_ma_control_endpoint"] = self.control_endpoint
        server_conf.write_text(_conf(settings))
        for human in cfg.humans:
            self.password_file(human).write_text(passwords[human])
        self._spawn("server", [
            "--server", "--world", world, "--gameid", cfg.gameid,
            "--config", server_conf, "--port", str(self._port)])

    def start_clients(self, random_input: bool = False):
        """Start the agent clients; call once the server listens (a client that
        starts first can lose its connection handshake).

        random_input=True starts them free-running on the engine's own random
        input instead of agent mode (the benchmarks' engine ceiling)."""
        cfg = self.config
        height, width = cfg.obs_size
        for agent in cfg.agents:
            settings = {
                **CLIENT_DEFAULTS, **cfg.client_settings,
                "screen_w": str(width), "screen_h": str(height),
                # the HUD is sized in pixels; scale it to the small frame (patch 0012
                # lets it go below Luanti's 0.5)
                "hud_scaling": f"{min(width, height) / 600:.3f}",
            }
            if not random_input:
                settings.update({
                    "craftium_ma_agent_endpoint": self.agent_endpoints[agent],
                    "craftium_ma_frame_dtime": str(cfg.frame_dtime),
                    "craftium_ma_turn_degrees": str(cfg.turn_degrees),
                    "craftium_ma_timeout_ms": str(int(cfg.timeout * 1000)),
                    "craftium_ma_frameless": str(agent in cfg.frameless_agents).lower(),
                })
            conf = self.dir / f"{agent}.conf"
            conf.write_text(_conf(settings))
            password_file = self.password_file(agent)
            password_file.write_text(self._passwords[agent])
            self._spawn(agent, [
                "--go", "--address", self.local_address, "--port", str(self._port),
                "--name", agent, "--password-file", password_file, "--config", conf,
                *(["--random-input"] if random_input else [])])

    @property
    def port(self) -> int:
        """The server's UDP port."""
        return self._port

    @property
    def local_address(self) -> str:
        """Where a client on this machine reaches the server."""
        wildcard = ipaddress.ip_address(self.config.bind_address).is_unspecified
        return "127.0.0.1" if wildcard else self.config.bind_address

    def password(self, player: str) -> str:
        return self._passwords[player]

    def password_file(self, player: str) -> Path:
        """The file holding the player's password (for --password-file)."""
        return self.dir / f"{player}.password"

    def _spawn(self, name: str, args: list):
        log = self.dir / f"{name}.log"
        # SCHED_BATCH: a thread woken by a packet does not preempt the one running,
        # so the many small hand-offs of a step cost fewer context switches
        argv = ["chrt", "--batch", "0", self._build.binary, *args, "--logfile", f"{log}.debug"]
        cpus = self.config.cpus_of(name)
        if cpus:  # pinned from the start: every thread it starts inherits the CPU
            argv = ["taskset", "--cpu-list", ",".join(map(str, cpus)), *argv]
        # own user data (mod storage) per process, see patch 0004; the media cache
        # (files named by their sha1) is shared, so clients skip the download
        user = self.dir / f"{name}-user"
        share_media_cache(user)
        env = dict(self._env, MINETEST_USER_PATH=str(user))
        main_thread = threading.current_thread() is threading.main_thread()
        death_signal = _die_with_parent if main_thread else None
        with open(log, "wb") as out:
            p = subprocess.Popen([str(a) for a in argv],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 env=env, cwd=str(self.dir), preexec_fn=death_signal,
                                 start_new_session=True)
        self._processes.append(p)
        self._names.append(name)
        self._reaper.stdin.write(f"{p.pid}\n".encode())
        self._reaper.stdin.flush()

    def log_tail(self, name: str) -> str:
        """The end of a process's debug log, then the lines of its output (stdout and
        stderr: a crash's last words) that the debug log does not hold already."""
        def tail(path: Path) -> str:
            try:
                return path.read_bytes()[-LOG_TAIL_BYTES:].decode("utf-8", "replace")
            except OSError:
                return ""
        debug, output = tail(self.dir / f"{name}.log.debug"), tail(self.dir / f"{name}.log")
        logged = set(debug.splitlines())
        extra = [line for line in output.splitlines() if line.strip() and line not in logged]
        text = f"--- {name}.log.debug ---\n{debug}" if debug else ""
        if extra:
            text += f"--- {name}.log (output not in the debug log) ---\n" + "\n".join(extra) + "\n"
        return text

    def server_error(self, message: str) -> str:
        """An error the server replied with, for Python: a Lua error with the task's
        paths and its traceback; anything else with the server's log tail."""
        if self._lua_errors.is_runtime_error(message):
            return self._lua_errors.runtime_error(message)
        return f"{message}\n{self.log_tail('server')}"

    @property
    def pids(self) -> dict[str, int]:
        """Process ids by name: "server" and each agent."""
        return {name: p.pid for name, p in zip(self._names, self._processes)}

    def check_alive(self):
        """Raise EngineError naming a process that exited, with its log tail (a
        server that stopped on a Lua error: that error)."""
        for name, p in zip(self._names, self._processes):
            code = p.poll()
            if code is not None and name == "server":
                try:
                    lua_error = self._lua_errors.stop_error((self.dir / "server.log").read_text(
                        "utf-8", "replace"))
                except OSError:
                    lua_error = None
                if lua_error:
                    raise EngineError(f"{lua_error}\n(the Luanti server stopped on this Lua "
                                      "error)")
            if code is not None:
                raise EngineError(f"the Luanti {process_title(name)} exited with code {code}:\n"
                                  f"{self.log_tail(name)}")

    def close(self):
        self._finalizer()
