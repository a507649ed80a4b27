"""Episodes as video: every agent's view, labelled, in one mosaic a frame (the shared
craftium_ma.render.mosaic), written as MP4 (H.264, imageio's ffmpeg plugin) or GIF.

- EpisodeWriter: the mosaics of one episode (or one run) into one file;
- record_episode: plays one episode of a parallel env and writes it;
- RecordEpisodes: a PettingZoo wrapper recording every k-th episode of a training loop;
- RecordPoolEnv: a Gymnasium vector wrapper recording the episodes of one env of a pool;
- record_run: a runner's run, for `craftium-ma serve TASK --record PATH`.

It needs the `record` extra (imageio, imageio-ffmpeg). See docs/recording.md.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
from pettingzoo.utils import BaseParallelWrapper

from .doctor import install_command
from .render import BACKGROUND, mosaic
from .validate import is_int, positive_int

DEFAULT_FPS = 20  # a realtime server's env steps per second: a recording plays at game speed
FORMATS = {".mp4": "MP4 (H.264)", ".gif": "GIF"}


def video_format(path) -> str:
    """The suffix of `path` (.mp4 or .gif) that says how it is written."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"a recording is written as .mp4 or .gif, chosen by the path's suffix; "
                         f"got {str(path)!r}")
    return suffix


def _imageio(suffix: str):
    """imageio (with imageio-ffmpeg's ffmpeg for MP4), or an ImportError naming the extra."""
    try:
        import imageio.v2 as imageio
        if suffix == ".mp4":
            import imageio_ffmpeg  # noqa: F401 (the ffmpeg binary imageio's plugin runs)
    except ImportError as e:
        missing = (e.name or "imageio").split(".")[0]  # imageio.v2 -> the package imageio
        raise ImportError(f"recording needs the record extra ({missing} is missing): "
                          f"{install_command('record')}") from None
    return imageio


def _even(picture: np.ndarray) -> np.ndarray:
    """The picture padded to an even height and width (H.264's 4:2:0 needs them)."""
    h, w = picture.shape[:2]
    return np.pad(picture, ((0, h % 2), (0, w % 2), (0, 0)), constant_values=BACKGROUND)


class EpisodeWriter:
    """Writes labelled mosaics of `agents`' frames to `path`, one per add(); the format
    follows the suffix (.mp4 or .gif). Nothing is written before the first add()."""

    def __init__(self, path, agents, fps: int = DEFAULT_FPS):
        self.path = Path(path)
        self.suffix = video_format(self.path)
        self.agents = list(agents)
        if not self.agents:
            raise ValueError("an EpisodeWriter needs the agents whose views it writes, got none")
        self.fps = positive_int("fps", fps)
        self._imageio = _imageio(self.suffix)
        self._writer = None
        self._closed = False
        self._shape: tuple | None = None
        self._last: dict[str, np.ndarray] = {}
        self.frames = 0  # mosaics written

    def add(self, frames: Mapping[str, np.ndarray]) -> np.ndarray:
        """Writes one mosaic: the new frames given (by agent), the others' last ones
        (black before their first); returns the mosaic."""
        if self._closed:
            raise RuntimeError(f"add() after close(): {self.path} is written")
        unknown = sorted(set(frames) - set(self.agents))
        if unknown:
            raise ValueError(f"frames of unknown agents {unknown}; agents are {self.agents}")
        for agent, frame in frames.items():
            frame = np.asarray(frame)
            if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
                raise ValueError(f"{agent}'s frame must be an H x W x 3 uint8 RGB image, "
                                 f"got {frame.dtype} of shape {frame.shape}")
            if self._shape is None:
                self._shape = frame.shape
            elif frame.shape != self._shape:
                raise ValueError(f"{agent}'s frame is {frame.shape}, the recording's "
                                 f"frames are {self._shape}")
            self._last[agent] = frame.copy()
        if self._shape is None:
            raise ValueError("the first mosaic needs at least one agent's frame")
        black = np.zeros(self._shape, np.uint8)
        picture = mosaic([self._last.get(a, black) for a in self.agents], labels=self.agents)
        if self.suffix == ".mp4":
            picture = _even(picture)
        if self._writer is None:
            self._writer = self._open()
        self._writer.append_data(picture)
        self.frames += 1
        return picture

    def _open(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.suffix == ".mp4":
            # macro_block_size=1: no resizing by imageio; _even() already fits H.264
            return self._imageio.get_writer(self.path, format="FFMPEG", mode="I", fps=self.fps,
                                            codec="libx264", pixelformat="yuv420p",
                                            macro_block_size=1)
        return self._imageio.get_writer(self.path, mode="I", duration=1000 / self.fps, loop=0)

    def close(self):
        """Finishes the file (none is written when nothing was added)."""
        self._closed = True
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc):
        self.close()


