"""The xland baselines' PPO on XLand-MiniGrid itself: how many agent steps the trivial benchmark
takes, and whether a policy learned there plays our 3D task as well as it plays upstream's.

Trains examples/train_ppo.py with the [train] settings of baselines/configs/ppo_xland_trivial.toml
(the rulesets of split "train", the symbolic view, goal, direction and pocket, six actions) on
xminigrid's own `XLand-MiniGrid-R1-9x9` (CPU JAX, vmapped; the rulesets are ours, as the task
draws them: a ruleset drawn uniformly from the split at every reset), about three times as
fast as on the engine (the PPO, not xminigrid, takes most of the time). Then every snapshot
(one per million steps) plays the baselines' held-out evaluation episodes: on xminigrid, one
episode of each of their rulesets (the layouts are xminigrid's draws), and, for the snapshots
--ours names, on our task exactly as the rows are scored (craftium_ma.evaluate, seeds from
100000). Writes benchmarks/results/xland_upstream_ppo/seed<k>.json: the commands, the
training curve and each snapshot's scores (one scored on our task by an earlier call keeps
that score).

    .venv/bin/python benchmarks/xland_upstream_ppo.py --seed 1 --steps 5000000
    .venv/bin/python benchmarks/xland_upstream_ppo.py --seed 1 --steps 10000000 --resume --ours 10
    .venv/bin/python benchmarks/xland_upstream_ppo.py --seed 1 --steps 10000000 --eval-only

Three diagnostics change what the policy trains on (their results: <variant>_seed<k>.json).
--view-size 17 shows it all of the room but the rows behind it (xminigrid's egocentric view,
17 x 17, the agent at its bottom middle), so it hardly needs to remember; it plays on
xminigrid only, as our task's view is 5 x 5. --rulesets N trains it on the first N rulesets
of split "train" only (its training curve is its return on them). --num-envs N with
--num-steps S collects each update from N copies of S steps (the config's: 8 x 256), as
XLand-MiniGrid's own PPO collects from thousands of copies of a few steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import gymnasium  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import xminigrid  # noqa: E402
from xminigrid.types import RuleSet  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import baselines  # noqa: E402
import measure  # noqa: E402
import train_ppo  # noqa: E402

import craftium_ma  # noqa: E402
from craftium_ma.envs.xland_v1 import split_benchmark  # noqa: E402
from craftium_ma.models import ModelInput, load_checkpoint  # noqa: E402
from craftium_ma.xland import Benchmark, GoalId, load_benchmark  # noqa: E402

CONFIG = ROOT / "baselines" / "configs" / "ppo_xland_trivial.toml"
RESULTS = ROOT / "benchmarks" / "results"
LAYOUT = "R1-9x9"  # the task's default layout
VIEW_SIZE = 5  # the task's symbolic view, cells a side


class UpstreamXLand:
    """train_ppo's TrainingVecEnv on xminigrid: `num_envs` copies of XLand-MiniGrid-R1-9x9,
    one agent each, a copy reset in the step its episode ends with a ruleset drawn uniformly
    from `rulesets` (its first one too, unless `first` gives their indices); observations as
    the xland task gives `names` (a dict of uint8 arrays: symbolic, goal, direction, pocket),
    and its action space (its first six actions are xminigrid's). The symbolic view is
    `view_size` cells wide (the task's: 5)."""

    def __init__(self, rulesets: Benchmark, num_envs: int, names: list[str], seed: int,
                 first=None, view_size: int = VIEW_SIZE):
        task = craftium_ma.parallel_env("xland", observations=names)  # its spaces; no engine
        space, self.action_space = task.observation_space("agent_0"), task.action_space("agent_0")
        task.close()
        unknown = set(names) - {"symbolic", "goal", "direction", "pocket"}
        if unknown:
            raise ValueError(f"xminigrid gives no observation {sorted(unknown)}")
        if "symbolic" in names and view_size != VIEW_SIZE:
            view = space["symbolic"]
            space = gymnasium.spaces.Dict({**space.spaces, "symbolic": gymnasium.spaces.Box(
                0, int(view.high.max()), (view_size, view_size, 2), np.uint8)})
        env, self.params = xminigrid.make(f"XLand-MiniGrid-{LAYOUT}", view_size=view_size)
        self._reset, self._step = jax.jit(jax.vmap(env.reset)), jax.jit(jax.vmap(env.step))
        self.rulesets, self.names = rulesets, names
        self.num_envs, self.num_agents = num_envs, 1
        self.input = ModelInput(names, space, rows=num_envs)
        self.obs_shape = self.input.shape
        self.rng, self.first = np.random.default_rng(seed), first

    def _batch_params(self):
        ruleset = RuleSet(goal=jnp.asarray(self.rulesets.goals[self.drawn]),
                          rules=jnp.asarray(self.rulesets.rules[self.drawn]),
                          init_tiles=jnp.asarray(self.rulesets.init_tiles[self.drawn]))
        return jax.vmap(lambda r: self.params.replace(ruleset=r))(ruleset)

    def _fresh(self):
        keys = jax.random.split(jax.random.PRNGKey(int(self.rng.integers(2**31))), self.num_envs)
        return self._reset(self.batch, keys)

    def _obs(self) -> dict:
        agent = self.timestep.state.agent
        every = {"symbolic": self.timestep.observation, "goal": self.batch.ruleset.goal,
                 "direction": agent.direction[:, None], "pocket": agent.pocket}
        return {n: np.asarray(every[n]).astype(np.uint8) for n in self.names}

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.drawn = (np.array(self.first) if self.first is not None
                      else self.rng.integers(len(self.rulesets), size=self.num_envs))
        self.batch = self._batch_params()
        self.timestep = self._fresh()
        return self.input.push(self._obs()), {}

    def step(self, actions):
        self.timestep = self._step(self.batch, self.timestep, jnp.asarray(actions, jnp.int32))
        rewards = np.asarray(self.timestep.reward, np.float32)
        terms = np.asarray(self.timestep.discount) == 0.0
        ended = np.asarray(self.timestep.step_type) == 2  # xminigrid's LAST
        truncs = ended & ~terms
        if ended.any():
            self.drawn[ended] = self.rng.integers(len(self.rulesets), size=int(ended.sum()))
            self.batch = self._batch_params()
            fresh, mask = self._fresh(), jnp.asarray(ended)
            self.timestep = jax.tree.map(
                lambda new, old: jnp.where(mask.reshape(-1, *[1] * (old.ndim - 1)), new, old),
                fresh, self.timestep)
        infos = {"active": np.ones(self.num_envs, bool)}
        return self.input.push(self._obs(), ended), rewards, terms, truncs, infos

    def close(self):
        pass


def trainer_args(config: dict, seed: int, steps: int, out: Path, **changes):
    """train_ppo's Args: the config's [train], `steps` agent steps, a snapshot per million,
    into `out`, with `changes` (other Args fields)."""
    argv = baselines.trainer_options(config | {"budget_agent_steps": steps}, seed)
    args = train_ppo.parse_args([*argv, "--snapshots", str(max(1, steps // 1_000_000))])
    return dataclasses.replace(args, out_dir=str(out), run_name=out.name, **changes)


def evaluation_rulesets(held_out: Benchmark, episodes: int, first_seed: int) -> np.ndarray:
    """The indices in `held_out` of the rulesets of the baselines' evaluation episodes on our
    task, in order: episode k, seed first_seed + k, draws its ruleset as the task does."""
    return np.array([int(np.random.default_rng(first_seed + k).integers(len(held_out)))
                     for k in range(episodes)])


def upstream_returns(checkpoint: Path, rulesets: Benchmark, first: np.ndarray, seed: int) -> list:
    """The return of one episode on xminigrid of each ruleset `first` names (indices in
    `rulesets`), with the checkpoint's policy (actions sampled), in that order."""
    model, ckpt = load_checkpoint(checkpoint)
    names = train_ppo.observation_names(ckpt)
    view_size = ckpt["obs_shape"]["symbolic"][0] if "symbolic" in names else VIEW_SIZE
    env = UpstreamXLand(rulesets, len(first), names, seed, first, view_size)
    torch.manual_seed(seed)
    obs, _ = env.reset(seed=seed)
    returns, running = np.full(len(first), np.nan), np.zeros(len(first))
    while np.isnan(returns).any():
        with torch.no_grad():
            logits = model.logits({k: torch.from_numpy(v) for k, v in obs.items()})
        actions = torch.distributions.Categorical(logits=logits).sample().numpy()
        obs, rewards, terms, truncs, _ = env.step(actions)
        running += rewards
        ended = (terms | truncs) & np.isnan(returns)
        returns[ended] = running[ended]
    return returns.tolist()


def scores(returns: list, goals: list[str]) -> dict:
    """Mean, 95 % bootstrap interval, share solved, [solved, episodes] by the episodes'
    `goals` (their goals' names), and the return of each episode."""
    low, high = baselines.two_level_ci([returns], np.random.default_rng(0))
    solved, goals = np.asarray(returns) > 0, np.asarray(goals)
    by_goal = {str(g): [int(solved[goals == g].sum()), int((goals == g).sum())]
               for g in np.unique(goals)}
    return {"mean": round(float(np.mean(returns)), 4), "ci95": [low, high],
            "solved": round(float(solved.mean()), 4), "solved_by_goal": by_goal,
            "returns": [round(r, 4) for r in returns]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10_000_000,
                        help="agent steps (a multiple of a million)")
    parser.add_argument("--episodes", type=int, default=320,
                        help="the held-out evaluation's episodes (the rows': 320)")
    parser.add_argument("--ours", type=int, nargs="*",
                        help="the snapshots (millions of steps) that also play our task "
                             "(default: every one)")
    parser.add_argument("--torch-threads", type=int, default=0, help="train_ppo's")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "xland_upstream_ppo",
                        help="where each seed's run goes (seed<k>/)")
    parser.add_argument("--results", type=Path, default=RESULTS / "xland_upstream_ppo",
                        help="where seed<k>.json goes")
    parser.add_argument("--resume", action="store_true",
                        help="continue the seed's run (with its optimizer) up to --steps")
    parser.add_argument("--eval-only", action="store_true", help="score the run's snapshots again")
    parser.add_argument("--view-size", type=int, default=VIEW_SIZE,
                        help="the symbolic view's cells a side (odd; 17 sees all of the room "
                             "ahead and beside; other than 5, played on xminigrid only)")
    parser.add_argument("--rulesets", type=int, default=0,
                        help="train on the first N rulesets of split train (default: all)")
    parser.add_argument("--num-envs", type=int, default=0,
                        help="copies stepped together in training (default: the config's)")
    parser.add_argument("--num-steps", type=int, default=0,
                        help="steps of each copy per update (default: the config's)")
    args = parser.parse_args()
    if args.view_size != VIEW_SIZE:
        if args.ours:
            parser.error(f"--ours: our task's view is {VIEW_SIZE} x {VIEW_SIZE}, "
                         f"not --view-size {args.view_size}")
        args.ours = []
    variant = (f"view{args.view_size}_" if args.view_size != VIEW_SIZE else "") + (
        f"rulesets{args.rulesets}_" if args.rulesets else "")
    config = baselines.load_config(CONFIG)
    batch = {"num_envs": args.num_envs or config["train"]["num_envs"],
             "num_steps": args.num_steps or config["train"]["num_steps"]}
    if args.num_envs or args.num_steps:
        variant += f"envs{batch['num_envs']}x{batch['num_steps']}_"
    out = args.out / f"{variant}seed{args.seed}"
    benchmark = load_benchmark("trivial-21k")
    train_split, held_out = (split_benchmark(benchmark, s) for s in ("train", "held-out"))
    if args.rulesets:
        train_split = train_split.split(args.rulesets / len(train_split))[0]  # the first N
    if not args.eval_only:
        ppo_args = trainer_args(config, args.seed, args.steps, out,
                                torch_threads=args.torch_threads, **batch,
                                resume=str(out / "checkpoint.pt") if args.resume else "")
        train_ppo.make_vec_env = lambda a: UpstreamXLand(
            train_split, a.num_envs, train_ppo.observation_names(a.observations), a.seed,
            view_size=args.view_size)
        train_ppo.train(ppo_args)

    results = args.results / f"{variant}seed{args.seed}.json"
    earlier = (json.loads(results.read_text()) if results.exists()
               else {"commands": [], "snapshots": []})
    scored = {row["agent_steps"]: row["ours"] for row in earlier["snapshots"] if "ours" in row}
    first = evaluation_rulesets(held_out, args.episodes, config["eval_seed"])
    goals = [GoalId(int(g)).name for g in held_out.goals[first, 0]]
    snapshots = sorted(out.glob("snapshot_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    rows = []
    for snapshot in snapshots:
        _, ckpt = load_checkpoint(snapshot)
        millions = round(ckpt["global_step"] / 1_000_000)
        row = {"agent_steps": ckpt["global_step"], "xminigrid": scores(
            upstream_returns(snapshot, held_out, first, config["eval_seed"] + args.seed),
            goals)}
        if args.ours is None or millions in args.ours:
            row["ours"] = scores(baselines.episode_returns(
                snapshot, config | {"eval_episodes": args.episodes},
                **baselines.eval_env_options(config, ckpt)), goals)
        elif ckpt["global_step"] in scored:  # scored on our task by an earlier call
            kept = scored[ckpt["global_step"]]  # the first runs' kept no episodes' returns
            row["ours"] = scores(kept["returns"], goals) if "returns" in kept else kept
        rows.append(row)
        print(row, flush=True)
    curve = baselines.binned_returns(out / "episodes.csv", args.steps,
                                     max(1, args.steps // 500_000))
    command = " ".join(["benchmarks/xland_upstream_ppo.py", *sys.argv[1:]])
    args.results.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps({
        "commands": [*earlier["commands"], command],
        "config": str(CONFIG.relative_to(ROOT)), "held_out_episodes": args.episodes,
        "machine": measure.machine(), "date": time.strftime("%Y-%m-%d"),
        "training_curve_per_500k": [None if r is None else round(r, 4) for r in curve],
        "snapshots": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
