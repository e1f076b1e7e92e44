"""The VMAS world every VMAS scenario shares: one Warp struct, VMAS 1.5.2's physics
(``vmas/simulator/core.py`` ``World.step``), the Lidar sensor, the step's kernels and the helpers
scenarios write their functions with.

Bodies are indexed in VMAS's entity order, **landmarks first, then agents** (``World.entities``
is ``landmarks + agents``); agent ``i`` is body ``w.n_landmarks + i``.  Per world: ``pos`` and
``vel`` ``[E, N, 2]``, ``rot`` and ``ang_vel`` ``[E, N]``.

A scenario (one file, see ``base.VmasBase``) supplies Warp functions; this module builds the
kernels around them:

    physics       actions -> u (VMAS's _set_action) -> the scenario's process_action ->
                  the agents' dynamics (``dynamics.py``; none where all are Holonomic) ->
                  substeps of forces and semi-implicit Euler                          (shared)
    reward_done   the episode protocol around the scenario's ``reward``               (shared)
    observe       autoreset (state zeroed, the scenario's ``reset``) + its ``observe``

One substep, as VMAS (float32 worlds round every operation as VMAS's float32 torch code):

    force_b  = 0 [+ action force (u[:2], or the dynamics' force; max_f norm clamp, f_range
                  clamp)] + friction + m g
               + joint forces (VMAS's ``JointConstraint``s, in entity-pair order: the anchors
                 pulled together with ``joint_force``, plus a torque holding a fixed rotation)
               + contact forces of every colliding pair, pairs grouped by shape kind in VMAS's
                 order (sphere-sphere, line-sphere, line-line, box-sphere, box-line, box-box),
                 within a kind in entity-pair order
    torque_b = 0 [+ the dynamics' torque (max_t norm clamp, t_range clamp)] + angular friction
               + joint torques + contact torques (same order)
    substep 0: vel *= 1 - drag, ang_vel *= 1 - drag
    vel = clamp(vel + force / m * sub_dt)  (max_speed norm clamp, v_range clamp)
    pos = clamp(pos + vel * sub_dt)        (to +-x_semidim / +-y_semidim where set)
    ang_vel += torque / I * sub_dt;  rot += ang_vel * sub_dt

**Speed notes.**  A world's ``wp.struct`` (~80 arrays, ~3 KB) is passed by value to every
``wp.func`` (warp's rule), so every function that takes ``w`` is ``@wp.func(inline=True)``: the
C++ compiler then drops the copies (a 6-8x faster step for Passage-v0 at 4 096 worlds).  Pairs
whose centres are farther apart than their circumscribed radii plus ``LINE_MIN_DIST``
(``within_contact_reach``, its reach squared per pair worked out once: ``pair_reach_sq``) are
skipped: every force and overlap test is exactly zero / false there.  A substep's body loops run
over the bodies that move or turn (``dynamic_bodies``) and the lines and boxes
(``shaped_bodies``) only, and a line's or box's ``(cos, sin)`` is memoised per rotation
(``current_direction``), so GiveWay-v0's ten static walls cost nothing outside their contact
pairs and Wheel-v0's observation shares the physics' ``cos_sin``.

**VMAS's batch-wide gate.**  VMAS's ``World.collides`` decides whether a pair is worked on at all
by looking over the *whole batch*: ``(|p_a - p_b| <= r_a + r_b).any()`` over worlds (``r`` the
circumscribed radii), so in VMAS one world's contact force (or a scenario's collision penalty
gated the same way) can depend on where the other worlds' bodies are.  Our worlds are
independent: every pair is always worked on, which is what VMAS does whenever some world of its
batch has the pair within reach (at training batch sizes, practically always).  Contact forces
are exactly zero beyond contact, so this changes nothing there; it only matters where VMAS's
gate cuts off a nonzero term (a sphere within ``LINE_MIN_DIST`` of a line's end but outside the
circumscribed circles, or a penalty band such as navigation's ``distance <= 0.005``) in a batch
where no world has the pair within reach.  (Sphere-sphere pairs skip the work beyond
``r_a + r_b``, where the force is exactly zero.)
"""

from typing import Any

import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode  # noqa: F401
from war_envs.core.fields import (
    module_kernels,
    no_info,  # noqa: F401  (scenarios' clear_info)
)
from war_envs.core.reward_done import reward_done_world
from war_envs.scenarios.vmas import geometry as G

wp.set_module_options(KERNEL_MODULE_OPTIONS)

# body shapes
SPHERE = wp.constant(0)
BOX = wp.constant(1)
LINE = wp.constant(2)
# contact pair kinds, in VMAS's order of working them out (_apply_vectorized_enviornment_force)
SPHERE_SPHERE = wp.constant(0)
LINE_SPHERE = wp.constant(1)
LINE_LINE = wp.constant(2)
BOX_SPHERE = wp.constant(3)
BOX_LINE = wp.constant(4)
BOX_BOX = wp.constant(5)


