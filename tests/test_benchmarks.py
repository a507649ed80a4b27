"""The benchmark harness runs end to end on real engine processes and reports figures.

Speed targets are not asserted here (they belong to benchmarks/, reported as figures);
this checks that every measurement ran and produced sane, complete results."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from craftium_ma.build import find_engine

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.engine
def test_quick_benchmark_writes_complete_results(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick",
                    "--agents", "1", "2", "--frameskips", "1", "--pipelined-frameskips", "4",
                    "--resets", "3",
                    "--vector-envs", "2", "--observation-agents", "1", "--out", str(tmp_path)],
                   check=True, timeout=600,
                   stdout=subprocess.DEVNULL)
    r = json.loads((tmp_path / "results.json").read_text())
    assert r["machine"]["cores"] >= 1 and r["machine"]["renderer"] not in ("", "unknown")
    assert [row["agents"] for row in r["throughput"]] == [1, 2]
    for row in r["throughput"]:
        assert row["ceiling_frames_per_s"] > 0
        for k in ("fs1", "pipelined_fs4"):
            steps, eff = row[f"{k}_agent_steps_per_s"], row[f"{k}_efficiency"]
            assert steps > 0 and math.isclose(eff, steps / row["ceiling_frames_per_s"])
        assert len(row["ceiling_rss_mb"]["clients"]) == row["agents"]
    for row in r["lifecycle"]:
        assert 0 < row["reset_median_ms"] <= row["reset_p95_ms"]
        assert row["cold_start_s"] > 0 and row["close_s"] > 0
    samples = r["memory"]["samples"]
    assert len(samples) >= 3 and all(s["server_mb"] > 0 and len(s["clients_mb"]) == 2
                                     for s in samples)
    assert r["supersuit"]["slots"] == 4 and r["supersuit"]["agent_steps_per_s"] > 0
    vector = r["vector"]
    assert vector["single_env_agent_steps_per_s"] == r["throughput"][1]["fs1_agent_steps_per_s"]
    assert vector["supersuit_agent_steps_per_s"] == r["supersuit"]["agent_steps_per_s"]
    assert vector["single_env_pinned_agent_steps_per_s"] > 0
    assert vector["single_env_pinned_thread_cpu_us_per_agent_step"] > 0
    assert vector["separate_envs_agent_steps_per_s"] > 0
    assert [p["cpu_affinity"] for p in vector["pools"]] == [True, False]
    for pool in vector["pools"]:
        assert (pool["envs"], pool["agents"], pool["batch_size"]) == (2, 2, 1)
        assert pool["sync_agent_steps_per_s"] > 0 and pool["async_agent_steps_per_s"] > 0
        assert 0 < pool["python_us_per_agent_step"] < pool["thread_cpu_us_per_agent_step"]
    observations = r["observations"]
    assert observations["observation"] == "apples" and len(observations["rows"]) == 1
    assert all(v > 0 for k, v in observations["rows"][0].items() if k.endswith("_per_s"))
    md = (tmp_path / "results.md").read_text()
    assert "engine ceiling" in md and r["machine"]["renderer"] in md and "| 2 x 2 | no |" in md
    assert "`apples` pipelined" in md
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.engine
def test_frames_benchmark_measures_each_frame_size_and_reports_a_failed_one(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--only", "frames",
                          "--quick", "--agents", "1", "--obs-sizes", "32", "4", "96",
                          "--out", str(tmp_path)],
                         timeout=300, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert run.returncode == 1 and "some measurements failed" in run.stderr, run.stderr
    r = json.loads((tmp_path / "frames.json").read_text())
    measured, failed = [r["frames"][i] for i in (0, 2)], r["frames"][1]
    assert [(row["obs_size"], row["agents"]) for row in measured] == [(32, 1), (96, 1)]
    for row in measured:
        assert row["observation_shape"] == [row["obs_size"], row["obs_size"], 3]
        assert row["ceiling_frames_per_s"] > 0 and row["agent_steps_per_s"] > 0
        assert row["renderer"] not in ("", "unknown") and "error" not in row
    assert failed["error"].startswith("ValueError: obs_size (4, 4) is out of range")
    md = (tmp_path / "frames.md").read_text()
    assert "| 32x32 | 1 |" in md and "| 96x96 | 1 |" in md and "| 4x4 | 1 | - | - | - |" in md
    assert "4x4, 1 agent(s) failed: ValueError" in md and measured[0]["renderer"] in md


def test_same_frames_finds_the_steps_that_differ(capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import same_frames
    episode = np.zeros((4, 2, 8, 8, 3), np.uint8)
    changed = episode.copy()
    changed[2, 1, 3, 3, 0] = 1  # one value of agent 1's frame at step 2
    assert same_frames.compare({"t": episode}, {"t": episode.copy()}) == 0
    assert same_frames.compare({"t": episode}, {"t": changed}) == 1
    assert "t: 1 of 4 steps differ, the first at step 2" in capsys.readouterr().out
    assert same_frames.compare({"t": episode}, {"t": episode[:3]}) == 1


@pytest.mark.engine
def test_same_frames_of_one_build_against_itself():
    build, tasks = str(find_engine().root), ["commons_harvest", "speleo"]
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "same_frames.py"),
                          build, build, "--steps", "3", "--tasks", *tasks],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == [f"{t}: 0 of 4 steps differ" for t in tasks]


def test_determinism_finds_the_first_step_and_the_pixels_that_differ():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import determinism
    frame = np.zeros((8, 8, 3), np.uint8)
    record = [({"agent_0": frame, "agent_1": frame}, {"agent_0": {"hp": 20}}, None)] * 3
    other = [*record[:2], ({"agent_0": frame, "agent_1": frame.copy()},
                           {"agent_0": {"hp": 20}}, None)]
    other[2][0]["agent_1"][1, 2] = 5  # one pixel of agent_1's frame at step 2
    assert determinism.first_difference(record, list(record)) is None
    assert determinism.first_difference(record, other)["step"] == 2
    assert determinism.first_difference(record, other)["frames"] == {"agent_1": 1}


@pytest.mark.engine
def test_determinism_plays_a_task_at_its_most_agents_fresh_and_after_another_episode(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "determinism.py"),
                          "--tasks", "duel", "--steps", "10", "--repeats", "2",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    r = json.loads((tmp_path / "determinism.json").read_text())
    assert r["tasks"]["duel"]["agents"] == 2 and r["steps"] == 10
    assert run.returncode == (1 if r["tasks"]["duel"]["differed"] else 0), run.stderr
    assert "| duel | 2 | 10 |" in (tmp_path / "determinism.md").read_text()


@pytest.mark.engine
def test_determinism_compares_a_pool_with_single_envs(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "determinism.py"),
                          "--tasks", "duel", "--steps", "6", "--repeats", "1", "--pool",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    r = json.loads((tmp_path / "determinism-pool.json").read_text())
    assert r["pool"] and r["tasks"]["duel"]["differed"] == {}, run.stderr
    assert "a pool of 2 against single envs" in (tmp_path / "determinism-pool.md").read_text()


@pytest.mark.engine
def test_task_diagnostics_plays_a_trained_policy_on_the_tasks_own_reward(tmp_path):
    """The shipped pressure_plates policy (trained on the shaped reward) gets through where a
    random policy does not, and the episode is counted on the task's own reward."""
    script = [sys.executable, str(ROOT / "benchmarks" / "task_diagnostics.py"),
              "--tasks", "pressure_plates", "--episodes", "1"]
    trained = subprocess.run([*script, "--out", str(tmp_path / "trained.json"), "--policy",
                              str(ROOT / "baselines" / "ppo_pressure_plates_distance.pt")],
                             capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr
    untrained = subprocess.run([*script, "--out", str(tmp_path / "random.json")],
                               capture_output=True, text=True, timeout=300)
    assert untrained.returncode == 0, untrained.stderr
    [played] = json.loads((tmp_path / "trained.json").read_text())["pressure_plates"]["episodes"]
    assert played["solved"] == 1 and played["door_open"] > 0 and played["steps"] < 300
    [baseline] = json.loads((tmp_path / "random.json").read_text())["pressure_plates"]["episodes"]
    assert baseline["solved"] == 0 and baseline["steps"] == 300


def test_task_diagnostics_refuses_a_policy_for_two_tasks():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "task_diagnostics.py"),
                          "--policy", "x.pt"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--policy plays one task" in run.stderr


