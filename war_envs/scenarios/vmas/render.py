"""A headless picture of one VMAS world (numpy only): spheres as discs, boxes and lines as
rotated polygons in their colours, agents outlined, lidar rays as thin grey segments ending in a
dot where they hit, on a white plane with the world's bounds drawn where it has them."""

from __future__ import annotations

import math

import numpy as np

BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)
BOUNDS = np.array([200, 200, 200], dtype=np.uint8)
RAY = np.array([120, 120, 120], dtype=np.uint8)
OUTLINE = np.array([30, 30, 30], dtype=np.uint8)


def _fill_convex(img, pts: np.ndarray, color) -> None:
    """Fill the convex polygon ``pts`` ([k, 2] pixel coordinates, any winding)."""
    h, w = img.shape[:2]
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x0 >= x1 or y0 >= y1:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1]
    px, py = xx + 0.5, yy + 0.5
    sign = None
    inside = np.ones(px.shape, dtype=bool)
    for k in range(len(pts)):
        ax, ay = pts[k]
        bx, by = pts[(k + 1) % len(pts)]
        cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
        if sign is None:
            area = sum((pts[(j + 1) % len(pts)][0] - pts[j][0]) * (pts[(j + 1) % len(pts)][1] + pts[j][1])
                       for j in range(len(pts)))
            sign = -1.0 if area > 0 else 1.0
        inside &= cross * sign >= 0
    img[y0:y1, x0:x1][inside] = color


def _disc(img, cx, cy, r, color) -> None:
    angles = np.linspace(0, 2 * math.pi, max(12, int(r)), endpoint=False)
    _fill_convex(img, np.stack([cx + r * np.cos(angles), cy + r * np.sin(angles)], axis=1), color)


def _segment(img, a, b, width, color) -> None:
    d = np.asarray(b, float) - np.asarray(a, float)
    n = np.hypot(*d)
    if n == 0:
        return
    normal = np.array([-d[1], d[0]]) / n * (width / 2)
    _fill_convex(img, np.array([a + normal, b + normal, b - normal, a - normal]), color)


def render_world(env, world: int, *, width: int = 700, height: int = 700) -> np.ndarray:
    """``env`` (a ``VmasBase``) world ``world`` as an RGB ``[height, width, 3]`` uint8 array."""
    lay = env.layout
    pos = env.pos.numpy()[world].astype(np.float64)
    rot = env.rot.numpy()[world].astype(np.float64)
    span = max(1.0, float(np.abs(pos).max()) + 0.3 if len(pos) else 1.0)
    for bound in (lay.x_semidim, lay.y_semidim):
        if bound is not None:
            span = max(span, bound * 1.1)
    scale = min(width, height) / (2 * span)

    def px(p):
        p = np.asarray(p, dtype=np.float64)
        return np.stack([width / 2 + p[..., 0] * scale, height / 2 - p[..., 1] * scale], axis=-1)

    img = np.empty((height, width, 3), dtype=np.uint8)
    img[...] = BACKGROUND
    if lay.x_semidim is not None or lay.y_semidim is not None:
        bx = lay.x_semidim if lay.x_semidim is not None else span
        by = lay.y_semidim if lay.y_semidim is not None else span
        corners = px(np.array([[-bx, -by], [bx, -by], [bx, by], [-bx, by]]))
        for k in range(4):
            _segment(img, corners[k], corners[(k + 1) % 4], 2, BOUNDS)
    drawn = env.bodies_drawn(world)
    for b, body in enumerate(lay.bodies):  # landmarks first, then agents (VMAS's drawing order)
        if not body.visible:
            continue
        if not drawn[b]:
            continue
        color = (np.clip(np.asarray(body.color, dtype=np.float64), 0, 1) * 255).astype(np.uint8)
        c, angle = pos[b], rot[b]
        if body.shape == "sphere":
            cx, cy = px(c)
            r = max(body.radius * scale, 1.5)
            if body.agent:
                _disc(img, cx, cy, r + 1.5, OUTLINE)
            _disc(img, cx, cy, r, color)
        else:
            half_l = body.length / 2
            half_w = body.width / 2 if body.shape == "box" else 0.0
            local = np.array([[-half_l, -half_w], [half_l, -half_w], [half_l, half_w], [-half_l, half_w]])
            cos, sin = math.cos(angle), math.sin(angle)
            world_pts = c + local @ np.array([[cos, sin], [-sin, cos]])
            if body.shape == "box":
                _fill_convex(img, px(world_pts), color)
            else:
                _segment(img, px(world_pts[0]), px(world_pts[1]), 3, color)
    if lay.lidars:
        readings = env.lidar_readings(world)
        for lid, dists in zip(lay.lidars, readings):
            owner = env.body_index(lid.agent)
            origin = pos[owner]
            for angle, d in zip(lid.angles().astype(np.float64), dists):
                a = angle + rot[owner]
                end = origin + d * np.array([math.cos(a), math.sin(a)])
                _segment(img, px(origin), px(end), 1, RAY)
                ex, ey = px(end)
                _disc(img, ex, ey, 2, RAY)
    return img
