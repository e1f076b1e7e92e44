"""Warp kernels of the MPE family (Spread-v0, PredatorPrey-v0), written once for float32 and float64.

Physics is mpe2's ``World.step`` (``mpe2/_mpe_utils/core.py``) with the same operation order, so
float64 worlds agree with mpe2 to round-off:

    force_i = u_i + sum_{j != i, in entity order} contact(i, j)
    pos    += vel * dt
    vel     = vel * (1 - damping) + force / mass * dt      (mass 1)
    vel     = vel / |vel| * max_speed    if |vel| > max_speed

The step pipeline (captured into one graph by ``MPEBase``) is

    mpe_physics -> <scenario>_reward_done -> mpe_observe (autoreset + observations)

Every kernel runs one thread per world ("owner thread"): per-world sums and counters need no
atomics, and on the CPU a thread's fixed cost is paid once per world rather than per agent.
MPE worlds are small (3-10 agents); ``Tag-v0`` has its own kernels for 1000-agent worlds.
Arrays are indexed ``[world, agent, component]``.
"""

from typing import Any

import warp as wp

from war_envs.core._world_kernels import (  # noqa: F401  (the modes are part of this module's API)
    AUTORESET_DISABLED,
    AUTORESET_NEXT_STEP,
    AUTORESET_SAME_STEP,
    KERNEL_MODULE_OPTIONS,
    begin_pending_reset,
    schedule_autoreset,
)

wp.set_module_options(KERNEL_MODULE_OPTIONS)


# mpe2's discrete movement actions: 0 no-op, 1 -x, 2 +x, 3 -y, 4 +y.
NUM_MOVE_ACTIONS = wp.constant(5)


# ---------------------------------------------------------------------------------------------
# Shared functions
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
def distance(ax: Any, ay: Any, bx: Any, by: Any):
    """Euclidean distance |a - b| (mpe2: sqrt(sum(square(a - b))))."""
    dx = ax - bx
    dy = ay - by
    return wp.sqrt(dx * dx + dy * dy)


@wp.func
def is_collision(
    pos: wp.array3d(dtype=Any), e: int, i: int, j: int, size_i: Any, size_j: Any
):
    """mpe2's is_collision: |p_i - p_j| < size_i + size_j."""
    d = distance(pos[e, i, 0], pos[e, i, 1], pos[e, j, 0], pos[e, j, 1])
    return d < size_i + size_j


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
def nearest_dist_after(ref_x: Any, ref_y: Any, pos: wp.array3d(dtype=Any), e: int, j: int):
    """Distance used by nearest_rank_after for entity j."""
    return distance(pos[e, j, 0], pos[e, j, 1], ref_x, ref_y)


@wp.func
def reset_world(
    e: int,
    # Params
    world_seed: wp.array(dtype=wp.int32),
    num_agents: int,
    num_landmarks: int,
    agent_lo: Any,
    agent_hi: Any,
    landmark_lo: Any,
    landmark_hi: Any,
    base_accel: wp.array(dtype=Any),
    base_max_speed: wp.array(dtype=Any),
    curriculum_scaled: wp.array(dtype=wp.int32),
    curriculum_factor: wp.array(dtype=Any),
    # State in/out
    episode: wp.array(dtype=wp.int32),
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    agent_accel: wp.array2d(dtype=Any),
    agent_max_speed: wp.array2d(dtype=Any),
    t: wp.array(dtype=wp.int32),
):
    """Fresh random start for world e from its own counter-based stream (seed_e, episode_e):
    agents U[agent_lo, agent_hi)^2, landmarks U[landmark_lo, landmark_hi)^2, zero velocity."""
    state = wp.rand_init(world_seed[e], episode[e])
    for i in range(num_agents):
        agent_pos[e, i, 0] = uniform(wp.randf(state), agent_lo, agent_hi)
        agent_pos[e, i, 1] = uniform(wp.randf(state), agent_lo, agent_hi)
        agent_vel[e, i, 0] = type(agent_lo)(0.0)
        agent_vel[e, i, 1] = type(agent_lo)(0.0)
        factor = type(agent_lo)(1.0)
        if curriculum_scaled[i] != 0:
            factor = curriculum_factor[0]
        agent_accel[e, i] = base_accel[i] * factor
        agent_max_speed[e, i] = base_max_speed[i] * factor
    for l in range(num_landmarks):
        landmark_pos[e, l, 0] = uniform(wp.randf(state), landmark_lo, landmark_hi)
        landmark_pos[e, l, 1] = uniform(wp.randf(state), landmark_lo, landmark_hi)
    episode[e] = episode[e] + 1
    t[e] = 0