@pytest.mark.engine
def test_task_diagnostics_plays_capture_the_flag_at_random_in_its_baseline_env(tmp_path):
    """A random policy plays the env of capture_the_flag's baseline config (125 decisions),
    counting carries and flags on the task's own reward."""
    out = tmp_path / "ctf.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "task_diagnostics.py"),
                          "--tasks", "capture_the_flag", "--episodes", "1", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    [episode] = json.loads(out.read_text())["capture_the_flag"]["episodes"]
    assert episode["steps"] == 125
    assert episode["both_carry"] <= min(episode["red_carries"], episode["blue_carries"])


def test_upstream_xland_steps_xminigrid_with_the_tasks_observations():
    """benchmarks/xland_upstream_ppo.py's env: xminigrid's own R1-9x9 with the rulesets given,
    observed as the xland task observes (its spaces, the ruleset's goal), each copy reset when
    its episode ends (at the latest after 243 steps), the same seed giving the same steps."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import craftium_ma
    import xland_upstream_ppo as upstream

    names = ["symbolic", "goal", "direction", "pocket"]
    rulesets = upstream.split_benchmark(upstream.load_benchmark("trivial-21k"), "train")
    space = craftium_ma.parallel_env("xland", observations=names).observation_space("agent_0")

    def play(seed):
        env = upstream.UpstreamXLand(rulesets, 3, names, seed)
        obs, _ = env.reset(seed=seed)
        actions = np.random.default_rng(seed).integers(6, size=(300, 3))
        lengths, ended, trace = np.zeros(3, int), [], []
        for t in range(300):
            for row in range(3):
                assert space.contains({n: obs[n][row] for n in names})
                np.testing.assert_array_equal(obs["goal"][row], rulesets.goals[env.drawn[row]])
            obs, rewards, terms, truncs, infos = env.step(actions[t])
            lengths += 1
            assert infos["active"].all() and not (terms & truncs).any()
            assert (rewards[~terms] == 0).all() and (rewards[terms] > 0).all()
            ended += list(lengths[terms | truncs])
            lengths[terms | truncs] = 0
            trace.append((obs["symbolic"].copy(), rewards))
        return ended, trace

    ended, trace = play(5)
    assert len(ended) >= 3 and max(ended) == 243  # truncated at xminigrid's max_steps
    again = play(5)[1]
    for (view, reward), (view2, reward2) in zip(trace, again):
        np.testing.assert_array_equal(view, view2)
        np.testing.assert_array_equal(reward, reward2)


def test_upstream_xland_diagnostics_widen_the_view_and_narrow_the_rulesets():
    """--view-size 17: the symbolic view (17 cells a side) holds whole rows of the 9 x 9
    room, walls included, from the agent's row to the wall ahead; --rulesets 1: every
    episode plays the first ruleset."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import xland_upstream_ppo as upstream

    names = ["symbolic", "goal", "direction", "pocket"]
    train = upstream.split_benchmark(upstream.load_benchmark("trivial-21k"), "train")
    first = train.split(1 / len(train))[0]
    env = upstream.UpstreamXLand(first, 2, names, 0, view_size=17)
    assert env.obs_shape["symbolic"] == (17, 17, 2)
    obs, _ = env.reset(seed=0)
    for t in range(300):
        assert obs["symbolic"].shape == (2, 17, 17, 2)
        cells = (obs["symbolic"][..., 0] != 0).sum(axis=2)  # per view row; 0: off the grid
        assert np.isin(cells, [0, 9]).all() and ((cells == 9).sum(axis=1) >= 2).all()
        assert (obs["goal"] == train.goals[0]).all()
        obs, *_ = env.step(np.random.default_rng(t).integers(6, size=2))


