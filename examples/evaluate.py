"""Evaluate a PPO checkpoint from train_ppo.py (or a uniform random policy) on the
parallel env directly, and save a GIF of the agents' views.

    python examples/evaluate.py out/ppo/<run>/checkpoint.pt --episodes 20
    python examples/evaluate.py out/ppo/<run>/checkpoint.pt --episodes 20 --random

The env is built from the checkpoint's settings (craftium_ma.models.env_options: agents,
engine-side frame size, frameskip, max cycles, observations) and the policy sees each
agent's observations as in training (craftium_ma.models.ModelInput: frames optionally grey,
the last frames stacked; the task's other observations as they are).
Episodes use seeds seed, seed+1, ..., so a trained and a random run with the same --seed
see the same rooms. Prints the mean +- std of the episodic return of each agent and of
the team (the sum over agents).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from PIL import Image

import craftium_ma
from craftium_ma.models import (ModelInput, env_observations, env_options, load_checkpoint,
                                observation_names)


def parse_args(argv=None) -> argparse.Namespace:
    flag = argparse.BooleanOptionalAction
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="checkpoint.pt written by train_ppo.py")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=10_000,
                        help="first episode seed (training draws its own; pick one it is "
                             "unlikely to have seen)")
    parser.add_argument("--random", action=flag, default=False,
                        help="act uniformly at random instead of with the checkpoint's policy")
    parser.add_argument("--deterministic", action=flag, default=False,
                        help="take the most likely action instead of sampling from the policy")
    parser.add_argument("--max-cycles", type=int, default=0, help="0: the checkpoint's")
    parser.add_argument("--gif", default="", help="where to write the GIF (default: eval.gif, "
                        "or eval_random.gif, next to the checkpoint)")
    parser.add_argument("--gif-episodes", type=int, default=1,
                        help="episodes recorded into the GIF, the first ones (0: no GIF, "
                             "no rendering)")
    parser.add_argument("--gif-scale", type=int, default=3)
    parser.add_argument("--json-out", default="", help="also write the results as JSON here")
    parser.add_argument("--quiet", action=flag, default=False)
    return parser.parse_args(argv)


def stack(observations: list):
    """One batch from per-agent observations (arrays, or dicts of arrays)."""
    if isinstance(observations[0], dict):
        return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    return np.stack(observations)


def pick(batch, i: int):
    """Row i of a batch (an array, or a dict of arrays)."""
    return {k: v[i] for k, v in batch.items()} if isinstance(batch, dict) else batch[i]


def evaluate(args: argparse.Namespace, wrap=None, **env_kwargs) -> dict:
    """Run the episodes; returns {"team": {mean, std, ...}, "agent_0": {...}, ...}.
    `wrap` (a PettingZoo wrapper) goes on the env; `env_kwargs` are parallel_env's."""
    torch.set_num_threads(1)
    model, ckpt = load_checkpoint(args.checkpoint)
    task = ckpt["args"]["task"]
    options = env_options(ckpt)
    if args.max_cycles:
        options["max_cycles"] = args.max_cycles
    record = args.gif_episodes > 0
    gif_path = Path(args.gif or Path(args.checkpoint).resolve().parent
                    / ("eval_random.gif" if args.random else "eval.gif"))
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)  # the policy's sampled actions, reproducibly

    env = craftium_ma.parallel_env(task, render_mode="rgb_array" if record else None,
                                   observations=env_observations(observation_names(ckpt)),
                                   **options, **env_kwargs)
    if wrap is not None:
        env = wrap(env)
    returns, lengths, frames = [], [], []
    try:
        agents = list(env.possible_agents)
        model_input = ModelInput.for_checkpoint(ckpt, env.observation_space(agents[0]),
                                                rows=len(agents))
        blank = model_input.zeros()  # the observation of an agent that is done

        def observe(obs, fresh=None):
            """Each agent's observation as the model saw it in training."""
            stacked = model_input.push(stack([obs.get(a, blank) for a in agents]), fresh)
            return {a: pick(stacked, i) for i, a in enumerate(agents)}

        for ep in range(args.episodes):
            obs, _ = env.reset(seed=args.seed + ep)
            obs = observe(obs, fresh=np.ones(len(agents), bool))
            ep_return = dict.fromkeys(agents, 0.0)
            length = 0
            if record and ep < args.gif_episodes:
                frames.append(env.render())
            while env.agents:
                live = list(env.agents)
                if args.random:
                    actions = {a: int(rng.integers(ckpt["n_actions"])) for a in live}
                else:
                    batch = stack([obs[a] for a in live])
                    batch = ({k: torch.from_numpy(v) for k, v in batch.items()}
                             if isinstance(batch, dict) else torch.from_numpy(batch))
                    with torch.no_grad():
                        logits = model.logits(batch)
                    chosen = (logits.argmax(-1) if args.deterministic
                              else torch.distributions.Categorical(logits=logits).sample())
                    actions = dict(zip(live, chosen.tolist()))
                obs, rewards, _, _, _ = env.step(actions)
                obs = observe(obs)
                for a, r in rewards.items():
                    ep_return[a] += r
                length += 1
                if record and ep < args.gif_episodes:
                    frames.append(env.render())
            returns.append([ep_return[a] for a in agents])
            lengths.append(length)
            log(f"episode {ep} (seed {args.seed + ep}): "
                + "  ".join(f"{a} {ep_return[a]:.0f}" for a in agents)
                + f"  team {sum(ep_return.values()):.0f}  ({length} steps)")
    finally:
        env.close()

    r = np.array(returns)  # episodes x agents

    def stats(x):
        return {"mean": float(x.mean()), "std": float(x.std()), "min": float(x.min()),
                "max": float(x.max())}

    result = {a: stats(r[:, i]) for i, a in enumerate(agents)}
    result["team"] = stats(r.sum(axis=1))
    result["team_returns"] = r.sum(axis=1).tolist()  # per episode, in seed order
    result.update(policy="random" if args.random else
                  ("greedy" if args.deterministic else "sampled") + f" {args.checkpoint}",
                  episodes=args.episodes, first_seed=args.seed, task=task,
                  max_cycles=options["max_cycles"], frameskip=options["frameskip"],
                  mean_length=float(np.mean(lengths)))
    if record and frames:
        s = args.gif_scale
        images = [Image.fromarray(f).resize((f.shape[1] * s, f.shape[0] * s), Image.NEAREST)
                  for f in frames]
        gif_path.parent.mkdir(parents=True, exist_ok=True)
        images[0].save(gif_path, save_all=True, append_images=images[1:], duration=100, loop=0)
        result["gif"], result["gif_frames"] = str(gif_path), len(images)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2))

    print(f"\n{result['policy']}: {args.episodes} episodes of {task} "
          f"(seeds {args.seed}..{args.seed + args.episodes - 1}, "
          f"max_cycles {options['max_cycles']}, frameskip {options['frameskip']})")
    for a in agents + ["team"]:
        print(f"  {a:8s} return {result[a]['mean']:7.1f} +- {result[a]['std']:.1f}")
    print(f"  mean episode length {result['mean_length']:.1f} steps")
    if "gif" in result:
        print(f"  wrote {result['gif']} ({result['gif_frames']} frames)", flush=True)
    return result


if __name__ == "__main__":
    evaluate(parse_args())