def shared_fields(F) -> dict:
    """The struct fields every VMAS world has (``F``: the world's float type)."""
    return {
        # Params
        "mode": int, "max_cycles": int, "continuous": int, "clamp_actions": int, "substeps": int,
        "n_landmarks": int, "has_gravity": int,
        "dt": F, "sub_dt": F, "collision_force": F, "contact_margin": F,
        "gravity_x": F, "gravity_y": F,
        "x_semidim": F, "y_semidim": F,  # < 0: unbounded
        "line_min_dist": F,
        # Bodies (one value per body, shared by every world); -1: "None" in VMAS
        "shape": wp.array(dtype=wp.int32), "radius": wp.array(dtype=F), "length": wp.array(dtype=F),
        "width": wp.array(dtype=F), "hollow": wp.array(dtype=wp.int32),
        "movable": wp.array(dtype=wp.int32), "rotatable": wp.array(dtype=wp.int32),
        "mass": wp.array(dtype=F), "inertia": wp.array(dtype=F), "reach": wp.array(dtype=F),
        "overlap_dist_min": wp.array(dtype=F),
        "max_speed": wp.array(dtype=F), "v_range": wp.array(dtype=F), "keep": wp.array(dtype=F),
        "lin_friction": wp.array(dtype=F), "ang_friction": wp.array(dtype=F),
        # Contact pairs (VMAS's order); for LINE_SPHERE / BOX_SPHERE / BOX_LINE ``pair_a`` is the
        # line / box
        "pair_a": wp.array(dtype=wp.int32), "pair_b": wp.array(dtype=wp.int32),
        "pair_kind": wp.array(dtype=wp.int32),
        # per pair the square of ``within_contact_reach``'s reach (``base.pair_reach_squared``)
        "pair_reach_sq": wp.array(dtype=F),
        # the bodies that move or turn, and the lines and boxes (body indices, ascending)
        "dynamic_bodies": wp.array(dtype=wp.int32), "shaped_bodies": wp.array(dtype=wp.int32),
        # Agents' actions: their sizes, ranges and multipliers per action component, force and
        # torque limits (-1: None)
        "agent_actions": wp.array(dtype=wp.int32),
        "u_range": wp.array2d(dtype=wp.float32), "u_multiplier": wp.array2d(dtype=wp.float32),
        "max_f": wp.array(dtype=F), "f_range": wp.array(dtype=F),
        "max_t": wp.array(dtype=F), "t_range": wp.array(dtype=F),
        # Lidars: owner agent, range, rays [start, start + n) of ``lidar_angles``, bodies seen
        "lidar_agent": wp.array(dtype=wp.int32), "lidar_range": wp.array(dtype=F),
        "lidar_start": wp.array(dtype=wp.int32), "lidar_rays": wp.array(dtype=wp.int32),
        "lidar_angles": wp.array(dtype=wp.float32), "lidar_sees": wp.array2d(dtype=wp.int32),
        "lidar_last": wp.array2d(dtype=F),  # [E, rays of every lidar]: the last readings
        # Episode state
        "world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
        "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
        "reset_now": wp.array(dtype=wp.int32),
        # World state
        "pos": wp.array3d(dtype=F), "vel": wp.array3d(dtype=F),
        "rot": wp.array2d(dtype=F), "ang_vel": wp.array2d(dtype=F),
        # Actions (as given) and the physical action u (VMAS's agent.action.u, float32)
        "action_discrete": wp.array2d(dtype=wp.int32), "action_continuous": wp.array3d(dtype=wp.float32),
        "u": wp.array3d(dtype=wp.float32),
        # what the agents' dynamics (``dynamics.py``) made of u this step: VMAS's
        # ``agent.state.force`` / ``state.torque`` ([E, 0, ...] where every agent is Holonomic)
        "agent_force": wp.array3d(dtype=F), "agent_torque": wp.array2d(dtype=F),
        # Scratch
        "force": wp.array3d(dtype=F), "torque": wp.array2d(dtype=F),
        # (cos rot, sin rot, rot) of every line and box: ``current_direction``'s memo
        "rot_dir": wp.array3d(dtype=F), "placed": wp.array2d(dtype=wp.int32),
        # Outputs
        "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
        "truncated": wp.array(dtype=wp.bool),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
        # Scripted agents (VMAS's agents with an ``action_script``, e.g. flocking's target): per
        # body its row of ``script_u`` (-1: not scripted), and ``script_u`` [E, rows, 2] the force
        # their script set this step (float32, VMAS's action.u; the scenario's ``pre_step``)
        "script_row": wp.array(dtype=wp.int32), "script_u": wp.array3d(dtype=wp.float32),
        # Joints (VMAS's ``JointConstraint``s, in the order VMAS's step applies them: entity-pair
        # order): the two bodies, their anchors' offsets (float32, as VMAS's delta tensors:
        # ``[dx_a, dy_a, dx_b, dy_b]``), whether the pair may turn freely (else the fixed
        # rotation ``joint_rot[e, k]`` of b relative to a is held by a torque)
        "joint_force": F, "torque_constraint_force": F,
        "joint_a": wp.array(dtype=wp.int32), "joint_b": wp.array(dtype=wp.int32),
        "joint_delta": wp.array2d(dtype=F), "joint_rotate": wp.array(dtype=wp.int32),
        "joint_rot": wp.array2d(dtype=F),
        # joints with a distance (VMAS's joint landmark): the landmark body, its constraints with
        # entity a and entity b, and which of the two fixed rotations VMAS infers at every reset
        # (bit 0: a's, bit 1: b's)
        "jl_body": wp.array(dtype=wp.int32), "jl_con_a": wp.array(dtype=wp.int32),
        "jl_con_b": wp.array(dtype=wp.int32), "jl_infer": wp.array(dtype=wp.int32),
    }


# ---------------------------------------------------------------------------------------------
# Helpers for scenario functions
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def body_of(w: Any, i: int):
    """The body index of agent i (landmarks come first)."""
    return w.n_landmarks + i


@wp.func(inline=True)
def position(w: Any, e: int, b: int):
    """Body b's position as a vector of the world's float type."""
    return wp.vector(w.pos[e, b, 0], w.pos[e, b, 1])


@wp.func(inline=True)
def direction(w: Any, e: int, b: int):
    """Line or box b's ``(cos rot, sin rot)`` as ``substep`` worked it out (contacts only)."""
    return wp.vector(w.rot_dir[e, b, 0], w.rot_dir[e, b, 1])


@wp.func(inline=True)
def current_direction(w: Any, e: int, b: int):
    """Line or box b's ``(cos rot, sin rot)`` at its rotation now, memoised in ``w.rot_dir``
    (cos, sin and the rotation they were worked out for; NaN at first): worked out again only
    where the rotation changed, and at ``rot = ±0`` (where ``cos_sin`` keeps the zero's sign), so
    the substeps, a scenario's observation and the next step's contacts share one ``cos_sin``
    per rotation.  The cache holds a function of the rotation's value only: whatever wrote the
    rotation (integration, reset, ``set_state``), the result is ``cos_sin(w.rot[e, b])``."""
    rot = w.rot[e, b]
    if rot == type(rot)(0.0) or not (rot == w.rot_dir[e, b, 2]):
        rv = G.cos_sin(rot)
        w.rot_dir[e, b, 0] = rv[0]
        w.rot_dir[e, b, 1] = rv[1]
        w.rot_dir[e, b, 2] = rot
    return direction(w, e, b)


@wp.func(inline=True)
def velocity(w: Any, e: int, b: int):
    return wp.vector(w.vel[e, b, 0], w.vel[e, b, 1])


@wp.func(inline=True)
def set_position(w: Any, e: int, b: int, p: Any):
    w.pos[e, b, 0] = p[0]
    w.pos[e, b, 1] = p[1]


