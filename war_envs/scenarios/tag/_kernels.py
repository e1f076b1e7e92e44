"""Warp kernels of ``Tag-v0`` (WarpDrive ``TagContinuous`` rules), written once for float32 and
float64 worlds.  Arrays are indexed ``[world, agent(, component)]``; agents ``0..T-1`` are the
taggers, ``T..A-1`` the runners.  Every kernel takes the world struct ``w`` (``world_struct``:
parameters, episode state, scratch and outputs of every world), plus the launch's own choices.

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

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode  # noqa: F401
from war_envs.core.fields import module_kernels, struct_type

wp.set_module_options(KERNEL_MODULE_OPTIONS)


# Which worlds a grid/observe launch touches.
SELECT_STEPPING = wp.constant(0)  # every world not waiting for a NEXT_STEP reset
SELECT_RESET = wp.constant(1)  # worlds flagged in reset_now (reset by this launch's step or call)
SELECT_REQUESTED = wp.constant(2)  # worlds flagged in observe_mask (reset / set_state / clone_worlds)

# Number of starting headings: {0, pi/2, pi, 3pi/2}.
NUM_HEADINGS = wp.constant(4)


def struct_fields(F) -> dict:
    """The fields of a Tag world struct in float type ``F``."""
    return {
        # Params
        "mode": int, "num_taggers": int, "episode_length": int, "runner_exits": int,
        "full_observation": int, "k": int, "observe_self": int, "egocentric": int, "cells": int,
        "grid_length": F, "max_speed": F, "skill_tagger": F, "skill_runner": F, "two_pi": F,
        "half_pi": F, "diagonal": F, "speed_norm": F, "cell_size": F, "inv_cell": F, "tag_radius": F,
        "edge_hit_penalty": F, "step_reward_tagger": F, "step_reward_runner": F,
        "tag_reward_for_tagger": F, "tag_penalty_for_runner": F, "end_of_game_reward": F,
        "acceleration_table": wp.array(dtype=F), "turn_table": wp.array(dtype=F),
        # State
        "world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
        "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
        "reset_now": wp.array(dtype=wp.int32), "observe_mask": wp.array(dtype=wp.int32),
        "alive": wp.array2d(dtype=wp.bool), "agent_pos": wp.array3d(dtype=F),
        "agent_speed": wp.array2d(dtype=F), "agent_dir": wp.array2d(dtype=F),
        "agent_acc": wp.array2d(dtype=F), "agent_vel": wp.array3d(dtype=F),
        # Actions
        "action": wp.array3d(dtype=wp.int32),
        # Scratch
        "tagged_by": wp.array2d(dtype=wp.int32), "agent_cell": wp.array2d(dtype=wp.int32),
        "cell_start": wp.array2d(dtype=wp.int32), "cell_cursor": wp.array2d(dtype=wp.int32),
        "cell_agents": wp.array2d(dtype=wp.int32), "nn_dist": wp.array3d(dtype=F),
        "nn_idx": wp.array3d(dtype=wp.int32),
        # Outputs
        "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
        "truncated": wp.array(dtype=wp.bool), "agent_terminated": wp.array2d(dtype=wp.bool),
        "agent_truncated": wp.array2d(dtype=wp.bool), "edge_hit": wp.array2d(dtype=wp.int32),
        "tags": wp.array2d(dtype=wp.int32), "runners_left": wp.array(dtype=wp.int32),
        "tagger_obs": wp.array3d(dtype=wp.float32), "runner_obs": wp.array3d(dtype=wp.float32),
        "final_alive": wp.array2d(dtype=wp.bool), "tagger_final_obs": wp.array3d(dtype=wp.float32),
        "runner_final_obs": wp.array3d(dtype=wp.float32),
    }


def world_struct(F):
    """The ``wp.struct`` type of Tag worlds in float type ``F`` (made once per process)."""
    return struct_type(f"TagWorld_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


@wp.func
def selected(w: Any, select: int, e: int):
    """Whether world e takes part in this launch (see SELECT_*)."""
    if select == SELECT_STEPPING:
        return w.pending_reset[e] == 0
    if select == SELECT_RESET:
        return w.reset_now[e] != 0
    return w.observe_mask[e] != 0


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
def max_speed_of(w: Any, i: int):
    """max_speed * skill level of agent i's type."""
    if i < w.num_taggers:
        return w.max_speed * w.skill_tagger
    return w.max_speed * w.skill_runner


