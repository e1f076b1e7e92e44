"""Warp kernels of ``Tag-v0`` (WarpDrive ``TagContinuous`` rules), written once for float32 and
float64 worlds.  Arrays are indexed ``[world, agent(, component)]``; agents ``0..T-1`` are the
taggers, ``T..A-1`` the runners.

Step pipeline (captured into one graph by ``Tag``), in WarpDrive's order — move, observe, then
tag — so the observation a step returns is taken *before* that step's tags:

    tag_move            (world, agent)  heading, acceleration, speed, position, edge clipping
    tag_build_grid      (world)         clock + per-world cell grid of the agents in the game
    tag_observe         (world, agent)  full or k-nearest observation (cell-ring search)
    tag_find_tagger     (world, agent)  each runner's nearest tagger within the tagging distance
    tag_reward_done     (world)         owner thread: rewards in runner order, exits, done flags
    tag_copy_final      (world, agent)  SAME_STEP: keep the final observation of finished worlds
    tag_reset           (world)         owner thread: fresh random start of finished worlds
    tag_build_grid / tag_observe        again, for the worlds just reset

Spatial structure: each world has a uniform ``C x C`` cell grid over ``[0, L]^2`` rebuilt every
step by a counting sort (one owner thread per world: count, prefix sum, scatter in agent order),
so the agents of a cell are listed in increasing index and every result is independent of thread
scheduling.  The k-nearest query scans rings of cells around the agent's cell and stops once the
k-th distance is below the radius the scanned rings guarantee; the tagging query scans only the
cells overlapping the tagging disc.  Distances are compared as ``(distance, index)`` pairs, so
ties go to the lower index (numpy's stable sort / argmin).

No float atomics anywhere: per-world sums (tagger rewards, runner counts) are added by the world's
owner thread in runner order, so results are bitwise reproducible.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import (  # noqa: F401  (the modes are part of this module's API)
    AUTORESET_DISABLED,
    AUTORESET_NEXT_STEP,
    AUTORESET_SAME_STEP,
    KERNEL_MODULE_OPTIONS,
    begin_pending_reset,
    end_step,
    start_episode,
)

wp.set_module_options(KERNEL_MODULE_OPTIONS)


# Which worlds a grid/observe launch touches.
SELECT_STEPPING = wp.constant(0)  # every world not waiting for a NEXT_STEP reset
SELECT_MASKED = wp.constant(1)  # worlds with mask[e] != 0

# Number of starting headings: {0, pi/2, pi, 3pi/2}.
NUM_HEADINGS = wp.constant(4)


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


@wp.func
def selected(select: int, e: int, pending_reset: wp.array(dtype=wp.int32), mask: wp.array(dtype=wp.int32)):
    """Whether world e takes part in this launch (see SELECT_*)."""
    if select == SELECT_STEPPING:
        return pending_reset[e] == 0
    return mask[e] != 0


@wp.func
def pair_distance(pos: wp.array3d(dtype=Any), e: int, i: int, j: int):
    """|p_i - p_j| = sqrt(dx^2 + dy^2)."""
    dx = pos[e, i, 0] - pos[e, j, 0]
    dy = pos[e, i, 1] - pos[e, j, 1]
    return wp.sqrt(dx * dx + dy * dy)


@wp.func
def before(d_a: Any, j_a: int, d_b: Any, j_b: int):
    """(d_a, j_a) < (d_b, j_b) lexicographically: nearer first, ties to the lower index."""
    return d_a < d_b or (d_a == d_b and j_a < j_b)


@wp.func
def cell_coord(x: Any, inv_cell: Any, cells: int):
    """Cell column/row of coordinate x: clamp(floor(x / cell_size), 0, C - 1)."""
    c = int(wp.floor(x * inv_cell))
    return wp.clamp(c, 0, cells - 1)


@wp.func
def max_speed_of(i: int, num_taggers: int, max_speed: Any, skill_tagger: Any, skill_runner: Any):
    """max_speed * skill level of agent i's type."""
    if i < num_taggers:
        return max_speed * skill_tagger
    return max_speed * skill_runner


# ---------------------------------------------------------------------------------------------
# Movement
# ---------------------------------------------------------------------------------------------


