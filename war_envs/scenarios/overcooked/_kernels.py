"""Warp kernels of ``Overcooked-v0`` (JaxMARL 0.2.0's ``overcooked``), written once for float32 and
float64 worlds.  Every kernel takes the world struct ``w`` (``world_struct``) and runs ``chunk``
consecutive worlds a thread (``BatchedEnv._launch_chunked``).

A world is JaxMARL's state: ``agent_pos [E, 2, 2]`` (column x, row y), ``agent_dir_idx [E, 2]``,
``agent_inv [E, 2]`` (object indices) and ``maze_map [E, H, W, 3]`` (JaxMARL's ``maze_map``
without its constant padding of walls: per cell [object, colour, pot status or agent
direction]); the layout (``base_map``: the cells' objects with empty pots and no agents, the pot
cells, the floor cells, the start cells) is shared by every world.

Step (``overcooked_step``), in JaxMARL's ``step_agents`` order: moves (walls, piles, pots and
serving spots block; two agents that would end on one cell or swap stay), directions, agent 0's
interaction then agent 1's (on the map and inventories agent 0 left), the agents' cells in the
map, the pots cook, the clock advances; then the episode protocol and both observations.  The
step draws nothing; a reset draws the directions (and, with ``random_reset``, the cells, the pot
statuses and the inventories) from the world's stream.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import (  # noqa: F401  (this module's API)  # noqa: F401
    AUTORESET_DISABLED,
    AUTORESET_NEXT_STEP,
    AUTORESET_SAME_STEP,
    KERNEL_MODULE_OPTIONS,
    begin_pending_reset,
    end_step,
    start_episode,
)
from war_envs.core.fields import clock_fields, flag_fields, module_kernels, struct_type

wp.set_module_options(KERNEL_MODULE_OPTIONS)

#: JaxMARL's actions: 0 up, 1 down, 2 right, 3 left, 4 stay, 5 interact
NUM_ACTIONS = 6
#: JaxMARL's ``OBJECT_TO_INDEX``
EMPTY, WALL, ONION, ONION_PILE, PLATE, PLATE_PILE, GOAL, POT, DISH, AGENT = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
#: JaxMARL's ``COLOR_TO_INDEX`` of each object (``OBJECT_INDEX_TO_VEC``'s second column)
OBJECT_COLOR = (0, 0, 5, 4, 4, 6, 6, 1, 7, 6, 0)
#: what an agent may hold (``agent_inv``): empty, onion, plate, dish (JaxMARL's random_reset draws these)
INVENTORY = (EMPTY, ONION, PLATE, DISH)
#: JaxMARL's ``DIR_TO_VEC``, (dx, dy) per direction index: 0 north, 1 south, 2 east, 3 west
DIRS = ((0, -1), (0, 1), (1, 0), (-1, 0))
POT_EMPTY_STATUS, POT_FULL_STATUS, POT_READY_STATUS = 23, 20, 0
DELIVERY_REWARD = 20
#: JaxMARL's ``BASE_REW_SHAPING_PARAMS``
PLACEMENT_IN_POT_REW, PLATE_PICKUP_REWARD, SOUP_PICKUP_REWARD = 3, 3, 5
URGENCY_CUTOFF = 40
NUM_CHANNELS = 26


def struct_fields(F) -> dict:
    """The fields of an Overcooked world struct whose rewards have float type ``F``."""
    return {
        # Params (the layout, shared by every world)
        "mode": int, "max_steps": int, "height": int, "width": int, "random_reset": int, "random_agents": int,
        "shaped_reward_coef": wp.float64,
        "base_map": wp.array3d(dtype=wp.int32), "pot_cells": wp.array(dtype=wp.int32),
        "floor_cells": wp.array(dtype=wp.int32), "start_cells": wp.array(dtype=wp.int32),
        # State
        **clock_fields(),
        "agent_pos": wp.array3d(dtype=wp.int32), "agent_dir_idx": wp.array2d(dtype=wp.int32),
        "agent_inv": wp.array2d(dtype=wp.int32), "maze_map": wp.array4d(dtype=wp.int32),
        # Actions
        "action": wp.array2d(dtype=wp.int32),
        # Outputs
        **flag_fields(F),
        "shaped_reward": wp.array2d(dtype=F), "deliveries": wp.array(dtype=wp.int32),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
    }


def world_struct(F):
    """The ``wp.struct`` type of Overcooked worlds with rewards in ``F`` (made once per process)."""
    return struct_type(f"Overcooked_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def dir_x(d: int):
    """JaxMARL's ``DIR_TO_VEC[d][0]``: 0 north, 1 south, 2 east (+x), 3 west."""
    if d == 2:
        return 1
    if d == 3:
        return -1
    return 0


