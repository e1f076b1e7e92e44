"""war_envs.scenarios.vmas.geometry against VMAS 1.5.2's own torch functions.

Each Warp function is evaluated by a small test kernel over N inputs (random ones plus
adversarial ones: contacts and near-contacts, points on segment ends, parallel and
perpendicular lines, rotated boxes, boxes touching at corners, rays grazing spheres, rays
starting inside shapes or pointing away, max_range cut-offs) in float32 and float64, and
compared with ``vmas.simulator.physics`` / ``TorchUtils`` / ``World`` methods on the same inputs
in the same dtype.  Tolerances (``_TOL``): 4e-15 in float64 and 1e-6 in float32 (relative,
plus that much times the inputs' scale absolute), a few ulp; the ulp come from torch's SLEEF
cos / sin / exp / log1p (the geometry module's docstring).  Exact ties that only the last bit
of a cos / sin decides (a ray exactly grazing a sphere at a generic angle) are placed along
the axes, where cos / sin are exact; elsewhere the adversarial inputs are "just" inside or
outside (1e-4 in float32, 1e-9 in float64).  Non-finite values must
match exactly (inf with inf of the same sign, NaN with NaN).

``test_harness_bites`` runs the same comparison on deliberately wrong variants (a missing
cut-off, a missing "behind the ray" test, ``<=`` instead of ``<`` in a closest-side search, an
angle off by 1e-12 relative) and requires each to fail.
"""

import inspect
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
import warp as wp
from vmas.simulator import physics as vp
from vmas.simulator.core import Agent, Box, Landmark, Line, Sphere, World
from vmas.simulator.utils import TorchUtils

from war_envs.core.episode import KERNEL_MODULE_OPTIONS
from war_envs.scenarios.vmas import geometry as g

wp.set_module_options(KERNEL_MODULE_OPTIONS)

FLOATS = (wp.float32, wp.float64)
_NP = {wp.float32: np.float32, wp.float64: np.float64}
_TORCH = {wp.float32: torch.float32, wp.float64: torch.float64}
#: (rtol, atol per unit of input scale): ~8 ulp in float32, ~16 in float64; the largest
#: differences seen are 3.3 and 1.0 ulp (of |VMAS| + scale)
_TOL = {wp.float32: (1e-6, 1e-6), wp.float64: (4e-15, 4e-15)}
TAU = 2.0 * math.pi
#: rotations where cos / sin are exact or notable (multiples of pi / 4 in [-2 pi, 2 pi])
SPECIAL_ROTS = np.array([0.0, math.pi / 2, math.pi, -math.pi / 2, -math.pi, TAU, -TAU, math.pi / 4,
                         3 * math.pi / 4, -3 * math.pi / 4, 1.5 * math.pi])


# ---------------------------------------------------------------------------------------------
# Deliberately wrong variants (test_harness_bites)
# ---------------------------------------------------------------------------------------------


@wp.func
def _force_without_cutoff(pos_a: Any, pos_b: Any, dist_min: Any, force_multiplier: Any,
                          contact_margin: Any, attractive: bool):
    """constraint_force without the dist > dist_min / dist < dist_min zeroing."""
    delta_pos = pos_a - pos_b
    dist = g.vector_norm(delta_pos)
    sign = type(dist)(1.0)
    if attractive:
        sign = type(dist)(-1.0)
    if dist < type(dist)(1e-6):
        return type(delta_pos)(type(dist)(0.0), type(dist)(0.0))
    penetration = g.logaddexp0((dist_min - dist) * sign / contact_margin) * contact_margin
    c = sign * force_multiplier
    return type(delta_pos)(c * delta_pos[0] / dist * penetration, c * delta_pos[1] / dist * penetration)


@wp.func
def _ray_to_line_both_ways(origin: Any, angle: Any, max_range: Any, line_pos: Any, line_rot: Any,
                           line_length: Any):
    """ray_to_line without the u < 0 ("behind the ray") test."""
    r = type(origin)(wp.cos(line_rot) * line_length, wp.sin(line_rot) * line_length)
    s = type(origin)(wp.cos(angle), wp.sin(angle))
    rxs = g.cross(r, s)
    if rxs == type(rxs)(0.0):
        return max_range
    q_minus_p = origin - line_pos
    t = g.cross(q_minus_p, type(s)(s[0] / rxs, s[1] / rxs))
    u = g.cross(q_minus_p, type(r)(r[0] / rxs, r[1] / rxs))
    if t > type(t)(0.5) or t < type(t)(-0.5):
        return max_range
    return g.vector_norm(type(s)(u * s[0], u * s[1]))


@wp.func
def _closest_point_box_last_tie(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, point: Any):
    """closest_point_box keeping the last side on ties (<= instead of <)."""
    closest = type(box_pos)(type(box_rot)(wp.inf), type(box_rot)(wp.inf))
    distance = type(box_rot)(wp.inf)
    for i in range(4):
        side_pos, side_rot, side_length = g.box_side(box_pos, box_rot, box_width, box_length, i)
        p = g.closest_point_line(side_pos, side_rot, side_length, point, True)
        d = g.vector_norm(point - p)
        if d <= distance:
            closest = p
            distance = d
    return closest


@wp.func
def _rotate_vector_off(v: Any, angle: Any):
    """rotate_vector with the angle off by 1e-12 relative."""
    return g.rotate_vector(v, angle * type(angle)(1.000000000001))


# ---------------------------------------------------------------------------------------------
# Test kernels: one thread per input row
# ---------------------------------------------------------------------------------------------