@wp.kernel
def tag_move(
    # Params
    num_taggers: int,
    grid_length: Any,
    max_speed: Any,
    skill_tagger: Any,
    skill_runner: Any,
    two_pi: Any,
    acceleration_table: wp.array(dtype=Any),
    turn_table: wp.array(dtype=Any),
    # State in
    pending_reset: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    # Actions
    action: wp.array3d(dtype=wp.int32),
    # State out
    agent_pos: wp.array3d(dtype=Any),
    agent_speed: wp.array2d(dtype=Any),
    agent_dir: wp.array2d(dtype=Any),
    agent_acc: wp.array2d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
    # Outputs
    edge_hit: wp.array2d(dtype=wp.int32),
):
    """WarpDrive's per-agent update: dir = (dir + turn) mod 2pi; acc += d_acc;
    speed = clip(speed + acc, 0, max_speed * skill); acc = 0 at either bound; p += speed * (cos, sin);
    p clipped to [0, L]^2.  Agents out of the game get direction and speed 0."""
    e, i = wp.tid()
    if pending_reset[e] != 0:
        return
    zero = type(grid_length)(0.0)
    still = zero
    if alive[e, i]:
        still = type(grid_length)(1.0)
    acc = agent_acc[e, i] + acceleration_table[action[e, i, 0]]
    heading = wp.mod(agent_dir[e, i] + turn_table[action[e, i, 1]], two_pi) * still
    if heading < zero:
        heading = two_pi + heading
    top = max_speed_of(i, num_taggers, max_speed, skill_tagger, skill_runner)
    speed = wp.min(top, wp.max(zero, agent_speed[e, i] + acc)) * still
    if speed <= zero or speed >= top:
        acc = zero
    vx = speed * wp.cos(heading)
    vy = speed * wp.sin(heading)
    x = agent_pos[e, i, 0] + vx
    y = agent_pos[e, i, 1] + vy
    crossed = int(0)
    if x < zero or x > grid_length or y < zero or y > grid_length:
        crossed = 1
        if x < zero:
            x = zero
        elif x > grid_length:
            x = grid_length
        if y < zero:
            y = zero
        elif y > grid_length:
            y = grid_length
    agent_pos[e, i, 0] = x
    agent_pos[e, i, 1] = y
    agent_speed[e, i] = speed
    agent_dir[e, i] = heading
    agent_acc[e, i] = acc
    agent_vel[e, i, 0] = vx
    agent_vel[e, i, 1] = vy
    edge_hit[e, i] = crossed


# ---------------------------------------------------------------------------------------------
# Per-world cell grid (counting sort, owner thread)
# ---------------------------------------------------------------------------------------------


@wp.kernel
def tag_build_grid(
    # Params
    select: int,
    advance_clock: int,
    cells: int,
    inv_cell: Any,
    mask: wp.array(dtype=wp.int32),
    # State in
    pending_reset: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    agent_pos: wp.array3d(dtype=Any),
    # State out
    t: wp.array(dtype=wp.int32),
    # Outputs
    agent_cell: wp.array2d(dtype=wp.int32),
    cell_start: wp.array2d(dtype=wp.int32),
    cell_cursor: wp.array2d(dtype=wp.int32),
    cell_agents: wp.array2d(dtype=wp.int32),
):
    """One world: advance its clock (step path), then list the agents in the game by cell:
    cell c holds cell_agents[cell_start[c] : cell_start[c + 1]], in increasing agent index."""
    e = wp.tid()
    if not selected(select, e, pending_reset, mask):
        return
    if advance_clock != 0:
        t[e] = t[e] + 1
    num_cells = cells * cells
    num_agents = agent_pos.shape[1]
    for c in range(num_cells + 1):
        cell_start[e, c] = 0
    for i in range(num_agents):
        if alive[e, i]:
            cx = cell_coord(agent_pos[e, i, 0], inv_cell, cells)
            cy = cell_coord(agent_pos[e, i, 1], inv_cell, cells)
            c = cy * cells + cx
            agent_cell[e, i] = c
            cell_start[e, c + 1] = cell_start[e, c + 1] + 1
        else:
            agent_cell[e, i] = -1
    for c in range(num_cells):
        cell_start[e, c + 1] = cell_start[e, c + 1] + cell_start[e, c]
        cell_cursor[e, c] = cell_start[e, c]
    for i in range(num_agents):
        c = agent_cell[e, i]
        if c >= 0:
            slot = cell_cursor[e, c]
            cell_agents[e, slot] = i
            cell_cursor[e, c] = slot + 1