# ---------------------------------------------------------------------------------------------
# Movement
# ---------------------------------------------------------------------------------------------


def move_kernel(World):
    def tag_move(w: World):
        """WarpDrive's per-agent update: dir = (dir + turn) mod 2pi; acc += d_acc;
        speed = clip(speed + acc, 0, max_speed * skill); acc = 0 at either bound;
        p += speed * (cos, sin); p clipped to [0, L]^2.  Agents out of the game get direction
        and speed 0."""
        e, i = wp.tid()
        if w.pending_reset[e] != 0:
            return
        grid_length = w.grid_length
        two_pi = w.two_pi
        zero = type(grid_length)(0.0)
        still = zero
        if w.alive[e, i]:
            still = type(grid_length)(1.0)
        acc = w.agent_acc[e, i] + w.acceleration_table[w.action[e, i, 0]]
        heading = wp.mod(w.agent_dir[e, i] + w.turn_table[w.action[e, i, 1]], two_pi) * still
        if heading < zero:
            heading = two_pi + heading
        top = max_speed_of(w, i)
        speed = wp.min(top, wp.max(zero, w.agent_speed[e, i] + acc)) * still
        if speed <= zero or speed >= top:
            acc = zero
        vx = speed * wp.cos(heading)
        vy = speed * wp.sin(heading)
        x = w.agent_pos[e, i, 0] + vx
        y = w.agent_pos[e, i, 1] + vy
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
        w.agent_pos[e, i, 0] = x
        w.agent_pos[e, i, 1] = y
        w.agent_speed[e, i] = speed
        w.agent_dir[e, i] = heading
        w.agent_acc[e, i] = acc
        w.agent_vel[e, i, 0] = vx
        w.agent_vel[e, i, 1] = vy
        w.edge_hit[e, i] = crossed

    return tag_move


# ---------------------------------------------------------------------------------------------
# Per-world cell grid (counting sort, owner thread)
# ---------------------------------------------------------------------------------------------


def build_grid_kernel(World):
    def tag_build_grid(
        w: World,
        # Params
        select: int,
        advance_clock: int,
    ):
        """One world: advance its clock (step path), then list the agents in the game by cell:
        cell c holds cell_agents[cell_start[c] : cell_start[c + 1]], in increasing agent index."""
        e = wp.tid()
        if not selected(w, select, e):
            return
        if advance_clock != 0:
            w.t[e] = w.t[e] + 1
        cells = w.cells
        inv_cell = w.inv_cell
        agent_pos = w.agent_pos
        agent_cell = w.agent_cell
        cell_start = w.cell_start
        cell_cursor = w.cell_cursor
        num_cells = cells * cells
        num_agents = agent_pos.shape[1]
        for c in range(num_cells + 1):
            cell_start[e, c] = 0
        for i in range(num_agents):
            if w.alive[e, i]:
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
                w.cell_agents[e, slot] = i
                cell_cursor[e, c] = slot + 1

    return tag_build_grid


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
def write_relative(w: Any, out: wp.array3d(dtype=wp.float32), e: int, slot: int, column: int, stride: int,
                   i: int, j: int):
    """WarpDrive's five relative features of agent j seen by i, feature-major (feature f of
    column c at f * stride + c): dx/(sqrt2 L), dy/(sqrt2 L), dspeed/(v_max + eps),
    dacc/(v_max + eps), ddir/2pi."""
    out[e, slot, column] = wp.float32((w.agent_pos[e, j, 0] - w.agent_pos[e, i, 0]) / w.diagonal)
    out[e, slot, stride + column] = wp.float32((w.agent_pos[e, j, 1] - w.agent_pos[e, i, 1]) / w.diagonal)
    out[e, slot, 2 * stride + column] = wp.float32((w.agent_speed[e, j] - w.agent_speed[e, i]) / w.speed_norm)
    out[e, slot, 3 * stride + column] = wp.float32((w.agent_acc[e, j] - w.agent_acc[e, i]) / w.speed_norm)
    out[e, slot, 4 * stride + column] = wp.float32((w.agent_dir[e, j] - w.agent_dir[e, i]) / w.two_pi)