# ---------------------------------------------------------------------------------------------
# Physics (shared by every MPE scenario)
# ---------------------------------------------------------------------------------------------


@wp.func
def agent_force(
    e: int,
    i: int,
    continuous: int,
    contact_force: Any,
    contact_margin: Any,
    agent_size: wp.array(dtype=Any),
    agent_collide: wp.array(dtype=wp.int32),
    landmark_size: wp.array(dtype=Any),
    landmark_collide: wp.array(dtype=wp.int32),
    agent_pos: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    agent_accel: wp.array2d(dtype=Any),
    action_discrete: wp.array2d(dtype=wp.int32),
    action_continuous: wp.array3d(dtype=wp.float32),
    force_out: wp.array3d(dtype=Any),
):
    """force_i = sensitivity * u_i + contact forces from every other colliding entity, summed
    in entity order (agents, then landmarks) like mpe2."""
    zero = type(contact_force)(0.0)
    ux = zero
    uy = zero
    if continuous != 0:
        # mpe2: u = [a2 - a1, a4 - a3], the difference taken in float32 like mpe2's float32 actions
        ux = type(zero)(action_continuous[e, i, 2] - action_continuous[e, i, 1])
        uy = type(zero)(action_continuous[e, i, 4] - action_continuous[e, i, 3])
    else:
        a = action_discrete[e, i]
        if a == 1:
            ux = type(zero)(-1.0)
        if a == 2:
            ux = type(zero)(1.0)
        if a == 3:
            uy = type(zero)(-1.0)
        if a == 4:
            uy = type(zero)(1.0)
    fx = ux * agent_accel[e, i]
    fy = uy * agent_accel[e, i]
    if agent_collide[i] != 0:
        px = agent_pos[e, i, 0]
        py = agent_pos[e, i, 1]
        size_i = agent_size[i]
        for j in range(agent_pos.shape[1]):
            if j != i and agent_collide[j] != 0:
                dx = px - agent_pos[e, j, 0]
                dy = py - agent_pos[e, j, 1]
                dist_min = size_i + agent_size[j]
                if in_contact_range(dx, dy, dist_min, contact_margin):
                    fx = fx + contact_force_x(dx, dy, dist_min, contact_force, contact_margin)
                    fy = fy + contact_force_x(dy, dx, dist_min, contact_force, contact_margin)
        for l in range(landmark_pos.shape[1]):
            if landmark_collide[l] != 0:
                dx = px - landmark_pos[e, l, 0]
                dy = py - landmark_pos[e, l, 1]
                dist_min = size_i + landmark_size[l]
                if in_contact_range(dx, dy, dist_min, contact_margin):
                    fx = fx + contact_force_x(dx, dy, dist_min, contact_force, contact_margin)
                    fy = fy + contact_force_x(dy, dx, dist_min, contact_force, contact_margin)
    force_out[e, i, 0] = fx
    force_out[e, i, 1] = fy


