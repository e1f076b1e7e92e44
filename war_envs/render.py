"""Headless rendering of MPE-style worlds (circles on a white plane).

Pure numpy rasteriser that mimics mpe2's pygame ``draw()`` (same camera, same
dynamic rescaling, same colours) without needing pygame or a display, plus an
atomic animated-GIF writer and an optional pygame window for
``render_mode="human"``.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
from pathlib import Path
from typing import Iterable

import numpy as np

from war_envs._extras import needs_extra

__all__ = [
    "camera_range",
    "world_to_screen",
    "render_circles",
    "GifWriter",
    "write_gif",
    "HumanViewer",
]

# mpe2 constants: circles are drawn at ``size * 350`` pixels and positions use
# 90 % of the half-width so entities on the camera boundary stay visible.
_RADIUS_SCALE = 350.0
_MARGIN = 0.9
_COLOR_SCALE = 200.0


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def _as_float_array(name: str, value, shape_desc: str, ndim: int, last: int | None) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != ndim or (last is not None and arr.shape[-1] != last):
        raise ValueError(f"{name} must have shape {shape_desc}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf values")
    return arr


def _cam(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    # All entities at the origin would divide by zero in mpe2; use unit range.
    return value if value > 0 else 1.0


def camera_range(positions) -> float:
    """mpe2's camera range: max |coordinate| over all entities (0 or empty -> 1)."""
    pos = _as_float_array("positions", positions, "[K, 2]", 2, 2)
    if pos.size == 0:
        return 1.0
    r = float(np.max(np.abs(pos)))
    return r if r > 0 else 1.0


def world_to_screen(positions, *, width: int = 700, height: int = 700,
                    cam_range: float | None = None) -> np.ndarray:
    """Pixel coordinates [K, 2] (x right, y down) exactly as mpe2 computes them."""
    pos = _as_float_array("positions", positions, "[K, 2]", 2, 2)
    width = _positive_int("width", width)
    height = _positive_int("height", height)
    cam = _cam("cam_range", cam_range)
    if cam is None:
        cam = camera_range(pos)
    # Reproduces mpe2's operator precedence: ((x / cam) * W) // 2 * 0.9 + W // 2,
    # including the floor division; y is negated so +y points up on screen.
    x = np.floor_divide(pos[:, 0] / cam * width, 2) * _MARGIN + width // 2
    y = np.floor_divide(-pos[:, 1] / cam * height, 2) * _MARGIN + height // 2
    return np.stack([x, y], axis=-1)


