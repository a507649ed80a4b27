"""The actor-critic that examples/train_ppo.py trains, its checkpoints and its input.

A checkpoint is one `torch.save`d dict: the model's state dict under "model", the
observation shape and action count that rebuild it, the logits of a fixed probe batch
(to check a reload) and whatever the trainer adds (its args, optimizer, counters). The
model sees frames as training built them: optionally grey, the last k frames stacked
on the channel axis (FrameStack). It may also see a task's declared observations beside
or instead of the frames (`observations=` of parallel_env): the xland task's `symbolic`
view, `goal` vector, `direction` and `pocket` have encoders here (ModelInput builds the
input). Needs the `train` extra.
"""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import numpy as np

try:
    import torch
    from torch import nn
    from torch.distributions import Categorical
except ImportError as error:
    raise ImportError("craftium_ma.models needs torch: pip install 'craftium-ma[train]'") from error

from .xland.encoding import Colour, GoalId, Tile
from .xland.world import MAX_SIZE

SQRT2 = math.sqrt(2)
# ITU-R BT.601 luma, in float32 as SuperSuit's color_reduction_v0(mode="full") uses it
GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)
# a checkpoint's training settings that the env must repeat for the model to see its frames
ENV_KEYS = ("num_agents", "max_cycles", "obs_size", "frameskip")
REQUIRED_KEYS = ("model", "obs_shape", "n_actions", "args")
RGB = "rgb"  # the frames' name among observations (craftium_ma.observations.RGB)
# the ids of XLand-MiniGrid's encoding (craftium_ma.xland.encoding): an embedding table of
# tiles or colours has a row for each; a goal's position slots hold rows and columns up to
# MAX_SIZE - 1, so the tables the goal uses have at least MAX_SIZE rows
NUM_TILES, NUM_COLOURS, NUM_GOALS = len(Tile), len(Colour), len(GoalId)
XLAND_EMBED = 8  # per tile and per colour
HIDDEN = 256  # the width of the layers after the encoders


def layer_init(layer, std=SQRT2, bias=0.0):
    """Orthogonal weights with gain `std`, constant bias: the layer, initialised."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def frame_trunk(obs_shape) -> nn.Sequential:
    """A small CNN from uint8 frames (batch, H, W, C), scaled to [0, 1], to 256 features:
    two strided convolutions (48x48 -> 11x11x32 -> 4x4x64; cheap enough on 2 cores)."""
    h, w, c = obs_shape
    trunk = nn.Sequential(
        layer_init(nn.Conv2d(c, 32, 8, stride=4)), nn.ReLU(),
        layer_init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
        nn.Flatten(),
    )
    with torch.no_grad():
        n_flat = trunk(torch.zeros(1, c, h, w)).shape[1]
    trunk.append(layer_init(nn.Linear(n_flat, HIDDEN)))
    trunk.append(nn.ReLU())
    return trunk


class XLandObjects(nn.Module):
    """An embedding of XLand-MiniGrid's objects: (..., 2) (tile, colour) ids ->
    (..., 2 * XLAND_EMBED), a tile's and a colour's vector side by side. The symbolic
    view's cells and the goal's objects share it, so an object the goal names looks the
    same as that object in the view."""

    def __init__(self):
        super().__init__()
        self.tiles = nn.Embedding(max(NUM_TILES, MAX_SIZE), XLAND_EMBED)
        self.colours = nn.Embedding(max(NUM_COLOURS, MAX_SIZE), XLAND_EMBED)

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        pairs = pairs.long()
        return torch.cat([self.tiles(pairs[..., 0]), self.colours(pairs[..., 1])], dim=-1)


class SymbolicView(nn.Module):
    """XLand-MiniGrid's egocentric view (batch, 5, 5, 2) -> every cell's object embedded,
    flattened (5 * 5 * 2 * XLAND_EMBED features)."""

    def __init__(self, objects: XLandObjects, shape):
        super().__init__()
        self.objects = objects
        self.n_features = math.prod(shape[:-1]) * 2 * XLAND_EMBED

    def forward(self, view: torch.Tensor) -> torch.Tensor:
        return self.objects(view).flatten(1)


class GoalVector(nn.Module):
    """A goal vector (batch, 5) [id, a_tile, a_colour, b_tile, b_colour] -> the goal id's
    embedding and both objects' (XLandObjects), side by side (5 * XLAND_EMBED features)."""

    def __init__(self, objects: XLandObjects):
        super().__init__()
        self.objects = objects
        self.ids = nn.Embedding(NUM_GOALS, XLAND_EMBED)
        self.n_features = 5 * XLAND_EMBED

    def forward(self, goal: torch.Tensor) -> torch.Tensor:
        goal = goal.long()
        pairs = self.objects(goal[:, 1:].reshape(-1, 2, 2)).flatten(1)
        return torch.cat([self.ids(goal[:, 0]), pairs], dim=-1)