def _build(F):
    """The test kernels for float type F, in one Warp module (compiled once)."""
    V = wp.types.vector(length=2, dtype=F)
    A = wp.array(dtype=F)
    AV = wp.array(dtype=V)

    def rotate_vector(v: AV, a: A, out: AV):
        i = wp.tid()
        out[i] = g.rotate_vector(v[i], a[i])

    def rotate_vector_off(v: AV, a: A, out: AV):
        i = wp.tid()
        out[i] = _rotate_vector_off(v[i], a[i])

    def cross_torque(a: AV, b: AV, out_cross: A, out_torque: A):
        i = wp.tid()
        out_cross[i] = g.cross(a[i], b[i])
        out_torque[i] = g.compute_torque(a[i], b[i])

    def clamp_with_norm(v: AV, m: A, out: AV):
        i = wp.tid()
        out[i] = g.clamp_with_norm(v[i], m[i])

    def closest_point_line(pos: AV, rot: A, length: A, point: AV, limit: int, out: AV):
        i = wp.tid()
        out[i] = g.closest_point_line(pos[i], rot[i], length[i], point[i], limit != 0)

    def line_extrema(pos: AV, rot: A, length: A, out_a: AV, out_b: AV):
        i = wp.tid()
        a, b = g.line_extrema(pos[i], rot[i], length[i])
        out_a[i] = a
        out_b[i] = b

    def intersection(a1: AV, a2: AV, b1: AV, b2: AV, out_p: AV, out_d: A):
        i = wp.tid()
        p, d = g.intersection_point_line_line(a1[i], a2[i], b1[i], b2[i])
        out_p[i] = p
        out_d[i] = d

    def closest_points_line_line(pa: AV, ra: A, la: A, pb: AV, rb: A, lb: A, out_a: AV, out_b: AV):
        i = wp.tid()
        a, b = g.closest_points_line_line(pa[i], ra[i], la[i], pb[i], rb[i], lb[i])
        out_a[i] = a
        out_b[i] = b

    def closest_point_box(pos: AV, rot: A, width: A, length: A, point: AV, out: AV):
        i = wp.tid()
        out[i] = g.closest_point_box(pos[i], rot[i], width[i], length[i], point[i])

    def closest_point_box_last_tie(pos: AV, rot: A, width: A, length: A, point: AV, out: AV):
        i = wp.tid()
        out[i] = _closest_point_box_last_tie(pos[i], rot[i], width[i], length[i], point[i])

    def inner_point_box(outside: AV, surface: AV, box_pos: AV, out_p: AV, out_d: A):
        i = wp.tid()
        p, d = g.inner_point_box(outside[i], surface[i], box_pos[i])
        out_p[i] = p
        out_d[i] = d

    def closest_line_box(bp: AV, br: A, bw: A, bl: A, lp: AV, lr: A, ll: A, out_box: AV, out_line: AV):
        i = wp.tid()
        a, b = g.closest_line_box(bp[i], br[i], bw[i], bl[i], lp[i], lr[i], ll[i])
        out_box[i] = a
        out_line[i] = b

    def closest_box_box(pa: AV, ra: A, wa: A, la: A, pb: AV, rb: A, wb: A, lb: A, out_a: AV, out_b: AV):
        i = wp.tid()
        a, b = g.closest_box_box(pa[i], ra[i], wa[i], la[i], pb[i], rb[i], wb[i], lb[i])
        out_a[i] = a
        out_b[i] = b

    def constraint_force(pa: AV, pb: AV, dist_min: A, fm: A, k: A, attractive: int, out: AV):
        i = wp.tid()
        out[i] = g.constraint_force(pa[i], pb[i], dist_min[i], fm[i], k[i], attractive != 0)

    def force_without_cutoff(pa: AV, pb: AV, dist_min: A, fm: A, k: A, attractive: int, out: AV):
        i = wp.tid()
        out[i] = _force_without_cutoff(pa[i], pb[i], dist_min[i], fm[i], k[i], attractive != 0)

    def constraint_torque(ra: A, rb: A, fm: A, out: A):
        i = wp.tid()
        out[i] = g.constraint_torque(ra[i], rb[i], fm[i])

    def ray_to_sphere(o: AV, ang: A, mr: A, sp: AV, r: A, out: A):
        i = wp.tid()
        out[i] = g.ray_to_sphere(o[i], ang[i], mr[i], sp[i], r[i])

    def ray_to_line(o: AV, ang: A, mr: A, lp: AV, lr: A, ll: A, out: A):
        i = wp.tid()
        out[i] = g.ray_to_line(o[i], ang[i], mr[i], lp[i], lr[i], ll[i])

    def ray_to_line_both_ways(o: AV, ang: A, mr: A, lp: AV, lr: A, ll: A, out: A):
        i = wp.tid()
        out[i] = _ray_to_line_both_ways(o[i], ang[i], mr[i], lp[i], lr[i], ll[i])

    def ray_to_box(o: AV, ang: A, mr: A, bp: AV, br: A, bl: A, bw: A, out: A):
        i = wp.tid()
        out[i] = g.ray_to_box(o[i], ang[i], mr[i], bp[i], br[i], bl[i], bw[i])

    def lidar(o: AV, ang: A, mr: A, bp: wp.array2d(dtype=V), br: wp.array2d(dtype=F), bl: A, bw: A,
              sp: wp.array2d(dtype=V), sr: A, lp: wp.array2d(dtype=V), lr: wp.array2d(dtype=F), ll: A,
              out: A):
        # World.cast_rays: min over max_range and every entity's cast (NaN propagates)
        i = wp.tid()
        d = mr[i]
        for j in range(bl.shape[0]):
            d = g.torch_min(d, g.ray_to_box(o[i], ang[i], mr[i], bp[i, j], br[i, j], bl[j], bw[j]))
        for j in range(sr.shape[0]):
            d = g.torch_min(d, g.ray_to_sphere(o[i], ang[i], mr[i], sp[i, j], sr[j]))
        for j in range(ll.shape[0]):
            d = g.torch_min(d, g.ray_to_line(o[i], ang[i], mr[i], lp[i, j], lr[i, j], ll[j]))
        out[i] = d

    def point_distances(point: AV, sp: AV, sr: A, bp: AV, br: A, bw: A, bl: A, lp: AV, lr: A, ll: A,
                        out_s: A, out_b: A, out_l: A):
        i = wp.tid()
        out_s[i] = g.distance_point_to_sphere(sp[i], sr[i], point[i])
        out_b[i] = g.distance_point_to_box(bp[i], br[i], bw[i], bl[i], point[i])
        out_l[i] = g.distance_point_to_line(lp[i], lr[i], ll[i], point[i])

    def pair_distances(s1p: AV, s1r: A, s2p: AV, s2r: A, b1p: AV, b1r: A, b1w: A, b1l: A,
                       b2p: AV, b2r: A, b2w: A, b2l: A, l1p: AV, l1r: A, l1l: A, l2p: AV, l2r: A, l2l: A,
                       overlap_dist_min: A, dist: wp.array2d(dtype=F), overlap: wp.array2d(dtype=wp.int32)):
        # pairs: s1-s2, b1-s1, l1-s1, l1-l2, b1-l1, b1-b2
        i = wp.tid()
        dist[i, 0] = g.distance_sphere_sphere(s1p[i], s1r[i], s2p[i], s2r[i])
        dist[i, 1] = g.distance_box_sphere(b1p[i], b1r[i], b1w[i], b1l[i], s1p[i], s1r[i], overlap_dist_min[i])
        dist[i, 2] = g.distance_line_sphere(l1p[i], l1r[i], l1l[i], s1p[i], s1r[i])
        dist[i, 3] = g.distance_line_line(l1p[i], l1r[i], l1l[i], l2p[i], l2r[i], l2l[i])
        dist[i, 4] = g.distance_box_line(b1p[i], b1r[i], b1w[i], b1l[i], l1p[i], l1r[i], l1l[i])
        dist[i, 5] = g.distance_box_box(b1p[i], b1r[i], b1w[i], b1l[i], b2p[i], b2r[i], b2w[i], b2l[i])
        overlap[i, 0] = wp.where(g.overlapping_sphere_sphere(s1p[i], s1r[i], s2p[i], s2r[i]), 1, 0)
        overlap[i, 1] = wp.where(g.overlapping_box_sphere(b1p[i], b1r[i], b1w[i], b1l[i], s1p[i],
                                                          overlap_dist_min[i]), 1, 0)
        overlap[i, 2] = wp.where(g.overlapping_line_sphere(l1p[i], l1r[i], l1l[i], s1p[i], s1r[i]), 1, 0)
        overlap[i, 3] = wp.where(g.overlapping_line_line(l1p[i], l1r[i], l1l[i], l2p[i], l2r[i], l2l[i]), 1, 0)
        overlap[i, 4] = wp.where(g.overlapping_box_line(b1p[i], b1r[i], b1w[i], b1l[i], l1p[i], l1r[i],
                                                        l1l[i]), 1, 0)
        overlap[i, 5] = wp.where(g.overlapping_box_box(b1p[i], b1r[i], b1w[i], b1l[i], b2p[i], b2r[i],
                                                       b2w[i], b2l[i]), 1, 0)

    module = f"test_vmas_geometry_{F.__name__}"
    funcs = {name: func for name, func in locals().items() if inspect.isfunction(func)}
    kernels = {name: wp.kernel(func, name=f"{name}_{F.__name__}", module=module) for name, func in funcs.items()}
    wp.get_module(module).options.update(KERNEL_MODULE_OPTIONS)
    return SimpleNamespace(F=F, V=V, **kernels)


