"""PPO with parameter sharing on a craftium-ma task, in one file.

Every agent of every env copy is one slot (row) of a craftium_ma.vector_env pool; one
actor-critic (craftium_ma.models.ActorCritic: a small CNN on frames, encoders for the
xland task's symbolic view and goal) acts for all of them and learns from all of their
experience.

    craftium_ma.vector_env(task, num_envs, observations=...) -> frames: [grey] -> the last
      frame_stack frames; other observations as they are
      -> an env whose episode ended is reset in the same step (reset_mask)

Writes into --out-dir (default out/ppo/<run-name>):
  episodes.csv   one row per finished episode: global_step, wall_time, env, length,
                 return of each agent, team return (the sum over agents)
  updates.csv    one row per PPO update: losses, entropy, KL, clip fraction, steps/s
  curve.png      the learning curve (team and per-agent return against env steps)
  checkpoint.pt  model and optimizer state, args, step counters; reload with --resume
  snapshot_<agent steps>.pt  with --snapshots N: the model at N points of the run

With --opponent-refresh N (competitive tasks) one side of each copy learns (a team, or one
agent in a task without teams) and the others play a frozen copy of the policy, replaced
by the learner's every N updates: self-play against a snapshot instead of against itself;
with --opponent-pool K the replacement is drawn from the learner's last K refreshes (a
league of past selves).

Run `python examples/train_ppo.py --help` for the options; docs/training.md has the
settings that learn small_room and the figures they give.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import copy
import dataclasses
import inspect
import itertools
import json
import os
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

import craftium_ma
from craftium_ma.models import (ActorCritic, ModelInput, env_observations, observation_names,
                                save_checkpoint)
from craftium_ma.tasks import TaskError, find_task, options_from_json

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Args:
    # environment
    task: str = "small_room"
    observations: str = "rgb"
    """what the policy sees, comma-separated: rgb (the frames) and/or the task's declared
    observations that ActorCritic encodes (xland: symbolic, goal, direction, pocket), e.g.
    symbolic,goal"""
    task_options: str = ""
    """the task's options as a JSON object, e.g. '{"size": 5}' (empty: the task's defaults)"""
    num_agents: int = 2
    max_cycles: int = 100
    """steps until every agent is truncated"""
    frameskip: int = 4
    obs_size: int = 48
    """frames are rendered at obs_size x obs_size by the engine itself"""
    grayscale: bool = False
    """reduce frames to one grey channel (the red block is easier to see in colour)"""
    frame_stack: int = 2
    """frames stacked on the channel axis (frames only: other observations are not stacked)"""
    num_actions: int = 0
    """the policy uses the task's first num_actions actions only (0: all; xland: 6 leaves
    out its no-op, as XLand-MiniGrid's six actions)"""
    num_envs: int = 4
    """env copies, stepped together by one pool; the policy sees num_envs * num_agents slots"""
    scenario: str = ""
    """train the focal players of this scenario (craftium-ma scenarios) against its
    background bots, in worlds of this run's frameskip, max_cycles and obs_size, its task
    options under --task-options; --task and --num-agents follow from it"""
    scenario_bots: str = ""
    """with --scenario: pools of bots to replace the scenario's, a JSON object {role: [bot,
    ...]}, e.g. '{"default": ["duel.ppo_duel_fs4_frozen_1200k"]}' (a shipped baseline)"""
    # PPO
    total_timesteps: int = 400_000
    """agent steps over all slots (one env step of one copy counts num_agents)"""
    num_steps: int = 128
    """rollout length per slot between updates"""
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    norm_adv: bool = True
    """scale each minibatch's advantages to mean 0 and std 1 (CleanRL's norm_adv); off, they
    keep their size across minibatches"""
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    """stop an update's epochs early past this approximate KL (None: never)"""
    reward_scale: float = 0.1
    """rewards are multiplied by this for learning only (logged returns are unscaled)"""
    opponent_refresh: int = 0
    """self-play against a frozen opponent: in env copy k only side k % sides learns (a side:
    a team of the task, or one agent in a task without teams), the others act by a frozen
    copy of the policy, replaced by the learner's every this many updates (0: every agent
    acts by the shared policy and learns from its steps)"""
    opponent_pool: int = 1
    """with --opponent-refresh: at each refresh the opponent is drawn uniformly from the
    learner's weights at its last this many refreshes (1: the latest; more: a league of
    past selves)"""
    # bookkeeping
    seed: int = 1
    torch_threads: int = 0
    """threads for the gradient updates (0: all cores); the rollout uses one"""
    run_name: str = ""
    """default: <task>_<seed>_<time>"""
    out_dir: str = ""
    """default: out/ppo/<run-name>"""
    save_interval: int = 10
    """save the checkpoint and the curve every this many updates"""
    snapshots: int = 0
    """also keep the model at this many points spread evenly over the run, the last one
    included, as snapshot_<agent steps>.pt (0: none); a competitive task's learning curve
    is drawn from them against fixed opponents (benchmarks/baselines.py)"""
    resume: str = ""
    """checkpoint to continue from; its environment and model settings are used"""
    max_wall_time: float = 0.0
    """stop (and save) after this many seconds of this process's training (0: no limit)"""
    quiet: bool = False