@wp.func
def write_egocentric(w: Any, out: wp.array3d(dtype=wp.float32), e: int, slot: int, base: int, column: int,
                     stride: int, i: int, j: int):
    """Agent j's offset from i in i's own frame, two rows from ``base`` (feature-major):
    ahead = (dx cos + dy sin)/(sqrt2 L), left = (-dx sin + dy cos)/(sqrt2 L)."""
    dx = w.agent_pos[e, j, 0] - w.agent_pos[e, i, 0]
    dy = w.agent_pos[e, j, 1] - w.agent_pos[e, i, 1]
    c = wp.cos(w.agent_dir[e, i])
    s = wp.sin(w.agent_dir[e, i])
    out[e, slot, base + column] = wp.float32((dx * c + dy * s) / w.diagonal)
    out[e, slot, base + stride + column] = wp.float32((dy * c - dx * s) / w.diagonal)


@wp.func(inline=True)
def observe_everyone(w: Any, out: wp.array3d(dtype=wp.float32), e: int, slot: int, i: int, stride: int, ego: int,
                     me_alive: bool):
    """The full observation's rows: every other agent in index order (an agent out of the game
    sees zeros in the relative and egocentric rows, the others' type and in-game flag)."""
    column = int(0)
    for j in range(w.agent_pos.shape[1]):
        if j != i:
            if me_alive:
                write_relative(w, out, e, slot, column, stride, i, j)
                if w.egocentric != 0:
                    write_egocentric(w, out, e, slot, ego, column, stride, i, j)
            else:
                for f in range(5):
                    out[e, slot, f * stride + column] = wp.float32(0.0)
                if w.egocentric != 0:
                    out[e, slot, ego + column] = wp.float32(0.0)
                    out[e, slot, ego + stride + column] = wp.float32(0.0)
            out[e, slot, 5 * stride + column] = wp.float32(0.0)
            if j < w.num_taggers:
                out[e, slot, 5 * stride + column] = wp.float32(1.0)
            out[e, slot, 6 * stride + column] = wp.float32(0.0)
            if w.alive[e, j]:
                out[e, slot, 6 * stride + column] = wp.float32(1.0)
            column += 1


@wp.func(inline=True)
def observe_nearest(w: Any, out: wp.array3d(dtype=wp.float32), e: int, slot: int, i: int, ego: int,
                    me_alive: bool):
    """The partial observation's rows: the k nearest agents in the game, nearest first,
    zero-padded (all zeros for an agent out of the game)."""
    k = w.k
    count = int(0)
    if me_alive:
        count = k_nearest(e, i, k, w.cells, w.cell_size, w.agent_pos, w.agent_cell, w.cell_start,
                          w.cell_agents, w.nn_dist, w.nn_idx)
    for column in range(k):
        if column < count:
            j = w.nn_idx[e, i, column]
            write_relative(w, out, e, slot, column, k, i, j)
            if w.egocentric != 0:
                write_egocentric(w, out, e, slot, ego, column, k, i, j)
            out[e, slot, 5 * k + column] = wp.float32(0.0)
            if j < w.num_taggers:
                out[e, slot, 5 * k + column] = wp.float32(1.0)
            out[e, slot, 6 * k + column] = wp.float32(1.0)  # listed agents are in the game
        else:
            for f in range(7):
                out[e, slot, f * k + column] = wp.float32(0.0)
            if w.egocentric != 0:
                out[e, slot, ego + column] = wp.float32(0.0)
                out[e, slot, ego + k + column] = wp.float32(0.0)


@wp.func(inline=True)
def observe_own_state(w: Any, out: wp.array3d(dtype=wp.float32), e: int, slot: int, i: int, base: int,
                      me_alive: bool):
    """``observe_self``'s five values from ``base``: cos(dir), sin(dir), speed / (v_max + eps),
    x / L, y / L (zeros for an agent out of the game)."""
    for f in range(5):
        out[e, slot, base + f] = wp.float32(0.0)
    if me_alive:
        out[e, slot, base] = wp.float32(wp.cos(w.agent_dir[e, i]))
        out[e, slot, base + 1] = wp.float32(wp.sin(w.agent_dir[e, i]))
        out[e, slot, base + 2] = wp.float32(w.agent_speed[e, i] / w.speed_norm)
        out[e, slot, base + 3] = wp.float32(w.agent_pos[e, i, 0] / w.grid_length)
        out[e, slot, base + 4] = wp.float32(w.agent_pos[e, i, 1] / w.grid_length)