@wp.func(inline=True)
def dir_y(d: int):
    if d == 0:
        return -1
    if d == 1:
        return 1
    return 0


@wp.func(inline=True)
def object_color(obj: int):
    """JaxMARL's ``COLOR_TO_INDEX`` of an object of index 3 (onion) .. 9 (dish) or wall."""
    c = int(0)
    if obj == 2:
        c = 5
    elif obj == 3 or obj == 4:
        c = 4
    elif obj == 5 or obj == 6 or obj == 9:
        c = 6
    elif obj == 7:
        c = 1
    elif obj == 8:
        c = 7
    return c


@wp.func(inline=True)
def set_cell(w: Any, e: int, x: int, y: int, obj: int, c: int, s: int):
    w.maze_map[e, y, x, 0] = obj
    w.maze_map[e, y, x, 1] = c
    w.maze_map[e, y, x, 2] = s


@wp.func(inline=True)
def uniform_int(key: int, k: int, n: int):
    """Draw k of stream ``key``: exactly uniform on {0, ..., n - 1} (32-bit draws below
    2^32 mod n are redrawn)."""
    state = wp.rand_init(key, k)
    u = wp.randu(state)
    low = (wp.uint32(0) - wp.uint32(n)) % wp.uint32(n)
    while u < low:
        u = wp.randu(state)
    return int(u % wp.uint32(n))


@wp.func(inline=True)
def target_cell(w: Any, e: int, i: int):
    """The flat cell agent i ends on if nothing else stops it: the cell in the direction of a
    move action (clamped into the grid) if it is floor, else its own."""
    a = w.action[e, i]
    x = w.agent_pos[e, i, 0]
    y = w.agent_pos[e, i, 1]
    cell = y * w.width + x
    if a < 4:
        nx = wp.clamp(x + dir_x(a), 0, w.width - 1)
        ny = wp.clamp(y + dir_y(a), 0, w.height - 1)
        if w.base_map[ny, nx, 0] == 1:
            cell = ny * w.width + nx
    return cell


@wp.func
def plate_pickup_shaped(w: Any, e: int):
    """JaxMARL's plate pickup shaping (3) when no plate lies on a counter and fewer plates are in
    hands than pots are not empty (on the map before the pickup), else 0."""
    hands = int(0)
    for i in range(2):
        if w.agent_inv[e, i] == 5:
            hands += 1
    pots = int(0)
    plates = int(0)
    for y in range(w.height):
        for x in range(w.width):
            obj = w.maze_map[e, y, x, 0]
            if obj == 8 and w.maze_map[e, y, x, 2] != 23:
                pots += 1
            if obj == 5:
                plates += 1
    shaped = int(0)
    if plates == 0 and hands < pots:
        shaped = 3
    return shaped