def test_xland_upstream_ppo_diagnostic_run_names_its_variant(tmp_path):
    """A run with the 17 x 17 view on one ruleset, each update from 4 copies of 16 steps,
    trains a model of that view in such updates, is scored on xminigrid alone (our task
    cannot show it that view) and writes its own results file."""
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "xland_upstream_ppo.py"),
                          "--seed", "3", "--steps", "2048", "--episodes", "4", "--view-size",
                          "17", "--rulesets", "1", "--num-envs", "4", "--num-steps", "16",
                          "--out", str(tmp_path), "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    name = "view17_rulesets1_envs4x16_seed3"
    [snapshot] = json.loads((tmp_path / f"{name}.json").read_text())["snapshots"]
    assert set(snapshot) == {"agent_steps", "xminigrid"}
    assert len(snapshot["xminigrid"]["returns"]) == 4
    from craftium_ma.models import load_checkpoint

    _, ckpt = load_checkpoint(tmp_path / name / "checkpoint.pt")
    assert ckpt["obs_shape"]["symbolic"] == [17, 17, 2]
    steps = np.loadtxt(tmp_path / name / "updates.csv", delimiter=",", skiprows=1)[:, 1]
    assert (steps == 64 * np.arange(1, 33)).all()  # 32 updates of 4 x 16 agent steps
    assert not (tmp_path / "seed3.json").exists()


@pytest.mark.engine
def test_xland_upstream_ppo_trains_on_xminigrid_and_scores_on_both(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "xland_upstream_ppo.py"),
                          "--seed", "3", "--steps", "4096", "--episodes", "4",
                          "--out", str(tmp_path), "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    result = json.loads((tmp_path / "seed3.json").read_text())
    [snapshot] = result["snapshots"]
    assert snapshot["agent_steps"] == 4096 and len(result["training_curve_per_500k"]) == 1
    for env in ("xminigrid", "ours"):
        low, high = snapshot[env]["ci95"]
        assert 0 <= low <= snapshot[env]["mean"] <= high <= 1 and len(snapshot[env]["returns"]) == 4
        by_goal = np.array(list(snapshot[env]["solved_by_goal"].values()))  # [solved, episodes]
        assert by_goal[:, 1].sum() == 4
        assert by_goal[:, 0].sum() == sum(r > 0 for r in snapshot[env]["returns"])


@pytest.mark.engine
def test_xland_upstream_ppo_plays_the_rulesets_of_the_rows_evaluation():
    """On xminigrid, the held-out episodes' rulesets are those our task draws for the
    evaluation's seeds."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import craftium_ma
    import xland_upstream_ppo as upstream

    held_out = upstream.split_benchmark(upstream.load_benchmark("trivial-21k"), "held-out")
    first = upstream.evaluation_rulesets(held_out, 3, 100_000)
    env = craftium_ma.parallel_env("xland", task_options={"split": "held-out"},
                                   observations=["goal"])
    try:
        for k in range(3):
            obs, _ = env.reset(seed=100_000 + k)
            np.testing.assert_array_equal(obs["agent_0"]["goal"], held_out.goals[first[k]])
    finally:
        env.close()
