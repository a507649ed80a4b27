"""Three agents act at random in one shared world; their views are saved.

Writes out/demo.gif (the mosaic of all views, step by step) and
out/demo_contact_sheet.png (every 10th mosaic). Runs the engine's test task
(tests/mods/lockstep_test) through the lock-step session API.
"""

from pathlib import Path

import numpy as np
from PIL import Image

from craftium_ma import protocol
from craftium_ma.launcher import LaunchConfig
from craftium_ma.lockstep import AgentAction, LockstepSession

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ["agent_0", "agent_1", "agent_2"]
KEYS = ["forward", "jump", "dig", "left", "right"]


def mosaic(observations) -> np.ndarray:
    return np.concatenate([observations[a].frame for a in AGENTS], axis=1)


def main(steps: int = 60, seed: int = 0):
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    config = LaunchConfig(agents=AGENTS, obs_size=(96, 96),
                          mods=[ROOT / "tests" / "mods" / "lockstep_test"])
    with LockstepSession(config, frameskip=2) as session:
        observations, _ = session.reset(seed=seed, options={}, agents=AGENTS)
        frames, total = [mosaic(observations)], {a: 0.0 for a in AGENTS}
        for _ in range(steps):
            actions = {a: AgentAction(keys=protocol.key_bits(rng.choice(KEYS, rng.integers(0, 3), replace=False)),
                                      dx=float(rng.uniform(-0.3, 0.3))) for a in AGENTS}
            observations, result = session.step(actions)
            for a in AGENTS:
                total[a] += result["agents"][a]["reward"]
            frames.append(mosaic(observations))

    images = [Image.fromarray(f).resize((f.shape[1] * 2, f.shape[0] * 2), Image.NEAREST) for f in frames]
    images[0].save(out / "demo.gif", save_all=True, append_images=images[1:], duration=100, loop=0)
    sheet = np.concatenate(frames[::10], axis=0)
    Image.fromarray(sheet).save(out / "demo_contact_sheet.png")
    print(f"rewards: {total}")
    print(f"wrote {out / 'demo.gif'} and {out / 'demo_contact_sheet.png'}")


if __name__ == "__main__":
    main()