_KERNELS = {F: _build(F) for F in FLOATS}


def _to_wp(a, F):
    a = np.ascontiguousarray(a, dtype=_NP[F])
    if a.ndim >= 2 and a.shape[-1] == 2:
        return wp.array(a, dtype=wp.types.vector(length=2, dtype=F))
    return wp.array(a, dtype=F)


def run(F, name, inputs, outputs):
    """Launch kernel ``name`` over len(inputs[0]) rows; inputs: numpy arrays (rows, or rows x 2
    for vectors), Warp arrays (passed as they are) or Python ints (kernel scalars); outputs:
    "s" (scalar) / "v" (vector) / a (shape, dtype) pair.  Returns the outputs as numpy arrays."""
    n = len(inputs[0])
    args = [x if isinstance(x, (int, wp.array)) else _to_wp(x, F) for x in inputs]
    outs = []
    for o in outputs:
        if o == "s":
            outs.append(wp.zeros(n, dtype=F))
        elif o == "v":
            outs.append(wp.zeros(n, dtype=wp.types.vector(length=2, dtype=F)))
        else:
            shape, dtype = o
            outs.append(wp.zeros(shape, dtype=dtype))
    wp.launch(getattr(_KERNELS[F], name), dim=n, inputs=args + outs)
    return [o.numpy() for o in outs]