def observe_kernel(World):
    def tag_observe(
        w: World,
        # Params
        select: int,
    ):
        """Agent i's observation, 7 feature rows (5 relative, other's type, other's in-game flag)
        then t / episode_length.  Full: every other agent in index order, 7 (A - 1) + 1 values
        (an agent out of the game keeps zeros in the relative rows and the time but still sees
        the type and in-game rows, as WarpDrive).  Partial: the k nearest agents in the game,
        zero-padded, 7 k + 1 values (all zeros for an agent out of the game).  With
        ``observe_self`` (not WarpDrive's) five more values follow the time: cos(dir), sin(dir),
        speed / (v_max + eps), x / L, y / L of agent i itself (zeros for an agent out of the
        game).  With ``egocentric`` (not WarpDrive's) two more rows close the observation: each
        listed agent's offset in i's own frame (ahead, left), zeros where the relative rows are
        zeros."""
        e, i = wp.tid()
        if not selected(w, select, e):
            return
        num_taggers = w.num_taggers
        k = w.k
        out = w.runner_obs
        slot = i - num_taggers
        if i < num_taggers:
            out = w.tagger_obs
            slot = i
        num_agents = w.agent_pos.shape[1]
        me_alive = w.alive[e, i]
        time = wp.float32(0.0)
        if me_alive:
            time = wp.float32(w.t[e]) / wp.float32(w.episode_length)
        stride = k
        if w.full_observation != 0:
            stride = num_agents - 1
        ego = 7 * stride + 1 + 5 * w.observe_self
        if w.full_observation != 0:
            observe_everyone(w, out, e, slot, i, stride, ego, me_alive)
        else:
            observe_nearest(w, out, e, slot, i, ego, me_alive)
        out[e, slot, 7 * stride] = time
        if w.observe_self != 0:
            observe_own_state(w, out, e, slot, i, 7 * stride + 1, me_alive)

    return tag_observe


# ---------------------------------------------------------------------------------------------
# Tagging, rewards, done
# ---------------------------------------------------------------------------------------------


def find_tagger_kernel(World):
    def tag_find_tagger(w: World):
        """Runner i in the game: its nearest tagger (ties to the lower index) if nearer than
        tag_radius = tagging_distance * L, else -1.  Only the cells overlapping the square
        around the tagging disc are scanned (slightly widened against rounding)."""
        e, i = wp.tid()
        if w.pending_reset[e] != 0:
            return
        w.tagged_by[e, i] = -1
        num_taggers = w.num_taggers
        if i < num_taggers or not w.alive[e, i]:
            return
        cells = w.cells
        inv_cell = w.inv_cell
        tag_radius = w.tag_radius
        agent_pos = w.agent_pos
        cell_start = w.cell_start
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
                    j = w.cell_agents[e, p]
                    if j < num_taggers:
                        d = pair_distance(agent_pos, e, i, j)
                        if d < tag_radius and (best < 0 or before(d, j, best_d, best)):
                            best = j
                            best_d = d
        w.tagged_by[e, i] = best

    return tag_find_tagger