@wp.func
def distance(a: Any, b: Any):
    """|a - b| as torch's ``vector_norm`` of a 2-vector rounds it (``geometry.vector_norm``)."""
    return G.vector_norm(a - b)


@wp.func
def uniform(u: float, lo: Any, hi: Any):
    """Map u ~ U[0, 1) (``wp.randf``) to U[lo, hi) in the world's float type (VMAS: torch's
    ``uniform_(lo, hi)``)."""
    return lo + (hi - lo) * type(lo)(u)


@wp.func(inline=True)
def episode_stream(w: Any, e: int):
    """World e's random stream of this episode (what its reset draws from)."""
    return wp.rand_init(w.world_seed[e], w.episode[e])


@wp.func(inline=True)
def clear_placed(w: Any, e: int):
    """No body of world e is placed yet (the start of a reset's spawning)."""
    for b in range(w.placed.shape[1]):
        w.placed[e, b] = 0


@wp.func(inline=True)
def place_at(w: Any, e: int, b: int, p: Any):
    """Put body b at p and count it as placed (``place_randomly`` keeps away from it)."""
    set_position(w, e, b, p)
    w.placed[e, b] = 1


@wp.func(inline=True)
def random_free_position(w: Any, e: int, rng: wp.uint32, min_dist: Any, x_lo: Any, x_hi: Any, y_lo: Any,
                         y_hi: Any):
    """VMAS's ``ScenarioUtils.find_random_pos_for_entity`` in world e: a uniform point of the box
    (x then y), redrawn until it is at least ``min_dist`` from every placed body.  VMAS redraws
    every world of the batch and keeps each world's first acceptable draw, so per world this is
    the same rejection sampler (other random numbers: the distribution is what matches).
    Returns ``(point, stream advanced)``."""
    while True:
        x = uniform(wp.randf(rng), x_lo, x_hi)
        y = uniform(wp.randf(rng), y_lo, y_hi)
        p = wp.vector(x, y)
        ok = bool(True)
        for j in range(w.placed.shape[1]):
            if w.placed[e, j] != 0:
                if distance(position(w, e, j), p) < min_dist:
                    ok = False
        if ok:
            return p, rng
    return wp.vector(x_lo, y_lo), rng  # (unreachable)


@wp.func(inline=True)
def place_randomly(w: Any, e: int, rng: wp.uint32, b: int, min_dist: Any, x_lo: Any, x_hi: Any, y_lo: Any,
                   y_hi: Any):
    """Body b at ``random_free_position`` (VMAS's ``spawn_entities_randomly`` for one entity),
    counted as placed; returns the stream advanced."""
    p, rng = random_free_position(w, e, rng, min_dist, x_lo, x_hi, y_lo, y_hi)
    place_at(w, e, b, p)
    return rng


#: salt of the per-step streams (``step_stream``), apart from the episode streams
STEP_SALT = wp.constant(0x5A17C0DE)


@wp.func(inline=True)
def step_stream(w: Any, e: int, k: int):
    """World e's random stream ``k`` of this step (per-step noise, e.g. agent ``k``'s observation
    noise): keyed by the world's seed, episode and clock, apart from ``episode_stream``, so
    observing the same step twice (a SAME_STEP final observation, a re-observe after
    ``set_state``) repeats the draws."""
    key = wp.rand_init(w.world_seed[e], w.episode[e])
    step = wp.rand_init(int(key) ^ STEP_SALT, w.t[e])
    return wp.rand_init(int(step), k)


@wp.func(inline=True)
def overlapping_box_sphere(w: Any, e: int, box: int, sphere: int):
    """VMAS's ``World.is_overlapping`` of a box and a sphere: the sphere's centre is nearer the
    box's centre than the box's closest point is (inside), or the closest point is nearer than
    the radius plus ``LINE_MIN_DIST``."""
    pb = position(w, e, box)
    ps = position(w, e, sphere)
    closest = G.closest_point_box(pb, w.rot[e, box], w.width[box], w.length[box], ps)
    to_closest = distance(ps, closest)
    return distance(ps, pb) < distance(pb, closest) or to_closest < w.overlap_dist_min[sphere]


@wp.func(inline=True)
def velocity_controller(w: Any, e: int, i: int, b: int, k: int, target: Any):
    """VMAS's ``VelocityController`` (PID, standard form) on axis k of agent i (body b): the force
    toward velocity ``target``, ``ctrl_gain · (err + integral + rate) · mass``, into ``w.u`` as
    float32, its integrator (clamped to ``±windup_cutoff``) and last error kept in
    ``w.accum_errs`` / ``w.prev_err``.  For the scenarios with a controller (their fields
    ``ctrl_gain``, ``inv_integral_ts``, ``derivative_ts``, ``windup_cutoff``, ``accum_errs``,
    ``prev_err``)."""
    err = target - w.vel[e, b, k]
    accum = wp.clamp(w.accum_errs[e, i, k] + w.dt * err, -w.windup_cutoff, w.windup_cutoff)
    w.accum_errs[e, i, k] = accum
    integral = w.inv_integral_ts * accum
    rate = (w.derivative_ts * (err - w.prev_err[e, i, k])) / w.dt
    w.prev_err[e, i, k] = err
    force = (w.ctrl_gain * ((err + integral) + rate)) * w.mass[b]
    w.u[e, i, k] = wp.float32(force)