@wp.kernel
def mpe_physics(
    # Params
    continuous: int,
    contact_force: Any,
    contact_margin: Any,
    dt: Any,
    damping: Any,
    agent_size: wp.array(dtype=Any),
    agent_collide: wp.array(dtype=wp.int32),
    landmark_size: wp.array(dtype=Any),
    landmark_collide: wp.array(dtype=wp.int32),
    # State in
    landmark_pos: wp.array3d(dtype=Any),
    agent_accel: wp.array2d(dtype=Any),
    agent_max_speed: wp.array2d(dtype=Any),
    pending_reset: wp.array(dtype=wp.int32),
    # Actions
    action_discrete: wp.array2d(dtype=wp.int32),
    action_continuous: wp.array3d(dtype=wp.float32),
    # Scratch
    force: wp.array3d(dtype=Any),
    # State out
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
):
    """One world (owner thread): every agent's force from the current positions, then
    semi-implicit Euler with damping and a speed cap (max_speed < 0: no cap)."""
    e = wp.tid()
    if pending_reset[e] != 0:
        return
    num_agents = agent_pos.shape[1]
    for i in range(num_agents):
        agent_force(e, i, continuous, contact_force, contact_margin, agent_size, agent_collide,
                    landmark_size, landmark_collide, agent_pos, landmark_pos, agent_accel,
                    action_discrete, action_continuous, force)
    keep = type(dt)(1.0) - damping
    for i in range(num_agents):
        vx = agent_vel[e, i, 0]
        vy = agent_vel[e, i, 1]
        agent_pos[e, i, 0] = agent_pos[e, i, 0] + vx * dt
        agent_pos[e, i, 1] = agent_pos[e, i, 1] + vy * dt
        vx = vx * keep + force[e, i, 0] * dt
        vy = vy * keep + force[e, i, 1] * dt
        max_speed = agent_max_speed[e, i]
        if max_speed >= type(dt)(0.0):
            speed = wp.sqrt(vx * vx + vy * vy)
            if speed > max_speed:
                vx = vx / speed * max_speed
                vy = vy / speed * max_speed
        agent_vel[e, i, 0] = vx
        agent_vel[e, i, 1] = vy


@wp.func
def finish_step(
    e: int,
    terminal: bool,
    mode: int,
    max_cycles: int,
    t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
):
    """Advance the clock and set the flags exactly as mpe2: truncation at max_cycles wins over
    success termination.  Schedules the autoreset for the mode."""
    steps = t[e] + 1
    t[e] = steps
    trunc = steps >= max_cycles
    term = False
    if not trunc:
        term = terminal
    terminated[e] = term
    truncated[e] = trunc
    schedule_autoreset(e, term or trunc, mode, reset_now, pending_reset)


# ---------------------------------------------------------------------------------------------
# Spread-v0 (mpe2.simple_spread_v3)
# ---------------------------------------------------------------------------------------------


@wp.func
def pending_coverage_step(
    e: int,
    zero: Any,
    # State out
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward_out: wp.array2d(dtype=Any),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    landmark_min_dist_out: wp.array2d(dtype=Any),
    collisions_out: wp.array2d(dtype=wp.int32),
    occupied_out: wp.array(dtype=wp.int32),
):
    """Spread/Command under NEXT_STEP: the step after a done zeroes rewards and metrics and only
    resets the world."""
    pending_reset[e] = 0
    for i in range(reward_out.shape[1]):
        reward_out[e, i] = zero
        collisions_out[e, i] = 0
    for l in range(landmark_min_dist_out.shape[1]):
        landmark_min_dist_out[e, l] = zero
    occupied_out[e] = 0
    begin_pending_reset(e, terminated, truncated, reset_now)


@wp.func
def landmark_coverage(
    e: int,
    capture_radius: Any,
    agent_pos: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    landmark_min_dist_out: wp.array2d(dtype=Any),
):
    """G = -sum_l min_a |a - l| (each min written to landmark_min_dist_out) and the number of
    landmarks with an agent closer than capture_radius, as (G, count as a float)."""
    total = type(capture_radius)(0.0)
    occupied = type(capture_radius)(0.0)
    for l in range(landmark_pos.shape[1]):
        lx = landmark_pos[e, l, 0]
        ly = landmark_pos[e, l, 1]
        min_dist = distance(agent_pos[e, 0, 0], agent_pos[e, 0, 1], lx, ly)
        for a in range(1, agent_pos.shape[1]):
            min_dist = wp.min(min_dist, distance(agent_pos[e, a, 0], agent_pos[e, a, 1], lx, ly))
        landmark_min_dist_out[e, l] = min_dist
        total = total - min_dist
        if min_dist < capture_radius:
            occupied = occupied + type(capture_radius)(1.0)
    return wp.vector(total, occupied)