# ---------------------------------------------------------------------------------------------
# Observations
# ---------------------------------------------------------------------------------------------


@wp.func
def insert_neighbor(
    e: int,
    i: int,
    j: int,
    d: Any,
    count: int,
    k: int,
    nn_dist: wp.array3d(dtype=Any),
    nn_idx: wp.array3d(dtype=wp.int32),
):
    """Insert (d, j) into agent i's sorted list of its ``count`` nearest so far (at most k kept);
    returns the new count."""
    pos = int(-1)
    new_count = count
    if count < k:
        pos = count
        new_count = count + 1
    elif before(d, j, nn_dist[e, i, k - 1], nn_idx[e, i, k - 1]):
        pos = k - 1
    if pos >= 0:
        while pos > 0 and before(d, j, nn_dist[e, i, pos - 1], nn_idx[e, i, pos - 1]):
            nn_dist[e, i, pos] = nn_dist[e, i, pos - 1]
            nn_idx[e, i, pos] = nn_idx[e, i, pos - 1]
            pos -= 1
        nn_dist[e, i, pos] = d
        nn_idx[e, i, pos] = j
    return new_count


@wp.func
def scan_candidates(
    e: int,
    i: int,
    px: Any,
    py: Any,
    first: int,
    last: int,
    count: int,
    k: int,
    agent_pos: wp.array3d(dtype=Any),
    cell_agents: wp.array2d(dtype=wp.int32),
    nn_dist: wp.array3d(dtype=Any),
    nn_idx: wp.array3d(dtype=wp.int32),
):
    """Offer the agents cell_agents[e, first:last] (other than i) to i's nearest list."""
    for p in range(first, last):
        j = cell_agents[e, p]
        if j != i:
            dx = agent_pos[e, j, 0] - px
            dy = agent_pos[e, j, 1] - py
            d = wp.sqrt(dx * dx + dy * dy)
            if count < k or before(d, j, nn_dist[e, i, k - 1], nn_idx[e, i, k - 1]):
                count = insert_neighbor(e, i, j, d, count, k, nn_dist, nn_idx)
    return count


@wp.func
def k_nearest(
    e: int,
    i: int,
    k: int,
    cells: int,
    cell_size: Any,
    agent_pos: wp.array3d(dtype=Any),
    agent_cell: wp.array2d(dtype=wp.int32),
    cell_start: wp.array2d(dtype=wp.int32),
    cell_agents: wp.array2d(dtype=wp.int32),
    nn_dist: wp.array3d(dtype=Any),
    nn_idx: wp.array3d(dtype=wp.int32),
):
    """The k nearest other agents in the game, nearest first, in nn_idx[e, i, :count]; returns
    count.  Scans rings of cells (Chebyshev radius r = 0, 1, ...) around i's cell — the ring's
    top and bottom rows as one contiguous run of the sorted agent list, its sides cell by cell.
    After ring r every agent closer than the distance from i to the border of the scanned square
    has been seen (a side on the grid's border hides nobody), so the search stops once the k-th
    distance is below that (less a small margin against rounding at cell borders)."""
    c = agent_cell[e, i]
    cx = c % cells
    cy = c // cells
    px = agent_pos[e, i, 0]
    py = agent_pos[e, i, 1]
    r_max = wp.max(wp.max(cx, cells - 1 - cx), wp.max(cy, cells - 1 - cy))
    far = type(cell_size)(3.0e38)
    margin = type(cell_size)(0.001) * cell_size
    count = int(0)
    r = int(0)
    while r <= r_max:
        x0 = wp.max(cx - r, 0)
        x1 = wp.min(cx + r, cells - 1)
        for yy in range(wp.max(cy - r, 0), wp.min(cy + r, cells - 1) + 1):
            row = yy * cells
            if yy == cy - r or yy == cy + r:
                count = scan_candidates(e, i, px, py, cell_start[e, row + x0], cell_start[e, row + x1 + 1],
                                        count, k, agent_pos, cell_agents, nn_dist, nn_idx)
            else:
                if cx - r >= 0:
                    cell = row + cx - r
                    count = scan_candidates(e, i, px, py, cell_start[e, cell], cell_start[e, cell + 1],
                                            count, k, agent_pos, cell_agents, nn_dist, nn_idx)
                if cx + r < cells:
                    cell = row + cx + r
                    count = scan_candidates(e, i, px, py, cell_start[e, cell], cell_start[e, cell + 1],
                                            count, k, agent_pos, cell_agents, nn_dist, nn_idx)
        if count == k:
            # distance from (px, py) to the border of the scanned square of cells
            covered = far
            if cx - r > 0:
                covered = wp.min(covered, px - type(cell_size)(float(cx - r)) * cell_size)
            if cx + r < cells - 1:
                covered = wp.min(covered, type(cell_size)(float(cx + r + 1)) * cell_size - px)
            if cy - r > 0:
                covered = wp.min(covered, py - type(cell_size)(float(cy - r)) * cell_size)
            if cy + r < cells - 1:
                covered = wp.min(covered, type(cell_size)(float(cy + r + 1)) * cell_size - py)
            if nn_dist[e, i, k - 1] < covered - margin:
                break
        r += 1
    return count


