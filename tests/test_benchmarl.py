"""BenchMARL's IPPO on craftium-ma tasks (craftium_ma.integrations.benchmarl), on real engines:
a task with teams and one without, a few tiny iterations each; and, without engines, the
adapter's seeds and errors."""

import csv
import importlib
import math
import sys

import pytest
import torch
from tensordict import TensorDict

from craftium_ma.tasks import find_task

FRAMES = 16  # per iteration; episodes of 8 steps end inside each
ITERATIONS = 2


def run_ippo(task_id: str, tmp_path):
    """A finished IPPO experiment of ITERATIONS iterations on task_id, 2 agents, 16x16."""
    from benchmarl.algorithms import IppoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models import CnnConfig

    from craftium_ma.integrations.benchmarl import CraftiumTask

    task = CraftiumTask[task_id.upper()].get_task({"num_agents": 2, "obs_size": 16,
                                                  "max_cycles": 8})
    config = ExperimentConfig.get_from_yaml()
    config.max_n_iters, config.max_n_frames = ITERATIONS, None
    config.on_policy_collected_frames_per_batch = FRAMES
    config.on_policy_n_envs_per_worker = 1
    config.on_policy_n_minibatch_iters = 1
    config.on_policy_minibatch_size = FRAMES
    config.evaluation_episodes, config.evaluation_interval = 1, FRAMES * ITERATIONS
    config.render, config.loggers, config.create_json = False, ["csv"], False
    config.save_folder = str(tmp_path)
    model = CnnConfig.get_from_yaml()
    model.cnn_num_cells, model.mlp_num_cells = [8], [16]
    experiment = Experiment(task, IppoConfig.get_from_yaml(), model, seed=0, config=config)
    experiment.run()
    return experiment


def logged(tmp_path, name: str) -> list[float]:
    """The values the CSV logger wrote for the scalar `name` (e.g. collection/reward/...)."""
    [path] = tmp_path.rglob(name.replace("/", "_") + ".csv")
    with open(path) as f:
        return [float(row[1]) for row in csv.reader(f)]


@pytest.mark.engine
@pytest.mark.parametrize("task, groups", [
    ("capture_the_flag", {"red": ["agent_0"], "blue": ["agent_1"]}),
    ("commons_harvest", {"agents": ["agent_0", "agent_1"]}),
])
def test_ippo_runs_its_iterations_with_a_group_per_team(task, groups, tmp_path):
    experiment = run_ippo(task, tmp_path)
    assert experiment.group_map == groups
    assert experiment.n_iters_performed == ITERATIONS
    assert experiment.total_frames == FRAMES * ITERATIONS
    # episodes end every 8 steps, so every iteration logs the returns of finished ones
    returns = logged(tmp_path, "collection/reward/episode_reward_mean")
    assert len(returns) == ITERATIONS
    assert all(math.isfinite(r) for r in returns)
    for group in groups:
        assert len(logged(tmp_path, f"collection/{group}/reward/episode_reward_mean")) \
            == ITERATIONS
    # the frames reach the learner as the env's uint8, the state as BenchMARL's global state
    for group, agents in groups.items():
        batch = experiment.replay_buffers[group].sample()
        assert batch[group, "observation"].shape[-4:] == (len(agents), 16, 16, 3)
        assert batch[group, "observation"].dtype == torch.uint8
    assert experiment.state_spec["state"].shape == (find_task(task).state_size(2),)
    # the evaluation env played its episode
    assert all(math.isfinite(r) for r in logged(tmp_path, "eval/reward/episode_reward_mean"))
    check_saved_policy(experiment, task, groups, tmp_path)


