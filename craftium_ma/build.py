"""Where the patched engine build and the game data live (made by engine/build.sh)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class EngineNotBuiltError(FileNotFoundError):
    """The patched Luanti build is missing; the message says how to build it."""


def cache_dir() -> Path:
    if os.environ.get("CRAFTIUM_MA_CACHE"):
        return Path(os.environ["CRAFTIUM_MA_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "craftium-ma"


@dataclass(frozen=True)
class EngineBuild:
    root: Path  # RUN_IN_PLACE tree: bin/luanti, builtin/, textures/, ...
    games: Path  # folder holding minetest_game

    @property
    def binary(self) -> Path:
        return self.root / "bin" / "luanti"


def find_engine() -> EngineBuild:
    """The build named by $CRAFTIUM_MA_ENGINE, else the newest build.sh result."""
    cache = cache_dir()
    root = os.environ.get("CRAFTIUM_MA_ENGINE")
    if not root and (cache / "engine" / "current").is_file():
        root = (cache / "engine" / "current").read_text().strip()
    build = EngineBuild(Path(root) if root else cache / "engine" / "missing", cache / "games")
    if not build.binary.is_file():
        raise EngineNotBuiltError(
            f"no craftium-ma engine build found (looked for {build.binary}). "
            "Build it with `craftium-ma engine build` (in a checkout: `bash engine/build.sh`).")
    if not (build.games / "minetest_game" / "game.conf").is_file():
        raise EngineNotBuiltError(
            f"minetest_game is missing from {build.games}; run `craftium-ma engine build`.")
    return build