@wp.func
def write_relative(
    out: wp.array3d(dtype=wp.float32),
    e: int,
    slot: int,
    column: int,
    stride: int,
    i: int,
    j: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_speed: wp.array2d(dtype=Any),
    agent_acc: wp.array2d(dtype=Any),
    agent_dir: wp.array2d(dtype=Any),
    diagonal: Any,
    speed_norm: Any,
    two_pi: Any,
):
    """WarpDrive's five relative features of agent j seen by i, feature-major (feature f of
    column c at f * stride + c): dx/(sqrt2 L), dy/(sqrt2 L), dspeed/(v_max + eps),
    dacc/(v_max + eps), ddir/2pi."""
    out[e, slot, column] = wp.float32((agent_pos[e, j, 0] - agent_pos[e, i, 0]) / diagonal)
    out[e, slot, stride + column] = wp.float32((agent_pos[e, j, 1] - agent_pos[e, i, 1]) / diagonal)
    out[e, slot, 2 * stride + column] = wp.float32((agent_speed[e, j] - agent_speed[e, i]) / speed_norm)
    out[e, slot, 3 * stride + column] = wp.float32((agent_acc[e, j] - agent_acc[e, i]) / speed_norm)
    out[e, slot, 4 * stride + column] = wp.float32((agent_dir[e, j] - agent_dir[e, i]) / two_pi)


@wp.func
def write_egocentric(
    out: wp.array3d(dtype=wp.float32),
    e: int,
    slot: int,
    base: int,
    column: int,
    stride: int,
    i: int,
    j: int,
    agent_pos: wp.array3d(dtype=Any),
    agent_dir: wp.array2d(dtype=Any),
    diagonal: Any,
):
    """Agent j's offset from i in i's own frame, two rows from ``base`` (feature-major):
    ahead = (dx cos + dy sin)/(sqrt2 L), left = (-dx sin + dy cos)/(sqrt2 L)."""
    dx = agent_pos[e, j, 0] - agent_pos[e, i, 0]
    dy = agent_pos[e, j, 1] - agent_pos[e, i, 1]
    c = wp.cos(agent_dir[e, i])
    s = wp.sin(agent_dir[e, i])
    out[e, slot, base + column] = wp.float32((dx * c + dy * s) / diagonal)
    out[e, slot, base + stride + column] = wp.float32((dy * c - dx * s) / diagonal)


