"""Pictures of the xland task for docs/xland.md, drawn by the engine.

docs/img/xland_objects.png: every object (8 shapes x 8 colours), each seen by an agent from the
cell south of it, plus the open door; docs/img/xland_views.png: what agents see at 64 x 64 in
layouts of 1, 2, 4, 6 and 9 rooms.

    python benchmarks/xland_pictures.py [--out docs/img]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import craftium_ma
from craftium_ma.xland import Colour, Ruleset, generate_benchmark
from craftium_ma.xland.encoding import OBJECT_COLOURS, OBJECT_SHAPES, GoalId, Tile
from craftium_ma.xland.planner import NOOP, PICK_UP, TOGGLE, TURN_LEFT, GridState, Planner
from craftium_ma.xland.world import TEST_OBJECT_CELLS

SIZE = 96
NO_RULES = np.zeros((0, 7), np.uint8)


def face_north_of(env, planner, cell) -> np.ndarray:
    """Walk agent_0 to the cell south of `cell`, turn north; the frame there."""
    planner.goal = [GoalId.AGENT_NEAR_UP, *GridState(env.state(), 1).object_at(*cell), 0, 0]
    obs = None
    for _ in range(60):
        action = planner.act(env.state(), 1)
        if action == NOOP:
            break
        obs, *_ = env.step({"agent_0": action})
    while GridState(env.state(), 1).agents[0][2] != 0:
        obs, *_ = env.step({"agent_0": TURN_LEFT})
    if obs is None:
        obs, *_ = env.step({"agent_0": NOOP})
    return obs["agent_0"]


def label(image: Image.Image, text: str) -> Image.Image:
    out = Image.new("RGB", (image.width, image.height + 14), "white")
    out.paste(image, (0, 14))
    ImageDraw.Draw(out).text((2, 1), text, fill="black")
    return out


def objects_picture(out: Path) -> None:
    env = craftium_ma.parallel_env("xland", num_agents=1, obs_size=SIZE,
                                   task_options={"layout": "test", "benchmark": "trivial-2008"})
    rows = []
    try:
        for colour in OBJECT_COLOURS:
            init = [(int(shape), int(colour)) for shape in OBJECT_SHAPES]
            env.reset(seed=0, options={"ruleset": Ruleset([0] * 5, NO_RULES, init)})
            planner = Planner([0] * 5, NO_RULES)
            row = []
            for shape, cell in zip(OBJECT_SHAPES, TEST_OBJECT_CELLS):
                frame = face_north_of(env, planner, cell)
                row.append(label(Image.fromarray(frame), f"{Colour(colour).name.lower()} "
                                                         f"{Tile(shape).name.lower()}"))
            rows.append(row)
        # the open door: a yellow key opens the yellow door
        init = [(int(Tile.KEY), int(Colour.YELLOW)), (int(Tile.DOOR), int(Colour.YELLOW))]
        env.reset(seed=0, options={"ruleset": Ruleset([0] * 5, NO_RULES, init)})
        planner = Planner([0] * 5, NO_RULES)
        face_north_of(env, planner, TEST_OBJECT_CELLS[0])
        env.step({"agent_0": PICK_UP})
        face_north_of(env, planner, TEST_OBJECT_CELLS[1])
        obs, *_ = env.step({"agent_0": TOGGLE})
        rows[-1].append(label(Image.fromarray(obs["agent_0"]), "open door"))
    finally:
        env.close()
    cell_w, cell_h = rows[0][0].size
    sheet = Image.new("RGB", (cell_w * max(map(len, rows)), cell_h * len(rows)), "white")
    for r, row in enumerate(rows):
        for c, image in enumerate(row):
            sheet.paste(image, (c * cell_w, r * cell_h))
    sheet.save(out / "xland_objects.png")


def views_picture(out: Path) -> None:
    bench = generate_benchmark("small", 100, seed=3)
    env = craftium_ma.parallel_env("xland", num_agents=4, obs_size=64,
                                   task_options={"benchmark": bench})
    rows = []
    try:
        for rooms in (1, 2, 4, 6, 9):
            obs, infos = env.reset(seed=rooms, options={"rooms": rooms})
            frames = [Image.fromarray(obs[a]).resize((128, 128), Image.NEAREST)
                      for a in env.possible_agents]
            rows.append([label(f, f"{rooms} rooms, {a}")
                         for f, a in zip(frames, env.possible_agents)])
    finally:
        env.close()
    cell_w, cell_h = rows[0][0].size
    sheet = Image.new("RGB", (cell_w * 4, cell_h * len(rows)), "white")
    for r, row in enumerate(rows):
        for c, image in enumerate(row):
            sheet.paste(image, (c * cell_w, r * cell_h))
    sheet.save(out / "xland_views.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    objects_picture(args.out)
    views_picture(args.out)


if __name__ == "__main__":
    main()
