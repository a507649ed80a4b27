"""The package as a user installs it: sdist -> wheel -> a fresh virtualenv in a temporary
directory, used from outside the checkout (the craftium-ma command, and 10 steps of two
tasks on the cached engine). The build gives no setuptools warning.

The virtualenv gets the wheel alone (pip --no-deps); its dependencies (numpy, pyzmq,
PettingZoo, ...) come from this interpreter's site-packages through a .pth file written
after the install, so the test needs no index, and the copy of craftium_ma it imports is
the installed one (its own site-packages comes first on sys.path).
"""

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ["craftium_ma/_data/mods/craftium_ma/init.lua",
           "craftium_ma/_data/mods/small_room/task.toml",
           "craftium_ma/_data/worlds/open_world/map_meta.txt",
           "craftium_ma/_data/engine/build.sh", "craftium_ma/templates/task/task.toml.in"]


# builds with setuptools' build backend (sys.argv: the hook, the output directory); its
# warnings are errors, as each of its deprecations becomes on a due date
BUILD = ("import sys, warnings, setuptools.warnings as w; "
         "warnings.simplefilter('error', w.SetuptoolsWarning); "
         "import setuptools.build_meta as b; print(getattr(b, sys.argv[1])(sys.argv[2]))")


def run(*argv, **kwargs):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                          **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, a working directory outside the checkout, the wheel)"""
    tmp = tmp_path_factory.mktemp("package")
    sdist = run(sys.executable, "-c", BUILD, "build_sdist", tmp, cwd=ROOT)
    assert sdist.returncode == 0, sdist.stderr
    sdist = tmp / sdist.stdout.split()[-1]
    source = tmp / sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        # the safe extraction where Python has it (3.11.4 on: Debian 12's 3.11.2 has not)
        archive.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    patches = sorted(p.name for p in (ROOT / "engine" / "patches").glob("*.patch"))
    assert {f"{source.name}/{p}" for p in ["engine/build.sh", "mods/craftium_ma/init.lua",
                                           "setup.py", "MANIFEST.in"]} <= set(names)
    built = run(sys.executable, "-c", BUILD, "build_wheel", tmp, cwd=source)  # as pip wheel does
    assert built.returncode == 0, built.stderr
    wheel = tmp / built.stdout.split()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert set(SHIPPED) <= names
    assert {f"craftium_ma/_data/engine/patches/{p}" for p in patches} <= names

    venv = tmp / "venv"
    assert run(sys.executable, "-m", "venv", "--without-pip", venv).returncode == 0
    python = venv / "bin" / "python"
    pip = run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
              "--no-index", wheel)
    assert pip.returncode == 0, pip.stderr
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    deps = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    Path(site.stdout.strip(), "_craftium_ma_test_deps.pth").write_text(
        "\n".join(sorted(deps)) + "\n")
    outside = tmp / "elsewhere"
    outside.mkdir()
    return venv, outside, wheel


def test_the_wheel_carries_its_data_and_is_imported_from_the_venv(installed):
    venv, outside, _ = installed
    where = run(venv / "bin" / "python", "-c", "import craftium_ma, craftium_ma.resources as r; "
                "print(craftium_ma.__file__); print(r.MODS); print(len(craftium_ma.tasks()))",
                cwd=outside)
    assert where.returncode == 0, where.stderr
    module, mods, count = where.stdout.split()
    assert Path(module).is_relative_to(venv) and Path(mods).is_relative_to(venv)
    assert int(count) == len(list((ROOT / "mods").glob("*/task.toml")))


def test_list_from_outside_the_checkout(installed):
    venv, outside, _ = installed
    listed = run(venv / "bin" / "craftium-ma", "list", cwd=outside)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert set(rows) == {p.parent.name for p in (ROOT / "mods").glob("*/task.toml")}
    assert "2-8" in rows["capture_the_flag"] and "team vs team" in rows["capture_the_flag"]


@pytest.mark.engine
def test_doctor_and_engine_path_share_the_checkouts_build(installed):
    """The installed recipe hashes to the same cache key as the checkout's engine/build.sh."""
    venv, outside, _ = installed
    checkout = run("bash", ROOT / "engine" / "build.sh", "--print-dir")
    assert checkout.returncode == 0, "the engine is not built: bash engine/build.sh"
    path = run(venv / "bin" / "craftium-ma", "engine", "path", cwd=outside)
    assert path.returncode == 0 and path.stdout == checkout.stdout
    doctor = run(venv / "bin" / "craftium-ma", "doctor", cwd=outside)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    report = doctor.stdout
    assert "(installed package)" in report and str(venv) in report
    assert f"engine build: key {Path(checkout.stdout.strip()).name}" in report
    assert re.search(r"^ok +GL renderer: \S", report, re.M), report
    assert "ok       extra torchrl: installed" in report