@wp.func
def interact(w: Any, e: int, i: int):
    """Agent i interacts with the cell it faces (JaxMARL's ``process_interact``): its new
    inventory into ``agent_inv``, the cell into ``maze_map``; returns 1000 * (the cell's content
    changed) + 100 * (a delivery) + its shaped reward."""
    x = w.agent_pos[e, i, 0] + dir_x(w.agent_dir_idx[e, i])
    y = w.agent_pos[e, i, 1] + dir_y(w.agent_dir_idx[e, i])
    obj = w.maze_map[e, y, x, 0]
    inv = w.agent_inv[e, i]
    out = int(0)
    if obj == 8:
        s = w.maze_map[e, y, x, 2]
        if s > 20 and inv == 3:  # an onion into the pot
            s = s - 1
            inv = 1
            out = 1003
        elif s == 0 and inv == 5:  # the ready soup onto the plate
            s = 23
            inv = 9
            out = 1005
        set_cell(w, e, x, y, 8, 7, s)
    elif obj != 10 and w.base_map[y, x, 0] != 1:  # a counter, pile or serving spot
        table_empty = obj == 2 or obj == 1
        pile = obj == 4 or obj == 6
        pickable = obj == 3 or obj == 5 or obj == 9
        if inv == 1 and (not table_empty) and (pile or pickable):
            new_inv = obj
            if obj == 6:
                new_inv = 5
            elif obj == 4:
                new_inv = 3
            if new_inv == 5:
                out = plate_pickup_shaped(w, e)
            if pickable:
                set_cell(w, e, x, y, 2, 5, 0)
                out += 1000
            inv = new_inv
        elif table_empty and inv != 1:  # drop on an empty counter
            set_cell(w, e, x, y, inv, object_color(inv), 0)
            inv = 1
            out = 1000
        elif obj == 7 and inv == 9:  # deliver the soup
            inv = 1
            out = 100
    w.agent_inv[e, i] = inv
    return out


@wp.func
def refresh(w: Any, e: int, p0: int, p1: int, t0: int, t1: int, was0: int, was1: int, faced0: int, faced1: int):
    """The observations of the cells a step changed besides the pots: an agent's old and new
    cells if it moved, its cell if it turned or its hand changed (``was_i``: its direction * 16
    + inventory before the step), and the cells whose content an interaction changed
    (``faced_i``, -1: none)."""
    for i in range(2):
        p = wp.where(i == 0, p0, p1)
        t = wp.where(i == 0, t0, t1)
        was = wp.where(i == 0, was0, was1)
        if p != t:
            observe_cell(w, e, p, w.obs, 0.0, 0)
            observe_cell(w, e, t, w.obs, 0.0, 0)
        elif was != w.agent_dir_idx[e, i] * 16 + w.agent_inv[e, i]:
            observe_cell(w, e, t, w.obs, 0.0, 0)
    if faced0 >= 0:
        observe_cell(w, e, faced0, w.obs, 0.0, 0)
    if faced1 >= 0:
        observe_cell(w, e, faced1, w.obs, 0.0, 0)


@wp.func
def observe_cell(w: Any, e: int, c: int, out: wp.array3d(dtype=wp.float32), urgent: float, full: int):
    """Both agents' observation of flat cell ``c`` (JaxMARL's ``get_obs``, its (H, W, 26) grid
    flattened in C order: channel k of cell c at c * 26 + k); each agent sees its own position
    and direction layers first.  ``full == 0`` leaves the channels that never change within an
    episode's stretch of equal urgency alone (the tomato channels, always 0, and urgency)."""
    y = c // w.width
    x = c % w.width
    base = c * 26
    obj = w.maze_map[e, y, x, 0]
    s = int(0)
    if obj == 8:
        s = w.maze_map[e, y, x, 2]
    held = obj
    h0 = 0.0
    h1 = 0.0
    if w.agent_pos[e, 0, 0] == x and w.agent_pos[e, 0, 1] == y:
        h0 = 1.0
        held = w.agent_inv[e, 0]
    if w.agent_pos[e, 1, 0] == x and w.agent_pos[e, 1, 1] == y:
        h1 = 1.0
        held = w.agent_inv[e, 1]
    dish = wp.where(obj == 9 or (h0 + h1 > 0.0 and held == 9), 1, 0)
    in_pot = int(0)
    soup = 3 * dish
    timer = int(0)
    if obj == 8 and s >= 20:
        in_pot = wp.min(23 - s, 3)
    if obj == 8 and s < 20:
        soup += 3
        timer = s
    ready = dish + wp.where(obj == 8 and s == 0, 1, 0)
    for i in range(2):
        mine = wp.where(i == 0, h0, h1)
        other = wp.where(i == 0, h1, h0)
        out[e, i, base + 0] = mine
        out[e, i, base + 1] = other
        for k in range(4):
            out[e, i, base + 2 + k] = wp.where(w.agent_dir_idx[e, i] == k, mine, 0.0)
            out[e, i, base + 6 + k] = wp.where(w.agent_dir_idx[e, 1 - i] == k, other, 0.0)
        out[e, i, base + 10] = wp.where(held == 8, 1.0, 0.0)
        out[e, i, base + 11] = wp.where(held == 2, 1.0, 0.0)
        out[e, i, base + 12] = wp.where(held == 4, 1.0, 0.0)
        out[e, i, base + 14] = wp.where(held == 6, 1.0, 0.0)
        out[e, i, base + 15] = wp.where(held == 7, 1.0, 0.0)
        out[e, i, base + 16] = float(in_pot)
        out[e, i, base + 18] = float(soup)
        out[e, i, base + 20] = float(timer)
        out[e, i, base + 21] = float(ready)
        out[e, i, base + 22] = wp.where(held == 5, 1.0, 0.0)
        out[e, i, base + 23] = wp.where(held == 3, 1.0, 0.0)
        if full != 0:
            out[e, i, base + 13] = 0.0
            out[e, i, base + 17] = 0.0
            out[e, i, base + 19] = 0.0
            out[e, i, base + 24] = 0.0
            out[e, i, base + 25] = urgent


