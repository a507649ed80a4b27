"""The recorder: labelled mosaics written as MP4 or GIF and read back with imageio, from
a single env, a training loop's wrapper, one env of a pool and `serve --record`."""

import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

import craftium_ma
from craftium_ma.record import (EpisodeWriter, RecordEpisodes, RecordPoolEnv,
                                record_episode)
from craftium_ma.render import LABEL_BAR, mosaic

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ["agent_0", "agent_1"]
SMALL = {"num_agents": 2, "obs_size": 32, "max_cycles": 10}


def read(path) -> np.ndarray:
    """Every frame of a recording: (frames, H, W, 3)."""
    return iio.imread(path, index=None, plugin="FFMPEG" if path.suffix == ".mp4" else None)


def frames_of(step: int, shape=(15, 21, 3)) -> dict:
    """A frame per agent, a different grey level for each step and agent."""
    return {a: np.full(shape, 40 + 30 * step + 60 * i, np.uint8) for i, a in enumerate(AGENTS)}


def assert_labelled(picture: np.ndarray, frame_height: int):
    """A black bar with light text above the first tile, a brighter frame below it."""
    bar = picture[:LABEL_BAR, :frame_height].astype(int)
    assert bar.mean() < 80 and bar.max() > 150
    below = picture[LABEL_BAR + 2:LABEL_BAR + frame_height - 2, 2:frame_height - 2].astype(int)
    assert below.mean() > bar.mean() + 10


def assert_changes(frames: np.ndarray):
    """The recording is not a still: some frames differ from the first."""
    assert max(np.abs(f.astype(int) - frames[0]).mean() for f in frames[1:]) > 1


# -- the writer (no engine) ---------------------------------------------------------------

def test_an_mp4_holds_one_even_sized_labelled_mosaic_per_add(tmp_path):
    path = tmp_path / "run.mp4"
    with EpisodeWriter(path, AGENTS) as writer:
        written = [writer.add(frames_of(step)) for step in range(5)]
    expected = mosaic(list(frames_of(0).values()), labels=AGENTS)  # 27 x 42: odd height
    assert written[0].shape == (28, 42, 3)
    np.testing.assert_array_equal(written[0][:27], expected)
    frames = read(path)
    assert frames.shape == (5, 28, 42, 3)
    assert_labelled(frames[0], 15)
    assert np.abs(frames.astype(int) - np.stack(written)).mean() < 4  # lossy, yet the same
    assert_changes(frames)


def test_a_gif_holds_one_labelled_mosaic_per_add_at_its_own_size(tmp_path):
    path = tmp_path / "run.gif"
    with EpisodeWriter(path, AGENTS, fps=10) as writer:
        for step in range(4):
            writer.add(frames_of(step))
    frames = read(path)
    assert frames.shape[:3] == (4, 27, 42)
    assert_labelled(frames[0], 15)
    assert_changes(frames)
    assert iio.immeta(path)["duration"] == 100


def test_an_agent_without_a_new_frame_shows_its_last_one_and_black_before_its_first(tmp_path):
    writer = EpisodeWriter(tmp_path / "run.gif", AGENTS)
    first = writer.add({"agent_1": np.full((8, 8, 3), 200, np.uint8)})
    later = writer.add({"agent_0": np.full((8, 8, 3), 100, np.uint8)})
    writer.close()
    assert (first[LABEL_BAR:, :8] == 0).all() and (first[LABEL_BAR:, 8:] == 200).all()
    assert (later[LABEL_BAR:, :8] == 100).all() and (later[LABEL_BAR:, 8:] == 200).all()


def test_an_unknown_suffix_is_a_value_error_naming_the_path(tmp_path):
    with pytest.raises(ValueError, match=r"\.mp4 or \.gif.*run\.avi"):
        EpisodeWriter(tmp_path / "run.avi", AGENTS)


def test_bad_frames_are_value_errors_naming_the_agent(tmp_path):
    writer = EpisodeWriter(tmp_path / "run.mp4", AGENTS)
    with pytest.raises(ValueError, match="agent_1's frame must be an H x W x 3 uint8"):
        writer.add({"agent_1": np.zeros((8, 8), np.uint8)})
    with pytest.raises(ValueError, match=r"unknown agents \['agent_7'\]"):
        writer.add({"agent_7": np.zeros((8, 8, 3), np.uint8)})
    writer.add({"agent_0": np.zeros((8, 8, 3), np.uint8)})
    with pytest.raises(ValueError, match=r"agent_1's frame is \(9, 8, 3\)"):
        writer.add({"agent_1": np.zeros((9, 8, 3), np.uint8)})
    writer.close()


def test_without_imageio_the_import_error_names_the_record_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    with pytest.raises(ImportError, match=r"record extra \(imageio is missing\).*\[record\]"):
        EpisodeWriter(tmp_path / "run.gif", AGENTS)


def test_a_wrapper_takes_every_or_a_trigger_not_both(tmp_path):
    class Env:
        possible_agents = AGENTS

    with pytest.raises(ValueError, match="every= or episode_trigger=, not both"):
        RecordEpisodes(Env(), tmp_path, every=2, episode_trigger=lambda n: True)
    with pytest.raises(ValueError, match="every must be a positive int"):
        RecordEpisodes(Env(), tmp_path, every=0)


