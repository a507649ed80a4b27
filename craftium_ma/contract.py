"""The public contract between an env and whoever steps it, declared once.

A step is two halves, as in EnvPool (envpool/python/protocol.py): `send(actions)` starts
it and returns at once, `recv()` waits for its answer and returns step()'s tuple;
`step(actions)` is `send` then `recv`. A caller that drives many envs from one thread
(craftium_ma.vector's pool) polls the sockets `send` returns, hands each reply that has
come to `take_reply`, and calls `recv` once `answered` says it will not wait; while it
waits, `check_in_flight` raises what `recv` would (a dead process, a Lua error, no
answer within the timeout). After such a failure `fault` says what broke, and
`fault_result()` ends the episode (live agents truncated, infos `engine_restarted`);
the next `reset()` starts new engine processes.

A task's env subclass (the manifest's `env_class`) shapes each episode and each step
through the hooks of TaskHooks, which `reset`, `step` and `recv` call; it overrides
nothing else of the stepping. See docs/environments.md#the-stepping-contract.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import zmq

#: step()'s and recv()'s (observations, rewards, terminations, truncations, infos)
StepResult = tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool],
                   dict[str, dict]]


@runtime_checkable
class SplitStepEnv(Protocol):
    """What an env offers to be stepped in halves (CraftiumParallelEnv has it)."""

    possible_agents: list[str]
    agents: list[str]  # the live agents: those send() needs an action for

    def check_actions(self, actions: dict) -> None:
        """Raises the ValueError or TypeError send() would for these actions; sends nothing."""

    def send(self, actions: dict) -> list[zmq.Socket]:
        """Starts a step of the live agents; returns the sockets its answer comes on."""

    def take_reply(self, sock: zmq.Socket) -> None:
        """Reads the reply that has come on one of send()'s sockets."""

    @property
    def answered(self) -> bool:
        """Every socket send() returned has its reply read: recv() does not wait."""

    def check_in_flight(self) -> None:
        """Raises what recv() would, now, for a step in flight."""

    def recv(self) -> StepResult:
        """The answer to the step sent (waits for it, within the env's timeout)."""

    @property
    def fault(self) -> str | None:
        """What broke the engine session in its last call; None while it is sound."""

    def fault_result(self) -> StepResult:
        """Ends the episode of a broken session: the live agents' last observations, reward 0,
        truncated, infos {"engine_restarted": True}; afterwards no agent is live."""

    @property
    def last_frames(self) -> dict[str, np.ndarray]:
        """Each agent's latest frame (an agent done before the others keeps its last)."""

    @property
    def last_observations(self) -> dict[str, Any]:
        """Each agent's latest observation as reset() and step() returned it (an agent
        done before the others keeps its last)."""


class TaskHooks(Protocol):
    """What a task's env subclass may override; each default returns its input."""

    def episode_options(self, task_options: dict, seed: int) -> dict:
        """The options Lua gets for the episode of `seed` (xland draws its world here)."""

    def shape_observations(self, observations: dict[str, Any]) -> dict[str, Any]:
        """Each agent's observation from what observations= selects (its frame by
        default), at reset and at every step."""

    def shape_rewards(self, rewards: dict[str, float]) -> dict[str, float]:
        """Each agent's reward from what Lua gave it, at every step."""

    def shape_infos(self, infos: dict[str, dict]) -> dict[str, dict]:
        """Each agent's info from the engine's and Lua's, at reset and at every step."""