@wp.func
def observe_world(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Both agents' whole observations (every cell, ``observe_cell``)."""
    urgent = wp.where(w.max_steps - w.t[e] < 40, 1.0, 0.0)
    for c in range(w.height * w.width):
        observe_cell(w, e, c, out, urgent, 1)


@wp.func
def step_world(w: Any, e: int):
    """One step of world e (JaxMARL's ``step_agents``): rewards, shaped rewards and deliveries,
    and the observations of the cells that changed (``refresh``); returns 1 where every cell must
    be observed afresh instead (the urgency layer flips at the step's new clock), else 0."""
    t0 = target_cell(w, e, 0)
    t1 = target_cell(w, e, 1)
    p0 = w.agent_pos[e, 0, 1] * w.width + w.agent_pos[e, 0, 0]
    p1 = w.agent_pos[e, 1, 1] * w.width + w.agent_pos[e, 1, 0]
    if t0 == t1 or (t0 == p1 and t1 == p0):  # no collision, no swapping: nobody moves
        t0 = p0
        t1 = p1
    # interactions use the old cells and directions (interacting agents keep both)
    deliveries = int(0)
    faced0 = int(-1)
    faced1 = int(-1)
    was0 = w.agent_dir_idx[e, 0] * 16 + w.agent_inv[e, 0]
    was1 = w.agent_dir_idx[e, 1] * 16 + w.agent_inv[e, 1]
    for i in range(2):
        shaped = int(0)
        if w.action[e, i] == 5:
            d = w.agent_dir_idx[e, i]
            faced = (w.agent_pos[e, i, 1] + dir_y(d)) * w.width + w.agent_pos[e, i, 0] + dir_x(d)
            out = interact(w, e, i)
            if out >= 1000:  # the faced cell changed
                faced0 = wp.where(i == 0, faced, faced0)
                faced1 = wp.where(i == 1, faced, faced1)
            deliveries += (out % 1000) // 100
            shaped = out % 100
        w.shaped_reward[e, i] = type(w.reward[e, 0])(float(shaped))
    for i in range(2):
        set_cell(w, e, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], 1, 0, 0)
    for i in range(2):
        a = w.action[e, i]
        if a < 4:
            w.agent_dir_idx[e, i] = a
        cell = wp.where(i == 0, t0, t1)
        w.agent_pos[e, i, 0] = cell % w.width
        w.agent_pos[e, i, 1] = cell // w.width
        set_cell(w, e, cell % w.width, cell // w.width, 10, 2 * i, w.agent_dir_idx[e, i])
    full = wp.where((w.max_steps - w.t[e] - 1 < 40) != (w.max_steps - w.t[e] < 40), 1, 0)
    for p in range(w.pot_cells.shape[0]):  # the pots cook
        y = w.pot_cells[p] // w.width
        x = w.pot_cells[p] % w.width
        s = w.maze_map[e, y, x, 2]
        if s <= 20 and s > 0:
            w.maze_map[e, y, x, 2] = s - 1
            if full == 0:
                observe_cell(w, e, w.pot_cells[p], w.obs, 0.0, 0)
    w.deliveries[e] = deliveries
    reward = type(w.reward[e, 0])(float(deliveries * 20))
    coef = type(w.reward[e, 0])(w.shaped_reward_coef)
    for i in range(2):  # (coef 0: JaxMARL's sparse reward exactly)
        w.reward[e, i] = reward + coef * w.shaped_reward[e, i]
    if full == 0:
        refresh(w, e, p0, p1, t0, t1, was0, was1, faced0, faced1)
    return full


@wp.func
def draw_start(w: Any, e: int, key: int):
    """JaxMARL's ``reset``: the layout's map, both directions uniform (draws 0, 1); with
    ``random_agents`` two distinct uniform floor cells (draws 2, 3); with ``random_reset`` each
    pot's status uniform on 0..23 (draws 4 ..) and each inventory uniform on empty, onion,
    plate, dish (the two draws after the pots'); else the layout's cells, empty pots and hands."""
    for y in range(w.height):
        for x in range(w.width):
            for c in range(3):
                w.maze_map[e, y, x, c] = w.base_map[y, x, c]
    n_pots = w.pot_cells.shape[0]
    for i in range(2):
        w.agent_dir_idx[e, i] = uniform_int(key, i, 4)
        cell = w.start_cells[i]
        if w.random_agents != 0:
            n = w.floor_cells.shape[0]
            first = uniform_int(key, 2, n)
            k = first
            if i == 1:
                k = uniform_int(key, 3, n - 1)
                if k >= first:
                    k += 1
            cell = w.floor_cells[k]
        w.agent_pos[e, i, 0] = cell % w.width
        w.agent_pos[e, i, 1] = cell // w.width
        inv = int(1)
        if w.random_reset != 0:
            j = uniform_int(key, 4 + n_pots + i, 4)
            inv = wp.where(j == 0, 1, wp.where(j == 1, 3, wp.where(j == 2, 5, 9)))
        w.agent_inv[e, i] = inv
        set_cell(w, e, cell % w.width, cell // w.width, 10, 2 * i, w.agent_dir_idx[e, i])
    if w.random_reset != 0:
        for p in range(n_pots):
            w.maze_map[e, w.pot_cells[p] // w.width, w.pot_cells[p] % w.width, 2] = uniform_int(key, 4 + p, 24)


@wp.func(inline=True)
def clear_outputs(w: Any, e: int):
    for i in range(2):
        w.reward[e, i] = type(w.reward[e, i])(0.0)
        w.shaped_reward[e, i] = type(w.reward[e, i])(0.0)
    w.deliveries[e] = 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def step_kernel(World, F):
    def overcooked_step(w: World, chunk: int):
        """One step of world e (JaxMARL's ``step_env``), its episode protocol and observations."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.pending_reset[e] != 0:
                # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
                w.pending_reset[e] = 0
                clear_outputs(w, e)
                begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            else:
                full = step_world(w, e)  # the changed cells' observations
                steps = w.t[e] + 1
                w.t[e] = steps
                end_step(e, False, steps >= w.max_steps, w.mode, w.terminated, w.truncated, w.reset_now,
                         w.pending_reset)
                if full != 0:
                    observe_world(w, e, w.obs)
                if w.reset_now[e] != 0:
                    observe_world(w, e, w.final_obs)
            if w.reset_now[e] != 0:
                draw_start(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])))
                start_episode(e, w.episode, w.t)
                observe_world(w, e, w.obs)

    return overcooked_step


def observe_kernel(World, F):
    def overcooked_observe(
        w: World,
        # Params
        write_final: int,
        chunk: int,
    ):
        """reset() / set_state() / clone_worlds(): (``write_final``: the final observation of the
        worlds flagged in ``reset_now``), reset those worlds, observe every world."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.reset_now[e] != 0:
                if write_final != 0:
                    observe_world(w, e, w.final_obs)
                draw_start(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])))
                start_episode(e, w.episode, w.t)
            observe_world(w, e, w.obs)

    return overcooked_observe


_FACTORIES = (step_kernel, observe_kernel)


def kernels(F) -> dict:
    """Overcooked's kernels for reward type ``F`` by name, in one Warp module (made once per process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_overcooked_{F.__name__}", lambda: [factory(World, F) for factory in _FACTORIES])