class Direction(nn.Module):
    """The agent's direction (batch, 1), 0 up .. 3 left, as XLand-MiniGrid's
    DirectionObservationWrapper adds it -> its embedding (XLAND_EMBED features). The
    egocentric view alone does not tell which way is up, which the directional goals need."""

    def __init__(self):
        super().__init__()
        self.ids = nn.Embedding(4, XLAND_EMBED)
        self.n_features = XLAND_EMBED

    def forward(self, direction: torch.Tensor) -> torch.Tensor:
        return self.ids(direction.long()).flatten(1)


class Pocket(nn.Module):
    """What the agent holds (batch, 2), a (tile, colour) pair, (0, 0) when empty ->
    its XLandObjects embedding (2 * XLAND_EMBED features)."""

    def __init__(self, objects: XLandObjects):
        super().__init__()
        self.objects = objects
        self.n_features = 2 * XLAND_EMBED

    def forward(self, pocket: torch.Tensor) -> torch.Tensor:
        return self.objects(pocket)


class ActorCritic(nn.Module):
    """A trunk shared by a policy head and a value head.

    `obs_shape` (H, W, C): the model takes uint8 frames (batch, H, W, C) as FrameStack
    gives them; its trunk is frame_trunk. `obs_shape` a dict {name: shape}: it takes a dict
    of tensors of those names (ModelInput gives them), each through its encoder ("rgb":
    frame_trunk, "symbolic": SymbolicView, "goal": GoalVector, "direction": Direction,
    "pocket": Pocket), the features concatenated and then two layers of HIDDEN units."""

    def __init__(self, obs_shape, n_actions: int):
        super().__init__()
        self.n_actions = int(n_actions)
        if isinstance(obs_shape, dict):
            self.obs_shape = {k: tuple(int(n) for n in v) for k, v in sorted(obs_shape.items())}
            self.encoders = self._encoders(self.obs_shape)
            n_features = sum(self._width(name, enc) for name, enc in self.encoders.items())
            self.trunk = nn.Sequential(layer_init(nn.Linear(n_features, HIDDEN)), nn.ReLU(),
                                       layer_init(nn.Linear(HIDDEN, HIDDEN)), nn.ReLU())
        else:
            if len(obs_shape) != 3:
                raise ValueError(f"obs_shape must be (height, width, channels), "
                                 f"got {tuple(obs_shape)}")
            self.obs_shape = tuple(int(n) for n in obs_shape)
            self.encoders = None
            self.trunk = frame_trunk(self.obs_shape)
        self.policy = layer_init(nn.Linear(HIDDEN, self.n_actions), std=0.01)
        self.value = layer_init(nn.Linear(HIDDEN, 1), std=1.0)

    @staticmethod
    def _encoders(shapes: dict) -> nn.ModuleDict:
        unknown = sorted(set(shapes) - {RGB, "symbolic", "goal", "direction", "pocket"})
        if unknown:
            raise ValueError(f"ActorCritic has no encoder for the observations {unknown}; it "
                             "takes rgb, symbolic, goal, direction and pocket")
        if RGB in shapes and len(shapes[RGB]) != 3:
            raise ValueError(f"obs_shape['rgb'] must be (height, width, channels), "
                             f"got {shapes[RGB]}")
        objects = XLandObjects()  # shared by the view, the goal and the pocket
        makers = {RGB: lambda shape: frame_trunk(shape),
                  "symbolic": lambda shape: SymbolicView(objects, shape),
                  "goal": lambda shape: GoalVector(objects),
                  "direction": lambda shape: Direction(),
                  "pocket": lambda shape: Pocket(objects)}
        return nn.ModuleDict({name: makers[name](shape) for name, shape in shapes.items()})

    @staticmethod
    def _width(name: str, encoder: nn.Module) -> int:
        return HIDDEN if name == RGB else encoder.n_features

    def features(self, obs) -> torch.Tensor:
        if self.encoders is None:
            return self.trunk(obs.permute(0, 3, 1, 2).float() / 255.0)
        parts = [encoder(obs[name].permute(0, 3, 1, 2).float() / 255.0) if name == RGB
                 else encoder(obs[name]) for name, encoder in self.encoders.items()]
        return self.trunk(torch.cat(parts, dim=-1))

    def logits(self, obs) -> torch.Tensor:
        return self.policy(self.features(obs))

    def get_value(self, obs) -> torch.Tensor:
        return self.value(self.features(obs)).squeeze(-1)

    def act(self, obs, action=None):
        """(action, log-prob, entropy, value); samples the action when none is given."""
        x = self.features(obs)
        dist = Categorical(logits=self.policy(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x).squeeze(-1)


# the (exclusive) highest id of each value along an observation's last axis
PROBE_HIGH = {"symbolic": (NUM_TILES, NUM_COLOURS),
              "goal": (NUM_GOALS, NUM_TILES, NUM_COLOURS, NUM_TILES, NUM_COLOURS),
              "direction": (4,), "pocket": (NUM_TILES, NUM_COLOURS)}


def probe_input(obs_shape, seed: int = 0):
    """A fixed batch of frames (or of each observation of a dict, valid ids for the xland
    ones): the checkpoint stores the logits it gives, so a reload can be checked."""
    g = torch.Generator().manual_seed(seed)
    if not isinstance(obs_shape, dict):
        return torch.randint(0, 256, (4, *obs_shape), generator=g, dtype=torch.uint8)
    batch = {}
    for name, shape in sorted(obs_shape.items()):
        high = torch.tensor(PROBE_HIGH.get(name, (256,)))
        noise = torch.rand((4, *shape), generator=g)
        batch[name] = (noise * high).to(torch.uint8)  # below high along the last axis
    return batch


def save_checkpoint(path, model: ActorCritic, **fields) -> None:
    """Writes the model, its shapes and its probe logits with `fields` (the trainer's
    args, optimizer state, counters) to `path`; a file there is replaced whole, never
    left half-written."""
    training = model.training
    model.eval()
    with torch.no_grad():
        probe = model.logits(probe_input(model.obs_shape)).tolist()
    model.train(training)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    shape = model.obs_shape
    shape = ({k: list(v) for k, v in shape.items()} if isinstance(shape, dict) else list(shape))
    torch.save({"model": model.state_dict(), "obs_shape": shape,
                "n_actions": model.n_actions, "probe_logits": probe, **fields}, tmp)
    os.replace(tmp, path)


class ExportedModel:
    """A policy that another trainer exported with torch.export (uint8 frames (batch, H, W,
    C) -> logits), played as ActorCritic's logits() (the BenchMARL adapter's save_policy
    writes one): no code of that trainer is needed to load it."""

    def __init__(self, program: bytes):
        self.module = torch.export.load(io.BytesIO(program)).module()

    def logits(self, obs) -> torch.Tensor:
        return self.module(obs)


def load_checkpoint(path, map_location="cpu"):
    """(model in eval mode, checkpoint dict) from a checkpoint.pt of examples/train_ppo.py,
    or of another trainer's exported policy (its "model" the program's bytes:
    ExportedModel)."""
    ckpt = torch.load(path, map_location=map_location, weights_only=False)
    missing = [k for k in REQUIRED_KEYS if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of examples/train_ppo.py "
                         f"(it lacks {', '.join(missing)})")
    if isinstance(ckpt["model"], bytes):
        return ExportedModel(ckpt["model"]), ckpt
    shape = ckpt["obs_shape"]
    shape = ({k: tuple(v) for k, v in shape.items()} if isinstance(shape, dict) else tuple(shape))
    model = ActorCritic(shape, ckpt["n_actions"])
    model.load_state_dict(ckpt["model"])
    model.eval()
    return model, ckpt


def env_options(ckpt: dict) -> dict:
    """The env options of a checkpoint's training (num_agents, max_cycles, obs_size,
    frameskip, and task_options where it set any), for
    craftium_ma.parallel_env(ckpt["args"]["task"], **options)."""
    options = {k: ckpt["args"][k] for k in ENV_KEYS}
    if ckpt["args"].get("task_options"):
        options["task_options"] = json.loads(ckpt["args"]["task_options"])
    return options


def observation_names(ckpt_or_option) -> list[str]:
    """The observations a checkpoint's model sees (its args' `observations`, "rgb" for a
    checkpoint without it), or those of train_ppo's --observations string."""
    value = ckpt_or_option
    if isinstance(value, dict):
        value = value["args"].get("observations", RGB)
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"observations must name each observation once, comma-separated, "
                         f"got {value!r}")
    return names


