"""VMAS 1.5.2's 2-D geometry, contact-force and ray-cast math as Warp functions.

One ``@wp.func`` per VMAS helper (``vmas/simulator/physics.py``, the ``World`` methods of
``vmas/simulator/core.py`` and ``TorchUtils`` of ``vmas/simulator/utils.py``), evaluated for one
pair of entities / one ray in one world (one thread per world: scalar and vec2 code, no
batching).  Every function is generic over the float type: scalars are ``float32`` or
``float64``, vectors are Warp ``vec2`` of that type, constants are built with ``type(x)(...)``.
Each reproduces VMAS's torch operation order (same products, sums and divisions in the same
order, ``torch.where`` as branches that pick the same value), so results agree with VMAS's own
functions fed the same dtype to rounding: to ~1e-15 relative in float64 and a few ulp in float32
(``tests/test_vmas_geometry.py``).  The remaining ulp come from libraries, not formulas: torch's
CPU ``cos``/``sin``/``exp``/``log1p`` (SLEEF, within 1 ulp) differ in the last bit from Warp's
(libm on the CPU, CUDA's functions on the GPU) for some arguments (e.g. ``cos(1.0f)``), so a
tie that only that bit decides (a ray exactly grazing a sphere at a generic angle) may go
either way.  torch's CPU ``vector_norm`` of a contiguous last dimension is
``sqrt(fma(y, y, x * x))``, and that last bit does decide VMAS's ties between candidate
distances (parallel segments' ends): Warp has no ``fma`` builtin, so ``vector_norm`` emulates
it (float32 through a few float64 operations, float64 by error-free transformations, which
need FMA contraction off: ``fuse_fp`` False, as ``KERNEL_MODULE_OPTIONS`` sets for every module
that calls these functions).  (VMAS's own states are float32 tensors; "float64 VMAS" here means
VMAS's functions fed float64 tensors.)

Conventions (VMAS's):

* Angles and rotations are scalars in radians, counter-clockwise from +x.
* Box: centre ``pos``, rotation ``rot``; ``length`` is its extent along its local x axis
  (``(cos rot, sin rot)``), ``width`` along its local y axis (``_get_all_lines_box`` puts the
  two sides of length ``width`` at ``pos +- (cos rot, sin rot) * length / 2``).  Argument order
  follows each VMAS function: physics' helpers take ``(width, length)``, the ray cast takes
  ``(length, width)`` as ``World._cast_rays_to_box`` does.
* A box is its four sides (``box_side``), in VMAS's order: the +x side, the -x side (rotation
  ``rot + pi / 2``, length ``width``), the +y side, the -y side (rotation ``rot``, length
  ``length``).  Every "closest" search keeps the first candidate of strictly smaller distance,
  in VMAS's candidate order, so ties resolve as in VMAS.
* Line: centre ``pos``, rotation ``rot``, ``length``; its ends are ``pos +- (length / 2) *
  (cos rot, sin rot)`` (``line_extrema``: the ``+`` end first).
* Shapes' closest-point distances subtract ``LINE_MIN_DIST`` for boxes and lines (their
  "thickness"), not for spheres.

Degenerate cases, as VMAS (we return the same values):

* "No point" is ``(inf, inf)``: ``intersection_point_line_line`` returns ``(inf, inf), inf``
  unless the two segments cross (parallel segments, ``cross(r, s) == 0``, never cross, even when
  collinear and overlapping); the ``closest_*`` searches start from ``(inf, inf)`` and keep it if
  every candidate distance is NaN.
* ``closest_point_line`` uses torch's ``sign`` (0 for 0 and for NaN, unlike ``wp.sign``).
* ``inner_point_box`` with ``outside_point == surface_point`` returns ``2 * surface_point``
  (VMAS adds the surface point to itself) and depth 0.
* ``clamp_with_norm`` never divides a zero vector (the division is only taken where
  ``norm > max_norm``, the branch ``torch.where`` keeps); ``constraint_force`` divides by
  ``1e-8`` where the distance is 0, then zeroes every force of distance below ``1e-6``.
* Ray casts return ``max_range`` for "no hit" but do NOT cap a hit at ``max_range``: a sphere,
  line or box hit anywhere ahead is returned at its distance, even beyond ``max_range`` (the
  sphere cast projects the centre on the ray's unlimited line).  ``World.cast_rays`` (what
  ``Lidar.measure`` uses) is ``torch.min`` of ``max_range`` and every entity's cast, which
  propagates NaN: compose with ``torch_min`` starting from ``max_range``.  The box cast divides
  by the ray direction's box-frame components, which may be exactly 0 (e.g. an axis-aligned
  box and a ray at angle 0): the slab distances are then IEEE +-inf (or NaN for 0 / 0, a ray
  along a side's line), and ``torch_min`` / ``torch_max`` propagate NaN as torch's min / max do,
  so such a ray misses.  The line cast returns ``max_range`` where ``cross(r, s) == 0`` (VMAS
  calls this "perpendicular"; it is parallel) before dividing.

VMAS's dtype quirks (callers reproduce them by what they pass in):

* ``physics.py`` turns Python-float shape sizes into ``float32`` tensors, so
  ``World.get_distance`` / ``is_overlapping`` / ``get_distance_from_point`` round box widths and
  lengths and line lengths to float32 even when fed float64 states (sphere radii are used as
  Python floats).  To reproduce a float64 VMAS there, pass ``float64(float32(size))``.
* ``World.is_overlapping``'s box-sphere threshold is ``radius + LINE_MIN_DIST`` summed as Python
  floats and rounded once to the state's dtype, which is not always ``f32(radius) +
  f32(LINE_MIN_DIST)`` (e.g. radius 0.075): ``overlapping_box_sphere`` therefore takes that
  threshold, ``dist_min``, computed on the host (``box_sphere_overlap_dist_min``).
* Collisions' thresholds are typed sums (``radius`` tensor ``+ LINE_MIN_DIST`` in the world's
  dtype): the physics kernel computes them in its float type.
* ``Lidar`` ray angles are float32 ``linspace`` values plus the agent's rotation (in the state's
  dtype); cos / sin of the ray angle are taken in the world's dtype.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS

wp.set_module_options(KERNEL_MODULE_OPTIONS)

# ---------------------------------------------------------------------------------------------
# VMAS's constants (vmas/simulator/utils.py and World.__init__'s defaults), as Python floats
# ---------------------------------------------------------------------------------------------

#: "Thickness" of lines and box sides: subtracted from their distances, added to thresholds.
LINE_MIN_DIST = 4 / 6e2
#: World's default collision force multiplier.
COLLISION_FORCE = 100.0
#: World's default joint force multiplier.
JOINT_FORCE = 130.0
#: World's default torque multiplier of joints with a fixed rotation.
TORQUE_CONSTRAINT_FORCE = 1.0
#: World's default drag (velocities are multiplied by ``1 - drag`` once per step).
DRAG = 0.25
#: World's default linear and angular friction.
LINEAR_FRICTION = 0.0
ANGULAR_FRICTION = 0.0
#: World's default contact margin (the softplus temperature of contact forces).
CONTACT_MARGIN = 1e-3
#: ``_get_constraint_forces``: no force between points closer than this.
CONSTRAINT_MIN_DIST = 1e-6
#: ``_get_constraint_forces``: the distance divided by where it is 0.
CONSTRAINT_ZERO_DIST = 1e-8
#: ``_get_constraint_torques``: no torque for rotation differences below this.
CONSTRAINT_MIN_DELTA_ROT = 1e-9
#: ``_cast_rays_to_sphere``: the square root taken where the ray misses.
RAY_SPHERE_MISS_SQUARE = 1e-8
#: ``torch.pi / 2`` (box sides' rotation offset).
HALF_PI = 1.5707963267948966


def box_sphere_overlap_dist_min(sphere_radius: float) -> float:
    """``World.is_overlapping``'s box-sphere threshold, ``radius + LINE_MIN_DIST`` summed as
    Python floats (round the result once to the world's dtype)."""
    if isinstance(sphere_radius, bool) or not isinstance(sphere_radius, (int, float)):
        raise TypeError(f"sphere_radius must be a Python float, got {type(sphere_radius).__name__}")
    return float(sphere_radius) + LINE_MIN_DIST


# ---------------------------------------------------------------------------------------------
# Scalar helpers with torch's semantics
# ---------------------------------------------------------------------------------------------


@wp.func
def torch_sign(x: Any):
    """torch.sign: 1 for x > 0, -1 for x < 0, 0 for 0 and for NaN (``wp.sign`` gives 1 at 0)."""
    if x > type(x)(0.0):
        return type(x)(1.0)
    if x < type(x)(0.0):
        return type(x)(-1.0)
    return type(x)(0.0)


@wp.func
def is_nan(x: Any):
    """``x`` is NaN: ``x != x`` inline (Warp's CPU ``wp.isnan`` is an out-of-line call through
    a double, in the contact and lidar hot paths)."""
    return not (x == x)


@wp.func
def torch_min(a: Any, b: Any):
    """torch.min / torch.minimum of two values: NaN if either is NaN, else the smaller, the
    first on ties (``wp.min`` is C's ``fmin``, which drops NaN)."""
    if is_nan(a):
        return a
    if is_nan(b):
        return b
    if b < a:
        return b
    return a


@wp.func
def torch_max(a: Any, b: Any):
    """torch.max / torch.maximum of two values: NaN if either is NaN, else the larger, the
    first on ties."""
    if is_nan(a):
        return a
    if is_nan(b):
        return b
    if b > a:
        return b
    return a


@wp.func
def log1p(x: Any):
    """log(1 + x), accurate for small x (Kahan's: log(u) * x / (u - 1) with u = 1 + x, whose
    rounding errors cancel); Warp has no log1p builtin."""
    one = type(x)(1.0)
    u = one + x
    if u == one:
        return x
    return wp.log(u) * x / (u - one)


@wp.func
def logaddexp0(x: Any):
    """torch.logaddexp(0, x) (softplus), torch's formula ``max(a, b) + log1p(exp(-|a - b|))``
    with a = 0 (its ``a == b == +-inf`` case cannot occur with a = 0)."""
    zero = type(x)(0.0)
    return torch_max(zero, x) + log1p(wp.exp(-wp.abs(zero - x)))


@wp.func
def _fma_square(y: wp.float32, c: wp.float32):
    """fma(y, y, c) in float32: y * y is exact in float64 and the sum is rounded once to float64
    and once to float32 (not the correctly rounded fma only when the float64 sum lands exactly on
    a float32 rounding tie it was not on, about 2^-29 of the time)."""
    y64 = wp.float64(y)
    return wp.float32(y64 * y64 + wp.float64(c))


@wp.func
def _fma_square(y: wp.float64, c: wp.float64):  # noqa: F811  (the float64 overload)
    """fma(y, y, c) in float64 by error-free transformations (Dekker's product, Knuth's sum;
    valid only without FMA contraction, i.e. ``fuse_fp`` off): ``s + (t + e)`` with ``s + t`` =
    ``p + c`` exactly and ``p + e`` = ``y * y`` exactly."""
    split = y * wp.float64(134217729.0)  # 2^27 + 1
    hi = split - (split - y)
    lo = y - hi
    p = y * y
    e = ((hi * hi - p) + wp.float64(2.0) * hi * lo) + lo * lo
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


@wp.func
def vector_norm(v: Any):
    """torch.linalg.vector_norm of a vec2 as torch's CPU kernel computes it for a contiguous last
    dimension (every norm VMAS takes): sqrt(fma(y, y, x * x)) (its accumulation loop is
    contracted to fused multiply-adds).  Ties between candidate distances (parallel segments'
    ends, a square's centre) are decided by this last bit."""
    return wp.sqrt(_fma_square(v[1], v[0] * v[0]))


@wp.func
def _inf_vec(v: Any):
    """(inf, inf) of v's type: VMAS's "no point"."""
    inf = type(v[0])(wp.inf)
    return type(v)(inf, inf)


# ---------------------------------------------------------------------------------------------
# TorchUtils
# ---------------------------------------------------------------------------------------------


@wp.func
def rotate_vector(v: Any, angle: Any):
    """TorchUtils.rotate_vector: v rotated counter-clockwise by angle,
    (x cos - y sin, x sin + y cos)."""
    c = wp.cos(angle)
    s = wp.sin(angle)
    return type(v)(v[0] * c - v[1] * s, v[0] * s + v[1] * c)


@wp.func
def cross(a: Any, b: Any):
    """TorchUtils.cross: the 2-D cross product a.x * b.y - a.y * b.x."""
    return a[0] * b[1] - a[1] * b[0]


@wp.func
def compute_torque(f: Any, r: Any):
    """TorchUtils.compute_torque: torque of force f applied at offset r, cross(r, f)."""
    return cross(r, f)


@wp.func
def clamp_with_norm(v: Any, max_norm: Any):
    """TorchUtils.clamp_with_norm: (v / |v|) * max_norm where |v| > max_norm, else v."""
    norm = vector_norm(v)
    if norm > max_norm:
        return type(v)((v[0] / norm) * max_norm, (v[1] / norm) * max_norm)
    return v


# ---------------------------------------------------------------------------------------------
# physics.py: lines
# ---------------------------------------------------------------------------------------------


@wp.func
def torch_remainder(a: Any, b: Any):
    """torch's ``a % b`` for floats (``remainder``): C's fmod, plus ``b`` where the result is
    nonzero and of the other sign than ``b``."""
    m = wp.mod(a, b)
    zero = type(a)(0.0)
    if m != zero and ((b < zero) != (m < zero)):
        m = m + b
    return m


@wp.func
def cos_sin(rot: Any):
    """``(cos rot, sin rot)``, without the library calls at ``rot = ±0`` (axis-aligned lines and
    boxes), where they are exactly ``(1, ±0)``."""
    if rot == type(rot)(0.0):
        return wp.vector(type(rot)(1.0), rot)
    return wp.vector(wp.cos(rot), wp.sin(rot))


@wp.func
def closest_point_line(line_pos: Any, line_rot: Any, line_length: Any, point: Any,
                       limit_to_line_length: bool):
    """physics._get_closest_point_line: the point of the line through line_pos at angle line_rot
    closest to point; limited to the segment of length line_length when limit_to_line_length
    (else the infinite line).  ``line_pos - sign(d) * min(|d|, length / 2) * dir`` with
    ``d = (line_pos - point) . dir`` and torch's sign (0 at d = 0)."""
    rv = cos_sin(line_rot)
    return closest_point_line_dir(line_pos, rv, line_length, point, limit_to_line_length)


@wp.func
def closest_point_line_dir(line_pos: Any, rv: Any, line_length: Any, point: Any, limit_to_line_length: bool):
    """``closest_point_line`` given the line's direction ``rv = (cos rot, sin rot)`` (worked out
    once by callers that use it for several points or sides)."""
    delta_pos = line_pos - point
    dot_p = delta_pos[0] * rv[0] + delta_pos[1] * rv[1]
    sign = torch_sign(dot_p)
    distance_from_line_center = wp.abs(dot_p)
    if limit_to_line_length:
        distance_from_line_center = torch_min(distance_from_line_center, line_length / type(line_length)(2.0))
    s = sign * distance_from_line_center
    return type(line_pos)(line_pos[0] - s * rv[0], line_pos[1] - s * rv[1])


@wp.func
def line_extrema_dir(line_pos: Any, rv: Any, line_length: Any):
    """``line_extrema`` given the line's direction ``rv = (cos rot, sin rot)``."""
    half = line_length / type(line_length)(2.0)
    x = half * rv[0]
    y = half * rv[1]
    return type(line_pos)(line_pos[0] + x, line_pos[1] + y), type(line_pos)(line_pos[0] - x, line_pos[1] - y)


@wp.func
def line_extrema(line_pos: Any, line_rot: Any, line_length: Any):
    """physics._get_line_extrema: the ends (pos + xy, pos - xy), xy = (length / 2) * (cos, sin)."""
    return line_extrema_dir(line_pos, cos_sin(line_rot), line_length)


@wp.func
def intersection_point_line_line(a1: Any, a2: Any, b1: Any, b2: Any):
    """physics._get_intersection_point_line_line: (point, distance) of segments a1-a2 and b1-b2;
    ``(a1 + t (a2 - a1), 0)`` where they cross (t and u in [0, 1] inclusive), else
    ``((inf, inf), inf)``, also for parallel segments (``cross(r, s) == 0``: VMAS divides by it
    and its condition then fails; we return before dividing)."""
    r = a2 - a1
    s = b2 - b1
    q_minus_p = b1 - a1
    cross_q_minus_p_r = cross(q_minus_p, r)
    cross_q_minus_p_s = cross(q_minus_p, s)
    cross_r_s = cross(r, s)
    inf = type(a1[0])(wp.inf)
    no_point = type(a1)(inf, inf)
    zero = type(inf)(0.0)
    if cross_r_s == zero:
        return no_point, inf
    u = cross_q_minus_p_r / cross_r_s
    t = cross_q_minus_p_s / cross_r_s
    one = type(inf)(1.0)
    if t >= zero and t <= one and u >= zero and u <= one:
        return type(a1)(a1[0] + t * r[0], a1[1] + t * r[1]), zero
    return no_point, inf


@wp.func
def closest_points_line_line(pos_a: Any, rot_a: Any, len_a: Any, pos_b: Any, rot_b: Any, len_b: Any):
    """physics._get_closest_points_line_line: (point on a, point on b) closest between two
    segments.  Candidates, in VMAS's order: a's + end and its closest point on b, a's - end and
    its closest point on b, b's + end's closest point on a and that end, same for b's - end; the
    first of strictly smallest distance wins, and if the segments cross both points are the
    intersection."""
    rv_a = cos_sin(rot_a)
    rv_b = cos_sin(rot_b)
    return closest_points_line_line_dir(pos_a, rv_a, len_a, pos_b, rv_b, len_b)


@wp.func
def _closer_pair(p1: Any, p2: Any, min_distance: Any, q1: Any, q2: Any):
    """(q1, q2, |q1 - q2|) if ``|q1 - q2| < min_distance``, else (p1, p2, min_distance): one
    candidate of ``closest_points_line_line_dir``."""
    r1 = p1
    r2 = p2
    r = min_distance
    d = vector_norm(q1 - q2)
    if d < min_distance:
        r1 = q1
        r2 = q2
        r = d
    return r1, r2, r


@wp.func
def closest_points_line_line_dir(pos_a: Any, rv_a: Any, len_a: Any, pos_b: Any, rv_b: Any, len_b: Any):
    """``closest_points_line_line`` given the lines' directions ``rv = (cos rot, sin rot)``."""
    a1, a2 = line_extrema_dir(pos_a, rv_a, len_a)
    b1, b2 = line_extrema_dir(pos_b, rv_b, len_b)
    point_i, d_i = intersection_point_line_line(a1, a2, b1, b2)

    a1_on_b = closest_point_line_dir(pos_b, rv_b, len_b, a1, True)
    a2_on_b = closest_point_line_dir(pos_b, rv_b, len_b, a2, True)
    b1_on_a = closest_point_line_dir(pos_a, rv_a, len_a, b1, True)
    b2_on_a = closest_point_line_dir(pos_a, rv_a, len_a, b2, True)

    p1 = _inf_vec(pos_a)
    p2 = _inf_vec(pos_a)
    min_distance = type(len_a)(wp.inf)
    p1, p2, min_distance = _closer_pair(p1, p2, min_distance, a1, a1_on_b)
    p1, p2, min_distance = _closer_pair(p1, p2, min_distance, a2, a2_on_b)
    p1, p2, min_distance = _closer_pair(p1, p2, min_distance, b1_on_a, b1)
    p1, p2, min_distance = _closer_pair(p1, p2, min_distance, b2_on_a, b2)
    if d_i == type(d_i)(0.0):
        p1 = point_i
        p2 = point_i
    return p1, p2


# ---------------------------------------------------------------------------------------------
# physics.py: boxes
# ---------------------------------------------------------------------------------------------


@wp.func
def box_side(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, i: int):
    """physics._get_all_lines_box's side i as a line (pos, rot, length): 0 / 1 the sides at
    ``pos +- (cos rot, sin rot) * length / 2`` (rotation ``rot + pi / 2``, length ``width``),
    2 / 3 the sides at ``pos +- (cos(rot + pi / 2), sin(rot + pi / 2)) * width / 2`` (rotation
    ``rot``, length ``length``)."""
    two = type(box_rot)(2.0)
    rot_2 = box_rot + type(box_rot)(HALF_PI)
    if i <= 1:
        half_length = box_length / two
        rv = cos_sin(box_rot)
        offset = type(box_pos)(rv[0] * half_length, rv[1] * half_length)
        if i == 0:
            return box_pos + offset, rot_2, box_width
        return box_pos - offset, rot_2, box_width
    half_width = box_width / two
    rv2 = type(box_pos)(wp.cos(rot_2), wp.sin(rot_2))
    offset2 = type(box_pos)(rv2[0] * half_width, rv2[1] * half_width)
    if i == 2:
        return box_pos + offset2, box_rot, box_length
    return box_pos - offset2, box_rot, box_length


@wp.func
def closest_point_box(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, point: Any):
    """physics._get_closest_point_box: the point of the box's outline closest to point (also for
    a point inside the box): the first side's closest point of strictly smallest distance."""
    closest = _inf_vec(box_pos)
    distance = type(box_rot)(wp.inf)
    # box_side's sides with their directions worked out once: sides 0 / 1 at +- rv * length / 2
    # run along rv2 = (cos(rot + pi / 2), sin(...)), sides 2 / 3 at +- rv2 * width / 2 along rv
    two = type(box_rot)(2.0)
    rot_2 = box_rot + type(box_rot)(HALF_PI)
    rv = cos_sin(box_rot)
    rv2 = type(box_pos)(wp.cos(rot_2), wp.sin(rot_2))
    half_length = box_length / two
    half_width = box_width / two
    offset = type(box_pos)(rv[0] * half_length, rv[1] * half_length)
    offset2 = type(box_pos)(rv2[0] * half_width, rv2[1] * half_width)
    for i in range(4):
        side_pos = box_pos + offset
        side_rv = rv2
        side_length = box_width
        if i == 1:
            side_pos = box_pos - offset
        elif i == 2:
            side_pos = box_pos + offset2
            side_rv = rv
            side_length = box_length
        elif i == 3:
            side_pos = box_pos - offset2
            side_rv = rv
            side_length = box_length
        p = closest_point_line_dir(side_pos, side_rv, side_length, point, True)
        d = vector_norm(point - p)
        if d < distance:
            closest = p
            distance = d
    return closest


@wp.func
def inner_point_box(outside_point: Any, surface_point: Any, box_pos: Any):
    """physics._get_inner_point_box: (surface + x, |x_mag|), x the projection of
    ``box_pos - surface`` on ``v = surface - outside`` (how deep the box reaches behind the
    surface point along the contact direction).  Where ``v`` is 0, VMAS sets x to the surface
    point itself, so the point is ``2 * surface_point``, and the depth to 0."""
    v = surface_point - outside_point
    u = box_pos - surface_point
    v_norm = vector_norm(v)
    if v_norm == type(v_norm)(0.0):
        return surface_point + surface_point, type(v_norm)(0.0)
    x_magnitude = (v[0] * u[0] + v[1] * u[1]) / v_norm
    x = type(v)((v[0] / v_norm) * x_magnitude, (v[1] / v_norm) * x_magnitude)
    return surface_point + x, wp.abs(x_magnitude)


@wp.func
def closest_line_box(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any,
                     line_pos: Any, line_rot: Any, line_length: Any):
    """physics._get_closest_line_box: (point on the box, point on the line) closest between the
    box's outline and a segment: the first side of strictly smallest distance."""
    point_box = _inf_vec(box_pos)
    point_line = _inf_vec(box_pos)
    distance = type(box_rot)(wp.inf)
    for i in range(4):
        side_pos, side_rot, side_length = box_side(box_pos, box_rot, box_width, box_length, i)
        p_box, p_line = closest_points_line_line(side_pos, side_rot, side_length,
                                                 line_pos, line_rot, line_length)
        point_box, point_line, distance = _closer_pair(point_box, point_line, distance, p_box, p_line)
    return point_box, point_line


@wp.func
def closest_box_box(pos_a: Any, rot_a: Any, width_a: Any, length_a: Any,
                    pos_b: Any, rot_b: Any, width_b: Any, length_b: Any):
    """physics._get_closest_box_box: (point on a, point on b) closest between two boxes'
    outlines.  Candidates, in VMAS's order: each side of a against box b, then each side of b
    against box a (``closest_line_box``); the first of strictly smallest distance wins."""
    point_a = _inf_vec(pos_a)
    point_b = _inf_vec(pos_a)
    distance = type(rot_a)(wp.inf)
    for i in range(4):
        side_pos, side_rot, side_length = box_side(pos_a, rot_a, width_a, length_a, i)
        p_b, p_a = closest_line_box(pos_b, rot_b, width_b, length_b, side_pos, side_rot, side_length)
        point_a, point_b, distance = _closer_pair(point_a, point_b, distance, p_a, p_b)
    for i in range(4):
        side_pos, side_rot, side_length = box_side(pos_b, rot_b, width_b, length_b, i)
        p_a, p_b = closest_line_box(pos_a, rot_a, width_a, length_a, side_pos, side_rot, side_length)
        point_a, point_b, distance = _closer_pair(point_a, point_b, distance, p_a, p_b)
    return point_a, point_b


# ---------------------------------------------------------------------------------------------
# core.py: constraint forces and torques
# ---------------------------------------------------------------------------------------------


@wp.func
def clear_of_line(line_pos: Any, rv: Any, point: Any, reach: Any):
    """Whether ``point`` lies farther than ``reach`` from the infinite line through ``line_pos``
    along ``rv`` = (cos, sin), by a margin that covers the rounding of this test and of the
    distance ``repulsion_vanishes`` works out (1e-5 of the coordinates' size: thousands of
    times float32's error).  The closest point of the segment is at least as far, so there a
    line-sphere repulsion is exactly zero and need not be worked out."""
    q = point - line_pos
    perp = wp.abs(q[0] * rv[1] - q[1] * rv[0])
    margin = type(reach)(1e-5) * (type(reach)(1.0) + wp.abs(q[0]) + wp.abs(q[1]) + reach)
    return perp > reach + margin


@wp.func
def repulsion_vanishes(pos_a: Any, pos_b: Any, dist_min: Any):
    """Whether ``constraint_force(pos_a, pos_b, dist_min, ..., attractive=False)`` is its exact
    zero (``|delta| < 1e-6`` or ``|delta| > dist_min``; false for NaN).  Callers skip adding that
    force and its torque: adding +0 to a sum that starts at +0 changes no bit, nor does -0
    (a zero force's torque)."""
    dist = vector_norm(pos_a - pos_b)
    return dist < type(dist)(CONSTRAINT_MIN_DIST) or dist > dist_min


@wp.func
def constraint_force(pos_a: Any, pos_b: Any, dist_min: Any, force_multiplier: Any,
                     contact_margin: Any, attractive: bool):
    """World._get_constraint_forces' force on a (b gets its negation): with ``delta = a - b``,
    ``sign = -1 if attractive else 1`` and ``k = contact_margin``,

        sign * force_multiplier * delta / |delta| * logaddexp(0, (dist_min - |delta|) * sign / k) * k

    zero where ``|delta| < 1e-6``, and where ``|delta| > dist_min`` (repulsive) or
    ``|delta| < dist_min`` (attractive).  ``|delta|`` is replaced by 1e-8 where it is 0 (that
    force is zeroed anyway)."""
    delta_pos = pos_a - pos_b
    dist = vector_norm(delta_pos)
    sign = type(dist)(1.0)
    if attractive:
        sign = type(dist)(-1.0)
    zero_force = type(delta_pos)(type(dist)(0.0), type(dist)(0.0))
    if dist < type(dist)(CONSTRAINT_MIN_DIST):
        return zero_force
    if attractive:
        if dist < dist_min:
            return zero_force
    else:
        if dist > dist_min:
            return zero_force
    penetration = logaddexp0((dist_min - dist) * sign / contact_margin) * contact_margin
    divisor = dist
    if not (dist > type(dist)(0.0)):
        divisor = type(dist)(CONSTRAINT_ZERO_DIST)
    c = sign * force_multiplier
    return type(delta_pos)(c * delta_pos[0] / divisor * penetration, c * delta_pos[1] / divisor * penetration)


@wp.func
def constraint_torque(rot_a: Any, rot_b: Any, force_multiplier: Any):
    """World._get_constraint_torques' torque on a (b gets its negation): with
    ``delta = rot_a - rot_b``, ``-force_multiplier * sign(delta) * (exp(|delta|) - 1)``, zero
    where ``|delta| < 1e-9`` (|delta| as VMAS's norm of one element, sqrt(delta * delta))."""
    delta_rot = rot_a - rot_b
    abs_delta_rot = wp.sqrt(delta_rot * delta_rot)
    if abs_delta_rot < type(delta_rot)(CONSTRAINT_MIN_DELTA_ROT):
        return -type(delta_rot)(0.0)  # VMAS negates its zeroed torque: -0.0
    penetration = wp.exp(abs_delta_rot) - type(delta_rot)(1.0)
    torque = force_multiplier * torch_sign(delta_rot) * penetration
    return -torque


# ---------------------------------------------------------------------------------------------
# core.py: ray casts (World._cast_rays_to_*, the vectorized path of cast_rays / Lidar.measure)
# ---------------------------------------------------------------------------------------------


@wp.func
def ray_to_sphere(origin: Any, angle: Any, max_range: Any, sphere_pos: Any, radius: Any):
    """World._cast_rays_to_sphere for one ray: ``|c - origin| - sqrt(r^2 - |p - c|^2)``, c the
    sphere centre p's projection on the ray's line (through origin + dir * max_range / 2,
    unlimited), if the line passes within the radius (strictly) and the centre is ahead
    (``(p - origin) . dir > 0``), else max_range.  A ray starting inside a sphere whose centre is
    ahead gets a negative distance; a hit beyond max_range is not capped (VMAS)."""
    c = wp.cos(angle)
    s = wp.sin(angle)
    half_range = max_range / type(max_range)(2.0)
    line_pos = type(origin)(origin[0] + c * half_range, origin[1] + s * half_range)
    closest_point = closest_point_line(line_pos, angle, max_range, sphere_pos, False)
    d_norm = vector_norm(sphere_pos - closest_point)
    ray_intersects = d_norm < radius
    a = radius * radius - d_norm * d_norm
    if not (a > type(a)(0.0)):
        a = type(a)(RAY_SPHERE_MISS_SQUARE)
    m = wp.sqrt(a)
    u = sphere_pos - origin
    u1 = closest_point - origin
    u_dot_ray = u[0] * c + u[1] * s
    sphere_is_in_front = u_dot_ray > type(u_dot_ray)(0.0)
    if ray_intersects and sphere_is_in_front:
        return vector_norm(u1) - m
    return max_range


@wp.func
def ray_to_line(origin: Any, angle: Any, max_range: Any, line_pos: Any, line_rot: Any, line_length: Any):
    """World._cast_rays_to_line for one ray: with ``r = (cos, sin)(line_rot) * length``,
    ``s = (cos, sin)(angle)``, ``t = cross(origin - line_pos, s / cross(r, s))`` and
    ``u = cross(origin - line_pos, r / cross(r, s))``, the distance ``|u * s|`` where
    ``-0.5 <= t <= 0.5`` and ``u >= 0``, else max_range, also where ``cross(r, s) == 0``
    (returned before VMAS's division by it).  Not capped at max_range (VMAS)."""
    r = type(origin)(wp.cos(line_rot) * line_length, wp.sin(line_rot) * line_length)
    s = type(origin)(wp.cos(angle), wp.sin(angle))
    rxs = cross(r, s)
    if rxs == type(rxs)(0.0):
        return max_range
    q_minus_p = origin - line_pos
    t = cross(q_minus_p, type(s)(s[0] / rxs, s[1] / rxs))
    u = cross(q_minus_p, type(r)(r[0] / rxs, r[1] / rxs))
    half = type(t)(0.5)
    if t > half or t < -half or u < type(u)(0.0):
        return max_range
    return vector_norm(type(s)(u * s[0], u * s[1]))


@wp.func
def ray_to_box(origin: Any, angle: Any, max_range: Any, box_pos: Any, box_rot: Any,
               box_length: Any, box_width: Any):
    """World._cast_rays_to_box for one ray (slab method in the box frame): entry
    ``tmin = max(min(tx), min(ty))`` and exit ``tmax = min(max(tx), max(ty))``; a hit where
    ``tmax >= tmin`` and ``tmin > 0`` at distance ``|origin - world(tmin point)|``, else max_range
    (so a ray starting inside the box misses).  Division by an exact-zero direction component
    gives +-inf / NaN as in torch, and NaN propagates through min / max as in torch (a miss).
    Not capped at max_range (VMAS)."""
    neg_rot = -box_rot
    pos_aabb = rotate_vector(origin - box_pos, neg_rot)
    ray_dir_aabb = rotate_vector(type(origin)(wp.cos(angle), wp.sin(angle)), neg_rot)
    two = type(box_length)(2.0)
    tx1 = (-box_length / two - pos_aabb[0]) / ray_dir_aabb[0]
    tx2 = (box_length / two - pos_aabb[0]) / ray_dir_aabb[0]
    tmin = torch_min(tx1, tx2)
    tmax = torch_max(tx1, tx2)
    ty1 = (-box_width / two - pos_aabb[1]) / ray_dir_aabb[1]
    ty2 = (box_width / two - pos_aabb[1]) / ray_dir_aabb[1]
    tymin = torch_min(ty1, ty2)
    tymax = torch_max(ty1, ty2)
    tmin = torch_max(tmin, tymin)
    tmax = torch_min(tmax, tymax)
    if tmax >= tmin and tmin > type(tmin)(0.0):
        intersect_aabb = type(origin)(tmin * ray_dir_aabb[0] + pos_aabb[0],
                                      tmin * ray_dir_aabb[1] + pos_aabb[1])
        intersect_world = rotate_vector(intersect_aabb, box_rot) + box_pos
        return vector_norm(origin - intersect_world)
    return max_range


# ---------------------------------------------------------------------------------------------
# core.py: World.get_distance_from_point, get_distance, is_overlapping
# ---------------------------------------------------------------------------------------------


@wp.func
def distance_point_to_sphere(sphere_pos: Any, sphere_radius: Any, point: Any):
    """World.get_distance_from_point for a sphere: |sphere_pos - point| - radius."""
    return vector_norm(sphere_pos - point) - sphere_radius


@wp.func
def distance_point_to_box(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, point: Any):
    """World.get_distance_from_point for a box: |point - closest outline point| - LINE_MIN_DIST
    (positive for a point inside the box, too)."""
    closest = closest_point_box(box_pos, box_rot, box_width, box_length, point)
    return vector_norm(point - closest) - type(box_rot)(LINE_MIN_DIST)


@wp.func
def distance_point_to_line(line_pos: Any, line_rot: Any, line_length: Any, point: Any):
    """World.get_distance_from_point for a line: |point - closest segment point| - LINE_MIN_DIST."""
    closest = closest_point_line(line_pos, line_rot, line_length, point, True)
    return vector_norm(point - closest) - type(line_rot)(LINE_MIN_DIST)


@wp.func
def distance_sphere_sphere(pos_a: Any, radius_a: Any, pos_b: Any, radius_b: Any):
    """World.get_distance(sphere a, sphere b): (|pos_a - pos_b| - radius_a) - radius_b."""
    return distance_point_to_sphere(pos_a, radius_a, pos_b) - radius_b


@wp.func
def overlapping_box_sphere(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any,
                           sphere_pos: Any, dist_min: Any):
    """World.is_overlapping(box, sphere): the centre is closer to the box centre than the
    box's closest outline point is (inside, roughly), or closer than dist_min to that outline
    point.  dist_min: ``box_sphere_overlap_dist_min(radius)`` rounded to the float type."""
    closest = closest_point_box(box_pos, box_rot, box_width, box_length, sphere_pos)
    distance_sphere_closest_point = vector_norm(sphere_pos - closest)
    distance_sphere_box = vector_norm(sphere_pos - box_pos)
    distance_closest_point_box = vector_norm(box_pos - closest)
    return distance_sphere_box < distance_closest_point_box or distance_sphere_closest_point < dist_min


@wp.func
def distance_box_sphere(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any,
                        sphere_pos: Any, sphere_radius: Any, overlap_dist_min: Any):
    """World.get_distance(box, sphere) (either order): distance_point_to_box(centre) - radius,
    or -1 where ``overlapping_box_sphere`` (with overlap_dist_min as its dist_min)."""
    if overlapping_box_sphere(box_pos, box_rot, box_width, box_length, sphere_pos, overlap_dist_min):
        return type(sphere_radius)(-1.0)
    return distance_point_to_box(box_pos, box_rot, box_width, box_length, sphere_pos) - sphere_radius


@wp.func
def distance_line_sphere(line_pos: Any, line_rot: Any, line_length: Any, sphere_pos: Any, sphere_radius: Any):
    """World.get_distance(line, sphere) (either order): distance_point_to_line(centre) - radius."""
    return distance_point_to_line(line_pos, line_rot, line_length, sphere_pos) - sphere_radius


@wp.func
def distance_line_line(pos_a: Any, rot_a: Any, len_a: Any, pos_b: Any, rot_b: Any, len_b: Any):
    """World.get_distance(line a, line b): |closest points| - LINE_MIN_DIST."""
    point_a, point_b = closest_points_line_line(pos_a, rot_a, len_a, pos_b, rot_b, len_b)
    return vector_norm(point_a - point_b) - type(rot_a)(LINE_MIN_DIST)


@wp.func
def distance_box_line(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any,
                      line_pos: Any, line_rot: Any, line_length: Any):
    """World.get_distance(box, line) (either order): |closest points| - LINE_MIN_DIST."""
    point_box, point_line = closest_line_box(box_pos, box_rot, box_width, box_length,
                                             line_pos, line_rot, line_length)
    return vector_norm(point_box - point_line) - type(box_rot)(LINE_MIN_DIST)


@wp.func
def distance_box_box(pos_a: Any, rot_a: Any, width_a: Any, length_a: Any,
                     pos_b: Any, rot_b: Any, width_b: Any, length_b: Any):
    """World.get_distance(box a, box b): |closest outline points| - LINE_MIN_DIST (a box inside
    another is not "overlapping" by this measure, as in VMAS)."""
    point_a, point_b = closest_box_box(pos_a, rot_a, width_a, length_a, pos_b, rot_b, width_b, length_b)
    return vector_norm(point_a - point_b) - type(rot_a)(LINE_MIN_DIST)


@wp.func
def overlapping_sphere_sphere(pos_a: Any, radius_a: Any, pos_b: Any, radius_b: Any):
    """World.is_overlapping(sphere, sphere): distance_sphere_sphere < 0."""
    return distance_sphere_sphere(pos_a, radius_a, pos_b, radius_b) < type(radius_a)(0.0)


@wp.func
def overlapping_line_sphere(line_pos: Any, line_rot: Any, line_length: Any, sphere_pos: Any,
                            sphere_radius: Any):
    """World.is_overlapping(line, sphere): distance_line_sphere < 0."""
    d = distance_line_sphere(line_pos, line_rot, line_length, sphere_pos, sphere_radius)
    return d < type(sphere_radius)(0.0)


@wp.func
def overlapping_line_line(pos_a: Any, rot_a: Any, len_a: Any, pos_b: Any, rot_b: Any, len_b: Any):
    """World.is_overlapping(line, line): distance_line_line < 0."""
    return distance_line_line(pos_a, rot_a, len_a, pos_b, rot_b, len_b) < type(rot_a)(0.0)


@wp.func
def overlapping_box_line(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any,
                         line_pos: Any, line_rot: Any, line_length: Any):
    """World.is_overlapping(box, line): distance_box_line < 0."""
    d = distance_box_line(box_pos, box_rot, box_width, box_length, line_pos, line_rot, line_length)
    return d < type(box_rot)(0.0)


@wp.func
def overlapping_box_box(pos_a: Any, rot_a: Any, width_a: Any, length_a: Any,
                        pos_b: Any, rot_b: Any, width_b: Any, length_b: Any):
    """World.is_overlapping(box, box): distance_box_box < 0."""
    d = distance_box_box(pos_a, rot_a, width_a, length_a, pos_b, rot_b, width_b, length_b)
    return d < type(rot_a)(0.0)