@wp.func(inline=True)
def get_distance(w: Any, e: int, a: int, b: int):
    """VMAS's ``World.get_distance(a, b)`` in world e: the gap between the two bodies' surfaces
    (sphere-sphere: centre distance minus both radii; a sphere and a line or box: the distance
    from the sphere's centre to the closest point, minus ``LINE_MIN_DIST`` and the radius, -1
    where a box and a sphere overlap; lines and boxes: the closest points' distance minus
    ``LINE_MIN_DIST``), in VMAS's operation order (its Python-float sum ``radius +
    LINE_MIN_DIST`` in the box-sphere overlap test is ``overlap_dist_min``, rounded once)."""
    sa = w.shape[a]
    sb = w.shape[b]
    pa = position(w, e, a)
    pb = position(w, e, b)
    lmd = w.line_min_dist
    if sa == SPHERE and sb == SPHERE:
        return (distance(pa, pb) - w.radius[a]) - w.radius[b]
    if sa == SPHERE or sb == SPHERE:
        other = a
        sphere = b
        if sa == SPHERE:
            other = b
            sphere = a
        po = position(w, e, other)
        ps = position(w, e, sphere)
        if w.shape[other] == BOX:
            closest = G.closest_point_box(po, w.rot[e, other], w.width[other], w.length[other], ps)
            d = (distance(ps, closest) - lmd) - w.radius[sphere]
            if overlapping_box_sphere(w, e, other, sphere):
                d = type(d)(-1.0)
            return d
        closest = G.closest_point_line_dir(po, current_direction(w, e, other), w.length[other], ps, True)
        return (distance(ps, closest) - lmd) - w.radius[sphere]
    if sa == LINE and sb == LINE:
        point_a, point_b = G.closest_points_line_line(pa, w.rot[e, a], w.length[a], pb, w.rot[e, b], w.length[b])
        return distance(point_a, point_b) - lmd
    if sa == BOX and sb == BOX:
        point_a, point_b = G.closest_box_box(pa, w.rot[e, a], w.width[a], w.length[a], pb, w.rot[e, b],
                                             w.width[b], w.length[b])
        return distance(point_a, point_b) - lmd
    box = a
    line = b
    if sa == LINE:
        box = b
        line = a
    point_box, point_line = G.closest_line_box(position(w, e, box), w.rot[e, box], w.width[box], w.length[box],
                                               position(w, e, line), w.rot[e, line], w.length[line])
    return distance(point_box, point_line) - lmd


@wp.func(inline=True)
def is_overlapping(w: Any, e: int, a: int, b: int):
    """VMAS's ``World.is_overlapping(a, b)`` in world e: ``overlapping_box_sphere`` for a box
    and a sphere, ``get_distance < 0`` for every other pair."""
    if not within_contact_reach(w, a, b, position(w, e, a), position(w, e, b)):
        return False
    sa = w.shape[a]
    sb = w.shape[b]
    if sa == BOX and sb == SPHERE:
        return overlapping_box_sphere(w, e, a, b)
    if sa == SPHERE and sb == BOX:
        return overlapping_box_sphere(w, e, b, a)
    return get_distance(w, e, a, b) < type(w.dt)(0.0)


@wp.func(inline=True)
def in_lidar_reach(w: Any, e: int, b: int, origin: Any, max_range: Any):
    """Whether body b could be hit within ``max_range`` from ``origin``: its centre no farther
    than ``max_range + its circumscribed radius`` (plus a margin of rounding).  A body beyond
    cannot change a reading (VMAS's minimum with ``max_range`` gives ``max_range`` anyway), so
    skipping it gives the same result."""
    c = position(w, e, b) - origin
    reach = max_range + w.reach[b] + type(max_range)(1e-3) * (type(max_range)(1.0) + max_range)
    return c[0] * c[0] + c[1] * c[1] <= reach * reach


@wp.func(inline=True)
def ray_distance(w: Any, e: int, b: int, origin: Any, angle: Any, max_range: Any):
    """VMAS's ray cast from ``origin`` at ``angle`` against body b (its shape's caster)."""
    kind = w.shape[b]
    if kind == SPHERE:
        return G.ray_to_sphere(origin, angle, max_range, position(w, e, b), w.radius[b])
    if kind == BOX:
        return G.ray_to_box(origin, angle, max_range, position(w, e, b), w.rot[e, b], w.length[b], w.width[b])
    return G.ray_to_line(origin, angle, max_range, position(w, e, b), w.rot[e, b], w.length[b])


@wp.func(inline=True)
def lidar_reading(w: Any, e: int, l: int, r: int):
    """Ray r of lidar l in world e: the distance to the nearest body it sees along the ray, or
    its range (VMAS's ``World.cast_rays``: angle = the ray's float32 angle + the owner's rot;
    the minimum over ``max_range`` and every seen body's cast)."""
    owner = body_of(w, w.lidar_agent[l])
    origin = position(w, e, owner)
    angle = type(w.dt)(w.lidar_angles[w.lidar_start[l] + r]) + w.rot[e, owner]
    max_range = w.lidar_range[l]
    best = max_range
    for b in range(w.pos.shape[1]):
        if b != owner and w.lidar_sees[l, b] != 0:
            if in_lidar_reach(w, e, b, origin, max_range):
                best = G.torch_min(best, ray_distance(w, e, b, origin, angle, max_range))
    return best


@wp.func(inline=True)
def measure_lidar(w: Any, e: int, l: int):
    """Every ray of lidar l in world e into ``w.lidar_last`` (VMAS's ``Lidar.measure()`` /
    ``_last_measurement``, what the picture draws): the distance to the nearest body it sees
    along the ray, ``max_range`` where none.  The same readings as ``lidar_reading``, bodies
    outside the lidar's reach tested once for all rays."""
    owner = body_of(w, w.lidar_agent[l])
    origin = position(w, e, owner)
    max_range = w.lidar_range[l]
    start = w.lidar_start[l]
    n = w.lidar_rays[l]
    for r in range(n):
        w.lidar_last[e, start + r] = max_range
    for b in range(w.pos.shape[1]):
        if b != owner and w.lidar_sees[l, b] != 0:
            if in_lidar_reach(w, e, b, origin, max_range):
                for r in range(n):
                    angle = type(w.dt)(w.lidar_angles[start + r]) + w.rot[e, owner]
                    d = ray_distance(w, e, b, origin, angle, max_range)
                    w.lidar_last[e, start + r] = G.torch_min(w.lidar_last[e, start + r], d)


@wp.func(inline=True)
def write_lidar(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, w: Any, l: int):
    """``max_range - reading`` of every ray of lidar l (``measure_lidar``) into agent i's row
    from offset o (the navigation observation); returns the next offset."""
    measure_lidar(w, e, l)
    start = w.lidar_start[l]
    n = w.lidar_rays[l]
    for r in range(n):
        out[e, i, o + r] = wp.float32(w.lidar_range[l] - w.lidar_last[e, start + r])
    return o + n


@wp.func(inline=True)
def write_lidar_distances(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, w: Any, l: int):
    """The readings themselves of every ray of lidar l (``measure_lidar``) into agent i's row
    from offset o (the sampling, flocking and discovery observations); returns the next offset."""
    measure_lidar(w, e, l)
    start = w.lidar_start[l]
    n = w.lidar_rays[l]
    for r in range(n):
        out[e, i, o + r] = wp.float32(w.lidar_last[e, start + r])
    return o + n


