"""VMAS 1.5.2's geometry, contact-force and ray-cast math (``vmas/simulator/physics.py``,
``World._get_constraint_forces``, ``World._cast_rays_to_*``, ``TorchUtils``) as Warp functions of
one pair of bodies or one ray, generic over float32 / float64, in VMAS's operation order.

Conventions (VMAS's): a box's ``length`` lies along its own x axis (rotated by ``rot``), its
``width`` along y; a line of ``length`` lies along its x axis, centred on its position.
Vectors are Warp 2-vectors of the world's float type; ``inf`` marks "none yet" in the closest-
point searches, exactly as VMAS's ``torch.full(..., inf)`` does.  Degenerate cases follow VMAS:
``inner_point_box`` with the outside point on the surface returns ``2 * surface_point`` (VMAS's
``torch.where(cond, surface_point, x)`` then adds the surface point again), parallel segments
have no intersection point, a ray parallel to a line misses it.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS

wp.set_module_options(KERNEL_MODULE_OPTIONS)

#: VMAS's constants (vmas/simulator/utils.py)
LINE_MIN_DIST = 4 / 6e2
COLLISION_FORCE = 100.0
JOINT_FORCE = 130.0
TORQUE_CONSTRAINT_FORCE = 1.0
DRAG = 0.25
HALF_PI = 1.5707963267948966  # torch.pi / 2


@wp.func
def norm(v: Any):
    """|v| (torch.linalg.vector_norm of a 2-vector)."""
    return wp.sqrt(v[0] * v[0] + v[1] * v[1])


@wp.func
def dot(a: Any, b: Any):
    """(a * b).sum(-1)."""
    return a[0] * b[0] + a[1] * b[1]


@wp.func
def cross(a: Any, b: Any):
    """VMAS's TorchUtils.cross: a_x b_y - a_y b_x."""
    return a[0] * b[1] - a[1] * b[0]


@wp.func
def compute_torque(f: Any, r: Any):
    """VMAS's TorchUtils.compute_torque(f, r) = cross(r, f)."""
    return cross(r, f)


@wp.func
def rotate_vector(v: Any, angle: Any):
    """VMAS's TorchUtils.rotate_vector."""
    c = wp.cos(angle)
    s = wp.sin(angle)
    return wp.vector(v[0] * c - v[1] * s, v[0] * s + v[1] * c)


@wp.func
def clamp_with_norm(v: Any, max_norm: Any):
    """VMAS's TorchUtils.clamp_with_norm: v scaled to ``max_norm`` where longer."""
    n = norm(v)
    if n > max_norm:
        return (v / n) * max_norm
    return v


@wp.func
def unit(angle: Any):
    return wp.vector(wp.cos(angle), wp.sin(angle))


@wp.func
def softplus(x: Any):
    """torch.logaddexp(0, x) = max(0, x) + log1p(exp(-|x|)) (log1p as log(1 + .): Warp has no
    log1p; the term is multiplied by the contact margin, so the difference stays below float32
    rounding of the force)."""
    return wp.max(x, type(x)(0.0)) + wp.log(type(x)(1.0) + wp.exp(-wp.abs(x)))


@wp.func
def constraint_force(pos_a: Any, pos_b: Any, dist_min: Any, force_multiplier: Any, contact_margin: Any,
                     attractive: bool):
    """The force on a of VMAS's ``_get_constraint_forces`` (b gets its negation): the soft
    penetration ``k * logaddexp(0, sign (dist_min - dist) / k)`` along ``pos_a - pos_b``; zero
    below 1e-6 apart, and beyond ``dist_min`` (repulsive) / within it (attractive)."""
    zero = type(dist_min)(0.0)
    delta = pos_a - pos_b
    dist = norm(delta)
    sign = type(dist_min)(1.0)
    if attractive:
        sign = type(dist_min)(-1.0)
    k = contact_margin
    penetration = softplus((dist_min - dist) * sign / k) * k
    den = dist
    if not (dist > zero):
        den = type(dist)(1e-8)
    f = sign * force_multiplier * delta / den * penetration
    if dist < type(dist)(1e-6):
        f = wp.vector(zero, zero)
    if attractive:
        if dist < dist_min:
            f = wp.vector(zero, zero)
    elif dist > dist_min:
        f = wp.vector(zero, zero)
    return f


@wp.func
def closest_point_line(line_pos: Any, line_rot: Any, line_length: Any, point: Any, limit_to_line_length: bool):
    """VMAS's ``_get_closest_point_line``: the point of the line (segment, or the infinite line
    without ``limit_to_line_length``) closest to ``point``."""
    rv = unit(line_rot)
    dot_p = dot(line_pos - point, rv)
    sign = wp.sign(dot_p)
    along = wp.abs(dot_p)
    if limit_to_line_length:
        along = wp.min(along, line_length / type(line_length)(2.0))
    return line_pos - sign * along * rv


