"""Three agents act at random in small_room; their views are saved.

Writes out/demo.gif (the mosaic of all agents' views, step by step) and
out/demo_contact_sheet.png (every 10th mosaic), and prints where they are.
"""

from pathlib import Path

import numpy as np
from PIL import Image

import craftium_ma

OUT = Path(__file__).resolve().parent.parent / "out"


def main(steps: int = 80, seed: int = 0):
    OUT.mkdir(exist_ok=True)
    env = craftium_ma.parallel_env("small_room", num_agents=3, obs_size=96,
                                   render_mode="rgb_array", max_cycles=steps)
    rng = np.random.default_rng(seed)
    try:
        env.reset(seed=seed)
        mosaics = [env.render()]
        returns = dict.fromkeys(env.possible_agents, 0.0)
        while env.agents:
            # mostly walk forward, sometimes turn
            actions = {a: int(rng.choice(4, p=[0.1, 0.6, 0.15, 0.15])) for a in env.agents}
            _, rewards, _, _, _ = env.step(actions)
            for agent, reward in rewards.items():
                returns[agent] += reward
            mosaics.append(env.render())
    finally:
        env.close()

    frames = [Image.fromarray(m).resize((m.shape[1] * 2, m.shape[0] * 2), Image.NEAREST)
              for m in mosaics]
    frames[0].save(OUT / "demo.gif", save_all=True, append_images=frames[1:], duration=80, loop=0)
    Image.fromarray(np.concatenate(mosaics[::10], axis=0)).save(OUT / "demo_contact_sheet.png")
    print("returns:", returns)
    print(f"wrote {OUT / 'demo.gif'}")
    print(f"wrote {OUT / 'demo_contact_sheet.png'}")


if __name__ == "__main__":
    main()
