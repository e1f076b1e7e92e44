"""A headless picture of one SMAX battle (numpy only): units as discs by team and type, health
bars, attack lines."""

from __future__ import annotations

import numpy as np

#: allies blue, enemies red; one shade per unit type (marine .. hydralisk)
TEAM_SHADES = (
    np.array([[40, 90, 200], [30, 60, 150], [70, 130, 230], [20, 40, 110], [110, 160, 240], [50, 110, 170]]),
    np.array([[200, 50, 40], [150, 30, 30], [230, 100, 70], [110, 20, 20], [240, 140, 110], [180, 70, 50]]),
)
BACKGROUND = np.array([236, 232, 220], dtype=np.uint8)
GRID = np.array([222, 217, 203], dtype=np.uint8)


def _disc(img, cx, cy, r, color) -> None:
    h, w = img.shape[:2]
    x0, x1 = max(int(cx - r) - 1, 0), min(int(cx + r) + 2, w)
    y0, y1 = max(int(cy - r) - 1, 0), min(int(cy + r) + 2, h)
    if x0 >= x1 or y0 >= y1:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1]
    inside = (xx + 0.5 - cx) ** 2 + (yy + 0.5 - cy) ** 2 <= r * r
    img[y0:y1, x0:x1][inside] = color


def _rect(img, x0, y0, x1, y1, color) -> None:
    h, w = img.shape[:2]
    x0, x1 = max(int(round(x0)), 0), min(int(round(x1)), w)
    y0, y1 = max(int(round(y0)), 0), min(int(round(y1)), h)
    if x0 < x1 and y0 < y1:
        img[y0:y1, x0:x1] = color


def _line(img, x0, y0, x1, y1, color, width: int = 2) -> None:
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    for t in np.linspace(0.0, 1.0, n):
        x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
        _rect(img, x - width / 2, y - width / 2, x + width / 2, y + width / 2, color)


def draw_battle(state: dict, *, num_allies: int, map_size: tuple[float, float], radius: np.ndarray,
                max_health: np.ndarray, attack_range: np.ndarray, width: int = 700,
                height: int = 700) -> np.ndarray:
    """``state``: one world's ``get_state()`` entries as numpy arrays.  Returns uint8 ``[H, W, 3]``."""
    W, H = float(map_size[0]), float(map_size[1])
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[...] = BACKGROUND
    sx, sy = width / W, height / H
    for gx in range(1, int(W)):
        if gx % 4 == 0:
            _rect(img, gx * sx, 0, gx * sx + 1, height, GRID)
    for gy in range(1, int(H)):
        if gy % 4 == 0:
            _rect(img, 0, gy * sy, width, gy * sy + 1, GRID)
    pos, alive, health = state["unit_positions"], state["unit_alive"], state["unit_health"]
    types, attacks = state["unit_types"], state["prev_attack_actions"]
    A = len(alive)

    def screen(i):
        return pos[i, 0] * sx, height - pos[i, 1] * sy

    # attack lines (the last step's attacks between living units)
    for i in range(A):
        a = int(attacks[i])
        if a < 5 or not alive[i]:
            continue
        target = a + num_allies - 5 if i < num_allies else num_allies - 1 - (a - 5)
        if 0 <= target < A and alive[target]:
            x0, y0 = screen(i)
            x1, y1 = screen(target)
            color = (60, 60, 220) if i < num_allies else (220, 60, 60)
            _line(img, x0, y0, x1, y1, color, width=max(1, width // 350))
    for i in range(A):
        if not alive[i]:
            continue
        team = 0 if i < num_allies else 1
        t = int(types[i])
        x, y = screen(i)
        r = max(float(radius[t]) * sx, 3.0)
        _disc(img, x, y, r + 1.5, (20, 20, 20))
        _disc(img, x, y, r, TEAM_SHADES[team][t % 6])
        frac = float(np.clip(health[i] / max_health[t], 0.0, 1.0))
        bar_w, bar_h = max(2 * r, 12.0), max(3.0, height / 180)
        top = y - r - bar_h - 3
        _rect(img, x - bar_w / 2, top, x + bar_w / 2, top + bar_h, (60, 60, 60))
        _rect(img, x - bar_w / 2, top, x - bar_w / 2 + bar_w * frac, top + bar_h, (60, 200, 80))
    return img
