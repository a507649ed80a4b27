"""engine/build.sh: idempotent, and a wrong tarball is refused with a clear message."""

import os
import subprocess
import time
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parent.parent / "engine" / "build.sh"


def run_build(**env):
    return subprocess.run(["bash", str(BUILD)], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=3600)


@pytest.mark.engine
def test_second_run_reuses_the_cached_build():
    first = run_build()
    assert first.returncode == 0, first.stderr
    start = time.monotonic()
    second = run_build()
    assert second.returncode == 0, second.stderr
    assert "engine: cached build" in second.stdout
    assert time.monotonic() - start < 30
    directory = second.stdout.split("cached build ")[1].strip()
    assert (Path(directory) / "bin" / "luanti").is_file()
    printed = subprocess.run(["bash", str(BUILD), "--print-dir"], capture_output=True, text=True)
    assert printed.stdout.strip() == directory


def test_a_tarball_with_the_wrong_hash_is_refused(tmp_path):
    fake = tmp_path / "luanti_5.10.0+dfsg.orig.tar.xz"
    fake.write_bytes(b"not the luanti source")
    result = run_build(CRAFTIUM_MA_LUANTI_TARBALL=str(fake))
    assert result.returncode != 0
    assert "sha256" in result.stderr and "expected 76f3d212" in result.stderr


def test_a_missing_local_tarball_is_named(tmp_path):
    result = run_build(CRAFTIUM_MA_LUANTI_TARBALL=str(tmp_path / "nope.tar.xz"))
    assert result.returncode != 0 and "does not exist" in result.stderr