def render_circles(positions: np.ndarray, radii: np.ndarray, colors: np.ndarray, *,
                   width: int = 700, height: int = 700,
                   cam_range: float | None = None,
                   original_cam_range: float | None = None,
                   border: bool = True,
                   antialias: bool = True) -> np.ndarray:
    """Draw circles like mpe2's pygame renderer; returns [height, width, 3] uint8.

    ``radii`` are entity sizes in world units; ``colors`` are mpe2 colours in
    [0, 1] (drawn as ``int(colour * 200)`` like pygame). Circles are drawn in
    order, later ones on top. ``original_cam_range`` (the camera range at the
    last reset) enables mpe2's dynamic rescaling; ``None`` disables it.
    ``antialias=False`` reproduces pygame's hard-edged pixels.
    """
    pos = _as_float_array("positions", positions, "[K, 2]", 2, 2)
    k = pos.shape[0]
    rad = _as_float_array("radii", radii, f"[K] = [{k}] (K from positions)", 1, None)
    if rad.shape != (k,):
        raise ValueError(f"radii must have shape [{k}] to match positions, got {rad.shape}")
    if np.any(rad < 0):
        raise ValueError("radii must be >= 0")
    col = _as_float_array("colors", colors, f"[K, 3] = [{k}, 3]", 2, 3)
    if col.shape[0] != k:
        raise ValueError(f"colors must have shape [{k}, 3] to match positions, got {col.shape}")
    width = _positive_int("width", width)
    height = _positive_int("height", height)
    cam = _cam("cam_range", cam_range)
    if cam is None:
        cam = camera_range(pos)
    orig = _cam("original_cam_range", original_cam_range)

    img = np.full((height, width, 3), 255, dtype=np.uint8)
    if k == 0:
        return img

    centers = world_to_screen(pos, width=width, height=height, cam_range=cam)
    scale = _RADIUS_SCALE * (_MARGIN * orig / cam if orig is not None else 1.0)
    pix_r = rad * scale
    # pygame converts float colours by truncation; float32 keeps blending cheap.
    fills = np.floor(np.clip(col * _COLOR_SCALE, 0, 255)).astype(np.float32)

    for (cx, cy), r, fill in zip(centers, pix_r, fills):
        if antialias:
            # Continuous geometry (pixel i spans [i, i+1)) keeps motion and
            # zoom smooth instead of snapping to whole pixels.
            ccx, ccy, rr = cx, cy, r
        else:
            # pygame truncates centre and radius to ints before drawing.
            ccx, ccy, rr = float(int(cx)), float(int(cy)), float(int(r))
        if rr <= 0:
            continue
        # Only touch the circle's bounding box (clipped to the frame).
        x0 = max(int(math.floor(ccx - rr - 1)), 0)
        x1 = min(int(math.ceil(ccx + rr + 1)), width)
        y0 = max(int(math.floor(ccy - rr - 1)), 0)
        y1 = min(int(math.ceil(ccy + rr + 1)), height)
        if x0 >= x1 or y0 >= y1:
            continue  # entirely off-screen: clipped, like pygame
        dx = (np.arange(x0, x1, dtype=np.float32) + 0.5) - np.float32(ccx)
        dy = (np.arange(y0, y1, dtype=np.float32) + 0.5) - np.float32(ccy)
        if antialias:
            d = np.sqrt(dx[None, :] ** 2 + dy[:, None] ** 2)
            # Signed-distance coverage: a pixel whose centre sits on the edge
            # is half covered; total area matches pygame's pixel count.
            outer = np.clip(np.float32(rr + 0.5) - d, 0.0, 1.0)
            inner = np.clip(np.float32(rr - 0.5) - d, 0.0, 1.0) if border else outer
        else:
            d2 = dx[None, :] ** 2 + dy[:, None] ** 2
            outer = (d2 <= rr * rr).astype(np.float32)
            inner = (d2 <= (rr - 1) ** 2).astype(np.float32) if border else outer
        patch = img[y0:y1, x0:x1].astype(np.float32)
        # Fill the inner disc, black (zero) for the ring between inner and outer.
        patch = patch * (1.0 - outer)[..., None] + fill * inner[..., None]
        img[y0:y1, x0:x1] = np.clip(np.rint(patch), 0, 255).astype(np.uint8)
    return img


def _check_frame(frame, name: str = "frame") -> np.ndarray:
    if not isinstance(frame, np.ndarray):
        raise ValueError(f"{name} must be a numpy array of shape [H, W, 3] uint8, got {type(frame).__name__}")
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"{name} must have shape [H, W, 3], got {frame.shape}")
    if frame.dtype != np.uint8:
        raise ValueError(f"{name} must have dtype uint8, got {frame.dtype}")
    return frame


