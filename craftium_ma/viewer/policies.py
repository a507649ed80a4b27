"""A checkpoint of examples/train_ppo.py as a Runner policy (for `serve --policy PATH`).

The model and its preprocessing come from craftium_ma.models (the `train` extra; serve
imports this module only for a checkpoint): the policy stacks each agent's frames as
training did, so the runner's env stays the plain env whose frames the viewer shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..models import FrameStack, env_options, load_checkpoint


class CheckpointPolicy:
    """Samples the checkpoint's actions from each agent's preprocessed frame stack."""

    def __init__(self, path: str | Path, seed: int | None = None):
        import torch  # imported by craftium_ma.models, which says which extra it needs
        self._torch = torch
        self.model, self.checkpoint = load_checkpoint(path)
        self.args = self.checkpoint["args"]
        self.generator = torch.Generator()
        if seed is not None:
            self.generator.manual_seed(seed)
        self._stacks: dict[str, FrameStack] = {}

    def _preprocess(self, agent: str, frame: np.ndarray) -> np.ndarray:
        """The agent's frame stack with `frame` added (a new agent's starts empty)."""
        if agent not in self._stacks:
            self._stacks[agent] = FrameStack.for_checkpoint(self.checkpoint)
        return self._stacks[agent].push(frame[None])

    def __call__(self, agent: str, observation: np.ndarray, info: dict) -> int:
        torch = self._torch
        batch = torch.from_numpy(self._preprocess(agent, observation))
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
    trained_on = policy.args["task"]
    if trained_on != task:
        raise ValueError(f"checkpoint {path} was trained on task {trained_on!r}, not {task!r}")
    return policy, env_options(policy.checkpoint)