MISSING_TORCHRL = textwrap.dedent("""
    import json
    from importlib import metadata
    import craftium_ma.doctor as doctor
    installed = metadata.version
    def version(name):
        if name == "torchrl":
            raise metadata.PackageNotFoundError(name)
        return installed(name)
    metadata.version = version
    print(json.dumps([doctor.missing_extras(), doctor.install_command("torchrl")]))
""")


def test_doctor_names_a_missing_extra_and_its_install_command(installed):
    venv, outside, _ = installed
    out = run(venv / "bin" / "python", "-c", MISSING_TORCHRL, cwd=outside)
    assert out.returncode == 0, out.stderr
    missing, command = json.loads(out.stdout)
    assert missing["torchrl"] == ["torchrl==0.11.1"] and missing["test"] == ["torchrl==0.11.1"]
    assert missing["sb3"] == [] and missing["rllib"] == []
    assert command == 'pip install "craftium-ma[torchrl]"'


def test_the_installed_engine_recipe_runs_from_site_packages(installed, tmp_path):
    """engine build runs the wheel's build.sh (here stopped at its tarball check, no build)."""
    venv, outside, _ = installed
    fake = tmp_path / "luanti.tar.xz"
    fake.write_bytes(b"not luanti")
    env = dict(os.environ, CRAFTIUM_MA_CACHE=str(tmp_path / "cache"),
               CRAFTIUM_MA_LUANTI_TARBALL=str(fake))
    build = run(venv / "bin" / "craftium-ma", "engine", "build", cwd=outside, env=env)
    assert build.returncode != 0 and "expected 76f3d212" in build.stderr


PLAY = textwrap.dedent("""
    import json, sys
    import numpy as np
    import craftium_ma
    assert craftium_ma.__file__.startswith(sys.prefix), craftium_ma.__file__
    played = {}
    for task in sys.argv[1:]:
        env = craftium_ma.parallel_env(task, num_agents=2)
        try:
            obs, _ = env.reset(seed=3)
            steps, seen = 0, set()
            rng = np.random.default_rng(3)
            while env.agents and steps < 10:
                actions = {a: int(rng.integers(env.action_space(a).n)) for a in env.agents}
                obs, rewards, terms, truncs, _ = env.step(actions)
                assert all(o.shape == env.observation_space(a).shape for a, o in obs.items())
                seen.update(rewards.values())
                steps += 1
            played[task] = {"steps": steps, "rewards": sorted(seen)}
        finally:
            env.close()
    print(json.dumps(played))
""")


@pytest.mark.engine
def test_two_tasks_play_ten_steps_from_the_installed_package(installed):
    venv, outside, _ = installed
    played = run(venv / "bin" / "python", "-c", PLAY, "small_room", "duel", cwd=outside)
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert result["small_room"]["steps"] == result["duel"]["steps"] == 10
    # -1 a step to each agent until it touches the block; duel: +-1 a hit, 0 otherwise
    assert (-1.0 in result["small_room"]["rewards"]
            and set(result["small_room"]["rewards"]) <= {-1.0, 0.0})
    assert set(result["duel"]["rewards"]) <= {-1.0, 0.0, 1.0}
