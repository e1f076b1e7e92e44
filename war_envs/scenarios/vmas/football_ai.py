"""Football-v0's scripted players: VMAS 1.5.2's ``AgentPolicy`` (``vmas/scenarios/football.py``)
for the red team and the ball's ``ball_action_script``, as Warp functions of one world.

VMAS plans every scripted player's move each step (``AgentPolicy.run``): the teammate nearest
the ball (``check_possession``) dribbles it towards the opposing net (``update_dribble``), the
others pick the best of three candidate spots (their last target and two random ones,
``check_better_positions`` / ``get_pos_value``); each move is a Hermite spline from the player's
position to its target (``go_to`` / ``get_start_vel``), and the action is a PD step along it
(``get_action``).  These functions repeat VMAS's float32 operation order; a player's target
relative to the ball and its target position carry over to the next step (the state fields
``target_pos_rel`` and ``target_pos``, VMAS's ``objectives``).

**Random draws.**  VMAS draws standard normals from torch's global generator, batch-wide, in
the order of its calls (a masked call draws for the worlds of its mask).  Ours come from each
world's counter-based stream of the step (``world.step_stream``): scripted player ``j``'s
stream ``AI_STREAMS * j + purpose``, one per purpose: ``SAMPLES`` (the two candidate spots, 4
normals), ``VALUES`` (the noise on the three spots' values, 3; with ``ai_decision_strength !=
1``), ``PRECISION`` (the noise on the target position then velocity, 4; with
``ai_precision_strength != 1``) and ``POSSESSION`` (the noise on every player's possession
distance, teammates then opponents; with ``ai_decision_strength != 1``, drawn by the players
whose index has a 0 digit, as VMAS's ``"0" in agent.name``).  ``ai_draws_kernel`` gives the
draws of a step, which the parity tests hand VMAS's ``torch.randn`` in place of its own.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W

wp.set_module_options(KERNEL_MODULE_OPTIONS)

AI_STREAMS = wp.constant(4)
SAMPLES = wp.constant(0)
VALUES = wp.constant(1)
PRECISION = wp.constant(2)
POSSESSION = wp.constant(3)


@wp.func(inline=True)
def ai_stream(w: Any, e: int, j: int, purpose: int):
    """Scripted player j's stream of this step for ``purpose`` (see the module docstring)."""
    return W.step_stream(w, e, AI_STREAMS * j + purpose)


@wp.func
def flt(x: Any, value: float):
    """``value`` in x's float type."""
    return type(x)(value)


@wp.func
def hermite(c0: Any, c1: Any, c2: Any, c3: Any, p0: Any, p1: Any, v0: Any, v1: Any):
    """VMAS's ``Splines.hermite`` with its float32 coefficients ``U @ A`` (worked out by VMAS's own
    code on the host): ``c0 p0 + c1 p1 + c2 v0 + c3 v1``, summed left to right as torch's bmm."""
    return ((p0 * c0 + p1 * c1) + v0 * c2) + v1 * c3


@wp.func
def normalized_where_positive(v: Any, mag: Any):
    """``v / mag`` where ``mag > 0``, else v (VMAS's masked in-place divisions)."""
    if mag > type(mag)(0.0):
        return type(v)(v[0] / mag, v[1] / mag)
    return v


@wp.func
def start_vel(pos: Any, vel: Any, start_pos: Any, aggression: Any):
    """VMAS's ``get_start_vel``: the spline's starting velocity, aimed at a point behind the
    target (``0.6`` of the distance back along the target velocity), of magnitude ``aggression +
    |vel| (1 - aggression)``."""
    one = flt(aggression, 1.0)
    vel_mag = one * aggression + G.vector_norm(vel) * (one - aggression)
    goal_dist = G.vector_norm(pos - start_pos)
    vel_dir = normalized_where_positive(vel, vel_mag)
    behind = flt(aggression, 0.6) * goal_dist
    target_disp = (pos - vel_dir * behind) - start_pos
    direction = normalized_where_positive(target_disp, G.vector_norm(target_disp))
    return direction * vel_mag


