"""Warp kernels of ``SMAX-v0``: JaxMARL 0.2.0's SMAX rules (``smax_env.py``, its heuristic
enemy ``heuristic_enemy.py``, start distributions ``distributions.py``), written once for float32
and float64 worlds.  Units are indexed as JaxMARL orders them: allies ``0..na-1``, then enemies.

Every kernel runs one thread per world ("owner thread"): a world's units are updated in unit
order, so sums need no atomics and results do not depend on thread scheduling.  A step is two
launches (captured into one graph):

    smax_step     the episode protocol around one env step: the heuristic enemy's actions, the
                  decoding of every unit's action, ``world_steps_per_env_step`` world steps
                  (attacks and cooldowns from the state at the world step's start, movement,
                  walls, deaths, collisions), rewards, episode flags and task metrics
    smax_observe  SAME_STEP: the final observation (and world state) of finished worlds; the
                  reset of the worlds flagged in ``reset_now``; observations, available actions
                  of every world

and ``smax_world_state`` (every world's JaxMARL world state) only when ``env.world_state()`` asks.

Random numbers inside a step (cooldown jitter, the heuristic enemy's random targets, the Gumbel
noise of continuous actions) come from per-world streams keyed by (seed, episode, clock, slot),
or, for one step, from ``draws`` where ``draws_injected`` is set (how tests replay JaxMARL's own
draws).  Draw slots per world: ``[0, 2 ne)`` heuristic enemy k's attack (2k) and move (2k + 1)
uniforms, ``[2 ne, 2 ne + 4 A)`` unit i's Gumbel noise ``(which, class)`` at ``2 ne + 4 i + 2
which + class``, then ``[2 ne + 4 A, ...)`` the cooldown uniform of unit i at world step s at
``2 ne + 4 A + s A + i``.
"""


import math
from typing import Any

import numpy as np
import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode  # noqa: F401
from war_envs.core.fields import module_kernels, struct_type
from war_envs.core.warp_math import distance as dist2d

wp.set_module_options(KERNEL_MODULE_OPTIONS)

NUM_MOVE = wp.constant(5)  # 4 moves + stop; attack actions start here
NUM_SECTIONS = wp.constant(32)  # conic observation: segments
UNITS_PER_SECTION = wp.constant(2)
UNIT_FEATURES = wp.constant(13)  # 7 + 6 unit-type bits
OWN_FEATURES = wp.constant(10)  # 4 + 6 unit-type bits
NUM_UNIT_TYPES = wp.constant(6)
STEP_SALT = wp.constant(0x2F6B3A91)

OBS_UNIT_LIST = 0
OBS_CONIC = 1


