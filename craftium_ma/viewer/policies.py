"""A checkpoint of examples/train_ppo.py as a Runner policy (for `serve --policy PATH`).

The policy sees each agent's frames through the preprocessing of training (SuperSuit's
colour reduction and frame stack, applied per agent with SuperSuit's own functions), so
the runner's env stays the plain env whose frames the viewer shows.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

TRAIN_PPO = Path(__file__).resolve().parents[2] / "examples" / "train_ppo.py"


def _train_ppo():
    """The train_ppo module of this checkout (it holds the model's class)."""
    if "train_ppo" in sys.modules:
        return sys.modules["train_ppo"]
    if not TRAIN_PPO.is_file():
        raise ValueError(f"a checkpoint policy needs examples/train_ppo.py of a craftium-ma "
                         f"checkout (not found at {TRAIN_PPO})")
    spec = importlib.util.spec_from_file_location("train_ppo", TRAIN_PPO)
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_ppo"] = module
    spec.loader.exec_module(module)
    return module


class CheckpointPolicy:
    """Samples the checkpoint's actions from each agent's preprocessed frame stack."""

    def __init__(self, path: str | Path, seed: int | None = None):
        import torch
        from gymnasium import spaces
        self._torch = torch
        train_ppo = _train_ppo()
        self.model, checkpoint = train_ppo.load_checkpoint(path)
        self.args = checkpoint["args"]
        self.generator = torch.Generator()
        if seed is not None:
            self.generator.manual_seed(seed)
        size = self.args["obs_size"]
        self._frame_space = spaces.Box(0, 255, (size, size, 3), np.uint8)
        self._stacks: dict[str, np.ndarray] = {}

    def _preprocess(self, agent: str, frame: np.ndarray) -> np.ndarray:
        from supersuit.utils.basic_transforms import color_reduction
        from supersuit.utils.frame_stack import stack_init, stack_obs
        space = self._frame_space
        if self.args["grayscale"]:
            frame = color_reduction.change_observation(frame, space, "full")
            space = color_reduction.change_obs_space(space, "full")
        k = self.args["frame_stack"]
        if k <= 1:
            return frame
        if agent not in self._stacks:
            self._stacks[agent] = stack_init(space, k)
        self._stacks[agent] = stack_obs(self._stacks[agent], frame, space, k)
        return self._stacks[agent]

    def __call__(self, agent: str, observation: np.ndarray, info: dict) -> int:
        torch = self._torch
        batch = torch.from_numpy(self._preprocess(agent, observation)[None].copy())
        with torch.no_grad():
            logits = self.model.logits(batch)
        return int(torch.multinomial(torch.softmax(logits, -1), 1,
                                     generator=self.generator).item())

    def on_event(self, event):
        """A new episode starts from empty frame stacks, as in training."""
        if event.type in ("episode_ended", "run_started"):
            self._stacks.clear()


def checkpoint_policy(path: str, task: str, seed: int | None = None):
    """(the policy, the env options of its training) for a checkpoint.pt."""
    if not Path(path).is_file():
        raise ValueError(f"--policy {path!r} is neither 'random' nor a checkpoint file")
    policy = CheckpointPolicy(path, seed)
    a = policy.args
    if a["task"] != task:
        raise ValueError(f"checkpoint {path} was trained on task {a['task']!r}, not {task!r}")
    return policy, {"num_agents": a["num_agents"], "max_cycles": a["max_cycles"],
                    "obs_size": a["obs_size"], "frameskip": a["frameskip"]}
