"""`craftium-ma doctor`: what is installed and what is missing, each gap with its fix command."""

from __future__ import annotations

import ctypes.util
import glob
import os
import re
import signal
import subprocess
import tempfile
import time
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from .build import EngineBuild, EngineNotBuiltError, cache_dir, find_engine
from .resources import BRIDGE_MOD, BUILD_SCRIPT, DATA, PACKAGE
from .tasks import TaskError, shipped_tasks

DISTRIBUTION = "craftium-ma"
PROBE_TIMEOUT_S = 30.0
BUILD_FIX = "craftium-ma engine build"
# Engine patch 0014 asks for 8 MiB of UDP receive buffer; the kernel gives at most
# rmem_max. Below 4 MiB a reset's burst of map blocks at 8 agents can lose packets.
RECEIVE_BUFFER_WANTED = 4 << 20
RMEM_MAX = Path("/proc/sys/net/core/rmem_max")


def recipe_build() -> Path | None:
    """The cached build of this package's engine recipe (build.sh and patches), if made."""
    printed = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-dir"],
                             capture_output=True, text=True, timeout=60)
    return Path(printed.stdout.strip()) if printed.returncode == 0 else None


def gl_renderer(build: EngineBuild, timeout: float = PROBE_TIMEOUT_S) -> str:
    """The OpenGL renderer a client reports: starts one client (main menu, offscreen
    like the agents' clients) until its log names the renderer, then stops it."""
    with tempfile.TemporaryDirectory(prefix="craftium-ma-doctor-") as tmp:
        conf, log = Path(tmp, "client.conf"), Path(tmp, "debug.txt")
        conf.write_text("debug_log_level = info\nenable_sound = false\nmenu_clouds = false\n"
                        "screen_w = 64\nscreen_h = 64\n")
        env = dict(os.environ, SDL_VIDEODRIVER="offscreen", MINETEST_USER_PATH=tmp,
                   MINETEST_GAME_PATH=str(build.games))
        client = subprocess.Popen([str(build.binary), "--config", str(conf), "--logfile", str(log)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.STDOUT, env=env, cwd=tmp,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                found = _renderer_in(log)
                if found:
                    return found
                if client.poll() is not None:
                    raise RuntimeError(f"the client exited with code {client.returncode} before "
                                       f"naming its renderer: {_tail(log)}")
                time.sleep(0.1)
            raise TimeoutError(f"the client named no renderer within {timeout:.0f} s: {_tail(log)}")
        finally:
            if client.poll() is None:
                os.killpg(client.pid, signal.SIGKILL)
            client.wait(timeout=10)


def _renderer_in(log: Path) -> str | None:
    """Irrlicht logs "Using renderer: OpenGL 4.5", then "<GL_RENDERER>: <GL_VENDOR>"."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    found = re.search(r"Irrlicht: Using renderer: (.+)\n.*Irrlicht: (.+)\n", text)
    return f"{found.group(2)} ({found.group(1)})" if found else None


def _tail(log: Path) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    return " | ".join(lines[-3:]) or "no log"


def gpus() -> list[str]:
    """GPUs the machine exposes: DRM render nodes and NVIDIA devices."""
    return sorted(glob.glob("/dev/dri/renderD*") + glob.glob("/dev/nvidia[0-9]*"))


def missing_extras() -> dict[str, list[str]]:
    """Per optional extra of craftium-ma: its requirements not installed (at the pinned version)."""
    requirements = [Requirement(r) for r in metadata.requires(DISTRIBUTION) or []]
    extras = metadata.metadata(DISTRIBUTION).get_all("Provides-Extra") or []

    def needs(extra: str) -> list[Requirement]:
        found = []
        for r in requirements:
            if not (r.marker and r.marker.evaluate({"extra": extra})):
                continue
            if r.name == DISTRIBUTION:  # test = ["craftium-ma[sb3,...]"]: those extras' needs
                found += [n for e in sorted(r.extras) for n in needs(e)]
            else:
                found.append(r)
        return found

    def installed(r: Requirement) -> bool:
        try:
            return r.specifier.contains(metadata.version(r.name), prereleases=True)
        except metadata.PackageNotFoundError:
            return False

    def named(r: Requirement) -> str:  # without its marker
        return r.name + (f"[{','.join(sorted(r.extras))}]" if r.extras else "") + str(r.specifier)

    # each package once, though several extras of an extra may need it (torch)
    return {extra: list(dict.fromkeys(named(r) for r in needs(extra) if not installed(r)))
            for extra in extras}


def install_command(extra: str) -> str:
    if DATA == PACKAGE.parent:  # a checkout
        return f'pip install -e "{DATA}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def main() -> int:
    """Print the report; exit code 1 when something the environments need is missing."""
    problems = 0

    def report(status: str, what: str, detail: str, fix: str = ""):
        nonlocal problems
        problems += status == "missing"
        print(f"{status:8} {what}: {detail}" + (f"\n{'':8}   add it with: {fix}" if fix else ""))

    try:
        version = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = "not installed"
    where = "checkout" if DATA == PACKAGE.parent else "installed package"
    print(f"craftium-ma {version} at {PACKAGE} ({where})")

    try:
        tasks = shipped_tasks()
        ok = BRIDGE_MOD.joinpath("init.lua").is_file() and bool(tasks)
        report("ok" if ok else "missing", "tasks",
               f"bridge mod and {len(tasks)} tasks in {DATA / 'mods'}", "" if ok else
               f"pip install --force-reinstall {DISTRIBUTION}")
    except TaskError as e:
        report("missing", "tasks", str(e))

    recipe = recipe_build()
    if recipe:
        report("ok", "engine build", f"key {recipe.name} at {recipe}")
    else:
        report("missing", "engine build",
               f"none for this package's patches under {cache_dir() / 'engine'}", BUILD_FIX)
    try:
        engine = find_engine()
    except EngineNotBuiltError as e:
        engine = None
        if recipe:
            report("missing", "engine used", str(e), BUILD_FIX)
    if engine and (recipe is None or engine.root.resolve() != recipe.resolve()):
        if os.environ.get("CRAFTIUM_MA_ENGINE"):
            source, fix = "$CRAFTIUM_MA_ENGINE", "unset CRAFTIUM_MA_ENGINE"
        else:
            source, fix = "engine/current", BUILD_FIX + " (it points engine/current at its build)"
        report("warning", "engine used",
               f"{engine.root} (from {source}), not this package's build", fix)

    games = cache_dir() / "games" / "minetest_game"
    report("ok" if (games / "game.conf").is_file() else "missing", "game data",
           f"minetest_game in {games.parent}", "" if (games / "game.conf").is_file() else BUILD_FIX)

    egl = ctypes.util.find_library("EGL")
    report("ok" if egl else "missing", "EGL",
           egl or "no libEGL (the clients render offscreen through it)",
           "" if egl else "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri")
    found = gpus()
    report("ok" if found else "info", "GPU", ", ".join(found) if found else
           "none found; clients render on the CPU (Mesa llvmpipe)")
    if engine:
        try:
            report("ok", "GL renderer", gl_renderer(engine))
        except (RuntimeError, TimeoutError, OSError) as e:
            report("missing", "GL renderer", str(e), "apt-get install libgl1-mesa-dri libegl-mesa0")
    else:
        report("missing", "GL renderer", "not checked: it takes a client of the engine build",
               BUILD_FIX)

    if RMEM_MAX.is_file():
        rmem_max = int(RMEM_MAX.read_text())
        enough = rmem_max >= RECEIVE_BUFFER_WANTED
        report("ok" if enough else "warning", "UDP receive buffer",
               f"net.core.rmem_max = {rmem_max} bytes" + ("" if enough else
               ": a reset with many agents can lose map block packets and stall 0.1 s"),
               "" if enough else "sysctl -w net.core.rmem_max=8388608")

    try:
        extras = missing_extras()
    except metadata.PackageNotFoundError:
        report("missing", "Python extras",
               f"{DISTRIBUTION} is not installed (imported from {PACKAGE})",
               f'pip install -e "{PACKAGE.parent}"')
        extras = {}
    for extra, missing in extras.items():
        report("optional" if missing else "ok", f"extra {extra}",
               "missing " + ", ".join(missing) if missing else "installed",
               install_command(extra) if missing else "")
    return 1 if problems else 0