@wp.func
def write_vec(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, v: Any):
    """A 2-vector into agent i's row at offset o; returns o + 2."""
    out[e, i, o] = wp.float32(v[0])
    out[e, i, o + 1] = wp.float32(v[1])
    return o + 2


@wp.func
def write_value(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, value: Any):
    out[e, i, o] = wp.float32(value)
    return o + 1


@wp.func
def write_flag(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, flag: bool):
    """A bool as 1.0 / 0.0 into agent i's row at offset o; returns o + 1."""
    value = wp.float32(0.0)
    if flag:
        value = wp.float32(1.0)
    return write_value(out, e, i, o, value)


@wp.func(inline=True)
def record_reached(w: Any, e: int, done: bool):
    """Info ``reached_goals[e]``: 1.0 where ``done`` (VMAS's done) holds, else 0.0."""
    w.reached_goals[e] = type(w.dt)(0.0)
    if done:
        w.reached_goals[e] = type(w.dt)(1.0)


@wp.func(inline=True)
def no_action_processing(w: Any, e: int, i: int):
    """A scenario without ``process_action``."""
    pass


@wp.func(inline=True)
def no_pre_step(w: Any, e: int):
    """A scenario without ``pre_step``."""
    pass


@wp.func(inline=True)
def finish_step(w: Any, e: int, terminal: bool):
    """VMAS's done: ``terminated`` is the scenario's ``done()``, ``truncated`` is
    ``steps >= max_steps`` (both can hold); schedule the autoreset."""
    steps = w.t[e] + 1
    w.t[e] = steps
    trunc = steps >= w.max_cycles
    end_step(e, terminal, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)


# ---------------------------------------------------------------------------------------------
# Physics (shared by every VMAS scenario)
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def set_action(w: Any, e: int, i: int):
    """Agent i's physical action ``u`` (float32), VMAS's ``Environment._set_action``, on its
    ``agent_actions[i]`` components.  Continuous: the action (clamped into +-u_range with
    ``clamp_actions``); discrete: the flat index's digits (most significant first, 3 per
    component), digit 0 -> 0, 1 -> -u_range, 2 -> +u_range.  Then times ``u_multiplier``."""
    K = w.agent_actions[i]
    if w.continuous != 0:
        for k in range(K):
            a = w.action_continuous[e, i, k]
            if w.clamp_actions != 0:
                a = wp.clamp(a, -w.u_range[i, k], w.u_range[i, k])
            w.u[e, i, k] = a * w.u_multiplier[i, k]
    else:
        flat = w.action_discrete[e, i]
        n = int(1)
        for k in range(K - 1):
            n = n * 3
        for k in range(K):
            digit = flat // n
            flat = flat % n
            n = n // 3
            u_max = w.u_range[i, k]
            u = wp.float32(0.0)
            if digit == 1:
                u = -u_max
            elif digit == 2:
                u = u_max
            w.u[e, i, k] = u * w.u_multiplier[i, k]


@wp.func
def friction(v: Any, speed: Any, coeff: Any, mass: Any, sub_dt: Any):
    """One component of VMAS's friction force ``-(v / speed) * min(coeff * m, |v| / sub_dt * m)``
    (0 where the body is at rest)."""
    zero = type(v)(0.0)
    if speed == zero:
        return zero
    return -(v / speed) * wp.min(coeff * mass, (wp.abs(v) / sub_dt) * mass)


@wp.func(inline=True)
def add_force(w: Any, e: int, b: int, f: Any):
    if w.movable[b] != 0:
        w.force[e, b, 0] = w.force[e, b, 0] + f[0]
        w.force[e, b, 1] = w.force[e, b, 1] + f[1]


@wp.func(inline=True)
def add_torque(w: Any, e: int, b: int, t: Any):
    if w.rotatable[b] != 0:
        w.torque[e, b] = w.torque[e, b] + t


@wp.func(inline=True)
def within_contact_reach(w: Any, a: int, b: int, pa: Any, pb: Any):
    """Whether bodies a and b (centres pa, pb) could touch: their centres no farther apart than
    the sum of their circumscribed radii plus ``LINE_MIN_DIST`` (plus a margin of rounding).
    Beyond, two convex shapes are separated by more than ``LINE_MIN_DIST``: every contact force
    of VMAS's is exactly zero there (for boxes the inner-point depth adds to both sides of
    VMAS's ``dist > dist_min`` test, as the box's centre lies behind its closest point), no
    overlap test holds and every ``get_distance`` is positive, so skipping the pair changes
    nothing."""
    return within_reach(pa, pb, w.reach[a] + w.reach[b] + w.line_min_dist)


@wp.func(inline=True)
def within_reach(pa: Any, pb: Any, reach: Any):
    """Whether centres pa and pb are at most ``reach`` apart (plus a margin of rounding)."""
    c = pa - pb
    r = reach + type(reach)(1e-3) * (type(reach)(1.0) + reach)
    return c[0] * c[0] + c[1] * c[1] <= r * r


@wp.func(inline=True)
def distance_at_most(w: Any, e: int, a: int, b: int, gap: Any):
    """``get_distance(w, e, a, b) <= gap`` for ``gap >= 0``, without working the distance out
    where the centres are farther apart than both circumscribed radii plus ``LINE_MIN_DIST`` and
    ``gap``: every surface point lies within its body's circumscribed radius of its centre, so
    there the distance exceeds ``gap``."""
    if not within_reach(position(w, e, a), position(w, e, b), w.reach[a] + w.reach[b] + w.line_min_dist + gap):
        return False
    return get_distance(w, e, a, b) <= gap


@wp.func(inline=True)
def push_pair(w: Any, e: int, a: int, b: int, f_a: Any, arm_a: Any, f_b: Any, arm_b: Any, torque_b: int):
    """Forces ``f_a``, ``f_b`` on bodies a and b, with their torques about arms ``arm_a``,
    ``arm_b`` (b's only where ``torque_b``: a sphere takes none)."""
    add_force(w, e, a, f_a)
    add_torque(w, e, a, G.compute_torque(f_a, arm_a))
    add_force(w, e, b, f_b)
    if torque_b != 0:
        add_torque(w, e, b, G.compute_torque(f_b, arm_b))