@wp.kernel
def tag_observe(
    # Params
    select: int,
    num_taggers: int,
    full_observation: int,
    k: int,
    episode_length: int,
    cells: int,
    cell_size: Any,
    diagonal: Any,
    speed_norm: Any,
    two_pi: Any,
    observe_self: int,
    egocentric: int,
    grid_length: Any,
    mask: wp.array(dtype=wp.int32),
    # State in
    pending_reset: wp.array(dtype=wp.int32),
    t: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    agent_pos: wp.array3d(dtype=Any),
    agent_speed: wp.array2d(dtype=Any),
    agent_acc: wp.array2d(dtype=Any),
    agent_dir: wp.array2d(dtype=Any),
    agent_cell: wp.array2d(dtype=wp.int32),
    cell_start: wp.array2d(dtype=wp.int32),
    cell_agents: wp.array2d(dtype=wp.int32),
    # Scratch
    nn_dist: wp.array3d(dtype=Any),
    nn_idx: wp.array3d(dtype=wp.int32),
    # Outputs
    tagger_obs: wp.array3d(dtype=wp.float32),
    runner_obs: wp.array3d(dtype=wp.float32),
):
    """Agent i's observation, 7 feature rows (5 relative, other's type, other's in-game flag)
    then t / episode_length.  Full: every other agent in index order, 7 (A - 1) + 1 values
    (an agent out of the game keeps zeros in the relative rows and the time but still sees the
    type and in-game rows, as WarpDrive).  Partial: the k nearest agents in the game, zero-padded,
    7 k + 1 values (all zeros for an agent out of the game).  With ``observe_self`` (not
    WarpDrive's) five more values follow the time: cos(dir), sin(dir), speed / (v_max + eps),
    x / L, y / L of agent i itself (zeros for an agent out of the game).  With ``egocentric``
    (not WarpDrive's) two more rows close the observation: each listed agent's offset in i's
    own frame (ahead, left), zeros where the relative rows are zeros."""
    e, i = wp.tid()
    if not selected(select, e, pending_reset, mask):
        return
    out = runner_obs
    slot = i - num_taggers
    if i < num_taggers:
        out = tagger_obs
        slot = i
    num_agents = agent_pos.shape[1]
    me_alive = alive[e, i]
    time = wp.float32(0.0)
    if me_alive:
        time = wp.float32(t[e]) / wp.float32(episode_length)
    stride = k
    if full_observation != 0:
        stride = num_agents - 1
    ego = 7 * stride + 1 + 5 * observe_self
    if full_observation != 0:
        column = int(0)
        for j in range(num_agents):
            if j != i:
                if me_alive:
                    write_relative(out, e, slot, column, stride, i, j, agent_pos, agent_speed,
                                   agent_acc, agent_dir, diagonal, speed_norm, two_pi)
                    if egocentric != 0:
                        write_egocentric(out, e, slot, ego, column, stride, i, j, agent_pos, agent_dir, diagonal)
                else:
                    for f in range(5):
                        out[e, slot, f * stride + column] = wp.float32(0.0)
                    if egocentric != 0:
                        out[e, slot, ego + column] = wp.float32(0.0)
                        out[e, slot, ego + stride + column] = wp.float32(0.0)
                out[e, slot, 5 * stride + column] = wp.float32(0.0)
                if j < num_taggers:
                    out[e, slot, 5 * stride + column] = wp.float32(1.0)
                out[e, slot, 6 * stride + column] = wp.float32(0.0)
                if alive[e, j]:
                    out[e, slot, 6 * stride + column] = wp.float32(1.0)
                column += 1
        out[e, slot, 7 * stride] = time
    else:
        count = int(0)
        if me_alive:
            count = k_nearest(e, i, k, cells, cell_size, agent_pos, agent_cell, cell_start,
                              cell_agents, nn_dist, nn_idx)
        for column in range(k):
            if column < count:
                j = nn_idx[e, i, column]
                write_relative(out, e, slot, column, k, i, j, agent_pos, agent_speed, agent_acc,
                               agent_dir, diagonal, speed_norm, two_pi)
                if egocentric != 0:
                    write_egocentric(out, e, slot, ego, column, k, i, j, agent_pos, agent_dir, diagonal)
                out[e, slot, 5 * k + column] = wp.float32(0.0)
                if j < num_taggers:
                    out[e, slot, 5 * k + column] = wp.float32(1.0)
                out[e, slot, 6 * k + column] = wp.float32(1.0)  # listed agents are in the game
            else:
                for f in range(7):
                    out[e, slot, f * k + column] = wp.float32(0.0)
                if egocentric != 0:
                    out[e, slot, ego + column] = wp.float32(0.0)
                    out[e, slot, ego + k + column] = wp.float32(0.0)
        out[e, slot, 7 * k] = time
    if observe_self != 0:
        base = 7 * stride + 1
        for f in range(5):
            out[e, slot, base + f] = wp.float32(0.0)
        if me_alive:
            out[e, slot, base] = wp.float32(wp.cos(agent_dir[e, i]))
            out[e, slot, base + 1] = wp.float32(wp.sin(agent_dir[e, i]))
            out[e, slot, base + 2] = wp.float32(agent_speed[e, i] / speed_norm)
            out[e, slot, base + 3] = wp.float32(agent_pos[e, i, 0] / grid_length)
            out[e, slot, base + 4] = wp.float32(agent_pos[e, i, 1] / grid_length)