def assert_matches(ours, ref, F, what, scale=1.0):
    """ours == ref to _TOL[F] (relative, plus atol * scale absolute); non-finite values equal."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref.detach().numpy() if isinstance(ref, torch.Tensor) else ref, dtype=np.float64)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    rtol, atol = _TOL[F]
    with np.errstate(invalid="ignore"):
        same = (ours == ref) | (np.isnan(ours) & np.isnan(ref))
        close = np.isfinite(ours) & np.isfinite(ref) & (np.abs(ours - ref) <= atol * scale + rtol * np.abs(ref))
    bad = ~(same | close)
    if bad.any():
        rows = np.unique(np.nonzero(bad)[0])
        r = rows[0]
        raise AssertionError(f"{what} [{F.__name__}]: {len(rows)} of {len(ours)} rows differ; "
                             f"row {r}: ours {ours[r]}, VMAS {ref[r]}")


def T(a, F):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=_NP[F]))


def _world(n, **kwargs):
    return World(batch_dim=n, device="cpu", **kwargs)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _unit(rot):
    return np.stack([np.cos(rot), np.sin(rot)], axis=-1)


def _rand_vec(rng, n, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, (n, 2))


def _line_inputs(rng, n=3000):
    """(pos, rot, length, point): random, plus points at and beyond segment ends, on the centre's
    perpendicular, at the centre, zero-length lines, special rotations."""
    pos, rot, length, point = (_rand_vec(rng, n), rng.uniform(-TAU, TAU, n), rng.uniform(0.0, 3.0, n),
                               _rand_vec(rng, n, -3.0, 3.0))
    rows = []
    for r in SPECIAL_ROTS:
        for L in (1.0, 0.5, 0.0, 0.3):
            p = np.array([0.3, -0.2])
            u, nrm = _unit(r), _unit(r + math.pi / 2)
            for q in (p + L / 2 * u, p - L / 2 * u, p, p + 0.7 * nrm, p + (L / 2 + 0.2) * u,
                      p - (L / 2) * u + 0.1 * nrm, p + 0.25 * L * u, np.array([0.3, 0.5]), np.array([1.0, -0.2])):
                rows.append((p, r, L, q))
    adv = [np.array([row[k] for row in rows]) for k in range(4)]
    return [np.concatenate([a, b]) for a, b in zip((pos, rot, length, point), adv)]


def _line_pair_inputs(rng, n=3000):
    """Two segments: random, plus parallel (same and opposite rotations, collinear, overlapping,
    offset), perpendicular (crossing, T-junctions at ends), identical and zero-length ones."""
    pa, ra, la = _rand_vec(rng, n, -1, 1), rng.uniform(-TAU, TAU, n), rng.uniform(0.0, 2.0, n)
    pb, rb, lb = _rand_vec(rng, n, -1, 1), rng.uniform(-TAU, TAU, n), rng.uniform(0.0, 2.0, n)
    rows = []
    for r in SPECIAL_ROTS:
        u, nrm = _unit(r), _unit(r + math.pi / 2)
        p = np.array([0.1, 0.2])
        for L1, L2 in ((1.0, 1.0), (1.0, 0.5), (0.6, 0.0), (0.0, 0.0)):
            for rot2 in (r, r + math.pi, r + math.pi / 2, r - math.pi / 2, r + 1e-7):
                for off in (p, p + 0.01 * nrm, p + 0.3 * u, p + L1 * u, p + (L1 + L2) / 2 * u,
                            p + 0.5 * nrm, p + L1 / 2 * u + L2 / 2 * nrm, p + L1 / 2 * u - 0.2 * nrm):
                    rows.append((p, r, L1, off, rot2, L2))
    adv = [np.array([row[k] for row in rows]) for k in range(6)]
    return [np.concatenate([a, b]) for a, b in zip((pa, ra, la, pb, rb, lb), adv)]


def _box_point_inputs(rng, n=3000):
    """(pos, rot, width, length, point): random, plus corners, side midpoints, the centre (ties
    between sides of a square), points inside and outside."""
    pos, rot = _rand_vec(rng, n, -1, 1), rng.uniform(-TAU, TAU, n)
    width, length, point = rng.uniform(0.05, 1.5, n), rng.uniform(0.05, 1.5, n), _rand_vec(rng, n)
    rows = []
    for r in SPECIAL_ROTS:
        for w, L in ((0.5, 0.5), (0.3, 0.8), (1.0, 0.2)):
            p = np.array([0.2, -0.1])
            u, v = _unit(r), _unit(r + math.pi / 2)
            for a, b in ((0.5, 0.5), (-0.5, 0.5), (0.5, 0), (0, -0.5), (0, 0), (0.1, 0.1), (0.6, 0.2), (-1, -1),
                         (0.25, 0.25), (0.5, 0.7)):
                rows.append((p, r, w, L, p + a * L * u + b * w * v))
    adv = [np.array([row[k] for row in rows]) for k in range(5)]
    return [np.concatenate([a, b]) for a, b in zip((pos, rot, width, length, point), adv)]


def _box_box_inputs(rng, n=1500):
    """Two boxes: random (overlapping, apart, rotated), plus boxes touching at corners, side by
    side, nested, identical, for special rotations."""
    pa, ra = _rand_vec(rng, n, -0.6, 0.6), rng.uniform(-TAU, TAU, n)
    wa, la = rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 1.0, n)
    pb, rb = _rand_vec(rng, n, -0.6, 0.6), rng.uniform(-TAU, TAU, n)
    wb, lb = rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 1.0, n)
    rows = []
    for r in SPECIAL_ROTS:
        u, v = _unit(r), _unit(r + math.pi / 2)
        p = np.array([0.1, 0.0])
        for (w1, l1), (w2, l2) in (((0.4, 0.6), (0.2, 0.3)), ((0.5, 0.5), (0.5, 0.5))):
            for a, b, dr in ((1, 1, 0.0), (1, 0, 0.0), (1, 0.3, 0.0), (0, 1, 0.0), (0, 0, 0.0), (0.2, 0.1, 0.0),
                             (1, 1, math.pi / 2), (1.02, 1.0, 0.0), (1.0, 1.0, math.pi / 4), (-1, 1, math.pi)):
                off = a * (l1 + l2) / 2 * u + b * (w1 + w2) / 2 * v
                rows.append((p, r, w1, l1, p + off, r + dr, w2, l2))
    adv = [np.array([row[k] for row in rows]) for k in range(8)]
    return [np.concatenate([x, y]) for x, y in zip((pa, ra, wa, la, pb, rb, wb, lb), adv)]


# ---------------------------------------------------------------------------------------------
# TorchUtils
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_torch_utils(F):
    rng = np.random.default_rng(1)
    n = 2000
    v, ang = _rand_vec(rng, n, -5, 5), np.concatenate([rng.uniform(-TAU, TAU, n - 11), SPECIAL_ROTS])
    (out,) = run(F, "rotate_vector", [v, ang], ["v"])
    assert_matches(out, TorchUtils.rotate_vector(T(v, F), T(ang, F)), F, "rotate_vector", 5)

    a, b = _rand_vec(rng, n, -5, 5), _rand_vec(rng, n, -5, 5)
    b[:10] = 2 * a[:10]  # parallel: cross 0
    c, tq = run(F, "cross_torque", [a, b], ["s", "s"])
    assert_matches(c, TorchUtils.cross(T(a, F), T(b, F)).squeeze(-1), F, "cross", 25)
    assert_matches(tq, TorchUtils.compute_torque(T(a, F), T(b, F)).squeeze(-1), F, "compute_torque", 25)

    v = np.concatenate([_rand_vec(rng, n, -3, 3), [[0.0, 0.0], [1.0, 0.0], [0.6, 0.8], [3.0, 4.0]]])
    for max_norm in (0.5, 1.0, 2.5):
        (out,) = run(F, "clamp_with_norm", [v, np.full(len(v), max_norm)], ["v"])
        assert_matches(out, TorchUtils.clamp_with_norm(T(v, F), max_norm), F, f"clamp_with_norm({max_norm})", 3)


# ---------------------------------------------------------------------------------------------
# physics.py
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_lines(F):
    rng = np.random.default_rng(2)
    pos, rot, length, point = _line_inputs(rng)
    for limit in (True, False):
        (out,) = run(F, "closest_point_line", [pos, rot, length, point, int(limit)], ["v"])
        ref = vp._get_closest_point_line(T(pos, F), T(rot, F)[:, None], T(length, F), T(point, F),
                                         limit_to_line_length=limit)
        assert_matches(out, ref, F, f"closest_point_line(limit={limit})", 4)
    a, b = run(F, "line_extrema", [pos, rot, length], ["v", "v"])
    ra, rb = vp._get_line_extrema(T(pos, F), T(rot, F)[:, None], T(length, F))
    assert_matches(a, ra, F, "line_extrema a", 4)
    assert_matches(b, rb, F, "line_extrema b", 4)

    pa, ra_, la, pb, rb_, lb = _line_pair_inputs(rng)
    a1, a2 = (x.numpy() for x in vp._get_line_extrema(T(pa, F), T(ra_, F)[:, None], T(la, F)))
    b1, b2 = (x.numpy() for x in vp._get_line_extrema(T(pb, F), T(rb_, F)[:, None], T(lb, F)))
    p, d = run(F, "intersection", [a1, a2, b1, b2], ["v", "s"])
    rp, rd = vp._get_intersection_point_line_line(*(T(x, F) for x in (a1, a2, b1, b2)))
    assert_matches(p, rp, F, "intersection point", 4)
    assert_matches(d, rd, F, "intersection distance")
    assert np.isinf(d).sum() > 100 and (d == 0).sum() > 100, "both crossing and non-crossing pairs"

    out_a, out_b = run(F, "closest_points_line_line", [pa, ra_, la, pb, rb_, lb], ["v", "v"])
    ref_a, ref_b = vp._get_closest_points_line_line(T(pa, F), T(ra_, F)[:, None], T(la, F), T(pb, F),
                                                    T(rb_, F)[:, None], T(lb, F))
    assert_matches(out_a, ref_a, F, "closest_points_line_line a", 4)
    assert_matches(out_b, ref_b, F, "closest_points_line_line b", 4)


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_boxes(F):
    rng = np.random.default_rng(3)
    pos, rot, width, length, point = _box_point_inputs(rng)
    (out,) = run(F, "closest_point_box", [pos, rot, width, length, point], ["v"])
    ref = vp._get_closest_point_box(T(pos, F), T(rot, F)[:, None], T(width, F), T(length, F), T(point, F))
    assert_matches(out, ref, F, "closest_point_box", 4)

    # inner point: outside = random points, surface = their closest box points; plus v = 0
    surface = ref.numpy()
    outside = point.copy()
    outside[:20] = surface[:20]
    p, d = run(F, "inner_point_box", [outside, surface, pos], ["v", "s"])
    rp, rd = vp._get_inner_point_box(T(outside, F), T(surface, F), T(pos, F))
    assert_matches(p, rp, F, "inner_point_box point", 4)
    assert_matches(d, rd, F, "inner_point_box depth", 4)

    pa, ra, wa, la, pb, rb, wb, lb = _box_box_inputs(rng)
    # a box and a segment: box a against box b's +x side
    lp, lr, ll = (x.numpy() for x in vp._get_all_lines_box(T(pb, F), T(rb, F)[:, None], T(wb, F), T(lb, F)))
    lp, lr, ll = lp[0], lr[0, :, 0], ll[0]
    out_box, out_line = run(F, "closest_line_box", [pa, ra, wa, la, lp, lr, ll], ["v", "v"])
    ref_box, ref_line = vp._get_closest_line_box(T(pa, F), T(ra, F)[:, None], T(wa, F), T(la, F), T(lp, F),
                                                 T(lr, F)[:, None], T(ll, F))
    assert_matches(out_box, ref_box, F, "closest_line_box box point", 4)
    assert_matches(out_line, ref_line, F, "closest_line_box line point", 4)

    out_a, out_b = run(F, "closest_box_box", [pa, ra, wa, la, pb, rb, wb, lb], ["v", "v"])
    ref_a, ref_b = vp._get_closest_box_box(T(pa, F), T(ra, F)[:, None], T(wa, F), T(la, F), T(pb, F),
                                           T(rb, F)[:, None], T(wb, F), T(lb, F))
    assert_matches(out_a, ref_a, F, "closest_box_box a", 4)
    assert_matches(out_b, ref_b, F, "closest_box_box b", 4)


# ---------------------------------------------------------------------------------------------
# core.py: constraint forces and torques
# ---------------------------------------------------------------------------------------------


def _force_inputs(rng, n=3000):
    """(pos_a, pos_b, dist_min): distances from 0 to 2 dist_min, around the contact (1 +- 1e-6,
    1 +- 1e-3), exactly dist_min along an axis, coincident points and below 1e-6 apart."""
    dist_min = rng.uniform(0.02, 0.5, n)
    pos_a = _rand_vec(rng, n)
    direction = _unit(rng.uniform(-math.pi, math.pi, n))
    factor = np.concatenate([rng.uniform(0.0, 2.0, n // 2), 1 + rng.choice([-1e-3, -1e-6, 0, 1e-6, 1e-3], n - n // 2)])
    pos_b = pos_a + direction * (dist_min * factor)[:, None]
    pos_b[:10] = pos_a[:10]
    pos_b[10:20] = pos_a[10:20] + np.array([5e-7, 0.0])
    pos_b[20:40] = pos_a[20:40] + np.stack([dist_min[20:40], np.zeros(20)], axis=-1)
    return pos_a, pos_b, dist_min


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_constraint_forces(F):
    rng = np.random.default_rng(4)
    pos_a, pos_b, dist_min = _force_inputs(rng)
    n = len(pos_a)
    for contact_margin in (1e-3, 2e-2):
        world = _world(n, contact_margin=contact_margin)
        for attractive in (False, True):
            for fm in (g.COLLISION_FORCE, g.JOINT_FORCE):
                (out,) = run(F, "constraint_force", [pos_a, pos_b, dist_min, np.full(n, fm), np.full(n, contact_margin),
                                                     int(attractive)], ["v"])
                ref_a, ref_b = world._get_constraint_forces(T(pos_a, F), T(pos_b, F), dist_min=T(dist_min, F),
                                                            force_multiplier=fm, attractive=attractive)
                assert torch.equal(ref_b, -ref_a)
                what = f"constraint_force(k={contact_margin}, attractive={attractive}, fm={fm})"
                assert_matches(out, ref_a, F, what, fm)
                assert (np.abs(out).sum(-1) > 0).sum() > n // 4 and (out == 0).all(-1).sum() > n // 4, what

    rot_a = rng.uniform(-TAU, TAU, n)
    rot_b = np.concatenate([rot_a[:50], rot_a[50:100] + 1e-10, rng.uniform(-TAU, TAU, n - 100)])
    world = _world(n)
    for fm in (g.TORQUE_CONSTRAINT_FORCE, 3.0):
        (out,) = run(F, "constraint_torque", [rot_a, rot_b, np.full(n, fm)], ["s"])
        ref_a, ref_b = world._get_constraint_torques(T(rot_a, F)[:, None], T(rot_b, F)[:, None], force_multiplier=fm)
        assert torch.equal(ref_b, -ref_a)
        assert_matches(out, ref_a.squeeze(-1), F, f"constraint_torque(fm={fm})", fm)


# ---------------------------------------------------------------------------------------------
# core.py: ray casts
# ---------------------------------------------------------------------------------------------


def _ray_angles(rng, n):
    """Lidar's angles: float32 linspace values plus an agent rotation."""
    return (rng.choice(np.linspace(0, TAU, 13, dtype=np.float32)[:12], n).astype(np.float64)
            + rng.choice([0.0, 0.0, 1.0], n) * rng.uniform(-math.pi, math.pi, n))