@wp.kernel
def spread_reward_done(
    # Params
    mode: int,
    max_cycles: int,
    local_ratio: Any,
    capture_radius: Any,
    terminate_on_success: int,
    curriculum: int,
    curriculum_stage: wp.array(dtype=wp.int32),
    agent_size: wp.array(dtype=Any),
    # State in
    agent_pos: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    # State out
    t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward_out: wp.array2d(dtype=Any),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    landmark_min_dist_out: wp.array2d(dtype=Any),
    collisions_out: wp.array2d(dtype=wp.int32),
    occupied_out: wp.array(dtype=wp.int32),
):
    """r_i = G * (1 - local_ratio) + L_i * local_ratio with G = -sum_l min_a |a - l| and
    L_i = -#{j != i colliding with i} (zero in curriculum stage 0)."""
    e = wp.tid()
    num_agents = agent_pos.shape[1]
    zero = type(local_ratio)(0.0)
    if pending_reset[e] != 0:
        pending_coverage_step(e, zero, pending_reset, reset_now, reward_out, terminated, truncated,
                              landmark_min_dist_out, collisions_out, occupied_out)
        return
    coverage = landmark_coverage(e, capture_radius, agent_pos, landmark_pos, landmark_min_dist_out)
    global_reward = coverage[0]
    occupied = int(coverage[1])
    penalty = curriculum == 0 or curriculum_stage[0] >= 1
    one = type(local_ratio)(1.0)
    for i in range(num_agents):
        count = int(0)
        for j in range(num_agents):
            if j != i:
                if is_collision(agent_pos, e, i, j, agent_size[i], agent_size[j]):
                    count += 1
        collisions_out[e, i] = count
        local = zero
        if penalty:
            local = -type(local_ratio)(float(count))
        reward_out[e, i] = global_reward * (one - local_ratio) + local * local_ratio
    occupied_out[e] = occupied
    success = terminate_on_success != 0 and occupied == landmark_pos.shape[1]
    finish_step(e, success, mode, max_cycles, t, pending_reset, reset_now, terminated, truncated)


@wp.func
def write_self(
    out: wp.array3d(dtype=wp.float32),
    slot: int,
    e: int,
    i: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
):
    """[self_vel(2), self_pos(2)]; returns the next offset (4)."""
    out[e, slot, 0] = wp.float32(agent_vel[e, i, 0])
    out[e, slot, 1] = wp.float32(agent_vel[e, i, 1])
    out[e, slot, 2] = wp.float32(agent_pos[e, i, 0])
    out[e, slot, 3] = wp.float32(agent_pos[e, i, 1])
    return int(4)


@wp.func
def write_relative_positions(
    out: wp.array3d(dtype=wp.float32),
    slot: int,
    o: int,
    e: int,
    skip: int,
    px: Any,
    py: Any,
    pos: wp.array3d(dtype=Any),
    k: int,
):
    """Positions of the entities of ``pos`` (all but ``skip``) relative to (px, py): every one in
    index order (k < 0), or the k nearest, nearest first, zero-padded (mpe2's
    padded_relative_positions).  Returns the next offset."""
    count = pos.shape[1]
    if k < 0:
        for j in range(count):
            if j != skip:
                out[e, slot, o] = wp.float32(pos[e, j, 0] - px)
                out[e, slot, o + 1] = wp.float32(pos[e, j, 1] - py)
                o += 2
    else:
        prev_d = type(px)(-1.0)
        prev_j = int(-1)
        for r in range(k):
            j = nearest_rank_after(px, py, pos, e, count, skip, prev_d, prev_j)
            out[e, slot, o] = wp.float32(0.0)
            out[e, slot, o + 1] = wp.float32(0.0)
            if j >= 0:
                out[e, slot, o] = wp.float32(pos[e, j, 0] - px)
                out[e, slot, o + 1] = wp.float32(pos[e, j, 1] - py)
                prev_d = nearest_dist_after(px, py, pos, e, j)
                prev_j = j
            o += 2
    return o