@wp.func(inline=True)
def sphere_sphere_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    dist_min = w.radius[a] + w.radius[b]
    if distance(pa, pb) > dist_min:  # the force is exactly zero there
        return
    f = G.constraint_force(pa, pb, dist_min, w.collision_force, w.contact_margin, False)
    add_force(w, e, a, f)
    add_force(w, e, b, -f)


@wp.func(inline=True)
def line_sphere_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    lmd = w.line_min_dist
    rv = direction(w, e, a)
    if G.clear_of_line(pa, rv, pb, w.radius[b] + lmd):  # the repulsion below is exactly zero
        return
    closest = G.closest_point_line_dir(pa, rv, w.length[a], pb, True)
    if G.repulsion_vanishes(pb, closest, w.radius[b] + lmd):
        return
    f_sphere = G.constraint_force(pb, closest, w.radius[b] + lmd, w.collision_force, w.contact_margin, False)
    push_pair(w, e, a, b, -f_sphere, closest - pa, f_sphere, closest - pa, 0)


@wp.func(inline=True)
def line_line_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    lmd = w.line_min_dist
    point_a, point_b = G.closest_points_line_line_dir(pa, direction(w, e, a), w.length[a],
                                                      pb, direction(w, e, b), w.length[b])
    if G.repulsion_vanishes(point_a, point_b, lmd):
        return
    f_a = G.constraint_force(point_a, point_b, lmd, w.collision_force, w.contact_margin, False)
    push_pair(w, e, a, b, f_a, point_a - pa, -f_a, point_b - pb, 1)


@wp.func(inline=True)
def box_sphere_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    lmd = w.line_min_dist
    closest = G.closest_point_box(pa, w.rot[e, a], w.width[a], w.length[a], pb)
    inner = closest
    d = type(w.dt)(0.0)
    if w.hollow[a] == 0:
        inner, d = G.inner_point_box(pb, closest, pa)
    if G.repulsion_vanishes(pb, inner, w.radius[b] + lmd + d):
        return
    f_sphere = G.constraint_force(pb, inner, w.radius[b] + lmd + d, w.collision_force, w.contact_margin, False)
    push_pair(w, e, a, b, -f_sphere, closest - pa, f_sphere, closest - pa, 0)


@wp.func(inline=True)
def box_line_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    lmd = w.line_min_dist
    point_box, point_line = G.closest_line_box(pa, w.rot[e, a], w.width[a], w.length[a], pb, w.rot[e, b],
                                               w.length[b])
    inner = point_box
    d = type(w.dt)(0.0)
    if w.hollow[a] == 0:
        inner, d = G.inner_point_box(point_line, point_box, pa)
    if G.repulsion_vanishes(inner, point_line, lmd + d):
        return
    f_box = G.constraint_force(inner, point_line, lmd + d, w.collision_force, w.contact_margin, False)
    push_pair(w, e, a, b, f_box, point_box - pa, -f_box, point_line - pb, 1)


@wp.func(inline=True)
def box_box_contact(w: Any, e: int, a: int, b: int, pa: Any, pb: Any):
    zero = type(w.dt)(0.0)
    point_a, point_b = G.closest_box_box(pa, w.rot[e, a], w.width[a], w.length[a], pb, w.rot[e, b],
                                         w.width[b], w.length[b])
    inner_a = point_a
    d_a = zero
    if w.hollow[a] == 0:
        inner_a, d_a = G.inner_point_box(point_b, point_a, pa)
    inner_b = point_b
    d_b = zero
    if w.hollow[b] == 0:
        inner_b, d_b = G.inner_point_box(point_a, point_b, pb)
    if G.repulsion_vanishes(inner_a, inner_b, d_a + d_b + w.line_min_dist):
        return
    f_a = G.constraint_force(inner_a, inner_b, d_a + d_b + w.line_min_dist, w.collision_force, w.contact_margin,
                             False)
    push_pair(w, e, a, b, f_a, point_a - pa, -f_a, point_b - pb, 1)


@wp.func(inline=True)
def joint_point(w: Any, e: int, b: int, dx: Any, dy: Any):
    """VMAS's ``JointConstraint.pos_point``: body b's position plus its anchor's offset
    ``(dx, dy)`` turned by its rotation (``TorchUtils.rotate_vector``)."""
    return position(w, e, b) + G.rotate_vector(wp.vector(dx, dy), w.rot[e, b])


@wp.func(inline=True)
def joint_constraint(w: Any, e: int, k: int):
    """Joint constraint k in world e (VMAS's ``World._vectorized_joint_constraints`` for one
    joint): the anchors pulled together by ``_get_constraint_forces`` with ``dist_min = 0`` and
    ``joint_force`` (the attractive force plus the repulsive one, which is zero there), each
    force's torque about its body's centre, and where the pair may not turn freely the torque
    ``_get_constraint_torques(rot_a, rot_b + joint_rot)`` on top; added to a, then b."""
    a = w.joint_a[k]
    b = w.joint_b[k]
    zero = type(w.dt)(0.0)
    pa = position(w, e, a)
    pb = position(w, e, b)
    ja = joint_point(w, e, a, w.joint_delta[k, 0], w.joint_delta[k, 1])
    jb = joint_point(w, e, b, w.joint_delta[k, 2], w.joint_delta[k, 3])
    f_attractive = G.constraint_force(ja, jb, zero, w.joint_force, w.contact_margin, True)
    f_repulsive = G.constraint_force(ja, jb, zero, w.joint_force, w.contact_margin, False)
    f_a = f_attractive + f_repulsive
    f_b = (-f_attractive) + (-f_repulsive)
    t_a = G.compute_torque(f_a, ja - pa)
    t_b = G.compute_torque(f_b, jb - pb)
    if w.joint_rotate[k] == 0:
        t_fixed = G.constraint_torque(w.rot[e, a], w.rot[e, b] + w.joint_rot[e, k], w.torque_constraint_force)
        t_a = t_a + t_fixed
        t_b = t_b + (-t_fixed)
    add_force(w, e, a, f_a)
    add_torque(w, e, a, t_a)
    add_force(w, e, b, f_b)
    add_torque(w, e, b, t_b)