@dataclass(frozen=True)
class Recording:
    """What record_episode() wrote: the file, the env steps played, each agent's return."""

    path: Path
    steps: int
    returns: dict[str, float]


def _random_policy(env, seed: int | None):
    """Samples each agent's action space (copies of them, seeded with seed + agent index)."""
    spaces = {a: copy.deepcopy(env.action_space(a)) for a in env.possible_agents}
    for i, space in enumerate(spaces.values()):
        space.seed(None if seed is None else seed + i)
    return lambda agent, observation, info: spaces[agent].sample()


def record_episode(env, path, policy: Callable | None = None, seed: int | None = None,
                   max_steps: int | None = None, fps: int = DEFAULT_FPS) -> Recording:
    """Plays one episode of `env` (a parallel env of craftium_ma, reset here and left
    open) and writes its mosaics, the reset's and one a step, to `path`. `policy(agent,
    observation, info) -> action` (the Runner's form) chooses the actions; by default
    they are random, reproducible with `seed`. `max_steps` cuts the episode short."""
    max_steps = positive_int("max_steps", max_steps, optional=True)
    if policy is None:
        policy = _random_policy(env, seed)
    elif not callable(policy):
        raise TypeError(f"policy must be a callable (agent, observation, info) -> action, "
                        f"got {type(policy).__name__}")
    returns = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    with EpisodeWriter(path, env.possible_agents, fps) as writer:
        observations, infos = env.reset(seed=seed)
        writer.add(env.unwrapped.last_frames)
        while env.agents and (max_steps is None or steps < max_steps):
            actions = {a: policy(a, observations[a], infos[a]) for a in env.agents}
            observations, rewards, _, _, infos = env.step(actions)
            steps += 1
            for agent, reward in rewards.items():
                returns[agent] += float(reward)
            writer.add(env.unwrapped.last_frames)
    return Recording(writer.path, steps, returns)


def _trigger(every: int | None, episode_trigger: Callable | None) -> Callable[[int], bool]:
    """Which episodes (numbered from 0) are recorded: every `every`-th or the trigger's."""
    if episode_trigger is not None:
        if every is not None:
            raise ValueError("give every= or episode_trigger=, not both")
        if not callable(episode_trigger):
            raise TypeError(f"episode_trigger must be a callable (episode number) -> bool, "
                            f"got {type(episode_trigger).__name__}")
        return episode_trigger
    every = positive_int("every", 1 if every is None else every)
    return lambda episode: episode % every == 0


class _Episodes:
    """The episode count, the trigger and the file of the episode being recorded (the
    part both wrappers share)."""

    def __init__(self, folder, agents, every, episode_trigger, name_prefix: str, suffix: str,
                 fps: int):
        self.folder = Path(folder)
        self.agents = list(agents)
        self.trigger = _trigger(every, episode_trigger)
        if not isinstance(name_prefix, str) or not name_prefix:
            raise ValueError(f"name_prefix must be a non-empty str, got {name_prefix!r}")
        self.name_prefix = name_prefix
        self.suffix = video_format(self.folder / f"{name_prefix}-0{suffix}")
        self.fps = positive_int("fps", fps)
        _imageio(self.suffix)  # a missing extra shows now, not at the first recorded episode
        self.episode = -1  # the episode being played, numbered from 0 at the first reset
        self.writer: EpisodeWriter | None = None
        self.paths: list[Path] = []  # the files written

    def start(self):
        """A new episode: the last one's file is finished (also one cut short)."""
        self.finish()
        self.episode += 1
        if self.trigger(self.episode):
            path = self.folder / f"{self.name_prefix}-{self.episode}{self.suffix}"
            self.writer = EpisodeWriter(path, self.agents, self.fps)

    def add(self, frames: Mapping[str, np.ndarray]):
        if self.writer is not None:
            self.writer.add(frames)

    def finish(self):
        if self.writer is not None:
            self.writer.close()
            if self.writer.frames:
                self.paths.append(self.writer.path)
            self.writer = None


