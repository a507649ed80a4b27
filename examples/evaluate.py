"""Evaluate a PPO checkpoint from train_ppo.py (or a uniform random policy) on the
parallel env directly, and save a GIF of the agents' views.

    python examples/evaluate.py out/ppo/<run>/checkpoint.pt --episodes 20
    python examples/evaluate.py out/ppo/<run>/checkpoint.pt --episodes 20 --random

The env is built from the checkpoint's settings with the same preprocessing as in
training (train_ppo.make_parallel_env: engine-side size, optional grey, SuperSuit's
frame_stack_v1). Episodes use seeds seed, seed+1, ..., so a trained and a random run
with the same --seed see the same rooms. Prints the mean +- std of the episodic return
of each agent and of the team (the sum over agents).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_ppo  # the sibling example: env construction and the model


@dataclass
class EvalArgs:
    checkpoint: str
    episodes: int = 10
    seed: int = 10_000
    """first episode seed (training draws its own; pick one it is unlikely to have seen)"""
    random: bool = False
    """act uniformly at random instead of with the checkpoint's policy"""
    deterministic: bool = False
    """take the most likely action instead of sampling from the policy"""
    max_cycles: int = 0
    """0: the checkpoint's"""
    gif: str = ""
    """where to write the GIF ('': eval.gif, or eval_random.gif, next to the checkpoint)"""
    gif_episodes: int = 1
    """episodes recorded into the GIF, the first ones (0: no GIF, no rendering)"""
    gif_scale: int = 3
    json_out: str = ""
    """also write the results as JSON here"""
    quiet: bool = False


def parse_args(argv=None) -> EvalArgs:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="checkpoint.pt written by train_ppo.py")
    train_ppo.add_dataclass_args(parser, EvalArgs, skip={"checkpoint"})
    return EvalArgs(**vars(parser.parse_args(argv)))


def evaluate(args: EvalArgs) -> dict:
    """Run the episodes; returns {"team": {mean, std, ...}, "agent_0": {...}, ...}."""
    torch.set_num_threads(1)
    model, ckpt = train_ppo.load_checkpoint(args.checkpoint)
    targs = train_ppo.Args(**ckpt["args"])
    if args.max_cycles:
        targs.max_cycles = args.max_cycles
    record = args.gif_episodes > 0
    gif_path = Path(args.gif or Path(args.checkpoint).resolve().parent
                    / ("eval_random.gif" if args.random else "eval.gif"))
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)  # the policy's sampled actions, reproducibly

    env = train_ppo.make_parallel_env(targs, render_mode="rgb_array" if record else None)
    returns, lengths, frames = [], [], []
    try:
        agents = list(env.possible_agents)
        for ep in range(args.episodes):
            obs, _ = env.reset(seed=args.seed + ep)
            ep_return = dict.fromkeys(agents, 0.0)
            length = 0
            if record and ep < args.gif_episodes:
                frames.append(env.render())
            while env.agents:
                live = list(env.agents)
                if args.random:
                    actions = {a: int(rng.integers(ckpt["n_actions"])) for a in live}
                else:
                    batch = torch.from_numpy(np.stack([obs[a] for a in live]))
                    with torch.no_grad():
                        logits = model.logits(batch)
                    chosen = (logits.argmax(-1) if args.deterministic
                              else torch.distributions.Categorical(logits=logits).sample())
                    actions = dict(zip(live, chosen.tolist()))
                obs, rewards, _, _, _ = env.step(actions)
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
    result.update(policy="random" if args.random else
                  ("greedy" if args.deterministic else "sampled") + f" {args.checkpoint}",
                  episodes=args.episodes, first_seed=args.seed, task=targs.task,
                  max_cycles=targs.max_cycles, frameskip=targs.frameskip,
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

    print(f"\n{result['policy']}: {args.episodes} episodes of {targs.task} "
          f"(seeds {args.seed}..{args.seed + args.episodes - 1}, max_cycles {targs.max_cycles}, "
          f"frameskip {targs.frameskip})")
    for a in agents + ["team"]:
        print(f"  {a:8s} return {result[a]['mean']:7.1f} +- {result[a]['std']:.1f}")
    print(f"  mean episode length {result['mean_length']:.1f} steps")
    if "gif" in result:
        print(f"  wrote {result['gif']} ({result['gif_frames']} frames)", flush=True)
    return result


if __name__ == "__main__":
    evaluate(parse_args())