class GifWriter:
    """Collects [H, W, 3] uint8 frames and writes an animated GIF on ``close()``.

    The file is written to a temporary sibling and moved into place with
    ``os.replace``, so readers never see a half-written GIF. Frames are kept in
    memory until ``close()``. Pillow merges identical consecutive frames (their
    durations add up), and GIF timing has 10 ms resolution.
    """

    def __init__(self, path, fps: int = 10):
        with needs_extra("render", "writing GIFs (war_envs.render.GifWriter)"):
            from PIL import Image  # noqa: F401
        if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0 or not math.isfinite(fps):
            raise ValueError(f"fps must be a positive number, got {fps!r}")
        self.path = Path(path)
        self.fps = fps
        self._frames: list = []
        self._size: tuple[int, int] | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._frames)

    def append(self, frame: np.ndarray) -> None:
        """Add one frame (copied, so the caller may reuse its buffer)."""
        from PIL import Image

        if self._closed:
            raise ValueError(f"GifWriter for {self.path} is already closed")
        frame = _check_frame(frame)
        size = frame.shape[:2]
        if self._size is None:
            self._size = size
        elif size != self._size:
            raise ValueError(f"frame size {size} differs from the first frame's {self._size}")
        # Copy explicitly: the caller may reuse its buffer for the next frame.
        self._frames.append(Image.fromarray(frame.copy()))

    def close(self) -> Path:
        """Write the GIF (idempotent) and return its path."""
        if self._closed:
            return self.path
        if not self._frames:
            raise ValueError(f"no frames were appended; nothing to write to {self.path}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Temp file in the same directory so os.replace is an atomic rename;
        # O_EXCL + random name avoids clobbering concurrent writers, and mode
        # 0o666 lets the umask decide permissions like a normal open().
        tmp = self.path.parent / f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as f:
                first, *rest = self._frames
                first.save(f, format="GIF", save_all=True, append_images=rest,
                           duration=max(int(round(1000 / self.fps)), 10), loop=0)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._closed = True
        self._frames = []
        return self.path

    def __enter__(self) -> "GifWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            # Don't publish a partial recording, and don't mask the error.
            self._closed = True
            self._frames = []


def write_gif(frames: Iterable[np.ndarray], path, fps: int = 10) -> Path:
    """Write ``frames`` ([H, W, 3] uint8 each) to an animated GIF atomically."""
    writer = GifWriter(path, fps=fps)
    for frame in frames:
        writer.append(frame)
    return writer.close()


class HumanViewer:
    """A pygame window for ``render_mode="human"``.

    Raises ``RuntimeError`` at construction if pygame or a display is missing.
    ``SDL_VIDEODRIVER=dummy`` (or ``offscreen``) is accepted for headless tests.
    """

    def __init__(self, title: str = "war-envs", fps: float | None = None):
        missing = []
        try:
            os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
            import pygame
        except ImportError:
            pygame = None
            missing.append("pygame is not installed (pip install pygame-ce)")
        driver = os.environ.get("SDL_VIDEODRIVER", "").lower()
        headless_driver = driver in ("dummy", "offscreen")
        if (sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))
                and not headless_driver
                and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")):
            missing.append("no display (neither DISPLAY nor WAYLAND_DISPLAY is set)")
        if missing:
            raise RuntimeError(
                "render_mode='human' is unavailable: " + "; ".join(missing)
                + ". Use render_mode='rgb_array' (and GifWriter) on headless machines.")
        try:
            pygame.display.init()
        except pygame.error as e:
            raise RuntimeError(f"render_mode='human' is unavailable: pygame could not open a display: {e}") from e
        self._pg = pygame
        self.title = title
        self.fps = fps
        self._screen = None
        self._clock = pygame.time.Clock()
        self.is_open = True

    def show(self, frame: np.ndarray) -> bool:
        """Display a [H, W, 3] uint8 frame; returns False once the user closed the window."""
        frame = _check_frame(frame)
        if not self.is_open:
            return False
        pg = self._pg
        h, w = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (w, h):
            self._screen = pg.display.set_mode((w, h))
            pg.display.set_caption(self.title)
        # surfarray is [x, y]; frames are [y, x].
        pg.surfarray.blit_array(self._screen, np.ascontiguousarray(frame.transpose(1, 0, 2)))
        pg.display.flip()
        # Pumping events keeps the OS from flagging the window unresponsive.
        for event in pg.event.get():
            if event.type == pg.QUIT:
                self.close()
                return False
        if self.fps:
            self._clock.tick(self.fps)
        return True

    def close(self) -> None:
        """Close the window (idempotent); only the display subsystem is shut down."""
        if self.is_open:
            self.is_open = False
            self._screen = None
            self._pg.display.quit()

    def __enter__(self) -> "HumanViewer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