# -- with the engine ------------------------------------------------------------------------

@pytest.mark.engine
def test_record_episode_writes_the_reset_and_every_step_of_a_two_agent_episode(tmp_path):
    env = craftium_ma.parallel_env("small_room", **SMALL)
    try:
        recording = record_episode(env, tmp_path / "episode.mp4", seed=1)
    finally:
        env.close()
    frames = read(recording.path)
    assert 1 <= recording.steps <= 10 and len(frames) == recording.steps + 1
    assert frames.shape[1:] == (32 + LABEL_BAR, 64, 3)
    assert_labelled(frames[0], 32)
    assert_changes(frames)
    assert set(recording.returns) == set(AGENTS)


@pytest.mark.engine
def test_record_episodes_records_every_second_episode_and_returns_what_the_env_returns(
        tmp_path):
    env = craftium_ma.parallel_env("small_room", **SMALL)
    returned = []
    inner_reset, inner_step = env.reset, env.step
    env.reset = lambda **kw: returned.append(inner_reset(**kw)) or returned[-1]
    env.step = lambda actions: returned.append(inner_step(actions)) or returned[-1]
    wrapped = RecordEpisodes(env, tmp_path / "videos", every=2)
    rng = np.random.default_rng(0)
    lengths = []
    try:
        for episode in range(3):
            assert wrapped.reset(seed=episode) is returned[-1]
            steps = 0
            while wrapped.agents:
                result = wrapped.step({a: int(rng.integers(4)) for a in wrapped.agents})
                assert result is returned[-1]
                steps += 1
            lengths.append(steps)
    finally:
        wrapped.close()
    videos = tmp_path / "videos"
    assert sorted(p.name for p in videos.iterdir()) == ["episode-0.mp4", "episode-2.mp4"]
    assert wrapped.paths == [videos / "episode-0.mp4", videos / "episode-2.mp4"]
    for path, steps in zip(wrapped.paths, lengths[::2]):
        frames = read(path)
        assert len(frames) == steps + 1
        assert_changes(frames)


@pytest.mark.engine
def test_record_pool_env_writes_each_episode_of_its_env_from_that_envs_rows(tmp_path):
    pool = RecordPoolEnv(craftium_ma.vector_env("small_room", 2, seed=0, cpu_affinity=False,
                                                **SMALL),
                         tmp_path, env_id=1)
    rows = slice(2, 4)  # env 1's
    rng = np.random.default_rng(0)
    try:
        observations, _ = pool.reset()
        firsts = [mosaic(list(observations[r]), labels=AGENTS) for r in (slice(0, 2), rows)]
        lengths, steps, done, resetting = [], 0, set(), False
        for _ in range(25):
            _, _, terminations, truncations, _ = pool.step(rng.integers(4, size=4))
            if resetting:  # env 1's reset (NEXT_STEP): the next episode's first frame
                resetting = False
                continue
            steps += 1
            done |= {a for a, t in zip(AGENTS, (terminations | truncations)[rows]) if t}
            if done == set(AGENTS):
                lengths.append(steps)
                steps, done, resetting = 0, set(), True
    finally:
        pool.close()
    lengths += [] if resetting else [steps]  # the last episode, cut short by close()
    assert [p.name for p in pool.paths] == [f"episode-{n}.mp4" for n in range(len(lengths))]
    assert len(lengths) >= 2
    for path, length in zip(pool.paths, lengths):
        frames = read(path)
        assert len(frames) == length + 1
        assert_changes(frames)
    # the recording starts with env 1's mosaic (H.264 is lossy), not env 0's
    env_0, env_1 = (np.abs(read(pool.paths[0])[0].astype(int) - f).mean() for f in firsts)
    assert env_1 < 8 and env_1 < env_0 / 2


@pytest.mark.engine
def test_record_pool_env_starts_a_new_file_only_at_a_masked_reset_that_takes_its_env(
        tmp_path):
    pool = RecordPoolEnv(craftium_ma.vector_env("small_room", 2, seed=0, cpu_affinity=False,
                                                **SMALL),
                         tmp_path, env_id=1)
    noop = np.zeros(4, int)
    try:
        pool.reset()
        pool.step(noop)
        pool.reset(options={"reset_mask": [True, False]})  # env 0 alone: not a frame of env 1
        pool.step(noop)
        pool.reset(options={"reset_mask": [False, False, True, True]})  # env 1, by rows
        pool.step(noop)
    finally:
        pool.close()
    assert [len(read(path)) for path in pool.paths] == [3, 2]


@pytest.mark.engine
def test_serve_record_writes_the_mosaic_of_the_start_and_of_every_step(tmp_path):
    path = tmp_path / "run.mp4"
    serve = subprocess.run(
        [sys.executable, "-m", "craftium_ma", "serve", "small_room", "--port", "0",
         "--num-agents", "2", "--obs-size", "32", "--tick-rate", "0", "--seed", "3",
         "--max-steps", "6", "--record", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert serve.returncode == 0, serve.stdout + serve.stderr
    assert f"wrote 7 frames to {path}" in serve.stdout
    frames = read(path)
    assert frames.shape == (7, 32 + LABEL_BAR, 64, 3)
    assert_labelled(frames[0], 32)
    assert_changes(frames)
