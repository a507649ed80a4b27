"""Evaluating a population: its focal per-capita return in scenarios, as Melting Pot
scores it, or its mean return in a plain task; reference scores and normalisation.

`policy` is "random", "scripted" (each task's reference puppets, SCRIPTED), a bot's
name, a checkpoint path of examples/train_ppo.py, a callable `(agent, observation,
info) -> action` (the Runner's convention), or a dict of them by role. Episode k of a
scenario has seed `seed + k`: the same call gives the same records, bit for bit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..make import parallel_env
from ..policies import CheckpointPolicy, RandomPolicy, checkpoint_policy
from . import population as botlib
from .catalogue import scenario as find_scenario
from .env import ScenarioEnv
from .scenario import Scenario

#: the scripted reference population of each task: a bot per role
SCRIPTED = {
    "capture_the_flag": {"red": "capture_the_flag.team", "blue": "capture_the_flag.team"},
    "commons_harvest": {"default": "commons_harvest.sustainable"},
    "duel": {"default": "duel.aggressive"},
    "pressure_plates": {"default": "pressure_plates.runner"},
    "spiders_attack": {"default": "spiders_attack.fighter"},
    "xland": {"default": "xland.planner"},
}
REFERENCES = Path(__file__).with_name("references.json")
BOOTSTRAP_SAMPLES = 10_000


def evaluate(policy, scenarios=None, *, task: str | None = None, episodes: int = 10,
             seed: int = 0, records: str | Path | None = None, ray: bool = False,
             **env_kwargs) -> list[dict]:
    """One result per scenario (or one for `task`): see the module doc and
    docs/scenarios.md. `records`: a JSONL file that gets one line per episode;
    `ray`: spread the episodes over Ray workers; `env_kwargs` go to the envs."""
    if (scenarios is None) == (task is None):
        raise ValueError("evaluate() takes scenarios=[names] or task=, one of them")
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive int, got {episodes!r}")
    if task is not None:
        jobs = [("task", task)]
    else:
        given = [scenarios] if isinstance(scenarios, (str, Scenario)) else list(scenarios)
        jobs = [("scenario", find_scenario(s) if isinstance(s, str) else s) for s in given]
    results, lines = [], []
    for kind, what in jobs:
        seeds = [seed + k for k in range(episodes)]
        if ray:
            played = _on_ray(kind, what, policy, seeds, env_kwargs)
        else:
            played = play_episodes(kind, what, policy, seeds, env_kwargs)
        lines += played
        results.append(summary(kind, played))
    if records is not None:
        Path(records).write_text("".join(json.dumps(r) + "\n" for r in lines))
    return results


def play_episodes(kind: str, what, policy, seeds: list[int], env_kwargs: dict) -> list[dict]:
    """The records of the episodes of `seeds` in `what` (a task's id or a Scenario)."""
    env, act = _env_and_policy(kind, what, policy, seeds[0], env_kwargs)
    config_hash = env.scenario.config_hash() if kind == "scenario" else None
    played = []
    try:
        for s in seeds:
            played.append(_episode(env, act, s, kind, config_hash))
    finally:
        env.close()
    return played


def _episode(env, act, seed: int, kind: str, config_hash: str | None) -> dict:
    if hasattr(act, "reset"):
        act.reset()
    observations, infos = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    while env.agents:
        actions = {a: act(a, observations[a], infos[a]) for a in env.agents
                   if kind == "task" or a in env.acting}
        observations, rewards, _, _, infos = env.step(actions)
        for a, r in rewards.items():
            returns[a] += r
        steps += 1
    if kind == "task":
        return {"task": env.task.id, "seed": seed, "steps": steps, "returns": returns}
    record = {"scenario": env.scenario.name, "seed": seed, "steps": steps}
    focal = [env.returns[a] for a in env.possible_agents]
    background = [r for a, r in env.returns.items() if a not in env.possible_agents]
    return {**record, "config_hash": config_hash, "bots": env.bots_drawn,
            "returns": env.returns, "focal_per_capita_return": float(np.mean(focal)),
            "background_per_capita_return": float(np.mean(background))}


def summary(kind: str, played: list[dict]) -> dict:
    """The result of a scenario's or a task's episode records."""
    name = played[0][kind]
    if kind == "task":
        per_agent = {a: float(np.mean([r["returns"][a] for r in played]))
                     for a in played[0]["returns"]}
        overall = [float(np.mean(list(r["returns"].values()))) for r in played]
        return {"task": name, "episodes": len(played), "mean_return": float(np.mean(overall)),
                "mean_return_ci95": ci95(overall), "mean_return_per_agent": per_agent}
    focal = [r["focal_per_capita_return"] for r in played]
    return {"scenario": name, "config_hash": played[0]["config_hash"], "episodes": len(played),
            "focal_per_capita_return": float(np.mean(focal)),
            "focal_per_capita_return_ci95": ci95(focal),
            "background_per_capita_return": float(np.mean(
                [r["background_per_capita_return"] for r in played]))}


def ci95(values: list[float]) -> list[float]:
    """A 95 % percentile-bootstrap interval of the mean (fixed resampling seed)."""
    values = np.asarray(values, float)
    rng = np.random.default_rng(0)
    means = rng.choice(values, (BOOTSTRAP_SAMPLES, len(values))).mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


# -- policies ------------------------------------------------------------------------------

def _env_and_policy(kind: str, what, policy, seed: int, env_kwargs: dict):
    """(the env, a callable acting for its players) for a policy as evaluate() takes it."""
    env_kwargs = dict(env_kwargs)
    given = env_kwargs.pop("observations", None)
    if kind == "task":
        observations = given or "rgb"
        if _is_checkpoint(policy):  # in the env of its training, unless told otherwise
            policy, options = checkpoint_policy(policy, what, seed)
            env_kwargs = options | env_kwargs
            observations = given or policy.observations
        env = parallel_env(what, observations=observations, **env_kwargs)
        act = _callable(policy, env, seed, "the task's agents")
        _fit(act, env, env.possible_agents)
        return env, act
    s = what
    by_role = dict(policy) if isinstance(policy, dict) else None
    if policy == "scripted":
        by_role = SCRIPTED.get(s.task)
        if by_role is None:
            raise ValueError(f"no scripted population for task {s.task!r}")
    focal_roles = sorted({s.roles[i] for i in s.focal_slots})
    if by_role is not None:
        missing = [r for r in focal_roles if r not in by_role]
        if missing:
            raise ValueError(f"the policy dict has no policy for role(s) {missing} of "
                             f"scenario {s.name!r}; its focal roles are {focal_roles}")
        chosen = {r: by_role[r] for r in focal_roles}
    else:
        chosen = dict.fromkeys(focal_roles, policy)
    bots = {r: p for r, p in chosen.items() if _is_bot_name(p, s.task)}
    # checkpoints loaded once: what they need of the env, then their actions
    learners = {r: CheckpointPolicy(p, seed) if _is_checkpoint(p) else p
                for r, p in chosen.items() if r not in bots}
    inputs = _common_inputs(learners.values())
    if "obs_size" in inputs:  # a checkpoint's frames, unless told otherwise
        env_kwargs.setdefault("obs_size", inputs["obs_size"])
    env = ScenarioEnv(s, observations=given or inputs["observations"], focal_bots=bots,
                      **env_kwargs)
    role_of = {a: s.roles[i] for a, i in zip(env.possible_agents, s.focal_slots)}
    acts = {r: _callable(p, env, seed, f"role {r!r} of scenario {s.name!r}")
            for r, p in learners.items()}
    for r, a in acts.items():
        _fit(a, env, [x for x in env.acting if role_of[x] == r])
    return env, _ByRole(acts, role_of)


class _ByRole:
    """Calls each agent's role's policy; reset() resets those that can."""

    def __init__(self, acts: dict[str, Callable], role_of: dict[str, str]):
        self.acts, self.role_of = acts, role_of

    def __call__(self, agent, observation, info):
        return self.acts[self.role_of[agent]](agent, observation, info)

    def reset(self):
        for act in self.acts.values():
            if hasattr(act, "reset"):
                act.reset()


def _is_bot_name(policy, task: str) -> bool:
    return isinstance(policy, str) and policy in botlib.bots(task)


def _is_checkpoint(policy) -> bool:
    return isinstance(policy, (str, Path)) and str(policy).endswith(botlib.CHECKPOINT_SUFFIX)


def _inputs_of(policy) -> dict:
    """What the env must give a policy: a loaded checkpoint's observations and frame size,
    else frames."""
    if not isinstance(policy, CheckpointPolicy):
        return {"observations": "rgb"}
    size = {"obs_size": policy.args["obs_size"]} if "obs_size" in policy.args else {}
    return {"observations": policy.observations, **size}


def _common_inputs(policies) -> dict:
    chosen = {json.dumps(_inputs_of(p), sort_keys=True) for p in policies}
    if len(chosen) > 1:
        raise ValueError(f"the focal policies need different inputs ({sorted(chosen)}); "
                         "evaluate them in separate calls")
    return json.loads(chosen.pop()) if chosen else {"observations": "rgb"}


def _callable(policy, env, seed: int, who: str) -> Callable:
    if isinstance(policy, str) and policy == "random":
        return RandomPolicy(env, seed)
    if _is_checkpoint(policy):
        return CheckpointPolicy(policy, seed)
    if callable(policy):
        return policy
    raise ValueError(f"the policy of {who} is {policy!r}: give 'random', 'scripted', a bot's "
                     "name, a checkpoint path (*.pt), a callable (agent, observation, info) -> "
                     "action, or a dict of them by role")


def _fit(act, env, agents: list[str]) -> None:
    """A checkpoint checked against the agents' spaces, and paced to the env's frameskip."""
    if isinstance(act, CheckpointPolicy):
        for agent in agents:
            act.check_fits(env.observation_space(agent), env.action_space(agent), agent)
        act.hold_actions(env.frameskip, env.task.actions)


def _on_ray(kind: str, what, policy, seeds: list[int], env_kwargs: dict) -> list[dict]:
    """play_episodes() over Ray workers, one chunk of seeds per CPU Ray has."""
    import ray
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    chunks = np.array_split(seeds, max(1, min(len(seeds), int(ray.available_resources().get(
        "CPU", 1)))))
    remote = ray.remote(play_episodes)
    futures = [remote.remote(kind, what, policy, [int(s) for s in c], env_kwargs)
               for c in chunks if len(c)]
    return [r for chunk in ray.get(futures) for r in chunk]


# -- reference scores ----------------------------------------------------------------------

def reference_scores() -> dict:
    """The committed scores of the random and scripted populations, by scenario
    (benchmarks/scenario_references.py writes them)."""
    return json.loads(REFERENCES.read_text())["scenarios"] if REFERENCES.exists() else {}


def normalised(results: list[dict]) -> dict:
    """Melting Pot's scoring against the references: each scenario's focal per-capita
    return min-max normalised between the random (0) and the scripted (1) populations'
    (where the two differ), then averaged over each task's scenarios."""
    references, by_task = reference_scores(), {}
    for result in results:
        name = result["scenario"]
        ref = references.get(name)
        if ref is None:
            raise ValueError(f"no reference scores for scenario {name!r}")
        if ref["config_hash"] != result["config_hash"]:
            raise ValueError(f"the reference scores of {name!r} are of another configuration "
                             f"(hash {ref['config_hash'][:12]}, now {result['config_hash'][:12]})")
        low, high = ref["random"], ref["scripted"]
        if low == high:
            continue
        score = (result["focal_per_capita_return"] - low) / (high - low)
        by_task.setdefault(find_scenario(name).task, []).append(score)
    return {t: float(np.mean(v)) for t, v in by_task.items()}
