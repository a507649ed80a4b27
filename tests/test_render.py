"""The mosaic of all agents' views and its layout (no engine)."""

import numpy as np

from craftium_ma import render


def frames(n, size=16):
    return [np.full((size, size, 3), 10 * (i + 1), np.uint8) for i in range(n)]


def test_frames_tile_row_by_row_in_a_near_square_grid():
    picture = render.mosaic(frames(4))
    assert picture.shape == (32, 32, 3)
    assert [picture[r, c, 0] for r, c in ((0, 0), (0, 16), (16, 0), (16, 16))] == [10, 20, 30, 40]


def test_a_last_row_that_is_not_full_is_centred_with_no_empty_tile():
    picture = render.mosaic(frames(3))
    assert picture.shape == (32, 32, 3)
    bottom = picture[16:, :, 0]
    assert (bottom[:, 8:24] == 30).all()  # the third frame, centred
    assert ((bottom[:, :8] == render.BACKGROUND).all()
            and (bottom[:, 24:] == render.BACKGROUND).all())
    assert not (picture == 0).all(axis=2).any()  # no black filler anywhere


def test_labels_sit_in_a_bar_above_each_frame_and_leave_the_frames_whole():
    for size in (16, 64):  # at 16 pixels the names shorten to their numbers
        picture = render.mosaic(frames(2, size), labels=["agent_0", "agent_1"])
        bar = render.LABEL_BAR
        assert picture.shape == (size + bar, 2 * size, 3)
        assert (picture[bar:, :size] == 10).all() and (picture[bar:, size:] == 20).all()
        assert (picture[:bar, :size] > 128).any()  # text drawn
        assert not np.array_equal(picture[:bar, :size], picture[:bar, size:])  # two names


def test_tile_boxes_match_the_mosaic_for_the_viewers_labels():
    for n in range(1, 10):
        h = w = 16
        picture = render.mosaic(frames(n, h))
        height, width = picture.shape[:2]
        for (top, left), box in zip(render.tile_origins(n, h, w), render.tile_boxes(n)):
            assert box == (left / width, top / height, w / width, h / height)
