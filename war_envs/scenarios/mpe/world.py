"""The MPE world every MPE scenario shares: one Warp struct, the physics, the step's kernels and
the helpers scenarios write their functions with.

A scenario (one file, see ``base.MPEBase``) supplies four Warp functions; this module builds
its kernels around them:

    mpe_physics      actions -> forces -> integration -> communication state   (shared)
    reward_done      the episode protocol around the scenario's ``reward``     (shared)
    observe          autoreset (the scenario's ``reset``) + the scenario's ``observe``

Physics is mpe2's ``World.step`` (``mpe2/_mpe_utils/core.py``) with the same operation order, so
float64 worlds agree with mpe2 to round-off:

    force_i = u_i + sum_{j != i, in entity order} contact(i, j)      (u_i: movable agents only)
    pos    += vel * dt
    vel     = vel * (1 - damping) + force / mass * dt
    vel     = vel / |vel| * max_speed    if |vel| > max_speed
    c_i     = 0 if silent else the agent's communication action

**JaxMARL mode** (``MPEBase.jaxmarl_physics``, chosen when the kernels are built: mpe2 scenarios
compile without it): JaxMARL 0.2.0's ``SimpleMPE._world_step``, the same integration with the
force sums in JaxMARL's order (every agent movable)

    force_i = (sum_{j < i} -contact(j, i)  +  sum_{j > i, in entity order} contact(i, j))  +  u_i

and ``u_i`` from the scenario's ``control_force`` (a scripted agent's own force).

Every kernel runs one thread per world ("owner thread"): per-world sums need no atomics, and on
the CPU a thread's fixed cost is paid once per world.  Arrays are ``[world, agent, component]``.

**How a scenario's functions get into kernels.**  Each kernel is built by a factory that closes
over the scenario's Warp functions and over a ``wp.struct`` holding every array and parameter
(the shared fields below plus the scenario's own, ``base.Field``), one struct type per scenario
and precision.  The kernels go into one Warp module per scenario and precision, named after
them, whose hash depends only on the functions' source and the struct's field types (never on
sizes or values), so the kernel cache is hit across processes: spawned workers and later runs
load the compiled module instead of recompiling it, and adding a scenario never rebuilds
another's kernels.  (``wp.static`` branches on a scenario id would put every scenario in one
module, recompiled whenever any changes; overloads would still need the id switch.)
"""


from typing import Any

import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode  # noqa: F401
from war_envs.core.fields import module_kernels
from war_envs.core.reward_done import reward_done_world
from war_envs.core.warp_math import distance  # noqa: F401  (scenarios' W.distance)
from war_envs.core.fields import no_info  # noqa: F401  (scenarios' clear_info)

#: mpe2's discrete movement actions: 0 no-op, 1 -x, 2 +x, 3 -y, 4 +y (a move-and-say agent's
#: Discrete(5 * dim_c) index is move + 5 * say, mpe2's ``action % 5`` / ``action // 5``)
NUM_MOVE_ACTIONS = wp.constant(5)