@wp.func(inline=True)
def clamp_pos(w: Any, p: Any):
    """VMAS's ``clamp_pos``: inside the pitch (less the agent size), and up to ``goal_depth``
    deeper in x where ``|y|`` is within the goal mouth."""
    y = wp.clamp(p[1], -w.ai_pitch_y, w.ai_pitch_y)
    x_max = w.ai_pitch_x
    if wp.abs(y) < w.ai_goal_y:
        x_max = w.ai_goal_x
    return wp.vector(wp.clamp(p[0], -x_max, x_max), y)


@wp.func
def unit_or_zero(v: Any):
    """``v / |v|`` with NaN components zeroed (VMAS's ``ball_vec[ball_vec.isnan()] = 0``)."""
    n = G.vector_norm(v)
    x = v[0] / n
    y = v[1] / n
    if G.is_nan(x):
        x = type(x)(0.0)
    if G.is_nan(y):
        y = type(y)(0.0)
    return wp.vector(x, y)


@wp.func
def add_square(acc: Any, x: Any, m: int, count: int):
    """Entry m of ``count`` added to torch's ``vector_norm`` accumulation of squares (its CPU
    reduction, matched up to 7 entries: the first four squares summed in order when there are 4
    to 7, else one fused multiply-add per entry)."""
    if m == 0:
        return x * x
    if m < 4 and count >= 4:
        return acc + x * x
    return G._fma_square(x, acc)


@wp.func(inline=True)
def teammate_value(w: Any, e: int, j: int, p: Any):
    """VMAS's ``other_agent_value``: ``1 - |exp(-5 d)|`` over the distances d to the other
    scripted players (0 for a lone player)."""
    n = w.n_ai
    acc = flt(p[0], 0.0)
    if n <= 1:
        return acc
    m = int(0)
    for k in range(n):
        if k != j:
            d = W.distance(W.position(w, e, w.ai_body[k]), p)
            acc = add_square(acc, wp.exp(flt(d, -5.0) * d), m, n - 1)
            m += 1
    return -wp.sqrt(acc) + flt(acc, 1.0)


@wp.func(inline=True)
def wall_value(w: Any, p: Any):
    """VMAS's ``wall_value``: ``1 - |(exp(-8 d_y), exp(-8 d_x))|`` over the distances to the
    nearer side line and the nearer end line (``get_wall_separations``)."""
    top = -p[1] + w.ai_half_width
    bottom = p[1] + w.ai_half_width
    left = p[0] + w.ai_half_length
    right = -p[0] + w.ai_half_length
    dy = wp.sqrt(G.torch_min(top, bottom) * G.torch_min(top, bottom))
    dx = wp.sqrt(G.torch_min(left, right) * G.torch_min(left, right))
    eight = flt(dx, -8.0)
    return -G.vector_norm(wp.vector(wp.exp(eight * dy), wp.exp(eight * dx))) + flt(dx, 1.0)


@wp.func(inline=True)
def pos_value(w: Any, e: int, j: int, p: Any):
    """VMAS's ``get_pos_value`` of spot p for scripted player j: the mean of its wall, teammate,
    ball-distance, side (not between the ball and the target net) and defence (between the ball
    and its own net) values.  VMAS divides the own-net vector by the norm of the already
    normalised target-net vector: so do we."""
    ball = W.position(w, e, w.ball_body)
    ball_vec = unit_or_zero(ball - p)
    ball_dist = W.distance(p, ball)
    ball_dist_value = wp.exp(flt(ball_dist, -2.0) * wp.pow(ball_dist, flt(ball_dist, 4.0)))
    net_vec = W.position(w, e, w.ai_target_net) - p
    net_vec = net_vec / G.vector_norm(net_vec)
    side_value = G.torch_min((ball_vec[0] * net_vec[0] + ball_vec[1] * net_vec[1]) + flt(ball_dist, 1.25),
                             flt(ball_dist, 1.0))
    own_net_vec = (W.position(w, e, w.ai_own_net) - p) / G.vector_norm(net_vec)
    defend_value = G.torch_max(ball_vec[0] * -own_net_vec[0] + ball_vec[1] * -own_net_vec[1], flt(ball_dist, 0.0))
    value = (((wall_value(w, p) + teammate_value(w, e, j, p)) + ball_dist_value) + side_value) + defend_value
    return value / flt(value, 5.0)