def move_table(np_float) -> np.ndarray:
    """JaxMARL's ``_decode_discrete_actions`` movement vectors, ``[5, 2]`` in ``np_float``: action
    a < 4 is ``rotation @ ((-1)^(a//2) s, (-1)^(a//2 + a%2) s)`` with ``s = 1/sqrt(2)`` and
    ``rotation = [[s, -s], [s, s]]`` (45 degrees anticlockwise), the stop action (4) zero."""
    f = np.dtype(np_float).type
    s = f(1.0) / np.sqrt(f(2.0))
    table = np.zeros((5, 2), dtype=np_float)
    for a in range(4):
        v0 = f((-1) ** (a // 2)) * s
        v1 = f((-1) ** (a // 2 + a % 2)) * s
        table[a, 0] = s * v0 + (-s) * v1
        table[a, 1] = s * v0 + s * v1
    return table


def struct_fields(F) -> dict:
    """The fields of a world struct in float type ``F``."""
    return {
        # Params
        "mode": int, "num_allies": int, "num_enemies": int, "num_units": int, "num_agents": int,
        "world_steps": int, "max_steps": int, "obs_type": int, "obs_dim": int, "continuous": int,
        "heuristic": int, "attack_random": int, "enemy_shoots": int, "walls_death": int,
        "see_enemy": int, "self_play_reward": int, "smacv2_pos": int, "smacv2_types": int,
        "num_actions_ally": int, "num_actions_enemy": int, "cooldown_slot": int, "observe_time": int,
        "map_w": F, "map_h": F, "tps": F, "won_bonus": F, "cd_lo": F, "cd_hi": F,
        "velocity": wp.array(dtype=F), "attack": wp.array(dtype=F), "attack_range": wp.array(dtype=F),
        "sight": wp.array(dtype=F), "radius": wp.array(dtype=F), "max_health": wp.array(dtype=F),
        "weapon_cooldown": wp.array(dtype=F), "move": wp.array2d(dtype=F),
        "map_types": wp.array(dtype=wp.int32),
        # State
        "pos": wp.array3d(dtype=F), "alive": wp.array2d(dtype=wp.bool), "health": wp.array2d(dtype=F),
        "types": wp.array2d(dtype=wp.int32), "cooldown": wp.array2d(dtype=F),
        "prev_move": wp.array3d(dtype=F), "prev_attack": wp.array2d(dtype=wp.int32),
        "ht_target": wp.array3d(dtype=F), "ht_last": wp.array2d(dtype=wp.int32),
        "t": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
        "world_seed": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
        "reset_now": wp.array(dtype=wp.int32),
        # Actions and draws
        "action_int": wp.array2d(dtype=wp.int32), "action_cont": wp.array3d(dtype=F),
        "draws": wp.array2d(dtype=F), "draws_injected": wp.array(dtype=wp.int32),
        # Outputs
        "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
        "truncated": wp.array(dtype=wp.bool), "agent_term": wp.array2d(dtype=wp.bool),
        "agent_trunc": wp.array2d(dtype=wp.bool), "obs": wp.array3d(dtype=wp.float32),
        "final_obs": wp.array3d(dtype=wp.float32), "mask": wp.array3d(dtype=wp.bool),
        "final_mask": wp.array3d(dtype=wp.bool),
        "final_alive": wp.array2d(dtype=wp.bool), "world_state": wp.array2d(dtype=wp.float32),
        "final_world_state": wp.array2d(dtype=wp.float32), "won": wp.array(dtype=F),
        "allies_left": wp.array(dtype=wp.int32), "enemies_left": wp.array(dtype=wp.int32),
        "damage": wp.array(dtype=F),
        # Scratch
        "scratch": wp.array3d(dtype=F), "health_before": wp.array2d(dtype=F),
        "section_count": wp.array2d(dtype=wp.int32),
    }


def world_struct(F):
    """The ``wp.struct`` type of SMAX worlds in float type ``F`` (made once per process)."""
    return struct_type(f"SmaxWorld_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


@wp.func
def team_of(w: Any, u: int):
    if u < w.num_allies:
        return 0
    return 1


@wp.func
def step_key(w: Any, e: int):
    """The key of world e's draws at this step: (seed, episode) -> clock."""
    k = wp.rand_init(w.world_seed[e], w.episode[e])
    return wp.rand_init(int(k) ^ STEP_SALT, w.t[e])


@wp.func
def uniform_draw(w: Any, e: int, key: wp.uint32, slot: int):
    """U[0, 1) for draw ``slot`` (the injected value where ``draws_injected[e]``)."""
    if w.draws_injected[e] != 0:
        return w.draws[e, slot]
    s = wp.rand_init(int(key), slot)
    return type(w.tps)(wp.randf(s))


@wp.func
def gumbel_draw(w: Any, e: int, key: wp.uint32, slot: int):
    """Gumbel(0, 1) noise as JaxMARL draws it: -log(-log(U[tiny, 1)))."""
    if w.draws_injected[e] != 0:
        return w.draws[e, slot]
    s = wp.rand_init(int(key), slot)
    u = wp.randf(s) + 1.17549435e-38
    return type(w.tps)(-wp.log(-wp.log(u)))


@wp.func
def attack_target(w: Any, u: int, a: int):
    """The unit attack action ``a`` (>= 5) of unit ``u`` aims at: allies number enemies in
    order, enemies number allies in reverse order (the order they observe them in)."""
    if u < w.num_allies:
        return a + w.num_allies - NUM_MOVE
    return w.num_allies - 1 - (a - NUM_MOVE)


# ---------------------------------------------------------------------------------------------
# Observations and available actions
# ---------------------------------------------------------------------------------------------


@wp.func
def write_unit_features(w: Any, e: int, i: int, j: int, out: Any, row: int, col: int):
    """JaxMARL's ``_observe_features``: unit j as seen by unit i, 13 values at ``col``."""
    tj = w.types[e, j]
    ti = w.types[e, i]
    sight = w.sight[ti]
    out[e, row, col + 0] = wp.float32(w.health[e, j] / w.max_health[tj])
    out[e, row, col + 1] = wp.float32((w.pos[e, j, 0] - w.pos[e, i, 0]) / sight)
    out[e, row, col + 2] = wp.float32((w.pos[e, j, 1] - w.pos[e, i, 1]) / sight)
    seen = team_of(w, i) == team_of(w, j) or w.see_enemy != 0
    zero = type(w.tps)(0.0)
    mx = zero
    my = zero
    att = zero
    if seen:
        mx = w.prev_move[e, j, 0]
        my = w.prev_move[e, j, 1]
        max_action = w.num_actions_ally - 1
        if j >= w.num_allies:
            max_action = w.num_actions_enemy - 1
        att = type(w.tps)(float(w.prev_attack[e, j])) / type(w.tps)(float(max_action))
    out[e, row, col + 3] = wp.float32(mx)
    out[e, row, col + 4] = wp.float32(my)
    out[e, row, col + 5] = wp.float32(att)
    cd = wp.clamp(w.cooldown[e, j] / w.weapon_cooldown[tj], zero, type(w.tps)(1.0))
    out[e, row, col + 6] = wp.float32(cd)
    for t in range(NUM_UNIT_TYPES):
        out[e, row, col + 7 + t] = wp.float32(0.0)
    out[e, row, col + 7 + tj] = wp.float32(1.0)


@wp.func
def write_zeros(out: Any, e: int, row: int, col: int, n: int):
    for c in range(n):
        out[e, row, col + c] = wp.float32(0.0)


@wp.func
def write_own_features(w: Any, e: int, i: int, out: Any, row: int, col: int):
    """JaxMARL's ``_get_own_features`` (zeros once dead), 10 values at ``col``."""
    if not w.alive[e, i]:
        write_zeros(out, e, row, col, OWN_FEATURES)
        return
    ti = w.types[e, i]
    zero = type(w.tps)(0.0)
    for t in range(NUM_UNIT_TYPES):
        out[e, row, col + 4 + t] = wp.float32(0.0)
    out[e, row, col + 0] = wp.float32(w.health[e, i] / w.max_health[ti])
    out[e, row, col + 1] = wp.float32(w.pos[e, i, 0] / w.map_w)
    out[e, row, col + 2] = wp.float32(w.pos[e, i, 1] / w.map_h)
    out[e, row, col + 3] = wp.float32(wp.clamp(w.cooldown[e, i] / w.weapon_cooldown[ti], zero,
                                               type(w.tps)(1.0)))
    out[e, row, col + 4 + ti] = wp.float32(1.0)


@wp.func
def unit_list_index(w: Any, i: int, jj: int):
    """The unit in slot ``jj`` of unit i's unit-list observation: its own team first (in order
    for allies, in reverse for enemies), then the other team."""
    A = w.num_units
    if i < w.num_allies:
        if jj < i:
            return jj
        return jj + 1
    j = A - jj - 1
    if j > i:
        return j
    return j - 1


@wp.func
def observe_unit_list(w: Any, e: int, i: int, out: Any, row: int):
    """Every block written once: a unit's features where unit i sees it, zeros elsewhere."""
    A = w.num_units
    alive = w.alive[e, i]
    sight = w.sight[w.types[e, i]]
    for jj in range(A - 1):
        j = unit_list_index(w, i, jj)
        seen = False
        if alive and w.alive[e, j]:
            seen = dist2d(w.pos[e, j, 0], w.pos[e, j, 1], w.pos[e, i, 0], w.pos[e, i, 1]) < sight
        if seen:
            write_unit_features(w, e, i, j, out, row, jj * UNIT_FEATURES)
        else:
            write_zeros(out, e, row, jj * UNIT_FEATURES, UNIT_FEATURES)
    write_own_features(w, e, i, out, row, (A - 1) * UNIT_FEATURES)


@wp.func
def conic_angle(rx: Any, ry: Any):
    """JaxMARL's angle of a relative position: arctan(ry / (rx + 1e-8)) + pi * sign term."""
    one = type(rx)(1.0)
    zero = type(rx)(0.0)
    angle = wp.atan(ry / (rx + type(rx)(1e-8)))
    if rx < zero:
        s = -one
        if ry > zero:
            s = one
        angle = angle + s * type(rx)(math.pi)
    return angle


@wp.func
def conic_section(angle: Any):
    """The section s (0..31) with min_s < angle < max_s as JaxMARL computes the bounds
    (``2 pi (s / 32) - pi``), or -1 if the angle lies on a boundary."""
    two_pi = type(angle)(2.0) * type(angle)(math.pi)  # (2.0 * math.pi would be a float32 constant)
    pi = type(angle)(math.pi)
    n = type(angle)(32.0)
    guess = int(wp.floor((angle + pi) / two_pi * n))
    found = int(-1)
    for d in range(3):
        s = guess - 1 + d
        if s >= 0 and s < NUM_SECTIONS:
            lo = two_pi * (type(angle)(float(s)) / n) - pi
            hi = two_pi * (type(angle)(float(s + 1)) / n) - pi
            if angle > lo and angle < hi:
                found = s
    return found


@wp.func
def observe_conic(w: Any, e: int, i: int, out: Any, row: int):
    A = w.num_units
    for c in range(w.obs_dim):
        out[e, row, c] = wp.float32(0.0)
    if w.alive[e, i]:
        for s in range(NUM_SECTIONS):
            w.section_count[e, s] = 0
        sight = w.sight[w.types[e, i]]
        one = type(w.tps)(1.0)
        # unit 0 is never listed: JaxMARL picks the section's units with nonzero(mask * index)
        for k in range(1, A):
            if k != i:
                rx = (w.pos[e, k, 0] - w.pos[e, i, 0]) / sight
                ry = (w.pos[e, k, 1] - w.pos[e, i, 1]) / sight
                if wp.sqrt(rx * rx + ry * ry) < one:
                    s = conic_section(conic_angle(rx, ry))
                    if s >= 0:
                        n = w.section_count[e, s]
                        if n < UNITS_PER_SECTION:
                            write_unit_features(w, e, i, k, out, row,
                                                (s * UNITS_PER_SECTION + n) * UNIT_FEATURES)
                            w.section_count[e, s] = n + 1
    write_own_features(w, e, i, out, row, NUM_SECTIONS * UNITS_PER_SECTION * UNIT_FEATURES)


@wp.func
def observe_world(w: Any, e: int, out: Any):
    """JaxMARL's ``get_world_state``: every unit's ``OWN_FEATURES`` (health fraction, position in
    map units, weapon cooldown in seconds, unit-type bits; zeros once dead), then every unit's
    team (0 ally, 1 enemy), then every unit's type."""
    A = w.num_units
    for u in range(A):
        col = u * OWN_FEATURES
        for c in range(OWN_FEATURES):
            out[e, col + c] = wp.float32(0.0)
        if w.alive[e, u]:
            tu = w.types[e, u]
            out[e, col + 0] = wp.float32(w.health[e, u] / w.max_health[tu])
            out[e, col + 1] = wp.float32(w.pos[e, u, 0])
            out[e, col + 2] = wp.float32(w.pos[e, u, 1])
            out[e, col + 3] = wp.float32(w.cooldown[e, u])
            out[e, col + 4 + tu] = wp.float32(1.0)
        out[e, OWN_FEATURES * A + u] = wp.float32(float(team_of(w, u)))
        out[e, (OWN_FEATURES + 1) * A + u] = wp.float32(float(w.types[e, u]))


@wp.func
def observe_agent(w: Any, e: int, i: int, out: Any):
    if w.obs_type == 0:
        observe_unit_list(w, e, i, out, i)
    else:
        observe_conic(w, e, i, out, i)
    if w.observe_time != 0:   # (observe_time: the episode's elapsed fraction, after JaxMARL's features)
        out[e, i, w.obs_dim - 1] = wp.float32(w.t[e]) / wp.float32(w.max_steps + 1)


@wp.func
def write_mask(w: Any, e: int, i: int, mask: wp.array3d(dtype=wp.bool)):
    """JaxMARL's ``get_avail_actions`` for unit i: moves while alive, stop always, attacks on
    living units of the other team within attack range (in the other team's action order)."""
    width = mask.shape[2]
    for a in range(width):
        mask[e, i, a] = False
    alive = w.alive[e, i]
    for a in range(NUM_MOVE - 1):
        mask[e, i, a] = alive
    mask[e, i, NUM_MOVE - 1] = True
    if alive:
        rng = w.attack_range[w.types[e, i]]
        n_other = w.num_enemies
        if i >= w.num_allies:
            n_other = w.num_allies
        for m in range(n_other):
            u = attack_target(w, i, m + NUM_MOVE)
            if w.alive[e, u]:
                d = dist2d(w.pos[e, u, 0], w.pos[e, u, 1], w.pos[e, i, 0], w.pos[e, i, 1])
                if d < rng:
                    mask[e, i, NUM_MOVE + m] = True


# ---------------------------------------------------------------------------------------------
# Heuristic enemy (JaxMARL's create_heuristic_policy, team 1, from its unit-list observation)
# ---------------------------------------------------------------------------------------------


@wp.func
def heuristic_relative(w: Any, e: int, u: int, m: int, ut: int):
    """Enemy u's view of the m-th unit of the other team (ally ``na - 1 - m``): (visible,
    relative position as its observation scales it back: ((p - p_u) / sight_u) * sight_ut)."""
    a = w.num_allies - 1 - m
    zero = type(w.tps)(0.0)
    visible = False
    rx = zero
    ry = zero
    if w.alive[e, u] and w.alive[e, a]:
        sight_u = w.sight[w.types[e, u]]
        d = dist2d(w.pos[e, a, 0], w.pos[e, a, 1], w.pos[e, u, 0], w.pos[e, u, 1])
        if d < sight_u and w.health[e, a] > zero:
            visible = True
            # the observation holds float32 values; the heuristic reads them back
            rx = type(w.tps)(wp.float32((w.pos[e, a, 0] - w.pos[e, u, 0]) / sight_u)) * w.sight[ut]
            ry = type(w.tps)(wp.float32((w.pos[e, a, 1] - w.pos[e, u, 1]) / sight_u)) * w.sight[ut]
    return visible, rx, ry


@wp.func
def heuristic_candidate(w: Any, e: int, u: int, m: int, ut: int, rng: Any, shoot: int):
    """Whether enemy unit u (type ``ut`` as observed) sees ally m (``shoot``: and has it within
    its attack range ``rng``)."""
    visible, rx, ry = heuristic_relative(w, e, u, m, ut)
    if visible and shoot != 0:
        return wp.sqrt(rx * rx + ry * ry) < rng
    return visible


@wp.func
def heuristic_scan(w: Any, e: int, u: int, ut: int, rng: Any):
    """``(allies in range, allies seen, the closest in range (0 if none))`` of enemy unit u."""
    zero = type(w.tps)(0.0)
    n_shoot = int(0)
    n_see = int(0)
    closest = int(0)
    closest_d = dist2d(w.map_w, w.map_h, zero, zero)
    for m in range(w.num_allies):
        visible, rx, ry = heuristic_relative(w, e, u, m, ut)
        if visible:
            n_see += 1
            d = wp.sqrt(rx * rx + ry * ry)
            if d < rng:
                n_shoot += 1
                if d < closest_d:
                    closest_d = d
                    closest = m
    return n_shoot, n_see, closest


@wp.func
def heuristic_pick(w: Any, e: int, u: int, ut: int, rng: Any, shoot: int, n: int, key: wp.uint32, slot: int):
    """One of the ``n`` allies that are ``heuristic_candidate``s of enemy unit u, uniformly
    (JaxMARL's ``jax.random.choice`` with p = 1/n: a searchsorted of the cumulative sum against
    ``total * (1 - draw)``, the draw in ``slot``)."""
    na = w.num_allies
    zero = type(w.tps)(0.0)
    p = type(w.tps)(1.0) / type(w.tps)(float(n))
    total = zero
    for m in range(na):
        if heuristic_candidate(w, e, u, m, ut, rng, shoot):
            total = total + p
    r = total * (type(w.tps)(1.0) - uniform_draw(w, e, key, slot))
    cum = zero
    chosen = int(-1)
    for m in range(na):
        if heuristic_candidate(w, e, u, m, ut, rng, shoot):
            cum = cum + p
            if chosen < 0 and cum >= r:
                chosen = m
    if chosen < 0:
        chosen = na - 1  # searchsorted past the end (cannot happen for r <= total)
    return chosen


@wp.func
def heuristic_move(vx: Any, vy: Any):
    """The move towards (vx, vy): argmax of (0,1), (1,0), (0,-1), (-1,0) . v, first maximum."""
    move = int(0)
    best = vy
    if vx > best:
        best = vx
        move = 1
    if -vy > best:
        best = -vy
        move = 2
    if -vx > best:
        best = -vx
        move = 3
    return move


@wp.func
def heuristic_action(w: Any, e: int, k: int, key: wp.uint32):
    """Enemy k's action and its policy-state update (``default_target``, ``last_attacked``)."""
    u = w.num_allies + k
    na = w.num_allies
    zero = type(w.tps)(0.0)
    ut = int(0)  # a dead unit's observation is zeros: jnp.nonzero pads with index 0
    ox = zero
    oy = zero
    if w.alive[e, u]:
        ut = w.types[e, u]
        ox = type(w.tps)(wp.float32(w.pos[e, u, 0] / w.map_w)) * w.map_w
        oy = type(w.tps)(wp.float32(w.pos[e, u, 1] / w.map_h)) * w.map_h
    rng = w.attack_range[ut]
    n_shoot, n_see, closest = heuristic_scan(w, e, u, ut, rng)
    last_old = w.ht_last[e, k]
    is_initial = w.ht_target[e, k, 0] == zero and w.ht_target[e, k, 1] == zero and last_old == -1
    # attack choice
    attack = closest
    if w.attack_random != 0 and n_shoot > 0:
        attack = heuristic_pick(w, e, u, ut, rng, 1, n_shoot, key, 2 * k)
    if last_old >= 0 and last_old < na:
        if heuristic_candidate(w, e, u, last_old, ut, rng, 1):
            attack = last_old
    new_last = int(-1)
    if n_shoot > 0:
        if heuristic_candidate(w, e, u, attack, ut, rng, 1):
            new_last = attack
    w.ht_last[e, k] = new_last
    # movement target
    cx = w.map_w / type(w.tps)(2.0)
    cy = w.map_h / type(w.tps)(2.0)
    tx = w.ht_target[e, k, 0]
    ty = w.ht_target[e, k, 1]
    if is_initial:
        tx = -(ox - cx) + cx
        ty = -(oy - cy) + cy
    w.ht_target[e, k, 0] = tx
    w.ht_target[e, k, 1] = ty
    if n_see > 0:
        chosen = heuristic_pick(w, e, u, ut, rng, 0, n_see, key, 2 * k + 1)
        visible, rx, ry = heuristic_relative(w, e, u, chosen, ut)
        tx = rx + ox
        ty = ry + oy
    move = heuristic_move(tx - ox, ty - oy)
    if n_shoot > 0 and w.enemy_shoots != 0:
        return attack + NUM_MOVE
    return move


# ---------------------------------------------------------------------------------------------
# Action decoding
# ---------------------------------------------------------------------------------------------


@wp.func
def decode_discrete(w: Any, e: int, i: int, a: int):
    """Movement vector (zero for stop and attacks) and attack action (0 unless a > 4)."""
    zero = type(w.tps)(0.0)
    if a >= 0 and a < NUM_MOVE - 1:
        w.prev_move[e, i, 0] = w.move[a, 0]
        w.prev_move[e, i, 1] = w.move[a, 1]
    else:
        w.prev_move[e, i, 0] = zero
        w.prev_move[e, i, 1] = zero
    if a > NUM_MOVE - 1:
        w.prev_attack[e, i] = a
    else:
        w.prev_attack[e, i] = 0


@wp.func
def decode_continuous(w: Any, e: int, i: int, key: wp.uint32):
    """JaxMARL's ``_decode_continuous_actions`` for unit i: (shoot_last_enemy, do_shoot, r, theta)
    clipped to [0, 1]; move or shoot drawn from the 2-way categorical (log p, log(1 - p))."""
    zero = type(w.tps)(0.0)
    one = type(w.tps)(1.0)
    a0 = wp.clamp(w.action_cont[e, i, 0], zero, one)
    a1 = wp.clamp(w.action_cont[e, i, 1], zero, one)
    a2 = wp.clamp(w.action_cont[e, i, 2], zero, one)
    a3 = wp.clamp(w.action_cont[e, i, 3], zero, one)
    g = 2 * w.num_enemies + 4 * i
    move_or_shoot = int(0)
    if wp.log(one - a1) + gumbel_draw(w, e, key, g + 1) > wp.log(a1) + gumbel_draw(w, e, key, g + 0):
        move_or_shoot = 1
    shoot_last = int(0)
    if wp.log(one - a0) + gumbel_draw(w, e, key, g + 3) > wp.log(a0) + gumbel_draw(w, e, key, g + 2):
        shoot_last = 1
    angle = a3 * type(w.tps)(2.0) * type(w.tps)(math.pi)
    mx = a2 * wp.cos(angle)
    my = a2 * wp.sin(angle)
    px = w.pos[e, i, 0] + mx
    py = w.pos[e, i, 1] + my
    if move_or_shoot == 0:
        w.prev_move[e, i, 0] = mx
        w.prev_move[e, i, 1] = my
    else:
        w.prev_move[e, i, 0] = zero
        w.prev_move[e, i, 1] = zero
    team = team_of(w, i)
    best = int(0)
    best_d = zero
    for j in range(w.num_units):
        d = dist2d(w.pos[e, j, 0], w.pos[e, j, 1], px, py)
        if team_of(w, j) == team:
            d = d + type(w.tps)(1e8)
        else:
            d = d + zero
        if j == 0 or d < best_d:
            best_d = d
            best = j
    attack = int(0)
    if team == 0:
        attack = best - w.num_allies + NUM_MOVE
    else:
        attack = w.num_allies - 1 - best + NUM_MOVE
    if shoot_last == 1:
        attack = w.prev_attack[e, i]
    if not (move_or_shoot == 1 and team_of(w, best) != team):
        attack = 0
    w.prev_attack[e, i] = attack


# ---------------------------------------------------------------------------------------------
# World step
# ---------------------------------------------------------------------------------------------


@wp.func
def world_step(w: Any, e: int, s: int, key: wp.uint32):
    """One of JaxMARL's world steps: ``_world_step`` (attacks and cooldowns from the state at
    its start, then movement), ``_kill_agents_touching_walls``, ``_update_dead_agents``,
    ``_push_units_away``."""
    A = w.num_units
    zero = type(w.tps)(0.0)
    one = type(w.tps)(1.0)
    # attacks: every check reads the world step's starting positions and alive flags
    for i in range(A):
        a = w.prev_attack[e, i]
        target = i
        if a >= NUM_MOVE:
            target = attack_target(w, i, a)
        ti = w.types[e, i]
        valid = False
        if target >= 0 and target < A and target != i:
            if w.alive[e, i] and w.alive[e, target] and w.cooldown[e, i] <= zero:
                d = dist2d(w.pos[e, i, 0], w.pos[e, i, 1], w.pos[e, target, 0], w.pos[e, target, 1])
                if d < w.attack_range[ti]:
                    valid = True
        cd = w.cooldown[e, i]
        if valid:  # the jitter is drawn by its slot, so only attacks need it
            u = uniform_draw(w, e, key, w.cooldown_slot + s * A + i)
            deviation = wp.max(w.cd_lo, u * (w.cd_hi - w.cd_lo) + w.cd_lo)
            w.health[e, target] = w.health[e, target] - w.attack[ti]
            w.cooldown[e, i] = cd + ((w.weapon_cooldown[ti] + deviation) - cd)
        else:
            w.cooldown[e, i] = cd + (-w.tps)
    for i in range(A):
        w.health[e, i] = wp.max(w.health[e, i], zero)
    # movement (dead units stay), clipped to the map
    for i in range(A):
        if w.alive[e, i]:
            speed = w.velocity[w.types[e, i]]
            x = w.pos[e, i, 0] + w.prev_move[e, i, 0] * speed * w.tps
            y = w.pos[e, i, 1] + w.prev_move[e, i, 1] * speed * w.tps
            w.pos[e, i, 0] = wp.max(wp.min(x, w.map_w), zero)
            w.pos[e, i, 1] = wp.max(wp.min(y, w.map_h), zero)
    # walls, deaths
    for i in range(A):
        x = w.pos[e, i, 0]
        y = w.pos[e, i, 1]
        if w.walls_death != 0 and (x <= zero or y <= zero or x >= w.map_w or y >= w.map_h):
            w.health[e, i] = zero
        w.alive[e, i] = w.health[e, i] > zero
    push_units_away(w, e)


@wp.func
def push_units_away(w: Any, e: int):
    """JaxMARL's ``_push_units_away`` (firmness 1): living units that overlap push each other
    apart by half the overlap each.

    Each pair is worked out once: unit j's term from unit i is exactly minus i's term from j
    (``pos_j - pos_i == -(pos_i - pos_j)`` in IEEE arithmetic), and with i ascending every
    unit's sum still gathers its terms in JaxMARL's order (by ascending partner)."""
    A = w.num_units
    zero = type(w.tps)(0.0)
    one = type(w.tps)(1.0)
    eps = type(w.tps)(1e-6)
    two = type(w.tps)(2.0)
    far = type(w.tps)(1.0001)  # d^2 > 1.0001 reach^2 means |d| + 1e-6 > reach despite rounding
    for i in range(A):
        w.scratch[e, i, 0] = zero
        w.scratch[e, i, 1] = zero
    for i in range(A):
        if w.alive[e, i]:
            ri = w.radius[w.types[e, i]]
            xi = w.pos[e, i, 0]
            yi = w.pos[e, i, 1]
            sx = w.scratch[e, i, 0]  # the terms from units before i, in order
            sy = w.scratch[e, i, 1]
            for j in range(i + 1, A):
                if w.alive[e, j]:
                    dx = xi - w.pos[e, j, 0]
                    dy = yi - w.pos[e, j, 1]
                    d2 = dx * dx + dy * dy
                    reach = ri + w.radius[w.types[e, j]]
                    # apart by more than reach: the overlap is exactly 0 and adding dx * 0
                    # leaves a sum as it is (the sums are never -0), so skip sqrt and divide
                    if not (d2 > reach * reach * far):
                        dist = (wp.sqrt(d2) + zero) + eps
                        overlap = wp.max(reach / dist - one, zero)
                        sx = sx + dx * overlap
                        sy = sy + dy * overlap
                        w.scratch[e, j, 0] = w.scratch[e, j, 0] + (-dx) * overlap
                        w.scratch[e, j, 1] = w.scratch[e, j, 1] + (-dy) * overlap
            w.scratch[e, i, 0] = sx
            w.scratch[e, i, 1] = sy
    for i in range(A):
        if w.alive[e, i]:
            w.pos[e, i, 0] = w.pos[e, i, 0] + (one * w.scratch[e, i, 0]) / two
            w.pos[e, i, 1] = w.pos[e, i, 1] + (one * w.scratch[e, i, 1]) / two


# ---------------------------------------------------------------------------------------------
# Rewards and episode end
# ---------------------------------------------------------------------------------------------


@wp.func
def team_reward(w: Any, e: int, team: int):
    """JaxMARL's ``compute_team_reward``: the other team's health lost this step (fraction of
    each unit's maximum, summed, absolute, over its size), + won_battle_bonus for a win, -
    won_battle_bonus for a loss in self-play reward mode."""
    zero = type(w.tps)(0.0)
    start = 0
    size = w.num_enemies
    own_start = w.num_allies
    own_size = w.num_enemies
    if team == 0:
        start = w.num_allies
        own_start = 0
        own_size = w.num_allies
    else:
        size = w.num_allies
    decrease = zero
    won = bool(True)
    for u in range(start, start + size):
        decrease = decrease + (w.health[e, u] - w.health_before[e, u]) / w.max_health[w.types[e, u]]
        if w.alive[e, u]:
            won = False
    lost = bool(True)
    for u in range(own_start, own_start + own_size):
        if w.alive[e, u]:
            lost = False
    r = wp.abs(decrease) / type(w.tps)(float(size))
    if w.self_play_reward != 0:
        r = zero
    won_bonus = zero
    if won and not lost:
        won_bonus = w.won_bonus
    lost_bonus = zero
    if lost and w.self_play_reward != 0 and not won:
        lost_bonus = -w.won_bonus
    return r + won_bonus + lost_bonus


@wp.func
def clear_step_info(w: Any, e: int):
    zero = type(w.tps)(0.0)
    for i in range(w.num_agents):
        w.reward[e, i] = zero
        w.agent_term[e, i] = False
        w.agent_trunc[e, i] = False
    w.won[e] = zero
    w.damage[e] = zero
    w.allies_left[e] = w.num_allies
    w.enemies_left[e] = w.num_enemies


def step_kernel(World):
    """One env step of one world: JaxMARL's ``step_env`` (with the heuristic enemy's actions
    first, as ``HeuristicEnemySMAX.step_env``), in the episode protocol."""

    def smax_step(w: World):
        e = wp.tid()
        if w.pending_reset[e] != 0:
            w.pending_reset[e] = 0
            clear_step_info(w, e)
            begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            return
        A = w.num_units
        key = step_key(w, e)
        if w.heuristic != 0:
            for k in range(w.num_enemies):
                w.action_int[e, w.num_allies + k] = heuristic_action(w, e, k, key)
        for i in range(A):
            if w.continuous != 0 and (i < w.num_allies or w.heuristic == 0):
                decode_continuous(w, e, i, key)
            else:
                decode_discrete(w, e, i, w.action_int[e, i])
        for i in range(A):
            w.health_before[e, i] = w.health[e, i]
        for s in range(w.world_steps):
            world_step(w, e, s, key)
        w.draws_injected[e] = 0
        # episode end: JaxMARL's is_terminal reads the step count before its increment
        allies = int(0)
        enemies = int(0)
        damage = type(w.tps)(0.0)
        for i in range(A):
            if w.alive[e, i]:
                if i < w.num_allies:
                    allies += 1
                else:
                    enemies += 1
            if i >= w.num_allies:
                damage = damage + (w.health_before[e, i] - w.health[e, i])
        t_old = w.t[e]
        w.t[e] = t_old + 1
        term = allies == 0 or enemies == 0
        trunc = (not term) and t_old >= w.max_steps
        ally_reward = team_reward(w, e, 0)
        enemy_reward = ally_reward
        if w.num_agents > w.num_allies:
            enemy_reward = team_reward(w, e, 1)
        for i in range(w.num_agents):
            if i < w.num_allies:
                w.reward[e, i] = ally_reward
            else:
                w.reward[e, i] = enemy_reward
            w.agent_term[e, i] = term or not w.alive[e, i]
            w.agent_trunc[e, i] = trunc and w.alive[e, i]
        zero = type(w.tps)(0.0)
        w.won[e] = zero
        if term and enemies == 0 and allies > 0:
            w.won[e] = type(w.tps)(1.0)
        w.allies_left[e] = allies
        w.enemies_left[e] = enemies
        w.damage[e] = damage
        end_step(e, term, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)

    return smax_step


# ---------------------------------------------------------------------------------------------
# Reset
# ---------------------------------------------------------------------------------------------


@wp.func
def surround_starts(w: Any, e: int, state: wp.uint32):
    """SMACv2's surround start: one team in the centre, the other in four groups on the
    diagonals; returns the advanced stream state (a Warp function gets it by value)."""
    na = w.num_allies
    F0 = type(w.tps)(0.0)
    W = w.map_w
    H = w.map_h
    two = type(w.tps)(2.0)
    four = type(w.tps)(4.0)
    ally_inside = wp.randf(state) < 0.5
    ts0 = type(w.tps)(wp.randf(state))
    ts1 = type(w.tps)(wp.randf(state))
    ts2 = type(w.tps)(wp.randf(state))
    ts3 = type(w.tps)(wp.randf(state))
    for i in range(w.num_units):
        inside = (i < na) == ally_inside
        nx = type(w.tps)(wp.randf(state)) * four - two
        ny = type(w.tps)(wp.randf(state)) * four - two
        if inside:
            w.pos[e, i, 0] = W / two + nx
            w.pos[e, i, 1] = H / two + ny
        else:
            g = wp.min(int(wp.randf(state) * 4.0), 3)
            t = ts0
            ex = F0
            ey = F0
            if g == 1:
                t = ts1
                ey = H
            elif g == 2:
                t = ts2
                ex = W
            elif g == 3:
                t = ts3
                ex = W
                ey = H
            one = type(w.tps)(1.0)
            w.pos[e, i, 0] = t * (W / two) + (one - t) * ex + nx
            w.pos[e, i, 1] = t * (H / two) + (one - t) * ey + ny
    return state


@wp.func
def reset_units(w: Any, e: int):
    """Every unit at full health, alive, no cooldown, no previous actions; the heuristic enemy's
    targets cleared."""
    F0 = type(w.tps)(0.0)
    for i in range(w.num_units):
        w.health[e, i] = w.max_health[w.types[e, i]]
        w.alive[e, i] = True
        w.cooldown[e, i] = F0
        w.prev_move[e, i, 0] = F0
        w.prev_move[e, i, 1] = F0
        w.prev_attack[e, i] = 0
    for k in range(w.num_enemies):
        w.ht_target[e, k, 0] = F0
        w.ht_target[e, k, 1] = F0
        w.ht_last[e, k] = -1


@wp.func
def reset_world(w: Any, e: int):
    """JaxMARL's ``reset``: teams around (W/4, H/2) and (3W/4, H/2) with U(-2, 2) noise, or
    SMACv2's surround-or-reflect starts; the map's unit types or SMACv2's uniform mirrored types;
    full health, no cooldown, no previous actions; then ``_push_units_away``."""
    state = wp.rand_init(w.world_seed[e], w.episode[e])
    A = w.num_units
    na = w.num_allies
    ne = w.num_enemies
    W = w.map_w
    H = w.map_h
    two = type(w.tps)(2.0)
    four = type(w.tps)(4.0)
    if w.smacv2_pos == 0:
        for i in range(A):
            cx = W / four
            if i >= na:
                cx = W / four * type(w.tps)(3.0)
            w.pos[e, i, 0] = cx + type(w.tps)(wp.randf(state)) * four - two
            w.pos[e, i, 1] = H / two + type(w.tps)(wp.randf(state)) * four - two
    else:
        if wp.randf(state) < 0.5:
            state = surround_starts(w, e, state)
        else:
            # reflect: allies anywhere on the left half, enemies mirrored (extra ones anywhere
            # on the right half)
            # (draws inline: a Warp function would get the stream state by value, not advance it)
            for i in range(na):
                w.pos[e, i, 0] = type(w.tps)(wp.randf(state)) * (W / two)
                w.pos[e, i, 1] = type(w.tps)(wp.randf(state)) * H
            for k in range(ne):
                u = na + k
                if k < na:
                    w.pos[e, u, 0] = W - w.pos[e, k, 0]
                    w.pos[e, u, 1] = w.pos[e, k, 1]
                else:
                    w.pos[e, u, 0] = type(w.tps)(wp.randf(state)) * (W - W / two) + W / two
                    w.pos[e, u, 1] = type(w.tps)(wp.randf(state)) * H
    if w.smacv2_types != 0:
        for i in range(na):
            w.types[e, i] = wp.min(int(wp.randf(state) * 6.0), NUM_UNIT_TYPES - 1)
        for k in range(ne):
            if k < na:
                w.types[e, na + k] = w.types[e, k]
            else:
                w.types[e, na + k] = 0  # JaxMARL drops its draw for the extra enemies: marines
    else:
        for i in range(A):
            w.types[e, i] = w.map_types[i]
    reset_units(w, e)
    push_units_away(w, e)


def observe_kernel(World):
    """One world: SAME_STEP's final observation of a finished world, the reset of a world
    flagged in ``reset_now``, then every agent's observation and available actions."""

    def smax_observe(w: World, write_final: int):
        e = wp.tid()
        if w.reset_now[e] != 0:
            if write_final != 0:
                for i in range(w.num_agents):
                    observe_agent(w, e, i, w.final_obs)
                    write_mask(w, e, i, w.final_mask)
                    w.final_alive[e, i] = w.alive[e, i]
                observe_world(w, e, w.final_world_state)
            reset_world(w, e)
            start_episode(e, w.episode, w.t)
        for i in range(w.num_agents):
            observe_agent(w, e, i, w.obs)
            write_mask(w, e, i, w.mask)

    return smax_observe


def world_state_kernel(World):
    """One world: its world state now (launched when ``env.world_state()`` is asked for)."""

    def smax_world_state(w: World):
        e = wp.tid()
        observe_world(w, e, w.world_state)

    return smax_world_state


def kernels(F):
    """``(smax_step, smax_observe, smax_world_state)`` for float type ``F``, in one Warp module
    (made once)."""
    World = world_struct(F)
    return tuple(module_kernels(f"war_envs_smax_{F.__name__}", lambda: (
        step_kernel(World), observe_kernel(World), world_state_kernel(World))).values())
