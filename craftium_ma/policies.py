"""Policies in the Runner's convention, `(agent, observation, info) -> action`: uniformly
random ones, and a checkpoint of examples/train_ppo.py or a BenchMARL policy saved by
craftium_ma.integrations.benchmarl.save_policy (the `train` extra), which builds
each agent's input as training did (its frame stack, its declared observations). The
viewer's `serve --policy`, `craftium_ma.evaluate` and the scenarios' saved-policy bots
use them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class RandomPolicy:
    """Uniformly random actions of each agent's action space, from a generator of `seed`."""

    def __init__(self, env, seed: int | None = None):
        self._env = env
        self._rng = np.random.default_rng(seed)

    def __call__(self, agent: str, observation, info: dict):
        space = self._env.action_space(agent)
        return int(self._rng.integers(space.n)) if hasattr(space, "n") else space.sample()


class CheckpointPolicy:
    """Samples a checkpoint's actions from each agent's input, built as in its training
    (frames stacked, declared observations beside them); `reset()` starts every agent
    afresh, as a new episode does in training. In an env of a smaller frameskip than its
    training's, `hold_actions()` keeps its training's pace."""

    def __init__(self, path: str | Path, seed: int | None = None):
        from .models import env_observations, load_checkpoint, observation_names
        import torch
        self._torch = torch
        self.path = Path(path)
        if not self.path.is_file():
            raise ValueError(f"{str(path)!r} is not a checkpoint file (of examples/train_ppo.py)")
        self.model, self.checkpoint = load_checkpoint(self.path)
        self.args = self.checkpoint["args"]
        self.task = self.args["task"]
        #: the observations the model sees, as parallel_env's observations= takes them
        self.observation_names = observation_names(self.checkpoint)
        self.observations = env_observations(self.observation_names)
        self.generator = torch.Generator()
        if seed is not None:
            self.generator.manual_seed(seed)
        self._inputs = {}
        self._decide_every, self._hold = 1, []
        self._held = {}  # agent -> (the action it holds, steps left to hold it)

    def hold_actions(self, frameskip: int, actions) -> None:
        """Act in an env of `frameskip` whose task has `actions` (its DiscreteAction table) at
        the pace of training: where training's frameskip is k times the env's, an agent's
        action is decided every k-th step, from that step's observation (the frame stack
        gets only those), and its keys are held for the k - 1 steps after, its camera turn
        not repeated: as training's frameskip held keys for every frame and turned once."""
        trained = int(self.args.get("frameskip", 1))
        if frameskip < trained and trained % frameskip:
            raise ValueError(f"checkpoint {self.path} was trained at frameskip {trained}: an "
                             f"env of frameskip {frameskip} cannot keep its pace (a divisor of "
                             f"{trained} can)")
        self._decide_every = max(1, trained // frameskip)
        self._hold = ([_keys_only(actions, a) for a in range(self.checkpoint["n_actions"])]
                      if self._decide_every > 1 else [])
        self._held.clear()

    def check_fits(self, observation_space, action_space, who: str) -> None:
        """A ValueError naming what differs where `who`'s spaces are not those the checkpoint
        was trained on (its actions may be the first of a larger space)."""
        from .models import ModelInput
        try:
            shape = ModelInput.for_checkpoint(self.checkpoint, observation_space).shape
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise ValueError(f"checkpoint {self.path} does not fit {who}'s observation space "
                             f"{observation_space}: {e!r}") from None
        trained = self.checkpoint["obs_shape"]
        trained = ({k: tuple(v) for k, v in trained.items()} if isinstance(trained, dict)
                   else tuple(trained))
        # a policy of the first n actions (train_ppo's --num-actions) acts in the whole space
        if shape != trained or getattr(action_space, "n", 0) < self.checkpoint["n_actions"]:
            raise ValueError(f"checkpoint {self.path} (task {self.task!r}) takes observations of "
                             f"shape {trained} and {self.checkpoint['n_actions']} actions; "
                             f"{who} has {shape} and {action_space}")

    def reset(self) -> None:
        self._inputs.clear()
        self._held.clear()

    def __call__(self, agent: str, observation, info: dict) -> int:
        action, steps_left = self._held.get(agent, (0, 0))
        if steps_left:
            self._held[agent] = (action, steps_left - 1)
            return action
        action = self._decide(agent, observation)
        if self._decide_every > 1:
            self._held[agent] = (self._hold[action], self._decide_every - 1)
        return action

    def _decide(self, agent: str, observation) -> int:
        from .models import ModelInput
        torch = self._torch
        if agent not in self._inputs:
            space = _space_of(observation)
            self._inputs[agent] = ModelInput.for_checkpoint(self.checkpoint, space)
        rows = ({k: np.asarray(v)[None] for k, v in observation.items()}
                if isinstance(observation, dict) else np.asarray(observation)[None])
        model_input = self._inputs[agent].push(rows)
        batch = ({k: torch.from_numpy(v) for k, v in model_input.items()}
                 if isinstance(model_input, dict) else torch.from_numpy(model_input))
        with torch.no_grad():
            logits = self.model.logits(batch)
        return int(torch.multinomial(torch.softmax(logits, -1), 1,
                                     generator=self.generator).item())

    def on_event(self, event):
        """The Runner's events: a new episode starts from empty frame stacks."""
        if event.type in ("episode_ended", "run_started"):
            self.reset()


def _keys_only(actions, a: int) -> int:
    """The action of `actions` that presses action a's keys without its camera turn."""
    if not (actions[a].dx or actions[a].dy):
        return a
    for i, other in enumerate(actions):
        if other.keys == actions[a].keys and not (other.dx or other.dy):
            return i
    raise ValueError(f"action {actions[a].name!r} turns the camera, and no action presses "
                     "its keys without turning: its keys cannot be held at a smaller frameskip")


def _space_of(observation):
    """The shapes ModelInput needs, from one observation (an array or a dict of them)."""
    from gymnasium import spaces
    if isinstance(observation, dict):
        return spaces.Dict({k: _space_of(v) for k, v in observation.items()})
    array = np.asarray(observation)
    return spaces.Box(0, 255, array.shape, array.dtype)


def checkpoint_policy(path: str | Path, task: str, seed: int | None = None):
    """(the policy, the env options of its training) for a checkpoint.pt trained on `task`."""
    from .models import env_options
    if not Path(path).is_file():
        raise ValueError(f"{str(path)!r} is neither 'random' nor a checkpoint file")
    policy = CheckpointPolicy(path, seed)
    if policy.task != task:
        raise ValueError(f"checkpoint {path} was trained on task {policy.task!r}, not {task!r}")
    return policy, env_options(policy.checkpoint)
