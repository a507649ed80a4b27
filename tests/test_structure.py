"""The package's structure: modules use only each other's public names, and every way
to build an env builds the class the task's manifest names (no engine is started)."""

import ast
import importlib
from pathlib import Path

import pytest

import craftium_ma
from craftium_ma.integrations import rllib, sb3
from craftium_ma.tasks import shipped_tasks
from craftium_ma.viewer import serve

ROOT = Path(__file__).resolve().parents[1]
# private-looking names that are the public API of the standard library or numpy
STANDARD = {"_asdict", "_replace", "_fields", "_value2member_map_", "_exit"}


def private_names_defined(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, attributes it assigns."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __slots__, getattr names
    # dunder names (__setstate__, __init__) are Python's protocols, not a module's own
    return {n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))}


def ours() -> set[str]:
    """Every private name a module of the package or the benchmarks defines."""
    return {name for folder in ("craftium_ma", "benchmarks")
            for path in (ROOT / folder).rglob("*.py")
            for name in private_names_defined(ast.parse(path.read_text()))}


def private_uses_of_others(path: Path, others: set[str]) -> list[str]:
    """Where the module at `path` imports a private name from one of our modules, or uses
    an attribute that is private to another of our modules (a base class's too)."""
    tree = ast.parse(path.read_text())
    foreign = others - private_names_defined(tree) - STANDARD
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            is_ours = node.level > 0 or (node.module or "").startswith("craftium_ma")
            found += [f"{path}:{node.lineno} imports {alias.name} from {node.module}"
                      for alias in node.names if is_ours and alias.name.startswith("_")
                      and not alias.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr in foreign:
            found.append(f"{path}:{node.lineno} uses .{node.attr}")
    return found


@pytest.mark.parametrize("folder", ["craftium_ma", "benchmarks"])
def test_no_module_uses_another_modules_private_names(folder):
    others = ours()
    found = [use for path in sorted((ROOT / folder).rglob("*.py"))
             for use in private_uses_of_others(path, others)]
    assert found == []


def test_the_private_name_check_finds_a_reach_into_another_module(tmp_path):
    reach = tmp_path / "reach.py"
    reach.write_text("from .env import _hidden\n\ndef f(env):\n    return env._session\n")
    assert len(private_uses_of_others(reach, ours())) == 2


def adapters(task: str):
    """(adapter, the env it builds) for every way the package builds an env of `task`."""
    spec = shipped_tasks()[task]
    module = importlib.import_module(f"craftium_ma.envs.{task}_v{spec.version}")
    pool = craftium_ma.vector_env(task, 1, cpu_affinity=False)
    venv = sb3.vec_env(task, 1, cpu_affinity=False)
    built = {
        "craftium_ma.env (AEC)": craftium_ma.env(task).unwrapped,
        f"craftium_ma.envs.{module.__name__.rsplit('.', 1)[1]}": module.parallel_env(),
        "vector_env": pool.envs[0],
        "integrations.sb3.vec_env": venv.pool.envs[0],
        "integrations.rllib.make_env": rllib.make_env(task, {}).par_env,
        "serve": serve.env_and_policy(task)[0],
    }
    pool.close()
    venv.close()
    return built


@pytest.mark.parametrize("task", sorted(shipped_tasks()))
def test_every_adapter_builds_the_class_the_manifest_names(task):
    expected = craftium_ma.env_class(task)
    assert type(craftium_ma.parallel_env(task)) is expected
    if shipped_tasks()[task].env_class:
        assert expected is not craftium_ma.CraftiumParallelEnv
    wrong = {name: type(env).__name__ for name, env in adapters(task).items()
             if type(env) is not expected}
    assert wrong == {}


def test_names_that_moved_keep_working_with_a_deprecation_warning():
    import craftium_ma.make
    env_module = importlib.import_module("craftium_ma.env")
    with pytest.warns(DeprecationWarning, match="moved to craftium_ma.make.parallel_env"):
        assert env_module.parallel_env is craftium_ma.make.parallel_env
    with pytest.warns(DeprecationWarning, match="moved to craftium_ma.render.mosaic_columns"):
        assert env_module.mosaic_columns(5) == 3
    with pytest.warns(DeprecationWarning, match="_episode_options is deprecated"):
        class Old(craftium_ma.CraftiumParallelEnv):
            def _episode_options(self, task_options, seed):
                return dict(task_options, drawn=seed)
    assert Old("small_room").episode_options({}, 7) == {"drawn": 7}
