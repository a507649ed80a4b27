"""Humans in an env's world: their names, their logins, and the client they join with.

An env made with humans=... lets those players join its server with a normal
Luanti client (docs/humans.md). Each gets a generated password at every start
of the engine processes; env.human_login(name) says how to connect.
"""

from __future__ import annotations

import ipaddress
import numbers
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .build import cache_dir, find_engine
from .launcher import share_media_cache

# Luanti's rule for player names (PLAYERNAME_ALLOWED_CHARS, PLAYERNAME_SIZE)
NAME = re.compile(r"[A-Za-z0-9_-]{1,19}")
AGENT_NAME = re.compile(r"agent_\d+")


def human_names(humans) -> list[str]:
    """The player names that humans= asks for: a list of names, or a count N for
    human_0 .. human_{N-1}; None is no humans."""
    if humans is None:
        return []
    if isinstance(humans, bool) or not isinstance(humans, (numbers.Integral, list, tuple)):
        raise TypeError(f"humans must be a list of player names or a count, got "
                        f"{type(humans).__name__} {humans!r}")
    if isinstance(humans, numbers.Integral):
        if humans < 0:
            raise ValueError(f"humans={humans!r}: the count of humans cannot be negative")
        return [f"human_{i}" for i in range(humans)]
    names = list(humans)
    for name in names:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ValueError(f"humans: {name!r} is not a Luanti player name (1 to 19 of "
                             "the characters A-Z a-z 0-9 _ -)")
        if AGENT_NAME.fullmatch(name):
            raise ValueError(f"humans: {name!r} is an agent's name (agent_<k>); give the "
                             "human another")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"humans: {', '.join(map(repr, duplicates))} given more than once")
    return names


def login_address(bind_address: str) -> str:
    """Where clients reach a server listening on bind_address: that address, or
    this machine's host name when it listens on every address."""
    if ipaddress.ip_address(bind_address).is_unspecified:
        return socket.gethostname()
    return bind_address


@dataclass(frozen=True)
class HumanLogin:
    """How one human joins a running env: a Luanti client connects to address:port
    as name with password (also in password_file, which join_command passes)."""
    address: str
    port: int
    name: str
    password: str
    password_file: Path | None = None

    def join_command(self) -> list[str]:
        """The command that starts our engine as a windowed client logged in as this
        human (`python -m craftium_ma join ...`)."""
        if self.password_file is None:
            raise ValueError(f"the login of {self.name!r} has no password file; write "
                             "its password to one and pass --password-file")
        return [sys.executable, "-m", "craftium_ma", "join", "--address", self.address,
                "--port", str(self.port), "--name", self.name,
                "--password-file", str(self.password_file)]


def client_user_dir() -> Path:
    """The user data folder of clients started by `join` ($MINETEST_USER_PATH wins):
    their settings, and the media cache that the env's own clients share."""
    if os.environ.get("MINETEST_USER_PATH"):
        return Path(os.environ["MINETEST_USER_PATH"])
    return cache_dir() / "human-client"


def join(address: str, port: int, name: str, password_file: Path,
         engine_args: list[str] = ()) -> int:
    """Run our engine as an ordinary client of a server until it exits; its exit code.
    engine_args go to the engine as they are (e.g. --config FILE, --random-input)."""
    if not Path(password_file).is_file():
        raise FileNotFoundError(f"password file {password_file} does not exist")
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and os.environ.get("SDL_VIDEODRIVER") != "offscreen":
        raise RuntimeError("join opens a game window and needs a display (DISPLAY or "
                           "WAYLAND_DISPLAY is unset); on a headless server, watch and chat "
                           "with the agents in the web viewer instead: craftium-ma serve "
                           "TASK (docs/humans.md)")
    build = find_engine()
    user = client_user_dir()
    share_media_cache(user)
    env = dict(os.environ, MINETEST_USER_PATH=str(user), MINETEST_GAME_PATH=str(build.games))
    argv = [str(build.binary), "--go", "--address", address, "--port", str(port),
            "--name", name, "--password-file", str(password_file), *engine_args]
    return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL).returncode
