"""Build hook: wheels carry the repository's engine/, mods/ and worlds/ as craftium_ma/_data/
(craftium_ma/resources.py finds them there). Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA_DIRS = ("engine", "mods", "worlds")


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout
            return
        target = Path(self.build_lib) / "craftium_ma" / "_data"
        shutil.rmtree(target, ignore_errors=True)  # no stale files from an earlier build
        for name in DATA_DIRS:
            shutil.copytree(ROOT / name, target / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))


setup(cmdclass={"build_py": BuildPyWithData})