@wp.func(inline=True)
def better_position(w: Any, e: int, j: int):
    """VMAS's ``check_better_positions`` for scripted player j: of its last target (relative to
    the ball, now) and two random spots (``sigma (1 + 3 (1 - decision))``-scaled normals about the
    ball and about the player), each clamped into the pitch, the first of highest value (the
    last target's favoured by ``3 (1 - decision)``; values noisy with decision < 1)."""
    b = w.ai_body[j]
    ball = W.position(w, e, w.ball_body)
    rng = ai_stream(w, e, j, SAMPLES)
    n0 = type(ball)(type(ball[0])(wp.randn(rng)), type(ball[0])(wp.randn(rng)))
    n1 = type(ball)(type(ball[0])(wp.randn(rng)), type(ball[0])(wp.randn(rng)))
    best = clamp_pos(w, wp.vector(w.target_pos_rel[e, j, 0], w.target_pos_rel[e, j, 1]) + ball)
    best_value = pos_value(w, e, j, best)
    noisy = w.ai_decision != flt(w.ai_decision, 1.0)
    vrng = ai_stream(w, e, j, VALUES)
    if noisy:
        best_value = best_value + type(best_value)(wp.randn(vrng)) * w.ai_value_noise
    best_value = best_value + w.ai_replan_margin
    for k in range(2):
        spot = (n1 * w.ai_sigma) * w.ai_sample_scale + W.position(w, e, b)
        if k == 0:
            spot = (n0 * w.ai_sigma) * w.ai_sample_scale + ball
        spot = clamp_pos(w, spot)
        value = pos_value(w, e, j, spot)
        if noisy:
            value = value + type(value)(wp.randn(vrng)) * w.ai_value_noise
        if value > best_value or (G.is_nan(value) and not G.is_nan(best_value)):
            best = spot
            best_value = value
    return best


@wp.func(inline=True)
def possession(w: Any, e: int, draw: bool, j: int):
    """VMAS's ``check_possession``: the scripted player (index) nearest the ball half a second
    ahead (``|ball - p + (v_ball - v) 0.5|``), less ``0.5 decision`` times how well it faces
    the target net past the ball, among teammates and opponents alike (noisy with decision < 1:
    ``draw`` from player j's stream); the first nearest teammate."""
    ball = W.position(w, e, w.ball_body)
    ball_vel = W.velocity(w, e, w.ball_body)
    net = W.position(w, e, w.ai_target_net)
    rng = ai_stream(w, e, j, POSSESSION)
    n = w.n_ai
    best = int(0)
    best_dist = flt(ball[0], 0.0)
    for k in range(n + w.ai_opp_body.shape[0]):
        b = int(0)
        if k < n:
            b = w.ai_body[k]
        else:
            b = w.ai_opp_body[k - n]
        p = W.position(w, e, b)
        ball_disp = ball - p
        dist = G.vector_norm(ball_disp + (ball_vel - W.velocity(w, e, b)) * flt(ball[0], 0.5))
        ball_dir = ball_disp / G.vector_norm(ball_disp)
        net_disp = net - p
        net_dir = net_disp / G.vector_norm(net_disp)
        side = ball_dir[0] * net_dir[0] + ball_dir[1] * net_dir[1]
        dist = dist - (flt(side, 0.5) * side) * w.ai_decision
        if draw:
            dist = dist + (flt(side, 0.5) * type(side)(wp.randn(rng))) * w.ai_possession_noise
        if k < n and (k == 0 or dist < best_dist or (G.is_nan(dist) and not G.is_nan(best_dist))):
            best = k
            best_dist = dist
    return best