def _sphere_ray_inputs(rng, F, n=3000):
    """Rays and spheres: random, plus grazing (the centre at exactly the radius from the ray's
    line along the axes, where cos / sin are exact; just inside / outside it at any angle),
    origins inside (the centre ahead, abreast, behind), spheres behind, beyond max_range.  An
    exact tie at a generic angle is decided by the last bit of cos / sin, where torch's SLEEF
    and Warp's libm differ (e.g. cos(1.0f): torch 0.54030234, correctly rounded 0.54030228),
    so "just" is 1e-4 relative in float32 (a few ulp of the ray's points at max_range / 2 = 2.5)
    and 1e-9 in float64."""
    origin, angle = _rand_vec(rng, n), _ray_angles(rng, n)
    sp, r = _rand_vec(rng, n), rng.uniform(0.02, 0.6, n)
    eps = 1e-4 if F == wp.float32 else 1e-9
    rows = []
    for a in (0.0, math.pi / 2, math.pi, 1.0, -2.5):
        o = np.array([0.2, -0.3])
        u, v = _unit(a), _unit(a + math.pi / 2)
        # exact ties (a graze; the centre abreast of the origin) only along the axes
        ties = ((0.5, 1.0), (0.5, -1.0), (0.0, 0.5)) if a in (0.0, math.pi / 2, math.pi) else ()
        for rad in (0.1, 0.25):
            for along, side in ties + ((0.5, 1 - eps), (0.5, 1 + eps), (0.5, -1 + eps), (0.5, 0.0), (eps, 0.5),
                                         (0.05, 0.0), (-0.5, 0.3), (-0.05, 0.0), (2.0, 0.0), (0.95, 0.2), (1.05, 0.0),
                                         (0.5, -0.999)):
                rows.append((o, a, o + along * u + side * rad * v, rad))
    adv = [np.array([row[k] for row in rows]) for k in range(4)]
    return [np.concatenate([x, y]) for x, y in zip((origin, angle, sp, r), adv)]