# settings that fix the env, the observation and the network; a resumed run keeps the
# checkpoint's
MODEL_KEYS = ("task", "task_options", "observations", "num_agents", "max_cycles", "frameskip",
              "obs_size", "grayscale", "frame_stack", "scenario", "scenario_bots")


def field_docs(cls) -> dict[str, str]:
    """The string under each field of a dataclass (its --help text)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {a.target.id: b.value.value for a, b in itertools.pairwise(body)
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)}


def add_dataclass_args(parser, cls, skip=()):
    """One option per field: --num-envs 4, --anneal-lr/--no-anneal-lr, ..."""
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        doc = docs.get(f.name, "").replace("%", "%%")
        help_text = (doc + " " if doc else "") + "(default: %(default)s)"
        kwargs = {"default": f.default, "help": help_text}
        if f.type == "bool":
            kwargs["action"] = argparse.BooleanOptionalAction
        elif f.type == "float | None":
            kwargs["type"] = lambda s: None if s.lower() == "none" else float(s)
        else:
            kwargs["type"] = {"int": int, "float": float, "str": str}[f.type]
        parser.add_argument(flag, **kwargs)


def parse_args(argv=None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dataclass_args(parser, Args)
    args = Args(**vars(parser.parse_args(argv)))
    if args.task_options:
        try:
            options_from_json(args.task_options)
        except TaskError as e:
            parser.error(f"--task-options: {e}")
    try:
        scenario_bots(args)
    except ValueError as e:
        parser.error(str(e))
    return args


def with_scenario(args: Args) -> Args:
    """With --scenario: its task, its focal players as the agents, and its task options
    under --task-options (so that the checkpoint's env options are the worlds')."""
    if not args.scenario:
        return args
    if args.opponent_refresh:
        raise ValueError("--opponent-refresh: with --scenario the opponents are its bots")
    s = craftium_ma.scenario(args.scenario)
    options = s.task_options | (options_from_json(args.task_options) if args.task_options else {})
    return dataclasses.replace(args, task=s.task, num_agents=len(s.focal_slots),
                               task_options=json.dumps(options) if options else "")


def scenario_bots(args: Args) -> dict | None:
    """--scenario-bots as a dict {role: [bot, ...]} (None: the scenario's own pools)."""
    if not args.scenario_bots:
        return None
    if not args.scenario:
        raise ValueError("--scenario-bots needs --scenario")
    try:
        bots = json.loads(args.scenario_bots)
    except json.JSONDecodeError:
        bots = None
    if not isinstance(bots, dict) or not all(
            isinstance(pool, list) and pool and all(isinstance(b, str) for b in pool)
            for pool in bots.values()):
        raise ValueError("--scenario-bots: a JSON object of bot names per role, such as "
                         f"'{{\"default\": [\"duel.aggressive\"]}}', got {args.scenario_bots!r}")
    return bots


# --------------------------------------------------------------------------- environment

class TrainingVecEnv:
    """The pool as the rollout takes it: slot k is agent k % num_agents of copy
    k // num_agents, observations preprocessed by craftium_ma.models.ModelInput (frames:
    grey, the last frame_stack frames, zeros before the first; the others as they are), and
    a copy whose episode ended is reset in the same step, so its slots' next observations
    are the next episode's. A slot whose agent is done before its copy sees zeros and
    reward 0 until the copy's episode ends. Observations are arrays, or dicts of arrays
    (`obs_shape` says which)."""

    def __init__(self, args: Args, **env_kwargs):
        names = observation_names(args.observations)
        if args.task_options:
            env_kwargs = {"task_options": options_from_json(args.task_options)} | env_kwargs
        if args.scenario:  # its worlds, its players: the focal ones are the pool's agents
            world, env_kwargs["bots"] = craftium_ma.scenario(args.scenario), scenario_bots(args)
        else:
            world, env_kwargs["num_agents"] = args.task, args.num_agents
        self.pool = craftium_ma.vector_env(
            world, args.num_envs, max_cycles=args.max_cycles, obs_size=args.obs_size,
            frameskip=args.frameskip, observations=env_observations(names), **env_kwargs)
        self.num_agents, self.num_envs = args.num_agents, self.pool.num_envs
        self.input = ModelInput(names, self.pool.single_observation_space, args.grayscale,
                                args.frame_stack, rows=self.num_envs)
        self.obs_shape = self.input.shape  # ActorCritic's obs_shape
        self.action_space = self.pool.single_action_space

    def reset(self, seed=None):
        obs, infos = self.pool.reset(seed=seed)
        return self.input.push(obs, np.ones(self.num_envs, bool)), infos

    def step(self, actions):
        obs, rewards, terms, truncs, infos = self.pool.step(actions)
        ended = episode_over(terms | truncs, infos["active"], self.num_agents)
        fresh = np.repeat(ended, self.num_agents)
        if ended.any():
            reset_obs, _ = self.pool.reset(options={"reset_mask": ended})
            for array, new in zip(leaves(obs), leaves(reset_obs)):
                array[fresh] = new[fresh]
        return self.input.push(obs, fresh), rewards, terms, truncs, infos

    def close(self):
        self.pool.close()


def leaves(obs) -> list:
    """The arrays of an observation batch: itself, or a dict's values (in key order)."""
    return [obs[k] for k in sorted(obs)] if isinstance(obs, dict) else [obs]


def apply(fn, obs):
    """fn on an observation batch: on the array, or on each array of a dict of them."""
    return {k: fn(v) for k, v in obs.items()} if isinstance(obs, dict) else fn(obs)


def concat(batches: list):
    """One batch from a list of batches (tensors, or dicts of tensors), along axis 0."""
    if isinstance(batches[0], dict):
        return {k: torch.cat([b[k] for b in batches]) for k in batches[0]}
    return torch.cat(batches)


def episode_over(dones, active, num_agents):
    """Per copy: every agent is done now or was before (its slot is inactive)."""
    return (dones | ~active).reshape(-1, num_agents).all(axis=1)


def learner_slots(num_envs: int, num_agents: int, num_teams: int = 0) -> torch.Tensor:
    """Self-play against a frozen opponent: which slots learn, one side per env copy, side
    k % sides in copy k (so the learner plays every side of the task). A side is a team
    (agent_i on team i % num_teams) or, in a task without teams, one agent."""
    sides = num_teams or num_agents
    slot = torch.arange(num_envs * num_agents)
    return (slot % num_agents) % sides == (slot // num_agents) % sides


def make_vec_env(args: Args) -> TrainingVecEnv:
    return TrainingVecEnv(args)


# --------------------------------------------------------------------------- logging

class EpisodeTracker:
    """Per-slot episodic returns from the vector env's rewards and done flags.

    A copy's episode ends when all of its agents are done (see episode_over); each finished
    copy gives one row: every agent's return and their sum."""

    def __init__(self, num_envs: int, num_agents: int):
        self.num_envs, self.num_agents = num_envs, num_agents
        self.returns = np.zeros(num_envs * num_agents)
        self.lengths = np.zeros(num_envs, dtype=int)

    def step(self, rewards, dones, active):
        """Add one step; returns [(env, length, per-agent returns)] for copies that ended."""
        self.returns += rewards
        self.lengths += 1
        finished = []
        for e in np.flatnonzero(episode_over(dones, active, self.num_agents)):
            slots = slice(e * self.num_agents, (e + 1) * self.num_agents)
            finished.append((int(e), int(self.lengths[e]), self.returns[slots].copy()))
            self.returns[slots] = 0.0
            self.lengths[e] = 0
        return finished


def episode_header(num_agents):
    return (["global_step", "wall_time", "env", "length"]
            + [f"return_agent_{i}" for i in range(num_agents)] + ["return_team"])


def read_episodes(csv_path):
    """The episodes CSV as a dict of float arrays, one per column."""
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {}
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


def rolling_mean(x, window):
    if len(x) == 0:
        return x
    c = np.cumsum(np.insert(x, 0, 0.0))
    out = np.empty(len(x))
    for i in range(len(x)):
        lo = max(0, i + 1 - window)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out


def plot_curve(csv_path, png_path, title="", window=50, baselines=None):
    """Team and per-agent episodic return against env steps; `baselines` draws
    {label: value} as horizontal lines (e.g. the random policy's team return)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = read_episodes(csv_path)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=90)
    if data:
        steps = data["global_step"]
        agents = sorted(k for k in data if k.startswith("return_agent_"))
        ax.scatter(steps, data["return_team"], s=3, alpha=0.2, color="C0")
        ax.plot(steps, rolling_mean(data["return_team"], window), color="C0", lw=2,
                label=f"team (sum), mean of last {window}")
        for i, k in enumerate(agents):
            ax.plot(steps, rolling_mean(data[k], window), color=f"C{i + 1}", lw=1,
                    label=k.replace("return_", ""))
    for label, value in (baselines or {}).items():
        ax.axhline(value, color="grey", ls="--", lw=1)
        ax.annotate(label, (0.3, value), xycoords=("axes fraction", "data"),
                    xytext=(0, 3), textcoords="offset points", color="dimgrey", fontsize=8)
    ax.set_xlabel("agent steps (all slots)")
    ax.set_ylabel("episodic return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)


# --------------------------------------------------------------------------- training

def train(args: Args) -> dict:
    """Train, write the CSVs, the curve and the checkpoint; returns a summary dict."""
    ckpt = None
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu", weights_only=False)
        saved = ckpt["args"]
        for k in MODEL_KEYS:
            if getattr(args, k) != saved[k]:
                print(f"resume: using the checkpoint's {k}={saved[k]!r} (not {getattr(args, k)!r})")
        defaults = Args()  # for a key that an older checkpoint lacks (observations)
        saved = {k: saved.get(k, getattr(defaults, k)) for k in MODEL_KEYS} | saved
        args = dataclasses.replace(args, **{k: saved[k] for k in MODEL_KEYS})
        if not args.run_name:
            args.run_name = saved["run_name"]
        if not args.out_dir:
            args.out_dir = str(Path(args.resume).resolve().parent)
    args = with_scenario(args)
    if not args.run_name:
        args.run_name = f"{args.task}_{args.seed}_{time.strftime('%Y%m%d-%H%M%S')}"
    out = Path(args.out_dir or ROOT / "out" / "ppo" / args.run_name)
    out.mkdir(parents=True, exist_ok=True)
    args.out_dir = str(out)

    def log(*parts):
        if not args.quiet:
            tqdm.write(" ".join(map(str, parts)))  # above the progress bar, when one is shown
            sys.stdout.flush()

    update_threads = args.torch_threads or os.cpu_count() or 1
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    vec = make_vec_env(args)
    files = contextlib.ExitStack()
    try:
        n_slots = vec.num_envs
        obs_shape = vec.obs_shape  # (H, W, C) frames, or {name: shape}; uint8
        n_actions = int(vec.action_space.n)
        if args.num_actions:
            if not 0 < args.num_actions <= n_actions:
                raise ValueError(f"--num-actions must be in 1..{n_actions} (the task's actions), "
                                 f"got {args.num_actions}")
            n_actions = args.num_actions
        model = ActorCritic(obs_shape, n_actions)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
        global_step, update, wall_offset = 0, 0, 0.0
        if ckpt is not None:
            model.load_state_dict(ckpt["model"])
            optimizer.load_state_dict(ckpt["optimizer"])
            global_step, update = ckpt["global_step"], ckpt["update"]
            wall_offset = ckpt["wall_time"]
            log(f"resumed from {args.resume} at step {global_step}")
        # the slots whose steps train the policy; with a frozen opponent, the others act by it
        learns = torch.ones(n_slots, dtype=torch.bool)
        opponent, league = None, []  # league: the learner's weights at its last refreshes
        if args.opponent_pool < 1 or (args.opponent_pool > 1 and not args.opponent_refresh):
            raise ValueError("--opponent-pool needs a size of at least 1 and, above 1, "
                             f"--opponent-refresh; got {args.opponent_pool} and "
                             f"{args.opponent_refresh}")
        if args.opponent_refresh:
            if args.opponent_refresh < 0 or args.num_agents < 2:
                raise ValueError("--opponent-refresh needs a positive number of updates and at "
                                 f"least 2 agents, got {args.opponent_refresh} and "
                                 f"{args.num_agents} agents")
            learns = learner_slots(args.num_envs, args.num_agents,
                                   len(find_task(args.task).teams))
            opponent = copy.deepcopy(model)
            if ckpt is not None and "opponent" in ckpt:
                opponent.load_state_dict(ckpt["opponent"])
                league = ckpt.get("league", [])

        batch_size = n_slots * args.num_steps
        # the rollout's rows (step-major) that the update learns from
        train_rows = torch.nonzero(learns.repeat(args.num_steps)).squeeze(1)
        minibatch_size = len(train_rows) // args.num_minibatches
        num_updates = max(1, args.total_timesteps // batch_size)
        learner = f" ({len(train_rows)} of them the learner's)" if opponent is not None else ""
        where = args.task + (f" (the focal players of {args.scenario})" if args.scenario else "")
        log(f"{where}: {args.num_envs} envs x {args.num_agents} agents = {n_slots} slots, "
            f"obs {obs_shape}, {n_actions} actions, {num_updates} updates of {batch_size} steps"
            f"{learner} -> {out}")

        # rollout storage (the observations: a list of each step's batch)
        act_buf = torch.zeros((args.num_steps, n_slots), dtype=torch.long)
        logp_buf = torch.zeros((args.num_steps, n_slots))
        rew_buf = torch.zeros((args.num_steps, n_slots))
        done_buf = torch.zeros((args.num_steps, n_slots))
        val_buf = torch.zeros((args.num_steps, n_slots))

        ep_path, upd_path = out / "episodes.csv", out / "updates.csv"
        new_files = ckpt is None or not ep_path.exists()
        # open for the whole run; `files` closes them in the finally below
        mode = "w" if new_files else "a"
        ep_file = files.enter_context(open(ep_path, mode, newline=""))  # noqa: SIM115
        upd_file = files.enter_context(open(upd_path, mode, newline=""))  # noqa: SIM115
        ep_csv, upd_csv = csv.writer(ep_file), csv.writer(upd_file)
        if new_files:
            ep_csv.writerow(episode_header(args.num_agents))
            upd_csv.writerow(["update", "global_step", "wall_time", "lr", "policy_loss",
                              "value_loss", "entropy", "approx_kl", "clip_frac", "sps"])
        tracker = EpisodeTracker(args.num_envs, args.num_agents)
        recent_team = []

        def save():
            frozen = ({"opponent": opponent.state_dict(), "league": league}
                      if opponent is not None else {})
            save_checkpoint(out / "checkpoint.pt", model, optimizer=optimizer.state_dict(),
                            args=dataclasses.asdict(args), global_step=global_step,
                            update=update, wall_time=wall_offset + time.time() - start, **frozen)
            ep_file.flush(), upd_file.flush()
            plot_curve(ep_path, out / "curve.png", title=f"PPO on {args.task}, "
                       f"{args.num_agents} agents ({args.run_name})")

        start = time.time()
        # seed once; the copies reseed themselves on their automatic resets
        next_obs = apply(torch.from_numpy, vec.reset(seed=args.seed + 1000 * update)[0])
        next_done = torch.zeros(n_slots)
        first_update = update
        # a bar over the updates where a terminal is attached
        progress = files.enter_context(tqdm(total=num_updates, initial=update, unit="update",
                                            disable=args.quiet or not sys.stderr.isatty()))
        while update < num_updates:
            update += 1
            if args.anneal_lr:
                frac = 1 - (update - 1) / num_updates
                optimizer.param_groups[0]["lr"] = args.learning_rate * frac
            t_rollout = time.time()
            obs_steps = []
            for t in range(args.num_steps):
                obs_steps.append(next_obs)
                done_buf[t] = next_done
                with torch.no_grad():
                    action, logp, _, value = model.act(next_obs)
                    if opponent is not None:
                        action[~learns] = opponent.act(
                            apply(lambda x: x[~learns], next_obs))[0]
                act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
                obs, rewards, terms, truncs, infos = vec.step(action.numpy())
                dones = np.logical_or(terms, truncs)
                rew_buf[t] = torch.as_tensor(rewards * args.reward_scale, dtype=torch.float32)
                next_obs = apply(torch.from_numpy, obs)
                next_done = torch.as_tensor(dones, dtype=torch.float32)
                global_step += n_slots
                for e, length, rets in tracker.step(rewards, dones, infos["active"]):
                    wall = wall_offset + time.time() - start
                    ep_csv.writerow([global_step, f"{wall:.1f}", e, length]
                                    + [f"{r:g}" for r in rets] + [f"{rets.sum():g}"])
                    recent_team.append(float(rets.sum()))
            sps = n_slots * args.num_steps / (time.time() - t_rollout)

            # generalized advantage estimation; done_buf[t] marks obs_buf[t] as an episode's first
            torch.set_num_threads(update_threads)
            with torch.no_grad():
                next_value = model.get_value(next_obs)
                advantages = torch.zeros_like(rew_buf)
                last = torch.zeros(n_slots)
                for t in reversed(range(args.num_steps)):
                    if t == args.num_steps - 1:
                        not_done, v_next = 1.0 - next_done, next_value
                    else:
                        not_done, v_next = 1.0 - done_buf[t + 1], val_buf[t + 1]
                    delta = rew_buf[t] + args.gamma * v_next * not_done - val_buf[t]
                    last = delta + args.gamma * args.gae_lambda * not_done * last
                    advantages[t] = last
                returns = advantages + val_buf

            b_obs = concat(obs_steps)  # step-major, as the reshapes below
            b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
            b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)

            # clipped-surrogate updates over shuffled minibatches
            clip_fracs, stop = [], False
            for _ in range(args.update_epochs):
                for idx in train_rows[torch.randperm(len(train_rows))].split(minibatch_size):
                    mb_obs = apply(lambda x: x[idx], b_obs)  # noqa: B023 (used at once)
                    _, new_logp, entropy, new_value = model.act(mb_obs, b_act[idx])
                    log_ratio = new_logp - b_logp[idx]
                    ratio = log_ratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - log_ratio).mean()
                        clipped = (ratio - 1).abs() > args.clip_coef
                        clip_fracs.append(clipped.float().mean().item())
                    adv = b_adv[idx]
                    if args.norm_adv:
                        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(
                        1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    value_loss = 0.5 * (new_value - b_ret[idx]).pow(2).mean()
                    entropy_loss = entropy.mean()
                    loss = policy_loss - args.ent_coef * entropy_loss + args.vf_coef * value_loss
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    optimizer.step()
                    if args.target_kl is not None and approx_kl > args.target_kl:
                        stop = True
                        break
                if stop:
                    break
            torch.set_num_threads(1)
            if opponent is not None and update % args.opponent_refresh == 0:
                league = [*league, copy.deepcopy(model.state_dict())][-args.opponent_pool:]
                # drawn from the seed and the update, so a resumed run draws the same
                drawn = np.random.default_rng([args.seed, update]).integers(len(league))
                opponent.load_state_dict(league[drawn])

            wall = wall_offset + time.time() - start
            upd_csv.writerow([update, global_step, f"{wall:.1f}",
                              f"{optimizer.param_groups[0]['lr']:.3g}", f"{policy_loss.item():.4f}",
                              f"{value_loss.item():.4f}", f"{entropy_loss.item():.4f}",
                              f"{approx_kl.item():.4f}", f"{np.mean(clip_fracs):.3f}",
                              f"{sps:.0f}"])
            team = f"{np.mean(recent_team[-20:]):7.1f}" if recent_team else "    n/a"
            log(f"update {update:4d}/{num_updates}  step {global_step:8d}  {wall:6.0f}s  "
                f"team return (last 20 ep) {team}  entropy {entropy_loss.item():.3f}  "
                f"kl {approx_kl.item():.4f}  rollout {sps:.0f} steps/s")
            progress.update()
            if update % args.save_interval == 0:
                save()
            points_passed = update * args.snapshots // num_updates
            if points_passed > (update - 1) * args.snapshots // num_updates:
                save_checkpoint(out / f"snapshot_{global_step}.pt", model,
                                args=dataclasses.asdict(args), global_step=global_step,
                                update=update, wall_time=wall_offset + time.time() - start)
            if args.max_wall_time and time.time() - start > args.max_wall_time:
                log(f"stopping: --max-wall-time {args.max_wall_time:g} s reached")
                break
        save()
    finally:
        files.close()
        vec.close()

    wall = wall_offset + time.time() - start
    data = read_episodes(ep_path)
    team = data.get("return_team", np.zeros(0))
    k = max(1, min(50, len(team) // 5))
    steps_this_run = global_step - first_update * batch_size
    summary = {"run_name": args.run_name, "out_dir": str(out), "global_step": global_step,
               "updates": update, "wall_time_s": round(wall, 1),
               "steps_per_s": round(steps_this_run / max(time.time() - start, 1e-9), 1),
               "episodes": len(team),
               "team_return_first": float(team[:k].mean()) if len(team) else float("nan"),
               "team_return_last": float(team[-k:].mean()) if len(team) else float("nan"),
               "checkpoint": str(out / "checkpoint.pt")}
    print(f"\nsummary: {summary['global_step']} agent steps, {summary['updates']} updates, "
          f"{summary['wall_time_s']:.0f} s wall ({summary['steps_per_s']:.0f} steps/s this run), "
          f"{summary['episodes']} episodes")
    if len(team):
        print(f"  team return: first {k} episodes {summary['team_return_first']:.1f}, "
              f"last {k} episodes {summary['team_return_last']:.1f}")
    print(f"  wrote {ep_path}, {out / 'curve.png'}, {out / 'checkpoint.pt'}", flush=True)
    return summary


if __name__ == "__main__":
    train(parse_args())