@wp.func(inline=True)
def aim(w: Any, e: int, j: int, pos: Any, vel: Any):
    """VMAS's ``go_to`` noise: with precision < 1, the target position, then velocity, moved by
    ``10 (1 - precision) (1 - exp(-|last target - pos|))``-scaled normals; returns them and
    keeps the target (``target_pos``, ``target_pos_rel``) for the next step."""
    ball = W.position(w, e, w.ball_body)
    if w.ai_precision != flt(w.ai_precision, 1.0):
        rng = ai_stream(w, e, j, PRECISION)
        last = wp.vector(w.target_pos[e, j, 0], w.target_pos[e, j, 1])
        scale = flt(ball[0], 1.0) - wp.exp(-W.distance(last, pos))
        zero = flt(ball[0], 0.0)
        noise = wp.vector(type(zero)(wp.randn(rng)), type(zero)(wp.randn(rng)))
        pos = pos + (noise * flt(zero, 10.0)) * w.ai_precision_noise * scale
        noise = wp.vector(type(zero)(wp.randn(rng)), type(zero)(wp.randn(rng)))
        vel = vel + (noise * flt(zero, 10.0)) * w.ai_precision_noise * scale
    rel = pos - ball
    w.target_pos_rel[e, j, 0] = rel[0]
    w.target_pos_rel[e, j, 1] = rel[1]
    w.target_pos[e, j, 0] = pos[0]
    w.target_pos[e, j, 1] = pos[1]
    return pos, vel


@wp.func(inline=True)
def scripted_control(w: Any, e: int, j: int, has_ball: bool):
    """Scripted player j's plan and action (VMAS's ``dribble_policy`` then ``get_action``): with
    the ball, a dribble towards the target net (``update_dribble``: strike the ball from behind
    at ``dribble_speed``), else a move to ``better_position``; the action is ``speed² 25 (0.5
    (spline pos - pos) + 0.5 (spline vel - vel))`` a lookahead of 0.01 along the spline,
    clamped to ``u_range``."""
    b = w.ai_body[j]
    here = W.position(w, e, b)
    ball = W.position(w, e, w.ball_body)
    zero = flt(ball[0], 0.0)
    if has_ball:
        ball_disp = W.position(w, e, w.ai_target_net) - ball
        direction = ball_disp / G.vector_norm(ball_disp)
        target_vel = direction * w.ai_dribble_speed
        sv = start_vel(ball, target_vel, here, zero)
        offset = normalized_where_positive(sv, G.vector_norm(sv))
        new_direction = direction + offset * flt(zero, 0.5)
        new_direction = new_direction / G.vector_norm(new_direction)
        target = ball - (new_direction * w.ai_hit_radius[j]) * flt(zero, 0.7)
    else:
        target = better_position(w, e, j)
        target_vel = wp.vector(zero, zero)
        aggression = zero
        if G.vector_norm(target - here) > flt(zero, 0.1):
            aggression = flt(zero, 1.0)
        sv = start_vel(target, target_vel, here, aggression)
    target, target_vel = aim(w, e, j, target, target_vel)
    des_pos = hermite(w.ai_hermite_pos[0], w.ai_hermite_pos[1], w.ai_hermite_pos[2], w.ai_hermite_pos[3],
                      here, target, sv, target_vel)
    des_vel = hermite(w.ai_hermite_vel[0], w.ai_hermite_vel[1], w.ai_hermite_vel[2], w.ai_hermite_vel[3],
                      here, target, sv, target_vel)
    control = ((des_pos - here) * flt(zero, 0.5) + (des_vel - W.velocity(w, e, b)) * flt(zero, 0.5)) * w.ai_gain
    return wp.vector(wp.clamp(control[0], -w.ai_u_range, w.ai_u_range),
                     wp.clamp(control[1], -w.ai_u_range, w.ai_u_range))


