"""The actor-critic that examples/train_ppo.py trains, its checkpoints and its input.

A checkpoint is one `torch.save`d dict: the model's state dict under "model", the
observation shape and action count that rebuild it, the logits of a fixed probe batch
(to check a reload) and whatever the trainer adds (its args, optimizer, counters). The
model sees frames as training built them: optionally grey, the last k frames stacked
on the channel axis (FrameStack). Needs the `train` extra.
"""

from __future__ import annotations

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

SQRT2 = math.sqrt(2)
# ITU-R BT.601 luma, in float32 as SuperSuit's color_reduction_v0(mode="full") uses it
GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)
# a checkpoint's training settings that the env must repeat for the model to see its frames
ENV_KEYS = ("num_agents", "max_cycles", "obs_size", "frameskip")
REQUIRED_KEYS = ("model", "obs_shape", "n_actions", "args")


def layer_init(layer, std=SQRT2, bias=0.0):
    """Orthogonal weights with gain `std`, constant bias: the layer, initialised."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class ActorCritic(nn.Module):
    """A small CNN trunk shared by a policy head and a value head. Takes uint8 frames
    (batch, H, W, C) as FrameStack gives them."""

    def __init__(self, obs_shape: tuple[int, int, int], n_actions: int):
        super().__init__()
        if len(obs_shape) != 3:
            raise ValueError(f"obs_shape must be (height, width, channels), got {tuple(obs_shape)}")
        h, w, c = self.obs_shape = tuple(int(n) for n in obs_shape)
        self.n_actions = int(n_actions)
        # two strided convolutions: 48x48 -> 11x11x32 -> 4x4x64; cheap enough on 2 cores
        self.trunk = nn.Sequential(
            layer_init(nn.Conv2d(c, 32, 8, stride=4)), nn.ReLU(),
            layer_init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            n_flat = self.trunk(torch.zeros(1, c, h, w)).shape[1]
        self.trunk.append(layer_init(nn.Linear(n_flat, 256)))
        self.trunk.append(nn.ReLU())
        self.policy = layer_init(nn.Linear(256, self.n_actions), std=0.01)
        self.value = layer_init(nn.Linear(256, 1), std=1.0)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        return self.trunk(obs.permute(0, 3, 1, 2).float() / 255.0)

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        return self.policy(self.features(obs))

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value(self.features(obs)).squeeze(-1)

    def act(self, obs, action=None):
        """(action, log-prob, entropy, value); samples the action when none is given."""
        x = self.features(obs)
        dist = Categorical(logits=self.policy(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x).squeeze(-1)


def probe_input(obs_shape, seed: int = 0) -> torch.Tensor:
    """A fixed batch of frames: the checkpoint stores the logits it gives, so a reload
    can be checked against them."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (4, *obs_shape), generator=g, dtype=torch.uint8)


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
    torch.save({"model": model.state_dict(), "obs_shape": list(model.obs_shape),
                "n_actions": model.n_actions, "probe_logits": probe, **fields}, tmp)
    os.replace(tmp, path)


def load_checkpoint(path, map_location="cpu"):
    """(model in eval mode, checkpoint dict) from a checkpoint.pt of examples/train_ppo.py."""
    ckpt = torch.load(path, map_location=map_location, weights_only=False)
    missing = [k for k in REQUIRED_KEYS if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of examples/train_ppo.py "
                         f"(it lacks {', '.join(missing)})")
    model = ActorCritic(tuple(ckpt["obs_shape"]), ckpt["n_actions"])
    model.load_state_dict(ckpt["model"])
    model.eval()
    return model, ckpt


def env_options(ckpt: dict) -> dict:
    """The env options of a checkpoint's training (num_agents, max_cycles, obs_size,
    frameskip), for craftium_ma.parallel_env(ckpt["args"]["task"], **options)."""
    return {k: ckpt["args"][k] for k in ENV_KEYS}


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
        """The preprocessing of a checkpoint's training run."""
        h, w = ckpt["obs_shape"][:2]
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