class RecordEpisodes(BaseParallelWrapper):
    """Records every `every`-th episode of `env` (a parallel env of craftium_ma), from
    the first, or those `episode_trigger(n)` picks, to folder/<name_prefix>-<n><suffix>
    (n counts episodes from 0): Gymnasium's RecordVideo for a PettingZoo parallel env.
    What the env returns is unchanged; `paths` lists the files written."""

    def __init__(self, env, folder, every: int | None = None, *,
                 episode_trigger: Callable[[int], bool] | None = None,
                 name_prefix: str = "episode", suffix: str = ".mp4", fps: int = DEFAULT_FPS):
        super().__init__(env)
        self.episodes = _Episodes(folder, env.possible_agents, every, episode_trigger,
                                  name_prefix, suffix, fps)

    @property
    def paths(self) -> list[Path]:
        return self.episodes.paths

    def reset(self, seed=None, options=None):
        result = self.env.reset(seed=seed, options=options)
        self.episodes.start()
        self.episodes.add(self.env.unwrapped.last_frames)
        return result

    def step(self, actions):
        result = self.env.step(actions)
        if self.episodes.writer is not None:
            self.episodes.add(self.env.unwrapped.last_frames)
            if not self.env.agents:
                self.episodes.finish()
        return result

    def close(self):
        self.episodes.finish()
        self.env.close()


class RecordPoolEnv(gymnasium.vector.VectorWrapper):
    """Records the episodes of env `env_id` of a pool (craftium_ma.vector_env), every
    `every`-th from the first or those `episode_trigger(n)` picks, one file each, named
    as RecordEpisodes names them. Each mosaic is built from that env's rows; an inactive
    row shows its agent's last frame. Records what reset() and step() return (not the
    send()/recv() face); what they return is unchanged."""

    def __init__(self, pool, folder, env_id: int = 0, every: int | None = None, *,
                 episode_trigger: Callable[[int], bool] | None = None,
                 name_prefix: str = "episode", suffix: str = ".mp4", fps: int = DEFAULT_FPS):
        super().__init__(pool)
        base = pool.unwrapped
        self.pool_envs = len(base.envs)
        if not is_int(env_id) or not 0 <= env_id < self.pool_envs:
            raise ValueError(f"env_id must be an int in 0..{self.pool_envs - 1} (the pool's "
                             f"envs), got {env_id!r}")
        space = pool.single_observation_space
        if (not isinstance(space, gymnasium.spaces.Box) or space.dtype != np.uint8
                or len(space.shape) != 3 or space.shape[2] != 3):
            raise ValueError(f"RecordPoolEnv records frames (H x W x 3 uint8 observations); "
                             f"this pool's observation space is {space}")
        self.env_id = int(env_id)
        self.agents = list(base.agents)
        n = len(self.agents)
        self.rows = slice(self.env_id * n, (self.env_id + 1) * n)  # the env's rows
        self.episodes = _Episodes(folder, self.agents, every, episode_trigger, name_prefix,
                                  suffix, fps)
        self._ended = False  # the env's episode is over: its next step is its reset

    @property
    def paths(self) -> list[Path]:
        return self.episodes.paths

    def reset(self, *, seed=None, options=None):
        observations, infos = self.env.reset(seed=seed, options=options)
        if self._resets_the_env((options or {}).get("reset_mask")):
            self._start(observations, infos)
        return observations, infos

    def step(self, actions):
        result = self.env.step(actions)
        observations, _, terminations, truncations, infos = result
        if self._ended:  # this step was the env's reset (autoreset NEXT_STEP)
            self._start(observations, infos)
            return result
        self._add(observations, infos)
        rows = self.rows
        live = infos["active"][rows] & ~(terminations[rows] | truncations[rows])
        if not live.any():
            self.episodes.finish()
            self._ended = True
        return result

    def close(self, **kwargs):
        self.episodes.finish()
        return self.env.close(**kwargs)

    def _resets_the_env(self, mask) -> bool:
        """Whether reset(options={"reset_mask": mask}) reset the recorded env (the pool
        has checked the mask: one bool per env or per row)."""
        if mask is None:
            return True
        mask = np.asarray(mask, bool).ravel()
        if len(mask) == self.pool_envs:
            return bool(mask[self.env_id])
        return bool(mask[self.rows.start])

    def _start(self, observations, infos):
        self._ended = False
        self.episodes.start()
        self._add(observations, infos)

    def _add(self, observations, infos):
        rows = self.rows
        self.episodes.add({agent: frame for agent, frame, active
                           in zip(self.agents, observations[rows], infos["active"][rows])
                           if active})


def record_run(runner, path, fps: int = DEFAULT_FPS) -> EpisodeWriter:
    """Writes the frames a Runner shows from now on, those of its first reset and then
    one mosaic a step, to `path`; close the writer it returns once the run is over."""
    writer = EpisodeWriter(path, runner.env.possible_agents, fps)
    written = None  # the runner's id of the last set of frames written

    def on_event(event):
        nonlocal written
        if event.type in ("run_started", "step"):
            frame_id, frames = runner.frames()
            if frame_id != written:
                written = frame_id
                writer.add(frames)

    runner.subscribe(on_event)
    return writer