def check_saved_policy(experiment, task: str, groups: dict, tmp_path) -> None:
    """save_policy of each group: a checkpoint that loads with torch alone, gives the
    actor's logits, names its training env, and plays an episode through craftium_ma.evaluate."""
    from craftium_ma import evaluate
    from craftium_ma.integrations.benchmarl import save_policy
    from craftium_ma.models import ExportedModel, load_checkpoint, probe_input

    if len(groups) > 1:
        with pytest.raises(ValueError, match="give group= one of"):
            save_policy(experiment, tmp_path / "policy.pt")
    for group in groups:
        path = tmp_path / f"{group}.pt"
        save_policy(experiment, path, group=group, wall_time=1.5)
        model, checkpoint = load_checkpoint(path)
        assert isinstance(model, ExportedModel) and checkpoint["wall_time"] == 1.5
        assert checkpoint["args"] | {"task": task, "num_agents": 2, "obs_size": 16,
                                     "max_cycles": 8, "frameskip": 1, "algorithm": "ippo",
                                     "group": group} == checkpoint["args"]
        # the experiment's policy, each agent on frames of its own: an agent's logits are
        # those the exported model gives for its frames
        frames = {g: [probe_input(tuple(checkpoint["obs_shape"]), seed=i) for i in range(len(a))]
                  for g, a in groups.items()}
        td = experiment.policy(TensorDict({g: TensorDict(
            {"observation": torch.stack(f, 1)}, batch_size=[4, len(f)])
            for g, f in frames.items()}, batch_size=[4]))
        with torch.no_grad():
            for i, agent_frames in enumerate(frames[group]):
                torch.testing.assert_close(model.logits(agent_frames), td[group, "logits"][:, i])
            torch.testing.assert_close(model.logits(frames[group][0]),
                                       torch.tensor(checkpoint["probe_logits"]))
    [played] = evaluate(path, task=task, episodes=1, seed=5)
    assert played["episodes"] == 1 and math.isfinite(played["mean_return"])


@pytest.mark.engine
@pytest.mark.parametrize("done_on_any", [True, False])
def test_an_episode_ends_with_its_first_agent_unless_done_on_any_is_false(done_on_any):
    """spiders_attack's test layout: a spider bites idle agent_0 until it dies while
    agent_1 stands far away. By default the env is done at that step; with done_on_any
    False it goes on, agent_0's rows padded and masked out."""
    from craftium_ma.integrations.benchmarl import CraftiumTask

    task = CraftiumTask.SPIDERS_ATTACK.get_task({
        "num_agents": 2, "obs_size": 16, "frameskip": 4, "done_on_any": done_on_any,
        "task_options": {"layout": "test", "spider_damage": 5}})
    env = task.get_env_fun(1, False, 0, "cpu")()
    try:
        td = env.reset()
        idle = TensorDict({"agents": TensorDict({"action": torch.zeros(2, dtype=torch.long)},
                                                batch_size=[2])}, batch_size=[])
        for _ in range(60):
            td = env.step(idle)["next"]
            if td["agents", "done"][0]:
                break
        else:
            pytest.fail("agent_0 never died")
        assert not td["agents", "done"][1]
        assert bool(td["done"]) is done_on_any
        if not done_on_any:
            assert td["agents", "mask"].tolist() == [False, True]
            td = env.step(idle)["next"]  # agent_0's action is left out, agent_1 goes on
            assert td["agents", "mask"].tolist() == [False, True] and not td["done"]
            assert not td["agents", "observation"][0].any() and td["agents", "reward"][0] == 0
    finally:
        env.close()


def test_each_env_a_task_builds_gets_the_next_seed(monkeypatch):
    from craftium_ma.integrations.benchmarl import CraftiumTask

    task = CraftiumTask.SMALL_ROOM.get_task({})
    monkeypatch.setattr(task, "make_env", lambda seed, device: seed)
    make = task.get_env_fun(1, False, 7, "cpu")
    assert [make(), make(), task.get_env_fun(1, False, 7, "cpu")()] == [7, 8, 9]
    assert task.get_env_fun(1, False, None, "cpu")() is None


def test_a_continuous_action_space_is_refused_by_name():
    from craftium_ma.integrations.benchmarl import CraftiumTask

    with pytest.raises(ValueError, match="action_space='full'"):
        CraftiumTask.SMALL_ROOM.get_task({"action_space": "full"})


def test_without_benchmarl_the_import_names_the_extra(monkeypatch):
    for name in ("benchmarl", "benchmarl.environments"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "craftium_ma.integrations.benchmarl", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'craftium-ma\[benchmarl\]'"):
        importlib.import_module("craftium_ma.integrations.benchmarl")