# ---------------------------------------------------------------------------------------------
# Tagging, rewards, done
# ---------------------------------------------------------------------------------------------


@wp.kernel
def tag_find_tagger(
    # Params
    num_taggers: int,
    cells: int,
    inv_cell: Any,
    tag_radius: Any,
    # State in
    pending_reset: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    agent_pos: wp.array3d(dtype=Any),
    cell_start: wp.array2d(dtype=wp.int32),
    cell_agents: wp.array2d(dtype=wp.int32),
    # Outputs
    tagged_by: wp.array2d(dtype=wp.int32),
):
    """Runner i in the game: its nearest tagger (ties to the lower index) if nearer than
    tag_radius = tagging_distance * L, else -1.  Only the cells overlapping the square around
    the tagging disc are scanned (slightly widened against rounding)."""
    e, i = wp.tid()
    if pending_reset[e] != 0:
        return
    tagged_by[e, i] = -1
    if i < num_taggers or not alive[e, i]:
        return
    x = agent_pos[e, i, 0]
    y = agent_pos[e, i, 1]
    reach = tag_radius * type(tag_radius)(1.001)
    x0 = cell_coord(x - reach, inv_cell, cells)
    x1 = cell_coord(x + reach, inv_cell, cells)
    y0 = cell_coord(y - reach, inv_cell, cells)
    y1 = cell_coord(y + reach, inv_cell, cells)
    best = int(-1)
    best_d = tag_radius
    for yy in range(y0, y1 + 1):
        for xx in range(x0, x1 + 1):
            cell = yy * cells + xx
            for p in range(cell_start[e, cell], cell_start[e, cell + 1]):
                j = cell_agents[e, p]
                if j < num_taggers:
                    d = pair_distance(agent_pos, e, i, j)
                    if d < tag_radius and (best < 0 or before(d, j, best_d, best)):
                        best = j
                        best_d = d
    tagged_by[e, i] = best


@wp.kernel
def tag_reward_done(
    # Params
    mode: int,
    episode_length: int,
    num_taggers: int,
    runner_exits: int,
    edge_hit_penalty: Any,
    step_reward_tagger: Any,
    step_reward_runner: Any,
    tag_reward_for_tagger: Any,
    tag_penalty_for_runner: Any,
    end_of_game_reward: Any,
    # State in
    edge_hit: wp.array2d(dtype=wp.int32),
    tagged_by: wp.array2d(dtype=wp.int32),
    # State out
    alive: wp.array2d(dtype=wp.bool),
    t: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
    reset_now: wp.array(dtype=wp.int32),
    # Outputs
    reward_out: wp.array2d(dtype=Any),
    agent_terminated: wp.array2d(dtype=wp.bool),
    agent_truncated: wp.array2d(dtype=wp.bool),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    tags_out: wp.array2d(dtype=wp.int32),
    runners_left_out: wp.array(dtype=wp.int32),
):
    """One world (owner thread), WarpDrive's compute_reward in runner order: agents in the game
    get edge penalty + step term; each tagged runner adds tag_penalty to itself and tag_reward
    to its nearest tagger (and leaves the game); at t == episode_length every runner still in
    the game gets end_of_game_reward.  terminated: no runner left; truncated: t >= episode_length
    otherwise.  Per agent: terminated once out of the game (or the world terminated), truncated
    with the world while still in the game."""
    e = wp.tid()
    num_agents = alive.shape[1]
    zero = type(edge_hit_penalty)(0.0)
    if pending_reset[e] != 0:
        # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
        pending_reset[e] = 0
        for i in range(num_agents):
            reward_out[e, i] = zero
            tags_out[e, i] = 0
            agent_terminated[e, i] = False
            agent_truncated[e, i] = False
        runners_left_out[e] = 0
        begin_pending_reset(e, terminated, truncated, reset_now)
        return
    for i in range(num_agents):
        r = zero
        if alive[e, i]:
            if edge_hit[e, i] != 0:
                r = r + edge_hit_penalty
            if i < num_taggers:
                r = r + step_reward_tagger
            else:
                r = r + step_reward_runner
        reward_out[e, i] = r
        tags_out[e, i] = 0
    for i in range(num_taggers, num_agents):
        tagger = tagged_by[e, i]
        if tagger >= 0:
            reward_out[e, i] = reward_out[e, i] + tag_penalty_for_runner
            reward_out[e, tagger] = reward_out[e, tagger] + tag_reward_for_tagger
            tags_out[e, tagger] = tags_out[e, tagger] + 1
            tags_out[e, i] = 1
            if runner_exits != 0:
                alive[e, i] = False
    steps = t[e]
    left = int(0)
    for i in range(num_taggers, num_agents):
        if alive[e, i]:
            left += 1
            if steps == episode_length:
                reward_out[e, i] = reward_out[e, i] + end_of_game_reward
    term = left == 0
    trunc = steps >= episode_length and not term
    for i in range(num_agents):
        agent_terminated[e, i] = term or not alive[e, i]
        agent_truncated[e, i] = trunc and alive[e, i]
    runners_left_out[e] = left
    end_step(e, term, trunc, mode, terminated, truncated, reset_now, pending_reset)