@wp.func
def spread_write_obs(
    out: wp.array3d(dtype=wp.float32),
    slot: int,
    e: int,
    i: int,
    num_agent_neighbors: int,
    num_landmark_neighbors: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
):
    """[self_vel, self_pos, landmark_rel (N or k nearest, zero-padded),
    other_rel (N-1 or k nearest, zero-padded), comm (zeros: agents are silent)]."""
    px = agent_pos[e, i, 0]
    py = agent_pos[e, i, 1]
    o = write_self(out, slot, e, i, agent_pos, agent_vel)
    o = write_relative_positions(out, slot, o, e, -1, px, py, landmark_pos, num_landmark_neighbors)
    o = write_relative_positions(out, slot, o, e, i, px, py, agent_pos, num_agent_neighbors)
    # comm block: silent agents say nothing (rewritten each step so the buffer self-heals if a
    # caller edits the returned view in place)
    for c in range(o, out.shape[2]):
        out[e, slot, c] = wp.float32(0.0)


# ---------------------------------------------------------------------------------------------
# PredatorPrey-v0 (mpe2.simple_tag_v3): agents 0..num_adversaries-1 are adversaries
# ---------------------------------------------------------------------------------------------


@wp.func
def boundary_penalty(x: Any):
    """mpe2's bound(x): 0 below 0.9, (x - 0.9) * 10 below 1, else min(exp(2x - 2), 10)."""
    if x < type(x)(0.9):
        return type(x)(0.0)
    if x < type(x)(1.0):
        return (x - type(x)(0.9)) * type(x)(10.0)
    return wp.min(wp.exp(type(x)(2.0) * x - type(x)(2.0)), type(x)(10.0))


@wp.kernel
def predator_prey_reward_done(
    # Params
    mode: int,
    max_cycles: int,
    num_adversaries: int,
    terminate_on_success: int,
    agent_size: wp.array(dtype=Any),
    # State in
    agent_pos: wp.array3d(dtype=Any),
    # State out
    t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward_out: wp.array2d(dtype=Any),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    collisions_out: wp.array2d(dtype=wp.int32),
    boundary_out: wp.array2d(dtype=Any),
):
    """Adversaries: +10 per (good, adversary) contact anywhere (team reward).  Good agents:
    -10 per touching adversary - sum over axes of bound(|x|)."""
    e = wp.tid()
    num_agents = agent_pos.shape[1]
    zero = type(agent_size[0])(0.0)
    if pending_reset[e] != 0:
        pending_reset[e] = 0
        for i in range(num_agents):
            reward_out[e, i] = zero
            collisions_out[e, i] = 0
            boundary_out[e, i] = zero
        begin_pending_reset(e, terminated, truncated, reset_now)
        return
    for i in range(num_agents):
        collisions_out[e, i] = 0
    contacts = int(0)
    all_caught = bool(True)
    for g in range(num_adversaries, num_agents):
        caught = bool(False)
        for a in range(num_adversaries):
            if is_collision(agent_pos, e, g, a, agent_size[g], agent_size[a]):
                contacts += 1
                caught = True
                collisions_out[e, a] = collisions_out[e, a] + 1
                collisions_out[e, g] = collisions_out[e, g] + 1
        if not caught:
            all_caught = False
    adversary_reward = type(zero)(10.0) * type(zero)(float(contacts))
    for i in range(num_agents):
        if i < num_adversaries:
            reward_out[e, i] = adversary_reward
            boundary_out[e, i] = zero
        else:
            rew = zero - type(zero)(10.0) * type(zero)(float(collisions_out[e, i]))
            bx = boundary_penalty(wp.abs(agent_pos[e, i, 0]))
            by = boundary_penalty(wp.abs(agent_pos[e, i, 1]))
            rew = rew - bx
            rew = rew - by
            reward_out[e, i] = rew
            boundary_out[e, i] = bx + by
    success = terminate_on_success != 0 and all_caught
    finish_step(e, success, mode, max_cycles, t, pending_reset, reset_now, terminated, truncated)