@wp.func(inline=True)
def place_joint_landmarks(w: Any, e: int):
    """VMAS's ``Joint.notify`` for every joint with a distance in world e: its landmark at the
    middle of the two anchor points, turned to the angle from a's to b's
    (``atan2``), and, for a side that may not turn and has no fixed rotation given, that
    rotation inferred as the angle minus the body's rotation.  VMAS runs it whenever either
    body is placed (``set_pos`` & co.); a scenario calls it at the end of its reset, once both
    bodies are where VMAS's last call finds them."""
    for j in range(w.jl_body.shape[0]):
        ca = w.jl_con_a[j]
        cb = w.jl_con_b[j]
        ea = w.joint_b[ca]
        eb = w.joint_b[cb]
        pa = joint_point(w, e, ea, w.joint_delta[ca, 2], w.joint_delta[ca, 3])
        pb = joint_point(w, e, eb, w.joint_delta[cb, 2], w.joint_delta[cb, 3])
        set_position(w, e, w.jl_body[j], (pa + pb) / type(w.dt)(2.0))
        angle = wp.atan2(pb[1] - pa[1], pb[0] - pa[0])
        w.rot[e, w.jl_body[j]] = angle
        if (w.jl_infer[j] & 1) != 0:
            w.joint_rot[e, ca] = angle - w.rot[e, ea]
        if (w.jl_infer[j] & 2) != 0:
            w.joint_rot[e, cb] = angle - w.rot[e, eb]


@wp.func(inline=True)
def pair_contact(w: Any, e: int, k: int):
    """The contact force (and torques) of pair k in world e, added to both bodies (VMAS's
    ``_<kind>_vectorized_collision`` for one pair)."""
    a = w.pair_a[k]
    b = w.pair_b[k]
    pa = position(w, e, a)
    pb = position(w, e, b)
    kind = w.pair_kind[k]
    c = pa - pb
    if not (c[0] * c[0] + c[1] * c[1] <= w.pair_reach_sq[k]):  # within_contact_reach: the force
        return                                                 # is exactly zero beyond
    if kind == SPHERE_SPHERE:
        sphere_sphere_contact(w, e, a, b, pa, pb)
    elif kind == LINE_SPHERE:
        line_sphere_contact(w, e, a, b, pa, pb)
    elif kind == LINE_LINE:
        line_line_contact(w, e, a, b, pa, pb)
    elif kind == BOX_SPHERE:
        box_sphere_contact(w, e, a, b, pa, pb)
    elif kind == BOX_LINE:
        box_line_contact(w, e, a, b, pa, pb)
    else:
        box_box_contact(w, e, a, b, pa, pb)


@wp.func(inline=True)
def action_force(w: Any, e: int, i: int, dynamic: int):
    """Agent i's ``state.force`` this step: ``u[:2]`` where every agent is Holonomic (``dynamic``
    0, a constant of the kernel), else what its dynamics made of ``u`` (``w.agent_force``)."""
    if dynamic != 0:
        return wp.vector(w.agent_force[e, i, 0], w.agent_force[e, i, 1])
    return wp.vector(type(w.dt)(w.u[e, i, 0]), type(w.dt)(w.u[e, i, 1]))


@wp.func(inline=True)
def action_torque(w: Any, e: int, i: int):
    """Agent i's ``state.torque`` this step (``w.agent_torque``) through VMAS's
    ``_apply_action_torque`` clamps: to norm ``max_t``, then into ``±t_range``."""
    zero = type(w.dt)(0.0)
    t = w.agent_torque[e, i]
    if w.max_t[i] >= zero and wp.abs(t) > w.max_t[i]:
        t = (t / wp.abs(t)) * w.max_t[i]
    if w.t_range[i] >= zero:
        t = wp.clamp(t, -w.t_range[i], w.t_range[i])
    return t


@wp.func(inline=True)
def body_forces(w: Any, e: int, dynamic: int):
    """Every moving body's own force and torque of a substep, into ``w.force`` / ``w.torque``:
    the action force (``max_f`` norm clamp, ``f_range`` clamp) and, where the agents have
    dynamics (``dynamic``), the action torque, a scripted agent's force, friction and gravity,
    in VMAS's order.  Only movable or rotatable bodies: nothing reads a static body's force or
    torque (add_force, add_torque) and nothing integrates it."""
    zero = type(w.dt)(0.0)
    for j in range(w.dynamic_bodies.shape[0]):
        b = w.dynamic_bodies[j]
        fx = zero
        fy = zero
        i = b - w.n_landmarks
        if i >= 0 and i < w.u.shape[1] and w.movable[b] != 0:  # (scripted bodies may follow the agents)
            f = action_force(w, e, i, dynamic)
            if w.max_f[i] >= zero:
                f = G.clamp_with_norm(f, w.max_f[i])
            if w.f_range[i] >= zero:
                f = wp.vector(wp.clamp(f[0], -w.f_range[i], w.f_range[i]),
                              wp.clamp(f[1], -w.f_range[i], w.f_range[i]))
            fx = fx + f[0]
            fy = fy + f[1]
        if w.script_row[b] >= 0 and w.movable[b] != 0:  # a scripted agent's force (no max_f/f_range)
            fx = fx + type(zero)(w.script_u[e, w.script_row[b], 0])
            fy = fy + type(zero)(w.script_u[e, w.script_row[b], 1])
        tq = zero
        if dynamic != 0 and i >= 0 and i < w.u.shape[1] and w.rotatable[b] != 0:
            tq = tq + action_torque(w, e, i)
        if w.lin_friction[b] >= zero:
            vx = w.vel[e, b, 0]
            vy = w.vel[e, b, 1]
            speed = wp.sqrt(vx * vx + vy * vy)
            fx = fx + friction(vx, speed, w.lin_friction[b], w.mass[b], w.sub_dt)
            fy = fy + friction(vy, speed, w.lin_friction[b], w.mass[b], w.sub_dt)
        if w.ang_friction[b] >= zero:
            av = w.ang_vel[e, b]
            tq = tq + friction(av, wp.abs(av), w.ang_friction[b], w.inertia[b], w.sub_dt)
        if w.has_gravity != 0 and w.movable[b] != 0:
            fx = fx + w.mass[b] * w.gravity_x
            fy = fy + w.mass[b] * w.gravity_y
        w.force[e, b, 0] = fx
        w.force[e, b, 1] = fy
        w.torque[e, b] = tq