def _is_axis(angle):
    return abs(angle / (math.pi / 2) - round(angle / (math.pi / 2))) < 1e-12


def _line_ray_inputs(rng, F, n=3000):
    """Rays and segments: random, plus parallel rays (exactly: same angle), rays through the
    ends (exactly where ray and segment are axis-aligned, so that cos / sin are exact; else
    just inside / outside, see _sphere_ray_inputs), origins on the segment, segments behind the
    ray, beyond max_range."""
    origin, angle = _rand_vec(rng, n), _ray_angles(rng, n)
    lp, lr, ll = _rand_vec(rng, n), rng.uniform(-TAU, TAU, n), rng.uniform(0.0, 2.0, n)
    eps = 1e-4 if F == wp.float32 else 1e-9
    rows = []
    for a in (0.0, math.pi / 2, -math.pi, 0.7):
        o = np.array([0.1, 0.1])
        u = _unit(a)
        for rot in (a, a + math.pi, a + math.pi / 2, a + 0.3, 0.0):
            ends = (0.5,) if _is_axis(a) and _is_axis(rot) else (0.5 - eps, 0.5 + eps)
            for L in (0.8, 0.0):
                ln = _unit(rot)
                cs = [o + 0.5 * u, o - 0.5 * u, o, o + 2.0 * u, o + 0.5 * u + 0.6 * L * ln, o + L / 2 * ln]
                cs += [o + 0.5 * u + sign * e * L * ln for e in ends for sign in (1, -1)]
                for c in cs:
                    rows.append((o, a, c, rot, L))
    adv = [np.array([row[k] for row in rows]) for k in range(5)]
    return [np.concatenate([x, y]) for x, y in zip((origin, angle, lp, lr, ll), adv)]