def shared_fields(F) -> dict:
    """The struct fields every MPE world has (``F``: the world's float type)."""
    return {
        # Params (one value per agent / landmark, shared by every world)
        "mode": int, "max_cycles": int, "continuous": int, "dim_c": int,
        # 1 when every agent moves / has mass 1 / says nothing (no channel or every agent silent):
        # the physics then skips the per-agent test / the divisions by the mass / the
        # communication update; 0 (a struct's default) when not known
        "all_movable": int, "unit_masses": int, "all_silent": int,
        "dt": F, "damping": F, "contact_force": F, "contact_margin": F,
        "agent_size": wp.array(dtype=F), "agent_mass": wp.array(dtype=F),
        "agent_movable": wp.array(dtype=wp.int32), "agent_silent": wp.array(dtype=wp.int32),
        "agent_collide": wp.array(dtype=wp.int32),
        "landmark_size": wp.array(dtype=F), "landmark_collide": wp.array(dtype=wp.int32),
        "base_accel": wp.array(dtype=F), "base_max_speed": wp.array(dtype=F),
        "curriculum_scaled": wp.array(dtype=wp.int32), "curriculum_factor": wp.array(dtype=F),
        "curriculum_stage": wp.array(dtype=wp.int32),
        # Episode state
        "world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
        "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
        "reset_now": wp.array(dtype=wp.int32),
        # World state
        "agent_pos": wp.array3d(dtype=F), "agent_vel": wp.array3d(dtype=F),
        "agent_comm": wp.array3d(dtype=F), "landmark_pos": wp.array3d(dtype=F),
        "agent_accel": wp.array2d(dtype=F), "agent_max_speed": wp.array2d(dtype=F),
        # Actions
        "action_discrete": wp.array2d(dtype=wp.int32), "action_continuous": wp.array3d(dtype=wp.float32),
        # Scratch
        "force": wp.array3d(dtype=F),
        # Outputs
        "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
        "truncated": wp.array(dtype=wp.bool),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
    }


# ---------------------------------------------------------------------------------------------
# Helpers for scenario functions
# ---------------------------------------------------------------------------------------------