# ---------------------------------------------------------------------------------------------
# Autoreset
# ---------------------------------------------------------------------------------------------


@wp.kernel
def tag_copy_final(
    # State in
    reset_now: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    tagger_obs: wp.array3d(dtype=wp.float32),
    runner_obs: wp.array3d(dtype=wp.float32),
    # Outputs
    final_alive: wp.array2d(dtype=wp.bool),
    tagger_final_obs: wp.array3d(dtype=wp.float32),
    runner_final_obs: wp.array3d(dtype=wp.float32),
):
    """SAME_STEP: keep agent i's last observation and in-game flag of a world about to be reset."""
    e, i = wp.tid()
    if reset_now[e] == 0:
        return
    final_alive[e, i] = alive[e, i]
    num_taggers = tagger_obs.shape[1]
    if i < num_taggers:
        for f in range(tagger_obs.shape[2]):
            tagger_final_obs[e, i, f] = tagger_obs[e, i, f]
    else:
        for f in range(runner_obs.shape[2]):
            runner_final_obs[e, i - num_taggers, f] = runner_obs[e, i - num_taggers, f]


@wp.kernel
def tag_reset(
    # Params
    grid_length: Any,
    half_pi: Any,
    world_seed: wp.array(dtype=wp.int32),
    # State in
    reset_now: wp.array(dtype=wp.int32),
    # State out
    episode: wp.array(dtype=wp.int32),
    t: wp.array(dtype=wp.int32),
    alive: wp.array2d(dtype=wp.bool),
    agent_pos: wp.array3d(dtype=Any),
    agent_speed: wp.array2d(dtype=Any),
    agent_dir: wp.array2d(dtype=Any),
    agent_acc: wp.array2d(dtype=Any),
    agent_vel: wp.array3d(dtype=Any),
):
    """Fresh random start of a flagged world from its counter-based stream (seed_e, episode_e):
    per agent x, y ~ U[0, L), heading uniform in {0, pi/2, pi, 3pi/2}, speed and acceleration 0,
    everyone in the game."""
    e = wp.tid()
    if reset_now[e] == 0:
        return
    state = wp.rand_init(world_seed[e], episode[e])
    zero = type(grid_length)(0.0)
    for i in range(agent_pos.shape[1]):
        agent_pos[e, i, 0] = grid_length * type(grid_length)(wp.randf(state))
        agent_pos[e, i, 1] = grid_length * type(grid_length)(wp.randf(state))
        quarter = wp.min(int(wp.randf(state) * float(NUM_HEADINGS)), NUM_HEADINGS - 1)
        agent_dir[e, i] = half_pi * type(grid_length)(float(quarter))
        agent_speed[e, i] = zero
        agent_acc[e, i] = zero
        agent_vel[e, i, 0] = zero
        agent_vel[e, i, 1] = zero
        alive[e, i] = True
    start_episode(e, episode, t)
