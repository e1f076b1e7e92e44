"""Tests for the headless numpy renderer, GIF writer and human viewer."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from war_envs.render import (GifWriter, HumanViewer, camera_range, render_circles,
                             world_to_screen, write_gif)

W = H = 700


def _one(pos=(0.0, 0.0), size=0.05, color=(0.35, 0.35, 0.85), **kw):
    # A second entity at (1, 1) pins the camera range to 1 so the first one's
    # pixel position is predictable.
    positions = np.array([pos, (1.0, 1.0)])
    radii = np.array([size, 0.0])
    colors = np.array([color, (0.0, 0.0, 0.0)])
    return render_circles(positions, radii, colors, **kw)


def _radius_px(img, row, col):
    """Extent of non-white pixels along a row, starting at col (the centre)."""
    line = (img[row] != 255).any(-1)
    r = 0
    while col + r + 1 < line.size and line[col + r + 1]:
        r += 1
    return r


@pytest.mark.parametrize("antialias", [True, False])
def test_shape_dtype(antialias):
    img = _one(width=320, height=240, antialias=antialias)
    assert img.shape == (240, 320, 3)
    assert img.dtype == np.uint8


def test_empty_world_is_white():
    img = render_circles(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 3)), width=10, height=8)
    assert img.shape == (8, 10, 3) and (img == 255).all()


@pytest.mark.parametrize("antialias", [True, False])
def test_centre_colour_far_white_border_black(antialias):
    color = np.array([0.35, 0.35, 0.85])
    img = _one(color=color, size=0.05, antialias=antialias)
    cx, cy = world_to_screen(np.zeros((1, 2)), cam_range=1.0)[0]
    cx, cy = int(cx), int(cy)
    # pygame converts colour * 200 to int by truncation.
    expected = np.floor(color * 200).astype(np.uint8)
    assert (img[cy, cx] == expected).all()
    assert (img[cy, cx + 3] == expected).all()
    assert (img[5, 5] == 255).all()
    assert (img[cy, cx + 60] == 255).all()
    # Radius is 0.05 * 350 = 17.5 px; the 1-px black border sits at the edge.
    r = _radius_px(img, cy, cx)
    assert 16 <= r <= 18
    edge = img[cy, cx + r - 2:cx + r + 1].max(-1)
    if antialias:
        # The ring straddles two pixels, blending with fill and white, but is
        # clearly darker than both (fill's brightest channel is 170).
        assert edge.min() < 100
    else:
        assert (img[cy, cx + r] == 0).all()
    # Without border the edge pixel takes the fill colour instead of black.
    img_nb = _one(color=color, size=0.05, antialias=antialias, border=False)
    assert (img_nb[cy, cx + r - 1] == expected).all()
    assert img_nb[cy, cx + r - 1].max() > 100


def test_border_pixels_are_black_all_round():
    img = _one(size=0.1, antialias=False)
    cx, cy = (int(v) for v in world_to_screen(np.zeros((1, 2)), cam_range=1.0)[0])
    r = _radius_px(img, cy, cx)
    for px, py in [(cx + r, cy), (cx - r - 1, cy), (cx, cy + r), (cx, cy - r - 1)]:
        assert (img[py, px] == 0).all(), (px, py, img[py, px])


def test_y_axis_flipped():
    up = render_circles([[0.0, 0.5], [1.0, 1.0]], [0.05, 0.0], [[1, 0, 0], [0, 0, 0]])
    rows = np.nonzero((up != 255).any(-1).any(-1))[0]
    assert rows.max() < H // 2  # +y is drawn in the upper half
    down = render_circles([[0.0, -0.5], [1.0, 1.0]], [0.05, 0.0], [[1, 0, 0], [0, 0, 0]])
    rows = np.nonzero((down != 255).any(-1).any(-1))[0]
    assert rows.min() > H // 2
    right = render_circles([[0.5, 0.0], [1.0, 1.0]], [0.05, 0.0], [[1, 0, 0], [0, 0, 0]])
    cols = np.nonzero((right != 255).any(-1).any(0))[0]
    assert cols.min() > W // 2


def test_mpe2_position_formula():
    # mpe2: x = (x / cam) * W // 2 * 0.9 + W // 2, with y negated.
    p = world_to_screen(np.array([[0.3, -0.7], [-1.0, 1.0]]), cam_range=1.0)
    assert p[0, 0] == pytest.approx((0.3 * 700) // 2 * 0.9 + 350)
    assert p[0, 1] == pytest.approx((0.7 * 700) // 2 * 0.9 + 350)
    assert p[1].tolist() == pytest.approx([-350 * 0.9 + 350, -350 * 0.9 + 350])


def test_dynamic_rescaling_changes_radius():
    pos = np.array([[0.0, 0.0], [1.0, 1.0]])
    rad = np.array([0.1, 0.0])
    col = np.array([[0.25, 0.25, 0.25], [0, 0, 0]])
    c = W // 2
    r_plain = _radius_px(render_circles(pos, rad, col), c, c)
    r_same = _radius_px(render_circles(pos, rad, col, original_cam_range=1.0), c, c)
    r_zoom_in = _radius_px(render_circles(pos, rad, col, original_cam_range=2.0), c, c)
    r_zoom_out = _radius_px(render_circles(pos, rad, col, original_cam_range=0.5), c, c)
    assert abs(r_plain - 35) <= 1  # 0.1 * 350
    assert abs(r_same - 0.9 * 35) <= 1  # mpe2 right after reset: scaling 0.9
    assert abs(r_zoom_in - 1.8 * 35) <= 1
    assert abs(r_zoom_out - 0.45 * 35) <= 1


def test_cam_range_zero_treated_as_one():
    assert camera_range(np.zeros((3, 2))) == 1.0
    img = render_circles(np.zeros((1, 2)), [0.05], [[1, 0, 0]])  # all at origin
    ref = render_circles(np.zeros((1, 2)), [0.05], [[1, 0, 0]], cam_range=1.0)
    assert (img == ref).all()
    assert (render_circles(np.zeros((1, 2)), [0.05], [[1, 0, 0]], cam_range=0.0) == ref).all()
    assert (img[H // 2, W // 2] == [200, 0, 0]).all()


def test_out_of_frame_entities_are_clipped():
    pos = np.array([[0.0, 0.0], [5.0, -7.0], [0.99, 0.99]])
    img = render_circles(pos, [0.05, 0.2, 0.3], [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                         cam_range=1.0, original_cam_range=1.0)
    assert img.shape == (H, W, 3)
    assert (img[H // 2, W // 2] == [200, 0, 0]).all()
    assert not (img == [0, 200, 0]).all(-1).any()  # far-away entity invisible
    assert (img == [0, 0, 200]).all(-1).any()      # partly visible one drawn


def test_later_entities_drawn_on_top():
    img = render_circles([[0, 0], [0, 0], [1, 1]], [0.1, 0.05, 0.0],
                         [[1, 0, 0], [0, 1, 0], [0, 0, 0]])
    assert (img[H // 2, W // 2] == [0, 200, 0]).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(positions=[[np.nan, 0.0]]), "positions"),
    (dict(positions=[[np.inf, 0.0]]), "positions"),
    (dict(positions=np.zeros((1, 3))), r"positions must have shape \[K, 2\], got \(1, 3\)"),
    (dict(radii=[0.1, 0.2]), r"radii must have shape \[1\].*got \(2,\)"),
    (dict(radii=[np.nan]), "radii"),
    (dict(radii=[-0.1]), "radii"),
    (dict(colors=[[1, 0]]), r"colors must have shape.*got \(1, 2\)"),
    (dict(colors=[[1, 0, 0], [0, 1, 0]]), r"colors must have shape \[1, 3\].*got \(2, 3\)"),
    (dict(colors=[[np.nan, 0, 0]]), "colors"),
    (dict(width=0), "width"),
    (dict(height=12.5), "height"),
    (dict(cam_range=-1.0), "cam_range"),
    (dict(cam_range=np.nan), "cam_range"),
    (dict(original_cam_range=np.inf), "original_cam_range"),
])
def test_bad_inputs_raise_value_error(kwargs, match):
    args = dict(positions=[[0.0, 0.0]], radii=[0.1], colors=[[1.0, 0.0, 0.0]])
    args.update(kwargs)
    pos, rad, col = args.pop("positions"), args.pop("radii"), args.pop("colors")
    with pytest.raises(ValueError, match=match):
        render_circles(pos, rad, col, **args)


def _frames(n, h=40, w=60):
    frames = []
    for i in range(n):
        f = np.full((h, w, 3), 255, np.uint8)
        f[:, i * 10:(i + 1) * 10] = [200, 0, 0]  # distinct frames: Pillow merges duplicates
        frames.append(f)
    return frames


def test_gif_round_trip(tmp_path):
    from PIL import Image

    path = tmp_path / "out.gif"
    frames = _frames(3)
    with GifWriter(path, fps=20) as writer:
        for f in frames:
            writer.append(f)
            f[:] = 0  # writer must have copied the frame
        assert len(writer) == 3
    assert writer.close() == path  # idempotent
    with Image.open(path) as im:
        assert im.format == "GIF"
        assert im.n_frames == 3
        assert im.size == (60, 40)
        assert im.info.get("duration") == 50
        im.seek(1)
        rgb = np.asarray(im.convert("RGB"))
        assert (rgb[:, 10:20] == [200, 0, 0]).all() and (rgb[:, 30:] == 255).all()


def test_write_gif_atomic_no_temp_left(tmp_path):
    path = tmp_path / "sub" / "anim.gif"
    out = write_gif(_frames(3), path, fps=10)
    assert out == path and path.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == ["anim.gif"]
    # Overwriting an existing file also goes through a temp file + replace.
    write_gif(_frames(2), path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["anim.gif"]


def test_gif_failure_leaves_no_file(tmp_path, monkeypatch):
    from PIL import Image

    path = tmp_path / "broken.gif"

    def boom(*a, **k):
        raise OSError("disk full")

    writer = GifWriter(path)
    writer.append(_frames(1)[0])
    monkeypatch.setattr(Image.Image, "save", boom)
    with pytest.raises(OSError, match="disk full"):
        writer.close()
    assert list(tmp_path.iterdir()) == []


def test_gif_context_manager_error_writes_nothing(tmp_path):
    path = tmp_path / "x.gif"
    with pytest.raises(KeyError):
        with GifWriter(path) as w:
            w.append(_frames(1)[0])
            raise KeyError("boom")
    assert list(tmp_path.iterdir()) == []


def test_gif_bad_frames(tmp_path):
    w = GifWriter(tmp_path / "x.gif")
    with pytest.raises(ValueError, match=r"shape \[H, W, 3\], got \(4, 4\)"):
        w.append(np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError, match="uint8, got float32"):
        w.append(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="numpy array"):
        w.append([[[0, 0, 0]]])
    w.append(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="differs from the first"):
        w.append(np.zeros((5, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="no frames"):
        GifWriter(tmp_path / "y.gif").close()
    with pytest.raises(ValueError, match="fps"):
        GifWriter(tmp_path / "z.gif", fps=0)


def test_human_viewer_without_display_raises(monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(var, raising=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("display detection via env vars is Linux-specific")
    with pytest.raises(RuntimeError, match="DISPLAY.*WAYLAND_DISPLAY"):
        HumanViewer()


def test_human_viewer_dummy_driver(monkeypatch):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    frame = render_circles([[0.0, 0.5], [1, 1]], [0.05, 0.0], [[1, 0, 0], [0, 0, 0]],
                           width=64, height=48)
    with HumanViewer(title="test") as viewer:
        assert viewer.show(frame) is True
        shown = pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)
        assert (shown == frame).all()
    assert viewer.show(frame) is False  # closed: further frames are ignored


def _mpe2_world_arrays(env):
    world = env.unwrapped.world
    pos = np.array([e.state.p_pos for e in world.entities])
    size = np.array([e.size for e in world.entities])
    color = np.array([e.color for e in world.entities])
    return pos, size, color


@pytest.mark.parametrize("steps", [0, 15])
@pytest.mark.parametrize("antialias", [True, False])
def test_matches_mpe2_pygame_render(steps, antialias):
    simple_spread_v3 = pytest.importorskip("mpe2.simple_spread_v3")
    env = simple_spread_v3.parallel_env(render_mode="rgb_array", max_cycles=50)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(steps):  # move away from the reset camera: exercises rescaling
            env.step({a: int(rng.integers(5)) for a in env.agents})
        ref = env.render()
        pos, size, color = _mpe2_world_arrays(env)
        img = render_circles(pos, size, color, width=ref.shape[1], height=ref.shape[0],
                             original_cam_range=env.unwrapped.original_cam_range,
                             antialias=antialias)
    finally:
        env.close()
    assert img.shape == ref.shape and img.dtype == ref.dtype
    close = (np.abs(img.astype(int) - ref.astype(int)) <= 40).all(-1)
    assert close.mean() >= 0.97
    # The frame is ~95 % white, so also check the drawn pixels themselves.
    fg = (ref != 255).any(-1) | (img != 255).any(-1)
    assert close[fg].mean() >= (0.95 if not antialias else 0.85)