@wp.func
def softplus(x: Any):
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|)   (numpy's logaddexp(0, x))."""
    zero = type(x)(0.0)
    return wp.max(x, zero) + wp.log(type(x)(1.0) + wp.exp(-wp.abs(x)))


@wp.func
def contact_force_x(dx: Any, dy: Any, dist_min: Any, contact_force: Any, contact_margin: Any):
    """x part of mpe2's soft contact: F = c * d / |d| * softplus(-(|d| - dist_min) / k) * k."""
    dist = wp.sqrt(dx * dx + dy * dy)
    penetration = softplus(-(dist - dist_min) / contact_margin) * contact_margin
    return contact_force * dx / dist * penetration


@wp.func
def in_contact_range(dx: Any, dy: Any, dist_min: Any, contact_margin: Any):
    """False only where the contact force is exactly zero in our arithmetic: beyond
    dist_min + 40k the softplus term e^-40 is below half an ulp of 1 in float64 (and float32),
    so skipping exp/log there is bitwise identical (most pairs of a sparse world)."""
    reach = dist_min + type(dist_min)(41.0) * contact_margin
    return dx * dx + dy * dy <= reach * reach


@wp.func
def entity_distance(pos_a: wp.array3d(dtype=Any), e: int, i: int, pos_b: wp.array3d(dtype=Any), j: int):
    """|pos_a[e, i] - pos_b[e, j]| (agents or landmarks)."""
    return distance(pos_a[e, i, 0], pos_a[e, i, 1], pos_b[e, j, 0], pos_b[e, j, 1])


@wp.func
def entity_distance_sq(pos_a: wp.array3d(dtype=Any), e: int, i: int, pos_b: wp.array3d(dtype=Any), j: int):
    """|pos_a[e, i] - pos_b[e, j]|² as ``entity_distance`` sums it before its square root (so
    ``sqrt`` of a minimum of these is bitwise the minimum of the distances: a correctly rounded
    square root is monotone)."""
    dx = pos_a[e, i, 0] - pos_b[e, j, 0]
    dy = pos_a[e, i, 1] - pos_b[e, j, 1]
    return dx * dx + dy * dy


@wp.func
def agents_collide(w: Any, e: int, i: int, j: int):
    """mpe2's is_collision of two agents: |p_i - p_j| < size_i + size_j."""
    d = entity_distance(w.agent_pos, e, i, w.agent_pos, j)
    return d < w.agent_size[i] + w.agent_size[j]


@wp.func
def count_agent_collisions(w: Any, e: int):
    """Write to ``w.collisions[e, i]`` how many other agents touch agent i (``agents_collide``,
    each pair tested once: the test is symmetric bitwise) and return the number of touching
    pairs."""
    num_agents = w.agent_pos.shape[1]
    for i in range(num_agents):
        w.collisions[e, i] = 0
    pairs = int(0)
    for i in range(num_agents):
        for j in range(i + 1, num_agents):
            if agents_collide(w, e, i, j):
                pairs += 1
                w.collisions[e, i] = w.collisions[e, i] + 1
                w.collisions[e, j] = w.collisions[e, j] + 1
    return pairs


@wp.func
def uniform(u: float, lo: Any, hi: Any):
    """Map u ~ U[0, 1) (wp.randf: a float32 grid, so float32 starts are exact) to U[lo, hi)."""
    return lo + (hi - lo) * type(lo)(u)


@wp.func
def nearest_rank_after(
    ref_x: Any,
    ref_y: Any,
    pos: wp.array3d(dtype=Any),
    e: int,
    count: int,
    skip: int,
    prev_dist: Any,
    prev_index: int,
):
    """Index of the nearest entity strictly after (prev_dist, prev_index) in (distance, index)
    order, skipping index ``skip``; -1 if none.  Calling it k times from (-1, -1) walks the k
    nearest in numpy's stable argsort order (mpe2's nearest_entities)."""
    best = int(-1)
    best_dist = prev_dist
    for j in range(count):
        if j != skip:
            d = distance(pos[e, j, 0], pos[e, j, 1], ref_x, ref_y)
            after_prev = d > prev_dist or (d == prev_dist and j > prev_index)
            if after_prev:
                if best < 0 or d < best_dist:
                    best = j
                    best_dist = d
    return best


@wp.func
def write_self(out: wp.array3d(dtype=wp.float32), e: int, i: int, w: Any):
    """[self_vel(2), self_pos(2)] at the start of agent i's row; returns the next offset (4)."""
    out[e, i, 0] = wp.float32(w.agent_vel[e, i, 0])
    out[e, i, 1] = wp.float32(w.agent_vel[e, i, 1])
    out[e, i, 2] = wp.float32(w.agent_pos[e, i, 0])
    out[e, i, 3] = wp.float32(w.agent_pos[e, i, 1])
    return int(4)


@wp.func
def write_value(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, value: Any):
    """out[e, i, o] = value (as float32); returns o + 1."""
    out[e, i, o] = wp.float32(value)
    return o + 1


@wp.func
def write_relative_positions(
    out: wp.array3d(dtype=wp.float32),
    e: int,
    i: int,
    o: int,
    skip: int,
    px: Any,
    py: Any,
    pos: wp.array3d(dtype=Any),
    k: int,
):
    """Into agent i's row from offset o: positions of the entities of ``pos`` (all but ``skip``)
    relative to (px, py): every one in index order (k < 0), or the k nearest, nearest first,
    zero-padded (mpe2's padded_relative_positions).  Returns the next offset."""
    count = pos.shape[1]
    if k < 0:
        for j in range(count):
            if j != skip:
                out[e, i, o] = wp.float32(pos[e, j, 0] - px)
                out[e, i, o + 1] = wp.float32(pos[e, j, 1] - py)
                o += 2
    else:
        prev_d = type(px)(-1.0)
        prev_j = int(-1)
        for r in range(k):
            j = nearest_rank_after(px, py, pos, e, count, skip, prev_d, prev_j)
            out[e, i, o] = wp.float32(0.0)
            out[e, i, o + 1] = wp.float32(0.0)
            if j >= 0:
                out[e, i, o] = wp.float32(pos[e, j, 0] - px)
                out[e, i, o + 1] = wp.float32(pos[e, j, 1] - py)
                prev_d = distance(pos[e, j, 0], pos[e, j, 1], px, py)
                prev_j = j
            o += 2
    return o


@wp.func
def write_zeros(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, count: int):
    """``count`` zeros into agent i's row from offset o; returns the next offset."""
    for c in range(count):
        out[e, i, o + c] = wp.float32(0.0)
    return o + count


@wp.func
def reset_agent_motion(w: Any, e: int, i: int):
    """Zero agent i's velocity and communication state; its acceleration and max speed from the
    layout, scaled by the curriculum factor where the layout says so (mpe2's reset_world)."""
    zero = type(w.dt)(0.0)
    w.agent_vel[e, i, 0] = zero
    w.agent_vel[e, i, 1] = zero
    for c in range(w.agent_comm.shape[2]):
        w.agent_comm[e, i, c] = zero
    factor = type(w.dt)(1.0)
    if w.curriculum_scaled[i] != 0:
        factor = w.curriculum_factor[0]
    w.agent_accel[e, i] = w.base_accel[i] * factor
    w.agent_max_speed[e, i] = w.base_max_speed[i] * factor




@wp.func
def finish_step(w: Any, e: int, terminal: bool):
    """mpe2's episode end: advance the clock; truncated at ``max_cycles`` (which wins over
    ``terminal``), else terminated if ``terminal``; schedule the autoreset."""
    steps = w.t[e] + 1
    w.t[e] = steps
    trunc = steps >= w.max_cycles
    term = False
    if not trunc:
        term = terminal
    end_step(e, term, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)


# ---------------------------------------------------------------------------------------------
# Physics (shared by every MPE scenario)
# ---------------------------------------------------------------------------------------------


@wp.func
def action_force(w: Any, e: int, i: int):
    """Agent i's control force u_i (mpe2's _set_action: the move part of its action times its
    acceleration, "sensitivity").  Continuous: [a2 - a1, a4 - a3], the difference taken in
    float32 like mpe2's float32 actions; discrete: the move index (a % 5 for move-and-say)."""
    zero = type(w.dt)(0.0)
    ux = zero
    uy = zero
    if w.continuous != 0:
        ux = type(zero)(w.action_continuous[e, i, 2] - w.action_continuous[e, i, 1])
        uy = type(zero)(w.action_continuous[e, i, 4] - w.action_continuous[e, i, 3])
    else:
        a = w.action_discrete[e, i]
        if w.all_silent == 0 and w.agent_silent[i] == 0:
            a = a % NUM_MOVE_ACTIONS
        if a == 1:
            ux = type(zero)(-1.0)
        if a == 2:
            ux = type(zero)(1.0)
        if a == 3:
            uy = type(zero)(-1.0)
        if a == 4:
            uy = type(zero)(1.0)
    return wp.vector(ux * w.agent_accel[e, i], uy * w.agent_accel[e, i])


@wp.func
def contact_forces(w: Any, e: int, i: int, fx: Any, fy: Any):
    """(fx, fy) plus the contact forces on colliding agent i from the colliding agents after it
    and from the colliding landmarks, added one by one in entity order; each such agent j gets
    the reaction subtracted from ``w.force[e, j]``: j's force from i is exactly minus i's from j
    (every operation of contact_force_x is odd in (dx, dy) and dist_min is a commutative sum), so
    each pair is worked out once."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    size_i = w.agent_size[i]
    for j in range(i + 1, w.agent_pos.shape[1]):
        if w.agent_collide[j] != 0:
            dx = px - w.agent_pos[e, j, 0]
            dy = py - w.agent_pos[e, j, 1]
            dist_min = size_i + w.agent_size[j]
            if in_contact_range(dx, dy, dist_min, w.contact_margin):
                cx = contact_force_x(dx, dy, dist_min, w.contact_force, w.contact_margin)
                cy = contact_force_x(dy, dx, dist_min, w.contact_force, w.contact_margin)
                fx = fx + cx
                fy = fy + cy
                w.force[e, j, 0] = w.force[e, j, 0] - cx
                w.force[e, j, 1] = w.force[e, j, 1] - cy
    for l in range(w.landmark_pos.shape[1]):
        if w.landmark_collide[l] != 0:
            dx = px - w.landmark_pos[e, l, 0]
            dy = py - w.landmark_pos[e, l, 1]
            dist_min = size_i + w.landmark_size[l]
            if in_contact_range(dx, dy, dist_min, w.contact_margin):
                fx = fx + contact_force_x(dx, dy, dist_min, w.contact_force, w.contact_margin)
                fy = fy + contact_force_x(dy, dx, dist_min, w.contact_force, w.contact_margin)
    return wp.vector(fx, fy)


@wp.func
def communicate(w: Any, e: int, i: int):
    """mpe2's update_agent_state: a silent agent's c is zeros (it is at every reset, and
    ``set_state`` refuses anything else, so it is left as it is); otherwise its say action
    (discrete: one-hot of a // 5 for move-and-say agents, of a for say-only ones; continuous:
    the dim_c values after the 5 move values, or the first dim_c for an immobile agent)."""
    zero = type(w.dt)(0.0)
    dim_c = w.dim_c
    if w.agent_silent[i] == 0:
        for c in range(dim_c):
            w.agent_comm[e, i, c] = zero
        if w.continuous != 0:
            first = int(0)
            if w.agent_movable[i] != 0:
                first = NUM_MOVE_ACTIONS
            for c in range(dim_c):
                w.agent_comm[e, i, c] = type(zero)(w.action_continuous[e, i, first + c])
        else:
            say = w.action_discrete[e, i]
            if w.agent_movable[i] != 0:
                say = say // NUM_MOVE_ACTIONS
            w.agent_comm[e, i, say] = type(zero)(1.0)


@wp.func
def integrate(w: Any, e: int, i: int, keep: Any):
    """Semi-implicit Euler for agent i (``w.force`` already divided by the mass): pos += vel dt;
    vel = vel (1 - damping) + force dt; vel scaled to max_speed if faster (max_speed < 0: no
    cap)."""
    vx = w.agent_vel[e, i, 0]
    vy = w.agent_vel[e, i, 1]
    w.agent_pos[e, i, 0] = w.agent_pos[e, i, 0] + vx * w.dt
    w.agent_pos[e, i, 1] = w.agent_pos[e, i, 1] + vy * w.dt
    vx = vx * keep + w.force[e, i, 0] * w.dt
    vy = vy * keep + w.force[e, i, 1] * w.dt
    max_speed = w.agent_max_speed[e, i]
    if max_speed >= type(w.dt)(0.0):
        speed = wp.sqrt(vx * vx + vy * vy)
        if speed > max_speed:
            vx = vx / speed * max_speed
            vy = vy / speed * max_speed
    w.agent_vel[e, i, 0] = vx
    w.agent_vel[e, i, 1] = vy


def physics_kernel(World, jaxmarl: bool, control):
    """One world (owner thread): every agent's force from the current positions, then
    semi-implicit Euler for the movable agents with damping and a speed cap (max_speed < 0: no
    cap), then the communication state.  ``jaxmarl`` (chosen when the kernel is built, so mpe2
    scenarios compile without it): JaxMARL's force sums, every agent's control force ``u_i`` from
    ``control(w, e, i)`` (the scenario's; ``action_force`` by default)."""

    def mpe_physics(w: World):
        e = wp.tid()
        if w.pending_reset[e] != 0:
            return
        num_agents = w.agent_pos.shape[1]
        zero = type(w.dt)(0.0)
        one = type(w.dt)(1.0)
        if wp.static(jaxmarl):
            # JaxMARL's sums (every agent movable): force_i = (sum over the agents j before i of
            # their reactions on i, then i's own contacts summed from zero) + u_i
            for i in range(num_agents):
                w.force[e, i, 0] = zero
                w.force[e, i, 1] = zero
            for i in range(num_agents):
                if w.agent_collide[i] != 0:
                    f = contact_forces(w, e, i, zero, zero)
                    w.force[e, i, 0] = w.force[e, i, 0] + f[0]
                    w.force[e, i, 1] = w.force[e, i, 1] + f[1]
            for i in range(num_agents):
                u = control(w, e, i)
                w.force[e, i, 0] = w.force[e, i, 0] + u[0]
                w.force[e, i, 1] = w.force[e, i, 1] + u[1]
        else:
            # mpe2's sums: force_i = u_i (movable agents) + contact forces from every other
            # colliding entity, added one by one in entity order (agents, then landmarks)
            if w.all_movable != 0:
                for i in range(num_agents):
                    u = action_force(w, e, i)
                    w.force[e, i, 0] = u[0]
                    w.force[e, i, 1] = u[1]
            else:
                for i in range(num_agents):
                    fx = zero
                    fy = zero
                    if w.agent_movable[i] != 0:
                        u = action_force(w, e, i)
                        fx = u[0]
                        fy = u[1]
                    w.force[e, i, 0] = fx
                    w.force[e, i, 1] = fy
            # called for i = 0, 1, ... after every force holds u_i: agent i's sum runs u_i, the
            # agents before it (added at their turns), the agents after it, then the landmarks
            for i in range(num_agents):
                if w.agent_collide[i] != 0:
                    f = contact_forces(w, e, i, w.force[e, i, 0], w.force[e, i, 1])
                    w.force[e, i, 0] = f[0]
                    w.force[e, i, 1] = f[1]
        # force / mass in place: (f / m) * dt as mpe2; skipped for unit masses (x / 1 is x)
        if w.unit_masses == 0:
            for i in range(num_agents):
                w.force[e, i, 0] = w.force[e, i, 0] / w.agent_mass[i]
                w.force[e, i, 1] = w.force[e, i, 1] / w.agent_mass[i]
        keep = one - w.damping
        if w.all_movable != 0:
            for i in range(num_agents):
                integrate(w, e, i, keep)
        else:
            for i in range(num_agents):
                if w.agent_movable[i] != 0:
                    integrate(w, e, i, keep)
        if w.all_silent == 0:
            for i in range(num_agents):
                communicate(w, e, i)

    return mpe_physics


def reward_done_kernel(World, reward, clear_info):
    """One world: the episode protocol (``war_envs.core.episode``) around the scenario's
    ``reward(w, e) -> terminal`` (which writes ``w.reward[e, :]`` and the scenario's info)."""

    one_world = reward_done_world(reward, clear_info, finish_step)

    def reward_done(w: World):
        one_world(w, wp.tid())

    return reward_done


def observe_kernel(World, reset, observe):
    """One world: if flagged in ``reset_now``, keep its final observations (``write_final``) and
    draw a fresh start (``reset_agent_motion`` for every agent, then the scenario's
    ``reset(w, e)``); then observe every agent (the scenario's ``observe(w, e, i, out)``)."""

    def observe_world(w: World, write_final: int):
        e = wp.tid()
        num_agents = w.agent_pos.shape[1]
        if w.reset_now[e] != 0:
            if write_final != 0:
                for i in range(num_agents):
                    observe(w, e, i, w.final_obs)
            for i in range(num_agents):
                reset_agent_motion(w, e, i)
            reset(w, e)
            start_episode(e, w.episode, w.t)
        for i in range(num_agents):
            observe(w, e, i, w.obs)

    return observe_world


wp.set_module_options(KERNEL_MODULE_OPTIONS)


def world_kernels(World, key: str, reset, reward, observe, clear_info, jaxmarl: bool = False, control=None):
    """The physics, reward/done and observe kernels of one scenario and struct type, in one Warp
    module named ``key`` (built once per process; ``jaxmarl``, ``control``: ``physics_kernel``'s,
    ``control`` None: ``action_force``)."""
    control = action_force if control is None else control
    return tuple(module_kernels(key, lambda: (physics_kernel(World, jaxmarl, control),
                                              reward_done_kernel(World, reward, clear_info),
                                              observe_kernel(World, reset, observe))).values())