@wp.func(inline=True)
def substep(w: Any, e: int, s: int, dynamic: int):
    """One of VMAS's substeps in world e (see the module docstring; ``dynamic``: see
    ``physics_kernel``)."""
    zero = type(w.dt)(0.0)
    for j in range(w.shaped_bodies.shape[0]):
        # a line's or box's direction for the contacts: rotations change only between steps and
        # in a substep's integration (of rotatable bodies), and the cache keeps the rotation it
        # was worked out for (NaN at first), so a static wall's is worked out once
        b = w.shaped_bodies[j]
        if s == 0 or w.rotatable[b] != 0:
            current_direction(w, e, b)
    body_forces(w, e, dynamic)
    # VMAS's _apply_vectorized_enviornment_force: the joints first, then the contacts
    for k in range(w.joint_a.shape[0]):
        joint_constraint(w, e, k)
    for k in range(w.pair_a.shape[0]):
        pair_contact(w, e, k)
    for j in range(w.dynamic_bodies.shape[0]):
        b = w.dynamic_bodies[j]
        if w.movable[b] != 0:
            vx = w.vel[e, b, 0]
            vy = w.vel[e, b, 1]
            if s == 0:
                vx = vx * w.keep[b]
                vy = vy * w.keep[b]
            vx = vx + (w.force[e, b, 0] / w.mass[b]) * w.sub_dt
            vy = vy + (w.force[e, b, 1] / w.mass[b]) * w.sub_dt
            v = wp.vector(vx, vy)
            if w.max_speed[b] >= zero:
                v = G.clamp_with_norm(v, w.max_speed[b])
            if w.v_range[b] >= zero:
                v = wp.vector(wp.clamp(v[0], -w.v_range[b], w.v_range[b]),
                              wp.clamp(v[1], -w.v_range[b], w.v_range[b]))
            w.vel[e, b, 0] = v[0]
            w.vel[e, b, 1] = v[1]
            x = w.pos[e, b, 0] + v[0] * w.sub_dt
            y = w.pos[e, b, 1] + v[1] * w.sub_dt
            if w.x_semidim >= zero:
                x = wp.clamp(x, -w.x_semidim, w.x_semidim)
            if w.y_semidim >= zero:
                y = wp.clamp(y, -w.y_semidim, w.y_semidim)
            w.pos[e, b, 0] = x
            w.pos[e, b, 1] = y
        if w.rotatable[b] != 0:
            av = w.ang_vel[e, b]
            if s == 0:
                av = av * w.keep[b]
            av = av + (w.torque[e, b] / w.inertia[b]) * w.sub_dt
            w.ang_vel[e, b] = av
            w.rot[e, b] = w.rot[e, b] + av * w.sub_dt


def physics_kernel(World, process_action, pre_step, dynamics):
    """Worlds ``[tid * chunk, (tid + 1) * chunk)`` (see ``world_kernels``): every agent's physical
    action (``set_action``, then the scenario's ``process_action(w, e, i)``, then its dynamics:
    ``dynamics(w, e, i)``, ``dynamics.agent_dynamics``'s function, or None where every agent is
    Holonomic), the scenario's ``pre_step(w, e)``, then VMAS's substeps.  Whether there are
    dynamics is a constant of the kernel (``dynamic``): the Holonomic physics compiles without
    them."""
    dynamic = int(dynamics is not None)
    agent_dynamics = no_action_processing if dynamics is None else dynamics

    def vmas_physics(w: World, chunk: int):
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.pending_reset.shape[0])):
            if w.pending_reset[e] == 0:
                for i in range(w.u.shape[1]):
                    set_action(w, e, i)
                    process_action(w, e, i)
                    agent_dynamics(w, e, i)
                pre_step(w, e)
                for s in range(w.substeps):
                    substep(w, e, s, dynamic)

    return vmas_physics


def reward_done_kernel(World, reward, clear_info):
    """Worlds ``[tid * chunk, (tid + 1) * chunk)``: the episode protocol
    (``war_envs.core.episode``) around the scenario's ``reward(w, e) -> terminal`` (which writes
    ``w.reward[e, :]``, the scenario's info, and returns VMAS's ``done()``)."""

    one_world = reward_done_world(reward, clear_info, finish_step)

    def reward_done(w: World, chunk: int):
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.pending_reset.shape[0])):
            one_world(w, e)

    return reward_done


@wp.func(inline=True)
def zero_state(w: Any, e: int):
    """VMAS's ``World.reset``: every body's position, velocity, rotation and angular velocity 0."""
    zero = type(w.dt)(0.0)
    for b in range(w.pos.shape[1]):
        w.pos[e, b, 0] = zero
        w.pos[e, b, 1] = zero
        w.vel[e, b, 0] = zero
        w.vel[e, b, 1] = zero
        w.rot[e, b] = zero
        w.ang_vel[e, b] = zero


def observe_kernel(World, reset, observe):
    """Worlds ``[tid * chunk, (tid + 1) * chunk)``: a world flagged in ``reset_now`` keeps its
    final observations (``write_final``) and draws a fresh start (``zero_state``, then the
    scenario's ``reset(w, e)``); then every agent is observed (the scenario's
    ``observe(w, e, i, out)``)."""

    def observe_world(w: World, write_final: int, chunk: int):
        first = wp.tid() * chunk
        num_agents = w.u.shape[1]
        for e in range(first, wp.min(first + chunk, w.reset_now.shape[0])):
            if w.reset_now[e] != 0:
                if write_final != 0:
                    for i in range(num_agents):
                        observe(w, e, i, w.final_obs)
                zero_state(w, e)
                reset(w, e)
                start_episode(e, w.episode, w.t)
            for i in range(num_agents):
                observe(w, e, i, w.obs)

    return observe_world


def world_kernels(World, key: str, reset, reward, observe, clear_info, process_action, pre_step, dynamics=None):
    """The physics, reward/done and observe kernels of one scenario and struct type, in one Warp
    module named ``key`` (built once per process; ``dynamics``: see ``physics_kernel``).

    Each thread runs ``chunk`` consecutive worlds (``war_envs.core.batched_env.world_chunk``:
    every world of the launch in one thread on the CPU, one world a thread on a GPU)."""
    return tuple(module_kernels(key, lambda: (
        physics_kernel(World, process_action, pre_step, dynamics), reward_done_kernel(World, reward, clear_info),
        observe_kernel(World, reset, observe))).values())