@wp.func
def line_extrema(line_pos: Any, line_rot: Any, line_length: Any):
    """The two ends of a line: ``pos + (L/2)(cos, sin)`` and ``pos - ...``."""
    half = line_length / type(line_length)(2.0)
    xy = wp.vector(half * wp.cos(line_rot), half * wp.sin(line_rot))
    return line_pos + xy, line_pos - xy


@wp.func
def intersection_point_line_line(a1: Any, a2: Any, b1: Any, b2: Any):
    """VMAS's ``_get_intersection_point_line_line``: ``(point, 0)`` where segments a1-a2 and
    b1-b2 cross (not parallel), else ``(inf, inf)``."""
    inf = type(a1[0])(wp.inf)
    r = a2 - a1
    s = b2 - b1
    qp = b1 - a1
    cross_r_s = cross(r, s)
    u = cross(qp, r) / cross_r_s
    t = cross(qp, s) / cross_r_s
    zero = type(u)(0.0)
    one = type(u)(1.0)
    if cross_r_s != zero and zero <= u and u <= one and zero <= t and t <= one:
        return a1 + t * r, zero
    return wp.vector(inf, inf), inf


@wp.func
def closest_points_line_line(pos_a: Any, rot_a: Any, len_a: Any, pos_b: Any, rot_b: Any, len_b: Any):
    """VMAS's ``_get_closest_points_line_line``: of the four end-to-segment pairs the closest
    (first wins ties), or the crossing point on both where the segments cross."""
    a1, a2 = line_extrema(pos_a, rot_a, len_a)
    b1, b2 = line_extrema(pos_b, rot_b, len_b)
    point_i, d_i = intersection_point_line_line(a1, a2, b1, b2)
    a1_b = closest_point_line(pos_b, rot_b, len_b, a1, True)
    a2_b = closest_point_line(pos_b, rot_b, len_b, a2, True)
    b1_a = closest_point_line(pos_a, rot_a, len_a, b1, True)
    b2_a = closest_point_line(pos_a, rot_a, len_a, b2, True)
    inf = type(d_i)(wp.inf)
    p1 = wp.vector(inf, inf)
    p2 = wp.vector(inf, inf)
    best = inf
    d = norm(a1 - a1_b)
    if d < best:
        p1 = a1
        p2 = a1_b
        best = d
    d = norm(a2 - a2_b)
    if d < best:
        p1 = a2
        p2 = a2_b
        best = d
    d = norm(b1_a - b1)
    if d < best:
        p1 = b1_a
        p2 = b1
        best = d
    d = norm(b2_a - b2)
    if d < best:
        p1 = b2_a
        p2 = b2
        best = d
    if d_i == type(d_i)(0.0):
        p1 = point_i
        p2 = point_i
    return p1, p2


@wp.func
def box_side(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, k: int):
    """Side k of a box as a line (VMAS's ``_get_all_lines_box`` order: the two width sides at
    ``+-length/2`` along x, then the two length sides at ``+-width/2`` along y):
    ``(centre, rotation, length)``."""
    two = type(box_width)(2.0)
    rot_2 = box_rot + type(box_rot)(HALF_PI)
    if k == 0:
        return box_pos + unit(box_rot) * (box_length / two), rot_2, box_width
    if k == 1:
        return box_pos - unit(box_rot) * (box_length / two), rot_2, box_width
    if k == 2:
        return box_pos + unit(rot_2) * (box_width / two), box_rot, box_length
    return box_pos - unit(rot_2) * (box_width / two), box_rot, box_length


@wp.func
def closest_point_box(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, point: Any):
    """VMAS's ``_get_closest_point_box``: the point of the box's outline closest to ``point``
    (first side wins ties)."""
    inf = type(box_width)(wp.inf)
    best_p = wp.vector(inf, inf)
    best = inf
    for k in range(4):
        c, r, l = box_side(box_pos, box_rot, box_width, box_length, k)
        p = closest_point_line(c, r, l, point, True)
        d = norm(point - p)
        if d < best:
            best_p = p
            best = d
    return best_p


@wp.func
def inner_point_box(outside_point: Any, surface_point: Any, box_pos: Any):
    """VMAS's ``_get_inner_point_box``: the surface point moved along the outside->surface
    direction by the projection of surface->centre, and that projection's length (``2 *
    surface_point, 0`` when the two points coincide, as VMAS)."""
    v = surface_point - outside_point
    u = box_pos - surface_point
    v_norm = norm(v)
    x_magnitude = dot(v, u) / v_norm
    x = (v / v_norm) * x_magnitude
    if v_norm == type(v_norm)(0.0):
        x = surface_point
        x_magnitude = type(v_norm)(0.0)
    return surface_point + x, wp.abs(x_magnitude)