def env_observations(names: list[str]):
    """parallel_env's observations= for these names: "rgb" alone gives plain frames,
    anything else a dict per agent."""
    return RGB if names == [RGB] else list(names)


class FrameStack:
    """The model's input from raw frames, as training builds it: each frame in grey with
    `grayscale` (GREY_WEIGHTS), the last `k` on the channel axis, newest last, zeros
    before an episode's first. Holds one stack per row (an env slot, or an agent)."""

    def __init__(self, frame_shape, grayscale: bool = False, k: int = 1, rows: int = 1):
        if len(frame_shape) != 3 or frame_shape[2] != 3:
            raise ValueError(f"frame_shape must be (height, width, 3), got {tuple(frame_shape)}")
        if k < 1 or rows < 1:
            raise ValueError(f"k and rows must be at least 1, got k={k}, rows={rows}")
        h, w, _ = self.frame_shape = tuple(frame_shape)
        self.grayscale = grayscale
        self.channels = 1 if grayscale else 3
        self.shape = (h, w, self.channels * k)
        self.stacks = np.zeros((rows, *self.shape), np.uint8)

    @classmethod
    def for_checkpoint(cls, ckpt: dict, rows: int = 1) -> FrameStack:
        """The preprocessing of a checkpoint's training run (of its frames)."""
        shape = ckpt["obs_shape"]
        h, w = (shape[RGB] if isinstance(shape, dict) else shape)[:2]
        return cls((h, w, 3), ckpt["args"]["grayscale"], ckpt["args"]["frame_stack"], rows)

    def push(self, frames: np.ndarray, fresh=None) -> np.ndarray:
        """Adds one frame per row, (rows, H, W, 3) uint8; rows where `fresh` (a bool per
        row) is true start an episode: no history. Returns a copy of the stacks."""
        frames = np.asarray(frames)
        expected = (len(self.stacks), *self.frame_shape)
        if frames.shape != expected:
            raise ValueError(f"frames must have shape {expected}, got {frames.shape}")
        if self.grayscale:
            frames = (frames.astype(np.float32) @ GREY_WEIGHTS).astype(np.uint8)[..., None]
        if fresh is not None:
            self.stacks[np.asarray(fresh, bool)] = 0
        c = self.channels
        self.stacks[..., :-c] = self.stacks[..., c:].copy()
        self.stacks[..., -c:] = frames
        return self.stacks.copy()