def _box_ray_inputs(rng, n=3000):
    """Rays and boxes: random, plus axis-aligned boxes hit at angle 0 (exact zero direction
    components: +-inf slabs), origins on a side's line along it (0 / 0), inside, at corners,
    grazing corners, boxes behind, beyond max_range."""
    origin, angle = _rand_vec(rng, n), _ray_angles(rng, n)
    bp, br = _rand_vec(rng, n), rng.uniform(-TAU, TAU, n)
    bl, bw = rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 1.0, n)
    rows = []
    for rot in (0.0, math.pi / 2, math.pi, math.pi / 4, -1.2):
        for a in (0.0, math.pi / 2, math.pi, -math.pi / 2, 0.3, rot):
            L, W = 0.5, 0.25
            c = np.array([0.0, 0.0])
            u, v = _unit(rot), _unit(rot + math.pi / 2)
            for o in (c - 0.8 * u, c - 0.8 * u + W / 2 * v, c - 0.8 * u - W / 2 * v, c, c + 0.1 * u,
                      c + L / 2 * u + W / 2 * v, c - 0.8 * v, c + 0.8 * u, c - 3.0 * u, c - 0.8 * u + 0.13 * v,
                      c - L / 2 * u):
                rows.append((o, a, c, rot, L, W))
    adv = [np.array([row[k] for row in rows]) for k in range(6)]
    return [np.concatenate([x, y]) for x, y in zip((origin, angle, bp, br, bl, bw), adv)]


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_ray_casts(F):
    rng = np.random.default_rng(5)
    cases = {"sphere": _sphere_ray_inputs(rng, F), "line": _line_ray_inputs(rng, F), "box": _box_ray_inputs(rng)}
    for max_range in (0.35, 1.0, 5.0):
        o, a, sp, r = cases["sphere"]
        n = len(o)
        world = _world(n)
        (out,) = run(F, "ray_to_sphere", [o, a, np.full(n, max_range), sp, r], ["s"])
        ref = world._cast_rays_to_sphere(T(sp, F)[:, None], T(r, F)[:, None], T(o, F), T(a, F)[:, None], max_range)
        # near a graze the half chord sqrt(r^2 - d^2) is ill-conditioned: errors in d grow by r / chord
        ray, rel = _unit(a), sp - o
        d_line = np.abs(ray[:, 0] * rel[:, 1] - ray[:, 1] * rel[:, 0])
        chord = np.sqrt(np.maximum(r * r - d_line * d_line, 0.0))
        conditioning = np.maximum(1.0, r / np.maximum(chord, 1e-12))
        assert_matches(out, ref[:, 0, 0], F, f"ray_to_sphere(max_range={max_range})", max_range * conditioning)
        assert (out != max_range).sum() > 100 and (out == max_range).sum() > 100

        o, a, lp, lr, ll = cases["line"]
        n = len(o)
        world = _world(n)
        (out,) = run(F, "ray_to_line", [o, a, np.full(n, max_range), lp, lr, ll], ["s"])
        ref = world._cast_rays_to_line(T(lp, F)[:, None], T(lr, F)[:, None], T(ll, F)[:, None], T(o, F),
                                       T(a, F)[:, None], max_range)
        assert_matches(out, ref[:, 0, 0], F, f"ray_to_line(max_range={max_range})", max_range)
        assert (out != max_range).sum() > 100 and (out == max_range).sum() > 100

        o, a, bp, br, bl, bw = cases["box"]
        n = len(o)
        world = _world(n)
        (out,) = run(F, "ray_to_box", [o, a, np.full(n, max_range), bp, br, bl, bw], ["s"])
        ref = world._cast_rays_to_box(T(bp, F)[:, None], T(br, F)[:, None], T(bl, F)[:, None], T(bw, F)[:, None],
                                      T(o, F), T(a, F)[:, None], max_range)
        assert_matches(out, ref[:, 0, 0], F, f"ray_to_box(max_range={max_range})", max_range)
        assert (out != max_range).sum() > 100 and (out == max_range).sum() > 100


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_lidar_composition(F):
    """World.cast_rays (Lidar.measure's path) over an agent and 2 boxes, 2 spheres, 2 lines is
    torch_min of max_range and our per-shape casts."""
    rng = np.random.default_rng(6)
    n, n_angles, max_range = 400, 8, 0.9
    previous = torch.get_default_dtype()
    torch.set_default_dtype(_TORCH[F])  # VMAS's shape sizes become tensors of the default dtype
    try:
        world = _world(n)
        agent = Agent(name="agent", shape=Sphere(0.05))
        world.add_agent(agent)
        boxes = [Landmark(f"box{i}", shape=Box(length=L, width=W)) for i, (L, W) in enumerate(((0.4, 0.2), (0.3, 0.3)))]
        spheres = [Landmark(f"sphere{i}", shape=Sphere(r)) for i, r in enumerate((0.1, 0.075))]
        lines = [Landmark(f"line{i}", shape=Line(L)) for i, L in enumerate((0.6, 0.35))]
        for e in boxes + spheres + lines:
            world.add_landmark(e)
        origin = _rand_vec(rng, n, -0.5, 0.5)
        agent.set_pos(T(origin, F), batch_index=None)
        state = {}
        for e in boxes + spheres + lines:
            state[e.name] = (_rand_vec(rng, n, -0.8, 0.8), rng.uniform(-TAU, TAU, n))
            e.set_pos(T(state[e.name][0], F), batch_index=None)
            e.set_rot(T(state[e.name][1], F)[:, None], batch_index=None)
        agent_rot = rng.uniform(-math.pi, math.pi, n)
        linspace = torch.linspace(0, TAU, n_angles + 1, dtype=torch.float32)[:n_angles]
        angles = linspace.repeat(n, 1) + T(agent_rot, F)[:, None]  # Lidar.measure's angles
        ref = world.cast_rays(agent, angles, max_range=max_range, entity_filter=lambda e: True)
    finally:
        torch.set_default_dtype(previous)

    def stack(es, k):
        return np.stack([np.repeat(state[e.name][k], n_angles, axis=0) for e in es], axis=1)

    rows = n * n_angles
    inputs = [np.repeat(origin, n_angles, axis=0), angles.numpy().reshape(-1), np.full(rows, max_range),
              stack(boxes, 0), wp.array(stack(boxes, 1), dtype=F), np.array([b.shape.length for b in boxes]),
              np.array([b.shape.width for b in boxes]), stack(spheres, 0), np.array([s.shape.radius for s in spheres]),
              stack(lines, 0), wp.array(stack(lines, 1), dtype=F), np.array([ln.shape.length for ln in lines])]
    (out,) = run(F, "lidar", inputs, ["s"])
    assert_matches(out, ref.reshape(-1), F, "cast_rays", max_range)
    assert (out < max_range).sum() > rows // 10


# ---------------------------------------------------------------------------------------------
# core.py: distances and overlaps
# ---------------------------------------------------------------------------------------------


def _f32_size(x):
    """physics.py turns Python-float shape sizes into float32 tensors, also for float64 states."""
    return np.float64(np.float32(x))