@wp.func
def closest_line_box(box_pos: Any, box_rot: Any, box_width: Any, box_length: Any, line_pos: Any, line_rot: Any,
                     line_length: Any):
    """VMAS's ``_get_closest_line_box``: ``(point on the box, point on the line)`` of the
    box side closest to the line."""
    inf = type(box_width)(wp.inf)
    best_box = wp.vector(inf, inf)
    best_line = wp.vector(inf, inf)
    best = inf
    for k in range(4):
        c, r, l = box_side(box_pos, box_rot, box_width, box_length, k)
        p_box, p_line = closest_points_line_line(c, r, l, line_pos, line_rot, line_length)
        d = norm(p_box - p_line)
        if d < best:
            best_box = p_box
            best_line = p_line
            best = d
    return best_box, best_line


@wp.func
def closest_box_box(pos_a: Any, rot_a: Any, width_a: Any, length_a: Any, pos_b: Any, rot_b: Any, width_b: Any,
                    length_b: Any):
    """VMAS's ``_get_closest_box_box``: ``(point on a, point on b)``, the closest of a's sides
    against box b (first) and b's sides against box a."""
    inf = type(width_a)(wp.inf)
    best_a = wp.vector(inf, inf)
    best_b = wp.vector(inf, inf)
    best = inf
    for k in range(4):  # a's sides against box b: (point on b, point on a's side)
        c, r, l = box_side(pos_a, rot_a, width_a, length_a, k)
        on_b, on_a = closest_line_box(pos_b, rot_b, width_b, length_b, c, r, l)
        d = norm(on_a - on_b)
        if d < best:
            best_a = on_a
            best_b = on_b
            best = d
    for k in range(4):  # b's sides against box a: (point on a, point on b's side)
        c, r, l = box_side(pos_b, rot_b, width_b, length_b, k)
        on_a, on_b = closest_line_box(pos_a, rot_a, width_a, length_a, c, r, l)
        d = norm(on_a - on_b)
        if d < best:
            best_a = on_a
            best_b = on_b
            best = d
    return best_a, best_b


# ------------------------------------------------------------------------------- ray casts
@wp.func
def ray_to_sphere(origin: Any, angle: Any, max_range: Any, sphere_pos: Any, radius: Any):
    """VMAS's ``_cast_rays_to_sphere`` for one ray: distance to the sphere's near side, or
    ``max_range`` if the ray misses it or it is behind."""
    ray = unit(angle)
    line_pos = origin + ray * (max_range / type(max_range)(2.0))
    closest = closest_point_line(line_pos, angle, max_range, sphere_pos, False)
    d_norm = norm(sphere_pos - closest)
    a = radius * radius - d_norm * d_norm
    if not (a > type(a)(0.0)):
        a = type(a)(1e-8)
    m = wp.sqrt(a)
    in_front = dot(sphere_pos - origin, ray) > type(a)(0.0)
    dist = norm(closest - origin) - m
    if not (d_norm < radius and in_front):
        dist = max_range
    return dist


@wp.func
def ray_to_line(origin: Any, angle: Any, max_range: Any, line_pos: Any, line_rot: Any, line_length: Any):
    """VMAS's ``_cast_rays_to_line`` for one ray (``max_range`` when parallel, past either end
    or behind)."""
    r = unit(line_rot) * line_length
    s = unit(angle)
    rxs = cross(r, s)
    qp = origin - line_pos
    t = cross(qp, s / rxs)
    u = cross(qp, r / rxs)
    d = norm(u * s)
    half = type(t)(0.5)
    if rxs == type(rxs)(0.0) or t > half or t < -half or u < type(u)(0.0):
        d = max_range
    return d


@wp.func
def ray_to_box(origin: Any, angle: Any, max_range: Any, box_pos: Any, box_rot: Any, box_length: Any,
               box_width: Any):
    """VMAS's ``_cast_rays_to_box`` for one ray (slab test in the box's frame)."""
    two = type(box_length)(2.0)
    pos_aabb = rotate_vector(origin - box_pos, -box_rot)
    ray = unit(angle)
    ray_aabb = rotate_vector(ray, -box_rot)
    tx1 = (-box_length / two - pos_aabb[0]) / ray_aabb[0]
    tx2 = (box_length / two - pos_aabb[0]) / ray_aabb[0]
    tmin = wp.min(tx1, tx2)
    tmax = wp.max(tx1, tx2)
    ty1 = (-box_width / two - pos_aabb[1]) / ray_aabb[1]
    ty2 = (box_width / two - pos_aabb[1]) / ray_aabb[1]
    tymin = wp.min(ty1, ty2)
    tymax = wp.max(ty1, ty2)
    tmin = wp.max(tmin, tymin)
    tmax = wp.min(tmax, tymax)
    intersect = rotate_vector(tmin * ray_aabb + pos_aabb, box_rot) + box_pos
    dist = norm(origin - intersect)
    if not (tmax >= tmin and tmin > type(tmin)(0.0)):
        dist = max_range
    return dist