class ModelInput:
    """The model's input from the env's observations, as training builds it: plain frames
    (observations "rgb") through a FrameStack, or a dict of observations whose "rgb" (if
    any) goes through a FrameStack and whose others go as they are. One row per env slot
    or agent; `shape` is what ActorCritic takes as obs_shape."""

    def __init__(self, names: list[str], space, grayscale: bool = False, k: int = 1,
                 rows: int = 1):
        self.names, self.rows = list(names), rows
        self.dict = names != [RGB]
        self.frames = None
        if RGB in names:
            frame_shape = space[RGB].shape if self.dict else space.shape
            self.frames = FrameStack(frame_shape, grayscale, k, rows)
        if not self.dict:
            self.shape = self.frames.shape
        else:
            self.shape = {n: self.frames.shape if n == RGB else tuple(space[n].shape)
                          for n in sorted(names)}

    @classmethod
    def for_checkpoint(cls, ckpt: dict, space, rows: int = 1) -> ModelInput:
        """The preprocessing of a checkpoint's training run, for an env of observation
        space `space` (built with env_observations(observation_names(ckpt)))."""
        return cls(observation_names(ckpt), space, ckpt["args"]["grayscale"],
                   ckpt["args"]["frame_stack"], rows)

    def zeros(self):
        """One row's observation that an agent done before its env's end sees."""
        if not self.dict:
            return np.zeros(self.frames.frame_shape, np.uint8)
        return {n: np.zeros(self.frames.frame_shape if n == RGB else s, np.uint8)
                for n, s in self.shape.items()}

    def push(self, obs, fresh=None):
        """obs: (rows, ...) frames, or a dict of such arrays; rows where `fresh` is true
        start an episode. Returns the model's input as numpy arrays (copies)."""
        if not self.dict:
            return self.frames.push(obs, fresh)
        return {n: self.frames.push(obs[n], fresh) if n == RGB else np.array(obs[n])
                for n in self.shape}