@pytest.mark.parametrize("F", FLOATS, ids=lambda F: F.__name__)
def test_distances_and_overlaps(F):
    rng = np.random.default_rng(7)
    n = 1500
    world = _world(n)
    shapes = {"s1": Sphere(0.075), "s2": Sphere(0.15), "b1": Box(length=0.7, width=0.3),
              "b2": Box(length=0.25, width=0.25), "l1": Line(0.6), "l2": Line(0.9)}
    ents = {k: Landmark(k, shape=s) for k, s in shapes.items()}
    for e in ents.values():
        world.add_landmark(e)
    pos = {k: _rand_vec(rng, n, -0.5, 0.5) for k in ents}
    rot = {k: rng.uniform(-TAU, TAU, n) for k in ents}
    # adversarial rows: axis-aligned, touching at corners, sphere centre on the box outline / inside
    m = 60
    for k in ents:
        rot[k][:m] = rng.choice(SPECIAL_ROTS[:5], m)
    rot["b2"][:20] = rot["b1"][:20]
    corner = _unit(rot["b1"][:20]) * 0.475 + _unit(rot["b1"][:20] + math.pi / 2) * 0.275
    pos["b2"][:20] = pos["b1"][:20] + corner
    pos["s1"][20:40] = pos["b1"][20:40] + _unit(rot["b1"][20:40]) * 0.35
    pos["s1"][40:50] = pos["b1"][40:50]
    pos["l1"][50:60] = pos["l2"][50:60]
    for k, e in ents.items():
        e.set_pos(T(pos[k], F), batch_index=None)
        e.set_rot(T(rot[k], F)[:, None], batch_index=None)

    def size(k, attr):
        return np.full(n, _f32_size(getattr(shapes[k], attr)))

    radius = {k: np.full(n, shapes[k].radius) for k in ("s1", "s2")}
    point = _rand_vec(rng, n, -0.8, 0.8)
    point[:10] = pos["b1"][:10]
    out_s, out_b, out_l = run(F, "point_distances",
                              [point, pos["s1"], radius["s1"], pos["b1"], rot["b1"], size("b1", "width"),
                               size("b1", "length"), pos["l1"], rot["l1"], size("l1", "length")], ["s", "s", "s"])
    for k, out in (("s1", out_s), ("b1", out_b), ("l1", out_l)):
        assert_matches(out, world.get_distance_from_point(ents[k], T(point, F)), F, f"distance_point_to {k}")

    overlap_dist_min = np.full(n, g.box_sphere_overlap_dist_min(shapes["s1"].radius))
    dist, overlap = run(F, "pair_distances",
                        [pos["s1"], radius["s1"], pos["s2"], radius["s2"],
                         pos["b1"], rot["b1"], size("b1", "width"), size("b1", "length"),
                         pos["b2"], rot["b2"], size("b2", "width"), size("b2", "length"),
                         pos["l1"], rot["l1"], size("l1", "length"), pos["l2"], rot["l2"], size("l2", "length"),
                         overlap_dist_min],
                        [((n, 6), F), ((n, 6), wp.int32)])
    pairs = (("s1", "s2"), ("b1", "s1"), ("l1", "s1"), ("l1", "l2"), ("b1", "l1"), ("b1", "b2"))
    for j, (a, b) in enumerate(pairs):
        for x, y in ((a, b), (b, a)) if a[0] != b[0] else ((a, b),):
            ref_d = world.get_distance(ents[x], ents[y])
            ref_o = world.is_overlapping(ents[x], ents[y])
            assert_matches(dist[:, j], ref_d, F, f"distance {x}-{y}")
            np.testing.assert_array_equal(overlap[:, j].astype(bool), ref_o.numpy(),
                                          err_msg=f"overlapping {x}-{y} [{F.__name__}]")
            assert 20 < ref_o.sum() < n - 20, f"{x}-{y}: overlapping and apart pairs"
    assert (dist[:, 1] == -1).sum() > 20


def test_box_sphere_overlap_dist_min_rejects_non_floats():
    assert g.box_sphere_overlap_dist_min(0.075) == 0.075 + 4 / 6e2
    with pytest.raises(TypeError, match="sphere_radius"):
        g.box_sphere_overlap_dist_min(np.array([0.1]))
    with pytest.raises(TypeError, match="sphere_radius"):
        g.box_sphere_overlap_dist_min(True)


def test_constants_are_vmas():
    from vmas.simulator import utils as vu

    assert g.LINE_MIN_DIST == vu.LINE_MIN_DIST and g.COLLISION_FORCE == vu.COLLISION_FORCE
    assert g.JOINT_FORCE == vu.JOINT_FORCE and g.TORQUE_CONSTRAINT_FORCE == vu.TORQUE_CONSTRAINT_FORCE
    assert g.DRAG == vu.DRAG and g.LINEAR_FRICTION == vu.LINEAR_FRICTION and g.ANGULAR_FRICTION == vu.ANGULAR_FRICTION
    assert g.HALF_PI == torch.pi / 2
    assert g.CONTACT_MARGIN == _world(1)._contact_margin
    assert all(isinstance(x, float) for x in (g.LINE_MIN_DIST, g.COLLISION_FORCE, g.JOINT_FORCE, g.DRAG,
                                              g.TORQUE_CONSTRAINT_FORCE))


# ---------------------------------------------------------------------------------------------
# The comparison bites
# ---------------------------------------------------------------------------------------------


def test_harness_bites():
    rng = np.random.default_rng(8)
    F = wp.float64
    pos_a, pos_b, dist_min = _force_inputs(rng)
    n = len(pos_a)
    world = _world(n)
    (out,) = run(F, "force_without_cutoff", [pos_a, pos_b, dist_min, np.full(n, 100.0), np.full(n, 1e-3), 0], ["v"])
    ref, _ = world._get_constraint_forces(T(pos_a, F), T(pos_b, F), dist_min=T(dist_min, F), force_multiplier=100.0)
    with pytest.raises(AssertionError, match="rows differ"):
        assert_matches(out, ref, F, "force without cut-off", 100)

    o, a, lp, lr, ll = _line_ray_inputs(rng, F)
    n = len(o)
    (out,) = run(F, "ray_to_line_both_ways", [o, a, np.full(n, 1.0), lp, lr, ll], ["s"])
    ref = _world(n)._cast_rays_to_line(T(lp, F)[:, None], T(lr, F)[:, None], T(ll, F)[:, None], T(o, F),
                                       T(a, F)[:, None], 1.0)
    with pytest.raises(AssertionError, match="rows differ"):
        assert_matches(out, ref[:, 0, 0], F, "ray to line both ways")

    # ties: only the adversarial rows (box centres, corners of squares) tell < from <=
    for G in FLOATS:
        pos, rot, width, length, point = _box_point_inputs(rng, n=0)
        (out,) = run(G, "closest_point_box_last_tie", [pos, rot, width, length, point], ["v"])
        ref = vp._get_closest_point_box(T(pos, G), T(rot, G)[:, None], T(width, G), T(length, G), T(point, G))
        with pytest.raises(AssertionError, match="rows differ"):
            assert_matches(out, ref, G, "closest_point_box with <=", 4)

    v, ang = _rand_vec(rng, 1000, -5, 5), rng.uniform(-TAU, TAU, 1000)
    (out,) = run(F, "rotate_vector_off", [v, ang], ["v"])
    with pytest.raises(AssertionError, match="rows differ"):
        assert_matches(out, TorchUtils.rotate_vector(T(v, F), T(ang, F)), F, "rotate_vector off by 1e-12", 5)
