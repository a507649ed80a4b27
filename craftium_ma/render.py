"""Pictures of all agents' views: the mosaic (render()'s, the viewer's, the recorder's),
its layout, and the pygame window of render_mode="human".

The mosaic tiles the frames row by row in a near-square grid; a last row that is not
full is centred, so no empty tile stands in for a missing agent. With labels, each
tile has a bar above its frame with the agent's name (drawn with Pillow).
"""

from __future__ import annotations

import math
import os

import gymnasium
import numpy as np

BACKGROUND = 32  # grey level around the tiles of a last row that is not full
LABEL_BAR = 12  # pixels above each frame that hold its label
LABEL_COLOUR = (235, 235, 235)


def grid(n: int) -> tuple[int, int]:
    """(rows, columns) of the near-square grid of n tiles."""
    columns = math.ceil(math.sqrt(n))
    return math.ceil(n / columns), columns


def tile_origins(n: int, tile_height: int, tile_width: int) -> list[tuple[int, int]]:
    """(top, left) of each of n tiles in the mosaic, in pixels; the last row centred."""
    rows, columns = grid(n)
    origins = []
    for i in range(n):
        row, column = divmod(i, columns)
        in_row = min(columns, n - row * columns)
        offset = (columns - in_row) * tile_width // 2
        origins.append((row * tile_height, offset + column * tile_width))
    return origins


def tile_boxes(n: int) -> list[tuple[float, float, float, float]]:
    """(left, top, width, height) of each of n tiles as fractions of the mosaic (the
    viewer's page places its labels with them)."""
    rows, columns = grid(n)
    # in tiles of width 2, a centred last row starts on a whole number
    return [(left / (2 * columns), top / rows, 1 / columns, 1 / rows)
            for top, left in tile_origins(n, 1, 2)]


def mosaic(frames: list[np.ndarray], labels: list[str] | None = None) -> np.ndarray:
    """The frames (all of one size, H x W x 3 uint8) in one picture; with `labels`, one
    name a frame in a bar above it (only what follows its last "_" where the name is
    wider than the frame)."""
    h, w, c = frames[0].shape
    bar = LABEL_BAR if labels is not None else 0
    rows, columns = grid(len(frames))
    picture = np.full((rows * (h + bar), columns * w, c), BACKGROUND, np.uint8)
    origins = tile_origins(len(frames), h + bar, w)
    for (top, left), frame in zip(origins, frames):
        picture[top + bar:top + bar + h, left:left + w] = frame
    if labels is not None:
        _draw_labels(picture, [(top, left, w) for top, left in origins], labels)
    return picture


def _draw_labels(picture: np.ndarray, bars: list[tuple[int, int, int]], labels: list[str]):
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - pillow is a dependency
        raise ImportError("labelled mosaics need Pillow: pip install pillow") from None
    image = Image.fromarray(picture)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=LABEL_BAR - 2)
    for (top, left, width), label in zip(bars, labels):
        draw.rectangle((left, top, left + width - 1, top + LABEL_BAR - 1), fill=(0, 0, 0))
        if draw.textlength(label, font=font) > width - 4:  # small frames: agent_3 -> 3
            label = label.rsplit("_", 1)[-1]
        draw.text((left + 2, top), label, fill=LABEL_COLOUR, font=font)
    picture[:] = np.asarray(image)


class Window:
    """The pygame window render_mode="human" shows the mosaic in (once there is a display)."""

    def __init__(self):
        self._surface = None
        self._warned = False

    def show(self, picture: np.ndarray):
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            if not self._warned:
                gymnasium.logger.warn("render_mode='human' needs a display; "
                                      "none found, not showing")
                self._warned = True
            return
        try:
            import pygame
        except ImportError:
            raise ImportError("render_mode='human' needs pygame: pip install pygame") from None
        if self._surface is None:
            pygame.init()
            self._surface = pygame.display.set_mode(picture.shape[1::-1])
        pygame.event.pump()
        self._surface.blit(pygame.surfarray.make_surface(picture.swapaxes(0, 1)), (0, 0))
        pygame.display.flip()

    def close(self):
        if self._surface is not None:
            import pygame
            pygame.display.quit()
            self._surface = None