def reward_done_kernel(World):
    def tag_reward_done(w: World):
        """One world (owner thread), WarpDrive's compute_reward in runner order: agents in the
        game get edge penalty + step term; each tagged runner adds tag_penalty to itself and
        tag_reward to its nearest tagger (and leaves the game); at t == episode_length every
        runner still in the game gets end_of_game_reward.  terminated: no runner left;
        truncated: t >= episode_length otherwise.  Per agent: terminated once out of the game
        (or the world terminated), truncated with the world while still in the game."""
        e = wp.tid()
        num_agents = w.alive.shape[1]
        num_taggers = w.num_taggers
        episode_length = w.episode_length
        zero = type(w.edge_hit_penalty)(0.0)
        if w.pending_reset[e] != 0:
            # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
            w.pending_reset[e] = 0
            for i in range(num_agents):
                w.reward[e, i] = zero
                w.tags[e, i] = 0
                w.agent_terminated[e, i] = False
                w.agent_truncated[e, i] = False
            w.runners_left[e] = 0
            begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            return
        for i in range(num_agents):
            r = zero
            if w.alive[e, i]:
                if w.edge_hit[e, i] != 0:
                    r = r + w.edge_hit_penalty
                if i < num_taggers:
                    r = r + w.step_reward_tagger
                else:
                    r = r + w.step_reward_runner
            w.reward[e, i] = r
            w.tags[e, i] = 0
        for i in range(num_taggers, num_agents):
            tagger = w.tagged_by[e, i]
            if tagger >= 0:
                w.reward[e, i] = w.reward[e, i] + w.tag_penalty_for_runner
                w.reward[e, tagger] = w.reward[e, tagger] + w.tag_reward_for_tagger
                w.tags[e, tagger] = w.tags[e, tagger] + 1
                w.tags[e, i] = 1
                if w.runner_exits != 0:
                    w.alive[e, i] = False
        steps = w.t[e]
        left = int(0)
        for i in range(num_taggers, num_agents):
            if w.alive[e, i]:
                left += 1
                if steps == episode_length:
                    w.reward[e, i] = w.reward[e, i] + w.end_of_game_reward
        term = left == 0
        trunc = steps >= episode_length and not term
        for i in range(num_agents):
            w.agent_terminated[e, i] = term or not w.alive[e, i]
            w.agent_truncated[e, i] = trunc and w.alive[e, i]
        w.runners_left[e] = left
        end_step(e, term, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)

    return tag_reward_done


# ---------------------------------------------------------------------------------------------
# Autoreset
# ---------------------------------------------------------------------------------------------


def copy_final_kernel(World):
    def tag_copy_final(w: World):
        """SAME_STEP: keep agent i's last observation and in-game flag of a world about to be
        reset."""
        e, i = wp.tid()
        if w.reset_now[e] == 0:
            return
        w.final_alive[e, i] = w.alive[e, i]
        num_taggers = w.num_taggers
        if i < num_taggers:
            for f in range(w.tagger_obs.shape[2]):
                w.tagger_final_obs[e, i, f] = w.tagger_obs[e, i, f]
        else:
            for f in range(w.runner_obs.shape[2]):
                w.runner_final_obs[e, i - num_taggers, f] = w.runner_obs[e, i - num_taggers, f]

    return tag_copy_final


def reset_kernel(World):
    def tag_reset(w: World):
        """Fresh random start of a flagged world from its counter-based stream (seed_e,
        episode_e): per agent x, y ~ U[0, L), heading uniform in {0, pi/2, pi, 3pi/2}, speed and
        acceleration 0, everyone in the game."""
        e = wp.tid()
        if w.reset_now[e] == 0:
            return
        state = wp.rand_init(w.world_seed[e], w.episode[e])
        grid_length = w.grid_length
        zero = type(grid_length)(0.0)
        for i in range(w.agent_pos.shape[1]):
            w.agent_pos[e, i, 0] = grid_length * type(grid_length)(wp.randf(state))
            w.agent_pos[e, i, 1] = grid_length * type(grid_length)(wp.randf(state))
            quarter = wp.min(int(wp.randf(state) * float(NUM_HEADINGS)), NUM_HEADINGS - 1)
            w.agent_dir[e, i] = w.half_pi * type(grid_length)(float(quarter))
            w.agent_speed[e, i] = zero
            w.agent_acc[e, i] = zero
            w.agent_vel[e, i, 0] = zero
            w.agent_vel[e, i, 1] = zero
            w.alive[e, i] = True
        start_episode(e, w.episode, w.t)

    return tag_reset


_FACTORIES = (move_kernel, build_grid_kernel, observe_kernel, find_tagger_kernel, reward_done_kernel,
              copy_final_kernel, reset_kernel)


def kernels(F) -> dict:
    """Tag's kernels for float type ``F`` by name (``"tag_move"`` ...), in one Warp module (made
    once per process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_tag_{F.__name__}", lambda: [factory(World) for factory in _FACTORIES])