@wp.func(inline=True)
def run_scripted_team(w: Any, e: int):
    """VMAS's ``AgentPolicy.run`` for every scripted player in order (possession worked out
    again at each player whose index has a 0 digit, as VMAS's ``"0" in agent.name``): its force,
    ``control * u_multiplier`` (zero when the team is disabled), into ``w.script_u``."""
    holder = int(0)
    for j in range(w.n_ai):
        row = w.script_row[w.ai_body[j]]
        u = wp.vector(wp.float32(0.0), wp.float32(0.0))
        if w.ai_enabled != 0:
            if w.ai_checks_possession[j] != 0:
                holder = possession(w, e, w.ai_decision != flt(w.ai_decision, 1.0), j)
            control = scripted_control(w, e, j, holder == j)
            u = wp.vector(wp.float32(control[0]), wp.float32(control[1])) * wp.float32(w.ai_u_multiplier[j])
        w.script_u[e, row, 0] = u[0]
        w.script_u[e, row, 1] = u[1]


@wp.func
def edge_push(gap: Any, threshold: Any):
    """``1 - min(gap, threshold) / threshold`` (VMAS's ball script terms)."""
    return flt(gap, 1.0) - G.torch_min(gap, threshold) / threshold


@wp.func(inline=True)
def ball_script(w: Any, e: int):
    """VMAS's ``ball_action_script``: a push of up to 0.05 away from a side or end line within
    ``2 agent_size`` of the ball, weaker the faster the ball moves across (VMAS scales both
    components by the y speed), none along x within the goal mouth; into ``w.script_u``."""
    b = w.ball_body
    p = W.position(w, e, b)
    vy = w.vel[e, b, 1]
    th = w.ball_dist_thres
    upper = edge_push(w.ai_half_width - p[1], th)
    lower = edge_push(w.ai_half_width + p[1], th)
    right = edge_push(w.ai_half_length - p[0], th)
    left = edge_push(w.ai_half_length + p[0], th)
    slow = edge_push(wp.abs(vy), w.ball_vel_thres)
    ux = ((left - right) * slow) * w.ball_impulse
    uy = ((lower - upper) * slow) * w.ball_impulse
    if p[1] < w.goal_half and p[1] > -w.goal_half:
        ux = flt(ux, 0.0)
    row = w.script_row[b]
    w.script_u[e, row, 0] = wp.float32(ux)
    w.script_u[e, row, 1] = wp.float32(uy)


@wp.struct
class Clock:
    """The per-world stream keys ``world.step_stream`` reads (``ai_draws_kernel``)."""

    world_seed: wp.array(dtype=wp.int32)
    episode: wp.array(dtype=wp.int32)
    t: wp.array(dtype=wp.int32)


@wp.kernel
def ai_draws_kernel(clock: Clock, samples: wp.array3d(dtype=wp.float32),
                    values: wp.array3d(dtype=wp.float32), precision: wp.array3d(dtype=wp.float32),
                    possession: wp.array3d(dtype=wp.float32)):
    """Every normal scripted player j of world e may draw this step, by purpose (``[E, n, 4]``,
    ``[E, n, 3]``, ``[E, n, 4]``, ``[E, n, every player]``): what the parity tests give VMAS."""
    e, j = wp.tid()
    rng = ai_stream(clock, e, j, SAMPLES)
    for k in range(4):
        samples[e, j, k] = wp.randn(rng)
    rng = ai_stream(clock, e, j, VALUES)
    for k in range(3):
        values[e, j, k] = wp.randn(rng)
    rng = ai_stream(clock, e, j, PRECISION)
    for k in range(4):
        precision[e, j, k] = wp.randn(rng)
    rng = ai_stream(clock, e, j, POSSESSION)
    for k in range(possession.shape[2]):
        possession[e, j, k] = wp.randn(rng)