@wp.func
def predator_prey_write_obs(
    out: wp.array3d(dtype=wp.float32),
    slot: int,
    e: int,
    i: int,
    num_adversaries: int,
    num_agent_neighbors: int,
    num_landmark_neighbors: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
):
    """[self_vel, self_pos, obstacle_rel (all or k nearest), other_rel (all or k nearest),
    good_agent_vel (full: every other good agent; k nearest: good ones, zeros otherwise)]."""
    px = agent_pos[e, i, 0]
    py = agent_pos[e, i, 1]
    o = write_self(out, slot, e, i, agent_pos, agent_vel)
    o = write_relative_positions(out, slot, o, e, -1, px, py, landmark_pos, num_landmark_neighbors)
    o = write_relative_positions(out, slot, o, e, i, px, py, agent_pos, num_agent_neighbors)
    num_agents = agent_pos.shape[1]
    if num_agent_neighbors < 0:
        for j in range(num_adversaries, num_agents):
            if j != i:
                out[e, slot, o] = wp.float32(agent_vel[e, j, 0])
                out[e, slot, o + 1] = wp.float32(agent_vel[e, j, 1])
                o += 2
    else:
        # velocity slots follow the k nearest in the same order (mpe2's padded_velocities)
        prev_d = type(px)(-1.0)
        prev_j = int(-1)
        for r in range(num_agent_neighbors):
            j = nearest_rank_after(px, py, agent_pos, e, num_agents, i, prev_d, prev_j)
            out[e, slot, o] = wp.float32(0.0)
            out[e, slot, o + 1] = wp.float32(0.0)
            if j >= 0:
                if j >= num_adversaries:
                    out[e, slot, o] = wp.float32(agent_vel[e, j, 0])
                    out[e, slot, o + 1] = wp.float32(agent_vel[e, j, 1])
                prev_d = nearest_dist_after(px, py, agent_pos, e, j)
                prev_j = j
            o += 2


# ---------------------------------------------------------------------------------------------
# Command-v0: Spread physics, one commander (global view) + sentries (k-nearest view), team reward
# ---------------------------------------------------------------------------------------------


@wp.kernel
def command_reward_done(
    # Params
    mode: int,
    max_cycles: int,
    capture_radius: Any,
    terminate_on_success: int,
    agent_size: wp.array(dtype=Any),
    # State in
    agent_pos: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    # State out
    t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward_out: wp.array2d(dtype=Any),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    landmark_min_dist_out: wp.array2d(dtype=Any),
    collisions_out: wp.array2d(dtype=wp.int32),
    occupied_out: wp.array(dtype=wp.int32),
):
    """Team reward shared by every agent: r = -sum_l min_a |a - l| - #(colliding pairs)."""
    e = wp.tid()
    num_agents = agent_pos.shape[1]
    zero = type(capture_radius)(0.0)
    if pending_reset[e] != 0:
        pending_coverage_step(e, zero, pending_reset, reset_now, reward_out, terminated, truncated,
                              landmark_min_dist_out, collisions_out, occupied_out)
        return
    coverage = landmark_coverage(e, capture_radius, agent_pos, landmark_pos, landmark_min_dist_out)
    team = coverage[0]
    occupied = int(coverage[1])
    for i in range(num_agents):
        collisions_out[e, i] = 0
    pairs = int(0)
    for i in range(num_agents):
        for j in range(i + 1, num_agents):
            if is_collision(agent_pos, e, i, j, agent_size[i], agent_size[j]):
                pairs += 1
                collisions_out[e, i] = collisions_out[e, i] + 1
                collisions_out[e, j] = collisions_out[e, j] + 1
    team = team - type(zero)(float(pairs))
    for i in range(num_agents):
        reward_out[e, i] = team
    occupied_out[e] = occupied
    success = terminate_on_success != 0 and occupied == landmark_pos.shape[1]
    finish_step(e, success, mode, max_cycles, t, pending_reset, reset_now, terminated, truncated)


@wp.func
def command_write_obs(
    out: wp.array3d(dtype=wp.float32),
    slot: int,
    e: int,
    i: int,
    num_agent_neighbors: int,
    num_landmark_neighbors: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
):
    """[self_vel, self_pos, landmark_rel, other_rel]: all of them (k < 0, the commander) or the
    k nearest, zero-padded (sentries)."""
    px = agent_pos[e, i, 0]
    py = agent_pos[e, i, 1]
    o = write_self(out, slot, e, i, agent_pos, agent_vel)
    o = write_relative_positions(out, slot, o, e, -1, px, py, landmark_pos, num_landmark_neighbors)
    o = write_relative_positions(out, slot, o, e, i, px, py, agent_pos, num_agent_neighbors)


