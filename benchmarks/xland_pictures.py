"""Pictures of the xland task for docs/xland.md, drawn by the engine.

docs/img/xland_objects.png: every tile but empty and floor (11) in every colour (12), each as an
agent sees it from the cell south of it, facing it (96 x 96 frames, a given grid per frame);
docs/img/xland_views.png: one layout of each type (R1-9x9, R2-11x11, R4-13x13, R6-17x17,
R9-19x19) with a medium ruleset's objects, its map (drawn here from grid_state(), agents as
numbered pointed discs) and what four agents see in it at 64 x 64 (shown 3x), each agent
turned to its longest view (a given state: the drawn world, the directions set).

    .venv/bin/python benchmarks/xland_pictures.py [--out docs/img]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import craftium_ma
from craftium_ma.xland import Colour, Ruleset, Tile, generate_benchmark
from craftium_ma.xland.encoding import DIRECTIONS, DOOR_TILES, FLOOR, WALL, GoalId

SIZE = 96  # the object frames' side
VIEW, VIEW_SCALE = 64, 3  # the agents' frames' side, drawn three times as large
LAYOUTS = ("R1-9x9", "R2-11x11", "R4-13x13", "R6-17x17", "R9-19x19")
AGENTS = 4
TILES = [t for t in Tile if t not in (Tile.EMPTY, Tile.FLOOR)]  # the 11, aliases left out
COLOURS = list(Colour)  # the 12, aliases left out
# how mods/xland/init.lua colours them (its HEX), for the maps
HEX = ("#303030", "#e02020", "#20b020", "#2848f0", "#a030d0", "#f0e020", "#8c8c8c", "#101010",
       "#ff8a10", "#f8f8f8", "#8b5a2b", "#ff8cc8")
LIGHT = (Colour.GREEN, Colour.YELLOW, Colour.ORANGE, Colour.WHITE, Colour.PINK)
LETTER = {Tile.BALL: "b", Tile.SQUARE: "s", Tile.PYRAMID: "p", Tile.GOAL: "g", Tile.KEY: "k",
          Tile.HEX: "h", Tile.STAR: "*"}
ARROW = ((0, -1), (1, 0), (0, 1), (-1, 0))  # (x, y) on the map per direction: up, right, ...
LABEL_H = 14
# a ruleset whose goal and objects do not matter: the given grid replaces its objects
ANY = Ruleset(np.array([GoalId.AGENT_NEAR, Tile.BALL, Colour.RED, 0, 0]),
              np.zeros((0, 7), np.uint8), np.array([(Tile.BALL, Colour.RED)], np.uint8))


def room(height: int = 9, width: int = 9, objects: dict | None = None) -> np.ndarray:
    """Floor walled round, with objects {(row, col): (tile, colour)}."""
    grid = np.empty((height, width, 2), np.uint8)
    grid[...] = FLOOR
    grid[[0, -1], :] = grid[:, [0, -1]] = WALL
    for cell, obj in (objects or {}).items():
        grid[cell] = obj
    return grid


def labelled(image: Image.Image, text: str) -> Image.Image:
    out = Image.new("RGB", (image.width, image.height + LABEL_H), "white")
    out.paste(image, (0, LABEL_H))
    ImageDraw.Draw(out).text((2, 1), text, fill="black")
    return out


def sheet(rows: list[list[Image.Image]], left: list[str] | None = None,
          top: list[str] | None = None, left_w: int = 0, gap: int = 2) -> Image.Image:
    """The images in a grid, with row labels on the left and column labels above."""
    cell_w = max(i.width for row in rows for i in row)
    cell_h = max(i.height for row in rows for i in row)
    top_h = LABEL_H if top else 0
    width = left_w + len(max(rows, key=len)) * (cell_w + gap)
    out = Image.new("RGB", (width, top_h + len(rows) * (cell_h + gap)), "white")
    draw = ImageDraw.Draw(out)
    for c, text in enumerate(top or []):
        draw.text((left_w + c * (cell_w + gap) + 2, 1), text, fill="black")
    for r, row in enumerate(rows):
        y = top_h + r * (cell_h + gap)
        if left:
            draw.text((2, y + cell_h // 2 - 5), left[r], fill="black")
        for c, image in enumerate(row):
            out.paste(image, (left_w + c * (cell_w + gap), y))
    return out


def objects_picture(out: Path) -> Path:
    """Each tile in each colour at (3, 4) of a 9 x 9 room, the agent at (4, 4) facing up."""
    env = craftium_ma.parallel_env("xland", num_agents=1, obs_size=SIZE)
    rows = []
    try:
        for tile in TILES:
            row = []
            for colour in COLOURS:
                obs, _ = env.reset(seed=0, options={
                    "ruleset": ANY, "grid": room(objects={(3, 4): (int(tile), int(colour))}),
                    "agent_positions": [(4, 4)], "agent_directions": [0]})
                row.append(Image.fromarray(obs["agent_0"]))
            rows.append(row)
    finally:
        env.close()
    path = out / "xland_objects.png"
    sheet(rows, left=[t.name.lower() for t in TILES], top=[c.name.lower() for c in COLOURS],
          left_w=80).save(path)
    return path


def map_image(state: dict, cell: int) -> Image.Image:
    """The grid from above, row 0 at the top; objects as letters on their colour, agents as
    numbered arrows."""
    grid = state["grid"]
    height, width = grid.shape[:2]
    image = Image.new("RGB", (width * cell, height * cell), "white")
    draw = ImageDraw.Draw(image)
    for row in range(height):
        for col in range(width):
            tile, colour = (int(v) for v in grid[row, col])
            box = (col * cell, row * cell, (col + 1) * cell - 1, (row + 1) * cell - 1)
            draw.rectangle(box, fill="#d8d8d8")
            if tile == Tile.WALL:
                draw.rectangle(box, fill="#6a6a6a" if colour == Colour.GREY else HEX[colour])
            elif tile in DOOR_TILES:  # a door fills its cell, with a band across
                draw.rectangle(box, fill=HEX[colour])
                mid = (box[1] + box[3]) // 2
                draw.rectangle((box[0], mid - 1, box[2], mid + 1),
                               fill="#d8d8d8" if tile == Tile.DOOR_OPEN else "black")
            elif tile != Tile.FLOOR:  # an object: a disc, with its letter where it fits
                draw.ellipse((box[0] + 1, box[1] + 1, box[2] - 1, box[3] - 1), fill=HEX[colour],
                             outline="black")
                if cell >= 12:
                    ink = "black" if colour in LIGHT else "white"
                    draw.text((box[0] + cell // 2 - 2, box[1] + cell // 2 - 6),
                              LETTER.get(Tile(tile), "?"), fill=ink)
    for i, ((row, col), d) in enumerate(zip(state["positions"], state["directions"])):
        # an agent: a black disc with its number, pointed the way it faces
        cx, cy = (int(col) + 0.5) * cell, (int(row) + 0.5) * cell
        dx, dy = ARROW[int(d)]
        half, r = cell / 2, cell * 0.36
        draw.polygon([(cx + dx * half, cy + dy * half), (cx + dy * r, cy + dx * r),
                      (cx - dy * r, cy - dx * r)], fill="black")
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="black")
        draw.text((cx - 2.5, cy - 6), str(i), fill="white")
    return image


def best_direction(grid: np.ndarray, position) -> int:
    """The direction with the longest view up to a wall or a closed door, objects in it
    counting extra."""
    def score(direction: int) -> int:
        (row, col), (dr, dc), total = (int(v) for v in position), DIRECTIONS[direction], 0
        while True:
            row, col = row + dr, col + dc
            tile = int(grid[row, col, 0])
            if tile in (Tile.WALL, Tile.DOOR_CLOSED, Tile.DOOR_LOCKED):
                return total
            total += 1 if tile == Tile.FLOOR else 4

    return max(range(4), key=score)


def views_picture(out: Path) -> Path:
    """Each layout with a medium ruleset's objects (many of them) and four agents."""
    bench = generate_benchmark("medium", 100, seed=3)
    env = craftium_ma.parallel_env("xland", num_agents=AGENTS, obs_size=VIEW)
    rows = []
    side = VIEW * VIEW_SCALE
    try:
        for i, layout in enumerate(LAYOUTS):
            options = {"ruleset": bench.get_ruleset(i), "layout": layout}
            env.reset(seed=i, options=options)
            drawn = env.grid_state()  # the same world again, each agent turned to its best view
            obs, _ = env.reset(seed=i, options={
                **options, "grid": drawn["grid"], "agent_positions": drawn["positions"],
                "agent_directions": [best_direction(drawn["grid"], p) for p in drawn["positions"]]})
            state = env.grid_state()
            height = state["grid"].shape[0]
            row = [labelled(map_image(state, max(12, 192 // height)), f"{layout}, from above")]
            row += [labelled(Image.fromarray(obs[a]).resize((side, side), Image.NEAREST),
                             f"agent {k} sees")
                    for k, a in enumerate(env.possible_agents)]
            rows.append(row)
    finally:
        env.close()
    path = out / "xland_views.png"
    sheet(rows).save(path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in (objects_picture(args.out), views_picture(args.out)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