# ---------------------------------------------------------------------------------------------
# Observation + autoreset kernel shared by the MPE scenarios
# ---------------------------------------------------------------------------------------------

SCENARIO_SPREAD = wp.constant(0)
SCENARIO_PREDATOR_PREY = wp.constant(1)
SCENARIO_COMMAND = wp.constant(2)


@wp.func
def observe_agent(
    scenario: int,
    e: int,
    i: int,
    first_group_size: int,
    num_agent_neighbors: int,
    num_landmark_neighbors: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    first_group_out: wp.array3d(dtype=wp.float32),
    second_group_out: wp.array3d(dtype=wp.float32),
):
    """Write agent i's observation into its group's buffer (agents [0, first_group_size) are
    the first group: PredatorPrey's adversaries, Command's commander).  Command's commander sees
    everything; its sentries use the k-nearest view."""
    if scenario == SCENARIO_COMMAND:
        if i < first_group_size:
            command_write_obs(first_group_out, i, e, i, -1, -1, agent_pos, agent_vel, landmark_pos)
        else:
            command_write_obs(second_group_out, i - first_group_size, e, i, num_agent_neighbors,
                              num_landmark_neighbors, agent_pos, agent_vel, landmark_pos)
    elif scenario == SCENARIO_SPREAD:
        spread_write_obs(first_group_out, i, e, i, num_agent_neighbors, num_landmark_neighbors,
                         agent_pos, agent_vel, landmark_pos)
    elif i < first_group_size:
        predator_prey_write_obs(first_group_out, i, e, i, first_group_size, num_agent_neighbors,
                                num_landmark_neighbors, agent_pos, agent_vel, landmark_pos)
    else:
        predator_prey_write_obs(second_group_out, i - first_group_size, e, i, first_group_size,
                                num_agent_neighbors, num_landmark_neighbors, agent_pos,
                                agent_vel, landmark_pos)


@wp.kernel
def mpe_observe(
    # Params
    scenario: int,
    write_final: int,
    first_group_size: int,
    num_agent_neighbors: int,
    num_landmark_neighbors: int,
    world_seed: wp.array(dtype=wp.int32),
    agent_lo: Any,
    agent_hi: Any,
    landmark_lo: Any,
    landmark_hi: Any,
    base_accel: wp.array(dtype=Any),
    base_max_speed: wp.array(dtype=Any),
    curriculum_scaled: wp.array(dtype=wp.int32),
    curriculum_factor: wp.array(dtype=Any),
    # State in
    reset_now: wp.array(dtype=wp.int32),
    # State out
    episode: wp.array(dtype=wp.int32),
    agent_pos: wp.array3d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    landmark_pos: wp.array3d(dtype=Any),
    agent_accel: wp.array2d(dtype=Any),
    agent_max_speed: wp.array2d(dtype=Any),
    t: wp.array(dtype=wp.int32),
    # Outputs
    first_group_obs_out: wp.array3d(dtype=wp.float32),
    second_group_obs_out: wp.array3d(dtype=wp.float32),
    first_group_final_obs_out: wp.array3d(dtype=wp.float32),
    second_group_final_obs_out: wp.array3d(dtype=wp.float32),
):
    """One world: if flagged in reset_now, keep its final observations (write_final) and draw a
    fresh start; then observe every agent."""
    e = wp.tid()
    num_agents = agent_pos.shape[1]
    if reset_now[e] != 0:
        if write_final != 0:
            for i in range(num_agents):
                observe_agent(scenario, e, i, first_group_size, num_agent_neighbors,
                              num_landmark_neighbors, agent_pos, agent_vel, landmark_pos,
                              first_group_final_obs_out, second_group_final_obs_out)
        reset_world(e, world_seed, num_agents, landmark_pos.shape[1], agent_lo, agent_hi,
                    landmark_lo, landmark_hi, base_accel, base_max_speed, curriculum_scaled,
                    curriculum_factor, episode, agent_pos, agent_vel, landmark_pos, agent_accel,
                    agent_max_speed, t)
    for i in range(num_agents):
        observe_agent(scenario, e, i, first_group_size, num_agent_neighbors,
                      num_landmark_neighbors, agent_pos, agent_vel, landmark_pos,
                      first_group_obs_out, second_group_obs_out)
