"""Football-v0: VMAS 1.5.2's ``football`` scenario (a blue team against VMAS's scripted red team,
or two learning teams, a ball, two goals; ``vmas/scenarios/football.py``).  The scripted players
and the ball's script are ``football_ai``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, scratch, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import football_ai as AI
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

BLUE_COLOR = (0.22, 0.49, 0.72)
RED_COLOR = (0.89, 0.10, 0.11)
NET_COLOR = (0.5, 0.5, 0.5)
#: VMAS's ``AgentPolicy`` constants
AI_SIGMA = 0.5
AI_REPLAN_MARGIN = 0.0
AI_LOOKAHEAD = 0.01
AI_STRENGTH_MULTIPLIER = 25.0
#: VMAS's ``physically_different`` blue roles (attackers 0-1, defenders 2-3, goalkeeper 4):
#: (radius, u_multiplier, max_speed) changes
ROLES = [(-0.005, 0.1, 0.05)] * 2 + [(0.0, 0.0, 0.0)] * 2 + [(0.01, -0.05, -0.1)]


@wp.func(inline=True)
def ball_pos(w: Any, e: int):
    return W.position(w, e, w.ball_body)


@wp.func(inline=True)
def action_force(w: Any, e: int, b: int):
    """Player or ball b's action force this step (VMAS's ``state.force``, ``agent_forces``)."""
    k = b - w.n_landmarks
    return wp.vector(w.agent_forces[e, k, 0], w.agent_forces[e, k, 1])


@wp.func(inline=True)
def keep_action_forces(w: Any, e: int):
    """Every player's and the ball's action force into the state (``agent_forces``): a scripted
    body's ``script_u``, a policy player's ``u`` (what the observations show)."""
    for k in range(w.agent_forces.shape[1]):
        b = w.n_landmarks + k
        row = w.script_row[b]
        fx = wp.float32(0.0)
        fy = wp.float32(0.0)
        if row >= 0:
            fx = w.script_u[e, row, 0]
            fy = w.script_u[e, row, 1]
        else:
            fx = w.u[e, k, 0]
            fy = w.u[e, k, 1]
        w.agent_forces[e, k, 0] = type(w.dt)(fx)
        w.agent_forces[e, k, 1] = type(w.dt)(fy)


@wp.func(inline=True)
def red_body(w: Any, k: int):
    return w.n_landmarks + w.n_blue + k


@wp.func(inline=True)
def closest_to_ball(w: Any, e: int, first: int, n: int):
    """The distance from the ball to the nearest of bodies ``[first, first + n)`` (VMAS's
    ``get_closest_agent_to_ball``: torch's ``cdist``)."""
    ball = ball_pos(w, e)
    best = W.distance(W.position(w, e, first), ball)
    for k in range(1, n):
        best = G.torch_min(best, W.distance(W.position(w, e, first + k), ball))
    return best


@wp.func(inline=True)
def goal_shaping(w: Any, e: int, blue: bool):
    """``|ball - the opposing goal| * pos_shaping_factor_ball_goal`` (blue's goal: VMAS's
    ``right_goal_pos``, ``(x, -0.0)``)."""
    goal = wp.vector(w.goal_line, -type(w.dt)(0.0))
    if not blue:
        goal = wp.vector(-w.goal_line, type(w.dt)(0.0))
    return W.distance(ball_pos(w, e), goal) * w.shaping_goal


@wp.func(inline=True)
def reset_shaping(w: Any, e: int, t: int, first: int, n: int):
    """VMAS's ``reset_ball`` for policy team t (0 blue, 1 red, its bodies ``[first, first + n)``):
    the nearest player's distance to the ball and both shaping values."""
    d = closest_to_ball(w, e, first, n)
    w.min_dist_to_ball[e, t] = d
    w.pos_shaping[e, t] = goal_shaping(w, e, t == 0)
    w.pos_shaping_agent[e, t] = d * w.shaping_agent


@wp.func(inline=True)
def spawn_randomly(w: Any, e: int, rng: wp.uint32, b: int, off_x: Any):
    """VMAS's ``_get_random_spawn_position``: ``U[0, 1)² * (L / 2, W) + (off_x, -W / 2)``."""
    x = type(off_x)(wp.randf(rng)) * w.spawn_range_x + off_x
    y = type(off_x)(wp.randf(rng)) * w.spawn_range_y + w.spawn_off_y
    W.set_position(w, e, b, wp.vector(x, y))
    return rng


@wp.func(inline=True)
def spawn_formation(w: Any, e: int, rng: wp.uint32, first: int, n: int, slots: int):
    """VMAS's ``_spawn_formation``: the team's players (bodies ``[first, first + n)``) on its
    formation slots (``formation_x/y[slots + k]``), in order or, with
    ``randomise_formation_indices``, shuffled (a uniform permutation: VMAS draws one for the
    whole batch), each moved by ``(U[0, 1)² - 0.5) formation_noise``."""
    for k in range(n):
        w.formation_slot[e, k] = k
    if w.randomise_formation != 0:  # Fisher-Yates
        for k in range(n - 1, 0, -1):
            m = int(wp.randi(rng, 0, k + 1))
            s = w.formation_slot[e, k]
            w.formation_slot[e, k] = w.formation_slot[e, m]
            w.formation_slot[e, m] = s
    half = type(w.dt)(0.5)
    for k in range(n):
        slot = slots + w.formation_slot[e, k]
        dx = (type(half)(wp.randf(rng)) - half) * w.formation_noise
        dy = (type(half)(wp.randf(rng)) - half) * w.formation_noise
        W.set_position(w, e, first + k, wp.vector(w.formation_x[slot] + dx, w.formation_y[slot] + dy))
    return rng


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the blue players uniform in the left half (or in formation),
    the red ones uniform in the right half facing left (rotation pi; or in formation), the ball
    at the centre, the walls, goals and nets in place, no forces yet, the policy teams' shaping
    values and the scripted players' targets cleared."""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    for k in range(L):
        W.set_position(w, e, k, wp.vector(w.lm_x[k], w.lm_y[k]))
        w.rot[e, k] = w.lm_rot[k]
    if w.formation_blue != 0:
        rng = spawn_formation(w, e, rng, L, w.n_blue, 0)
    else:
        for k in range(w.n_blue):
            rng = spawn_randomly(w, e, rng, L + k, w.blue_off_x)
    if w.formation_red != 0:
        rng = spawn_formation(w, e, rng, red_body(w, 0), w.n_red, w.n_blue)
    else:
        for k in range(w.n_red):
            rng = spawn_randomly(w, e, rng, red_body(w, k), w.red_off_x)
            w.rot[e, red_body(w, k)] = w.red_rot
    for k in range(w.agent_forces.shape[1]):
        w.agent_forces[e, k, 0] = type(w.dt)(0.0)
        w.agent_forces[e, k, 1] = type(w.dt)(0.0)
    reset_shaping(w, e, 0, L, w.n_blue)
    if w.red_policy != 0:
        reset_shaping(w, e, 1, red_body(w, 0), w.n_red)
    for j in range(w.target_pos.shape[1]):
        for k in range(2):
            w.target_pos_rel[e, j, k] = type(w.dt)(0.0)
            w.target_pos[e, j, k] = type(w.dt)(0.0)


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action``: a red policy player's x action is mirrored."""
    if i >= w.n_blue:
        w.u[e, i, 0] = -w.u[e, i, 0]


@wp.func(inline=True)
def pre_step(w: Any, e: int):
    """The scripted players' and the ball's action scripts (VMAS runs them in its
    ``env_process_action``, before the physics)."""
    AI.run_scripted_team(w, e)
    AI.ball_script(w, e)
    keep_action_forces(w, e)


@wp.func(inline=True)
def team_dense_reward(w: Any, e: int, t: int, first: int, n: int):
    """VMAS's ``reward_ball_to_goal`` + ``reward_all_agent_to_ball`` for policy team t: the
    decrease of the ball's shaped distance to the opposing goal, plus the decrease of the
    nearest player's shaped distance to the ball, the latter 0 while the ball moves (speed >
    1e-6) or the nearest player is within ``distance_to_ball_trigger``."""
    F0 = type(w.dt)(0.0)
    shaping = goal_shaping(w, e, t == 0)
    pos_rew = w.pos_shaping[e, t] - shaping
    w.pos_shaping[e, t] = shaping
    d = closest_to_ball(w, e, first, n)
    w.min_dist_to_ball[e, t] = d
    agent_shaping = d * w.shaping_agent
    moving = G.vector_norm(W.velocity(w, e, w.ball_body)) > type(F0)(1e-6)
    agent_rew = F0
    if not (d < w.ball_trigger or moving):
        agent_rew = w.pos_shaping_agent[e, t] - agent_shaping
    w.pos_shaping_agent[e, t] = agent_shaping
    return pos_rew, agent_rew


@wp.func(inline=True)
def team_info(w: Any, e: int, t: int, first: int, n: int, sparse: Any, pos_rew: Any, agent_rew: Any):
    """Reward and VMAS's info of team t's policy players ``[first, first + n)`` (agent indices)."""
    ball = ball_pos(w, e)
    for i in range(first, first + n):
        w.reward[e, i] = sparse + (pos_rew + agent_rew)
        w.ball_pos[e, i, 0] = ball[0]
        w.ball_pos[e, i, 1] = ball[1]
        w.sparse_reward[e, i] = sparse
        w.ball_goal_pos_rew[e, i] = pos_rew
        w.all_agent_ball_pos_rew[e, i] = agent_rew
        w.dist_ball_to_goal[e, i] = w.pos_shaping[e, t] / w.shaping_goal
        w.min_agent_dist_to_ball[e, i] = w.min_dist_to_ball[e, t]
        w.touching_ball[e, i] = w.min_dist_to_ball[e, t] <= w.touch_dist


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: ``scoring_reward`` to a team whose opponents' goal line the ball crossed
    within the goal mouth (minus it to the other), plus (``dense_reward``) the shaping terms of
    ``team_dense_reward``; every player of a team gets its team's reward.  VMAS's ``done``: a
    goal."""
    F0 = type(w.dt)(0.0)
    ball = ball_pos(w, e)
    in_mouth = ball[1] <= w.goal_half and ball[1] >= -w.goal_half
    blue_score = ball[0] > w.goal_line and in_mouth
    red_score = ball[0] < -w.goal_line and in_mouth
    sparse = F0
    if blue_score:
        sparse = w.scoring_reward
    if red_score:
        sparse = -w.scoring_reward
    pos_rew = F0
    agent_rew = F0
    if w.dense != 0:
        pos_rew, agent_rew = team_dense_reward(w, e, 0, w.n_landmarks, w.n_blue)
    team_info(w, e, 0, 0, w.n_blue, sparse, pos_rew, agent_rew)
    if w.red_policy != 0:
        pos_rew = F0
        agent_rew = F0
        if w.dense != 0:
            pos_rew, agent_rew = team_dense_reward(w, e, 1, red_body(w, 0), w.n_red)
        team_info(w, e, 1, w.n_blue, w.n_red, -sparse, pos_rew, agent_rew)
    return blue_score or red_score


@wp.func
def mirrored(p: Any, flip: bool):
    """p with its x negated for the red team (VMAS's observations are the team's view)."""
    if flip:
        return wp.vector(-p[0], p[1])
    return p


@wp.func(inline=True)
def write_other(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, w: Any, flip: bool, p: Any,
                vel: Any, b: int):
    """``[p - q, v - v_q, v_q, f_q]`` of another player (body b)."""
    q = mirrored(W.position(w, e, b), flip)
    vq = mirrored(W.velocity(w, e, b), flip)
    o = W.write_vec(out, e, i, o, p - q)
    o = W.write_vec(out, e, i, o, vel - vq)
    o = W.write_vec(out, e, i, o, vq)
    return W.write_vec(out, e, i, o, mirrored(action_force(w, e, b), flip))


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """VMAS's ``observation`` (the red team's mirrored in x): ``[f, p - p_ball, v - v_ball,
    p_ball - goal, v_ball, f_ball, p - goal, v]``, then each opponent's and each teammate's
    ``[p - q, v - v_q, v_q, f_q]`` (``f``: action forces; ``goal``: the opposing goal)."""
    b = W.body_of(w, i)
    red = i >= w.n_blue
    goal = wp.vector(w.goal_line, -type(w.dt)(0.0))
    if red:
        goal = wp.vector(w.goal_line, type(w.dt)(0.0))
    p = mirrored(W.position(w, e, b), red)
    vel = mirrored(W.velocity(w, e, b), red)
    bp = mirrored(ball_pos(w, e), red)
    bv = mirrored(W.velocity(w, e, w.ball_body), red)
    o = W.write_vec(out, e, i, 0, mirrored(action_force(w, e, b), red))
    o = W.write_vec(out, e, i, o, p - bp)
    o = W.write_vec(out, e, i, o, vel - bv)
    o = W.write_vec(out, e, i, o, bp - goal)
    o = W.write_vec(out, e, i, o, bv)
    o = W.write_vec(out, e, i, o, mirrored(action_force(w, e, w.ball_body), red))
    o = W.write_vec(out, e, i, o, p - goal)
    o = W.write_vec(out, e, i, o, vel)
    first_own = w.n_landmarks
    n_own = w.n_blue
    first_other = red_body(w, 0)
    n_other = w.n_red
    if red:
        first_own = red_body(w, 0)
        n_own = w.n_red
        first_other = w.n_landmarks
        n_other = w.n_blue
    if w.observe_adversaries != 0:
        for k in range(n_other):
            o = write_other(out, e, i, o, w, red, p, vel, first_other + k)
    if w.observe_teammates != 0:
        for k in range(n_own):
            if first_own + k != b:
                o = write_other(out, e, i, o, w, red, p, vel, first_own + k)


def _goals_for(info: dict) -> torch.Tensor:
    return info["sparse_reward"][:, 0] > 0


def _goals_against(info: dict) -> torch.Tensor:
    return info["sparse_reward"][:, 0] < 0


def _strength(name: str, value) -> tuple[float, float]:
    """An AI strength: a float in [0, 1] for both teams, or VMAS's ``(blue, red)`` tuple."""
    values = value if isinstance(value, tuple) else (value, value)
    if len(values) != 2:
        raise ValueError(f"{name}: expected a float in [0, 1] or a (blue, red) tuple of them, got {value!r}")
    return tuple(v.check_float(name, x, low=0.0, high=1.0) for x in values)


def _f32(x: float) -> float:
    return float(np.float32(x))


def hermite_coefficients(u: float, deriv: int) -> list[float]:
    """VMAS's ``Splines.hermite`` coefficients ``U(u) @ A`` (float32, by VMAS's own torch ops)."""
    def n_p_r(n, r):
        return 0 if r > n else math.prod(range(n, max(1, n - r), -1))
    a = torch.tensor([[2.0, -2.0, 1.0, 1.0], [-3.0, 3.0, -2.0, -1.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    ut = torch.tensor([u])
    big_u = torch.stack([n_p_r(3 - k, deriv) * (ut ** max(0, 3 - k - deriv)) for k in range(4)], dim=1).float()
    return (big_u[:, None, :] @ a[None, :, :]).flatten().tolist()


def formation_slots(n: int, per_column: int, endpoint: float, width: float) -> list[tuple[float, float]]:
    """VMAS's ``_spawn_formation`` slots of a team of n (float32 ``linspace`` columns from the
    centre line to ``endpoint``, each of up to ``per_column`` players spread across the pitch)."""
    slots = []
    for x in torch.linspace(0, endpoint, n // per_column + 3):
        if len(slots) >= n:
            break
        if x == 0 or x == endpoint:
            continue
        column = min(per_column, n - len(slots))
        for y in torch.linspace(width / 2, -width / 2, column + 2):
            if y == -width / 2 or y == width / 2:
                continue
            slots.append((float(x), float(y)))
    return slots


class Football(VmasBase):
    """VMAS 1.5.2's ``football``: a blue team of ``n_blue_agents`` learning players against
    ``n_red_agents`` red players run by VMAS's scripted ``AgentPolicy`` (or, with
    ``ai_red_agents=False``, a second learning team), a ball and two goals on a 3 x 1.5 pitch.

    Same keyword arguments and defaults as VMAS's scenario, plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``): teams ``n_blue_agents=3``, ``n_red_agents=3``,
    ``ai_red_agents=True``, ``ai_blue_agents=False``, ``physically_different=False`` (5 blue
    players: two small fast attackers, two defenders, a big slow goalkeeper); spawning
    ``spawn_in_formation=False``, ``only_blue_formation=True``,
    ``formation_agents_per_column=2``, ``randomise_formation_indices=False``,
    ``formation_noise=0.2``; the scripted team ``ai_strength=1``, ``ai_decision_strength=1``,
    ``ai_precision_strength=1`` (floats in [0, 1] or ``(blue, red)`` tuples),
    ``disable_ai_red=False``; sizes ``agent_size=0.025``, ``goal_size=0.35``,
    ``goal_depth=0.1``, ``pitch_length=3``, ``pitch_width=1.5``, ``ball_mass=0.25``,
    ``ball_size=0.02``; actions ``u_multiplier=0.1``, speeds ``max_speed=0.15``,
    ``ball_max_speed=0.3``; rewards ``dense_reward=True``,
    ``pos_shaping_factor_ball_goal=10``, ``pos_shaping_factor_agent_ball=0.1``,
    ``distance_to_ball_trigger=0.4``, ``scoring_reward=100``; observations
    ``observe_teammates=True``, ``observe_adversaries=True``; ``viewer_size`` (VMAS's window,
    accepted and unused: ``render_frame`` takes the picture's size).  The shooting arguments
    ``u_rot_multiplier``, ``u_shoot_multiplier``, ``shooting_radius``, ``shooting_angle`` are
    accepted and, as in VMAS without ``enable_shooting``, change nothing.

    **Refused** (``ValueError`` naming the argument): ``enable_shooting=True`` (VMAS's rotation
    and kick actions: the family's physics has no action torque), ``dict_obs=True`` (our
    observations are flat arrays; VMAS's flat layout is the default), ``n_traj_points > 0``
    (VMAS's trajectory markers are landmarks placed from one world of the batch only),
    ``ai_blue_agents=True`` (VMAS cannot run it: with ``ai_red_agents=True`` no policy agent is
    left, without it VMAS's reward fails), ``dense_reward_ratio`` (VMAS's deprecated argument:
    VMAS refuses it too), ``physically_different=True`` with ``n_blue_agents != 5`` (VMAS's
    assertion), a learning team of one player with ``observe_teammates=True`` (VMAS's
    observation fails there).

    **Bodies** (VMAS's entity order): the side walls of the two goal mouths and the goals' backs,
    tops and bottoms (white lines, colliding), the two nets (boxes, not colliding), then
    ``agent_blue_0 …`` (group ``blue``), ``agent_red_0 …`` (group ``red`` when they learn; else
    scripted bodies, no policy agents) and the ``Ball`` (scripted; radius ``ball_size``, mass
    ``ball_mass``, top speed ``ball_max_speed``).  Players are holonomic spheres of radius
    ``agent_size``, force ``u_multiplier * u`` with ``u ∈ [-1, 1]²`` (``Discrete(9)``), top
    speed ``max_speed``; two substeps of 0.05 s, drag 0.05, everything kept within ``x ±
    (pitch_length / 2 + goal_depth - agent_size)``, ``y ± (pitch_width / 2 - agent_size)``.  A
    red learning player's x action is mirrored (its view of the pitch is mirrored too).

    **Start**: the ball at rest at the centre; blue players uniform in ``[-L/2 + agent_size,
    agent_size) x [-W/2, W/2)``, red ones in ``[-agent_size, L/2 - agent_size) x [-W/2, W/2)``
    facing left (rotation pi); or, ``spawn_in_formation``, on VMAS's formation columns (moved by
    ``formation_noise``), the red team too unless ``only_blue_formation`` (then without the
    rotation, as VMAS).

    **The scripted red team** (``football_ai``): each step the red player nearest the ball half
    a second ahead dribbles it towards the blue net, the others move to the best of three spots
    (their last target and two random ones) by a value of wall, teammate, ball distance and
    position terms, along Hermite splines; the ball's own script pushes it off the side and end
    lines.  VMAS draws that randomness from torch's global generator, ours from each world's
    counter-based stream (``football_ai``): the same law, other numbers (the parity tests give
    VMAS our draws).

    **Observation** (per player, VMAS's; ``16 + 8 (n_opponents + n_teammates)``): ``[f, p -
    p_ball, v - v_ball, p_ball - goal, v_ball, f_ball, p - goal, v]``, then per opponent
    (``observe_adversaries``) and per teammate (``observe_teammates``) ``[p - q, v - v_q, v_q,
    f_q]``; ``f`` are action forces, ``goal`` the opposing goal's centre ``(±(L/2 +
    ball_size/2), 0)``; the red team's view is mirrored in x.

    **Reward** (every player of a team the same): ``±scoring_reward`` when the ball crosses a
    goal line inside the goal mouth, plus (``dense_reward``) the decrease of
    ``pos_shaping_factor_ball_goal * |ball - opposing goal|`` and of
    ``pos_shaping_factor_agent_ball *`` the team's nearest distance to the ball (the latter 0
    while the ball moves or that player is within ``distance_to_ball_trigger``).
    **Termination**: a goal (VMAS's ``done``); truncation at ``max_steps``.  **Info** (per
    player, VMAS's): ``sparse_reward``, ``ball_goal_pos_rew``, ``all_agent_ball_pos_rew``,
    ``dist_ball_to_goal``, ``min_agent_dist_to_ball``, ``touching_ball``, ``ball_pos``.  Episode
    metrics: ``goals_for`` / ``goals_against`` (blue scored / conceded).
    **State** (besides the bodies): per team (blue, red) ``pos_shaping``,
    ``pos_shaping_agent`` and ``min_dist_to_ball`` (VMAS's ball ``pos_shaping_blue`` …, the
    scenario's ``min_agent_dist_to_ball_blue`` …), per scripted player ``target_pos_rel`` and
    ``target_pos`` (VMAS's ``objectives``).

    **Deviations from VMAS**: the scripted team's random draws (above).  VMAS's
    ``check_better_positions`` takes every world's chosen spot from the candidates of the *first*
    world of its mask (its ``torch.gather`` indexes one batch row), so in a batch VMAS's off-ball
    red players aim at spots around another world's ball; here each world takes its own
    candidate (what VMAS does in a batch of one).  ``randomise_formation_indices``: each world
    draws its own shuffle (VMAS one ``randperm`` for the batch at each reset).  VMAS's torch
    ``norm`` over 8 or more teammates sums in an order not reproduced (the last bit of one value
    term, ``n_red_agents >= 9``).

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``football``)
    """

    env_id = "Football-v0"
    vmas_scenario = "football"
    per_agent_metrics = ("sparse_reward", "ball_goal_pos_rew", "all_agent_ball_pos_rew", "ball_pos",
                         "dist_ball_to_goal", "min_agent_dist_to_ball", "touching_ball")
    episode_metrics = (
        EpisodeMetric("goals_for", "1 if the blue team scored (the episode ends)", _goals_for, "any"),
        EpisodeMetric("goals_against", "1 if the blue team conceded (the episode ends)", _goals_against, "any"),
    )

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action
    pre_step = pre_step

    def __init__(self, *, viewer_size=(1200, 800), n_blue_agents: int = 3, n_red_agents: int = 3,
                 ai_red_agents: bool = True, ai_blue_agents: bool = False, physically_different: bool = False,
                 spawn_in_formation: bool = False, only_blue_formation: bool = True,
                 formation_agents_per_column: int = 2, randomise_formation_indices: bool = False,
                 formation_noise: float = 0.2, n_traj_points: int = 0, ai_strength=1.0, ai_decision_strength=1.0,
                 ai_precision_strength=1.0, disable_ai_red: bool = False, agent_size: float = 0.025,
                 goal_size: float = 0.35, goal_depth: float = 0.1, pitch_length: float = 3.0,
                 pitch_width: float = 1.5, ball_mass: float = 0.25, ball_size: float = 0.02,
                 u_multiplier: float = 0.1, enable_shooting: bool = False, u_rot_multiplier: float = 0.0003,
                 u_shoot_multiplier: float = 0.6, shooting_radius: float = 0.08, shooting_angle: float = math.pi / 2,
                 max_speed: float = 0.15, ball_max_speed: float = 0.3, dense_reward: bool = True,
                 pos_shaping_factor_ball_goal: float = 10.0, pos_shaping_factor_agent_ball: float = 0.1,
                 distance_to_ball_trigger: float = 0.4, scoring_reward: float = 100.0,
                 observe_teammates: bool = True, observe_adversaries: bool = True, dict_obs: bool = False,
                 dense_reward_ratio=None, **kwargs) -> None:
        if dense_reward_ratio is not None:
            raise ValueError("dense_reward_ratio: deprecated in VMAS's football (VMAS refuses it too); use "
                             "dense_reward, a bool that turns the dense reward on or off")
        if not (isinstance(viewer_size, tuple | list) and len(viewer_size) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in viewer_size)):
            raise ValueError(f"viewer_size: expected a (width, height) pair of positive ints, got {viewer_size!r}")
        self.n_blue_agents = v.check_int("n_blue_agents", n_blue_agents, minimum=1)
        self.n_red_agents = v.check_int("n_red_agents", n_red_agents, minimum=1)
        self.ai_red_agents = v.check_bool("ai_red_agents", ai_red_agents)
        if v.check_bool("ai_blue_agents", ai_blue_agents):
            raise ValueError("ai_blue_agents: only False (a scripted blue team: VMAS leaves no policy agent with "
                             "ai_red_agents=True and fails in its reward without)")
        self.physically_different = v.check_bool("physically_different", physically_different)
        if self.physically_different and self.n_blue_agents != 5:
            raise ValueError(f"physically_different: needs n_blue_agents=5 (VMAS's roles), got {self.n_blue_agents}")
        self.spawn_in_formation = v.check_bool("spawn_in_formation", spawn_in_formation)
        self.only_blue_formation = v.check_bool("only_blue_formation", only_blue_formation)
        self.formation_agents_per_column = v.check_int("formation_agents_per_column", formation_agents_per_column,
                                                       minimum=1)
        self.randomise_formation_indices = v.check_bool("randomise_formation_indices", randomise_formation_indices)
        self.formation_noise = v.check_float("formation_noise", formation_noise, low=0.0)
        if v.check_int("n_traj_points", n_traj_points, minimum=0) != 0:
            raise ValueError("n_traj_points: only 0 (VMAS's trajectory markers are landmarks it places from one "
                             "world of the batch only)")
        self.ai_strength = _strength("ai_strength", ai_strength)
        self.ai_decision_strength = _strength("ai_decision_strength", ai_decision_strength)
        self.ai_precision_strength = _strength("ai_precision_strength", ai_precision_strength)
        self.disable_ai_red = v.check_bool("disable_ai_red", disable_ai_red)
        for name in ("agent_size", "goal_size", "goal_depth", "pitch_length", "pitch_width", "ball_mass",
                     "ball_size", "u_multiplier", "max_speed", "ball_max_speed"):
            setattr(self, name, check_positive(name, locals()[name]))
        if not self.goal_size / 2 < self.pitch_width / 2 - self.agent_size:
            raise ValueError(f"goal_size: expected less than pitch_width - 2 agent_size "
                             f"({self.pitch_width - 2 * self.agent_size}), got {self.goal_size}")
        if v.check_bool("enable_shooting", enable_shooting):
            raise ValueError("enable_shooting: only False (VMAS's rotation and kick actions need an action torque "
                             "the family's physics does not have)")
        for name in ("u_rot_multiplier", "u_shoot_multiplier", "shooting_radius", "shooting_angle"):
            v.check_float(name, locals()[name])
        self.dense_reward = v.check_bool("dense_reward", dense_reward)
        self.pos_shaping_factor_ball_goal = check_positive("pos_shaping_factor_ball_goal",
                                                           pos_shaping_factor_ball_goal)
        self.pos_shaping_factor_agent_ball = v.check_float("pos_shaping_factor_agent_ball",
                                                           pos_shaping_factor_agent_ball)
        self.distance_to_ball_trigger = v.check_float("distance_to_ball_trigger", distance_to_ball_trigger)
        self.scoring_reward = v.check_float("scoring_reward", scoring_reward)
        self.observe_teammates = v.check_bool("observe_teammates", observe_teammates)
        self.observe_adversaries = v.check_bool("observe_adversaries", observe_adversaries)
        if v.check_bool("dict_obs", dict_obs):
            raise ValueError("dict_obs: only False (observations are flat arrays, VMAS's default layout)")
        learning = [("n_blue_agents", self.n_blue_agents)] + ([] if self.ai_red_agents else
                                                              [("n_red_agents", self.n_red_agents)])
        for name, n in learning:
            if n == 1 and self.observe_teammates:
                raise ValueError(f"{name}: a learning team of 1 needs observe_teammates=False (VMAS's observation "
                                 "fails with no teammate to observe)")
        super().__init__(**kwargs)

    # ------------------------------------------------------------------ layout
    def _landmarks(self) -> list[tuple[Body, tuple[float, float], float]]:
        """The walls, goals and nets with their places and rotations (VMAS's ``reset_walls`` /
        ``reset_goals``, float32 as VMAS's tensors)."""
        L, Wd, gs, gd, a = self.pitch_length, self.pitch_width, self.goal_size, self.goal_depth, self.agent_size
        wall = Wd / 2 - a - gs / 2
        half_pi = math.pi / 2
        white = COLORS["white"]

        def line(name, length, x, y, rot=0.0):
            return Body(name, shape="line", length=length, color=white), (x, y), rot

        def net(name, x):
            return Body(name, shape="box", length=gd, width=gs, collide=False, color=NET_COLOR), (x, 0.0), 0.0

        return [line("Right Top Wall", wall, L / 2, Wd / 4 + gs / 4, half_pi),
                line("Left Top Wall", wall, -L / 2, Wd / 4 + gs / 4, half_pi),
                line("Right Bottom Wall", wall, L / 2, -Wd / 4 - gs / 4, half_pi),
                line("Left Bottom Wall", wall, -L / 2, -Wd / 4 - gs / 4, half_pi),
                line("Right Goal Back", gs, L / 2 + gd - a, 0.0, half_pi),
                line("Left Goal Back", gs, -L / 2 - gd + a, 0.0, half_pi),
                line("Right Goal Top", gd, L / 2 + gd / 2 - a, gs / 2),
                line("Left Goal Top", gd, -L / 2 - gd / 2 + a, gs / 2),
                line("Right Goal Bottom", gd, L / 2 + gd / 2 - a, -gs / 2),
                line("Left Goal Bottom", gd, -L / 2 - gd / 2 + a, -gs / 2),
                net("Blue Net", -L / 2 - gd / 2 + a / 2),
                net("Red Net", L / 2 + gd / 2 - a / 2)]

    def _blue_bodies(self) -> list[Body]:
        roles = ROLES if self.physically_different else [(0.0, 0.0, 0.0)] * self.n_blue_agents
        return [Body(f"agent_blue_{i}", agent=True, radius=self.agent_size + dr, u_multiplier=self.u_multiplier + du,
                     max_speed=self.max_speed + dv, color=BLUE_COLOR) for i, (dr, du, dv) in enumerate(roles)]

    def _layout(self) -> Layout:
        ai = self.ai_red_agents
        red = [Body(f"agent_red_{i}", agent=not ai, scripted=ai, radius=self.agent_size,
                    u_multiplier=self.u_multiplier, max_speed=self.max_speed, color=RED_COLOR)
               for i in range(self.n_red_agents)]
        ball = Body("Ball", scripted=True, radius=self.ball_size, mass=self.ball_mass, max_speed=self.ball_max_speed,
                    color=COLORS["black"])
        blue = self._blue_bodies()
        groups = [("blue", [b.name for b in blue])] + ([] if ai else [("red", [b.name for b in red])])
        return Layout(bodies=[b for b, _, _ in self._landmarks()] + blue + red + [ball], groups=groups,
                      dt=0.1, substeps=2, drag=0.05,
                      x_semidim=self.pitch_length / 2 + self.goal_depth - self.agent_size,
                      y_semidim=self.pitch_width / 2 - self.agent_size)

    def _obs_dim(self, group: str) -> int:
        n_own, n_other = (self.n_blue_agents, self.n_red_agents) if group == "blue" else \
            (self.n_red_agents, self.n_blue_agents)
        return 16 + 8 * (n_other * self.observe_adversaries + (n_own - 1) * self.observe_teammates)

    def _formation(self) -> tuple[list[float], list[float]]:
        """Both teams' formation slots (blue's, then red's; empty where a team spawns at random)."""
        end = self.pitch_length / 2 + self.goal_depth
        slots = []
        if self.spawn_in_formation:
            slots += formation_slots(self.n_blue_agents, self.formation_agents_per_column, -end, self.pitch_width)
            if not self.only_blue_formation:
                slots += formation_slots(self.n_red_agents, self.formation_agents_per_column, end, self.pitch_width)
        return [x for x, _ in slots] or [0.0], [y for _, y in slots] or [0.0]

    def _ai_fields(self) -> dict[str, Field]:
        """The scripted red team's parameters (VMAS's ``AgentPolicy`` for team ``"Red"``)."""
        n_ai = self.n_red_agents if self.ai_red_agents else 0
        lay = self.layout
        speed, decision, precision = self.ai_strength[1], self.ai_decision_strength[1], self.ai_precision_strength[1]
        pitch_x = self.pitch_length / 2 - self.agent_size
        return {
            "n_ai": param(n_ai, "int"), "ai_enabled": param(int(not self.disable_ai_red), "int"),
            "ai_body": const([lay.index(f"agent_red_{j}") for j in range(n_ai)], "int"),
            "ai_opp_body": const([lay.index(f"agent_blue_{i}") for i in range(self.n_blue_agents)], "int"),
            "ai_checks_possession": const([int("0" in str(j)) for j in range(n_ai)], "int"),
            "ai_hit_radius": const([self.ball_size + self.agent_size] * n_ai),
            "ai_u_multiplier": const([_f32(self.u_multiplier)] * n_ai),
            "ai_target_net": param(lay.index("Blue Net"), "int"), "ai_own_net": param(lay.index("Red Net"), "int"),
            "ai_hermite_pos": const(hermite_coefficients(AI_LOOKAHEAD, 0)),
            "ai_hermite_vel": const(hermite_coefficients(AI_LOOKAHEAD, 1)),
            "ai_pitch_x": param(pitch_x), "ai_pitch_y": param(self.pitch_width / 2 - self.agent_size),
            "ai_goal_y": param(self.goal_size / 2 - self.agent_size), "ai_goal_x": param(pitch_x + self.goal_depth),
            "ai_half_width": param(self.pitch_width / 2), "ai_half_length": param(self.pitch_length / 2),
            "ai_decision": param(decision), "ai_value_noise": param(1 - decision),
            "ai_replan_margin": param(AI_REPLAN_MARGIN + 3 * (1 - decision)),
            "ai_possession_noise": param((1 - decision) ** 2), "ai_sigma": param(AI_SIGMA),
            "ai_sample_scale": param(1 + 3 * (1 - decision)),
            "ai_precision": param(precision), "ai_precision_noise": param(1 - precision),
            "ai_dribble_speed": param(0.16 + 0.16 * speed), "ai_gain": param(speed**2 * AI_STRENGTH_MULTIPLIER),
            "ai_u_range": param(1.0),
            "ball_dist_thres": param(self.agent_size * 2), "ball_vel_thres": param(0.3), "ball_impulse": param(0.05),
            "target_pos_rel": state("float", n_ai, 2), "target_pos": state("float", n_ai, 2),
        }

    def _fields(self) -> dict[str, Field]:
        n_pol = len(self.layout.agents)
        marks = self._landmarks()
        fx, fy = self._formation()
        return {
            "n_blue": param(self.n_blue_agents, "int"), "n_red": param(self.n_red_agents, "int"),
            "red_policy": param(int(not self.ai_red_agents), "int"),
            "ball_body": param(self.layout.index("Ball"), "int"),
            "lm_x": const([_f32(p[0]) for _, p, _ in marks]), "lm_y": const([_f32(p[1]) for _, p, _ in marks]),
            "lm_rot": const([_f32(r) for _, _, r in marks]),
            "spawn_range_x": param(self.pitch_length / 2), "spawn_range_y": param(self.pitch_width),
            "spawn_off_y": param(-self.pitch_width / 2),
            "blue_off_x": param(-self.pitch_length / 2 + self.agent_size), "red_off_x": param(-self.agent_size),
            "red_rot": param(_f32(math.pi)),
            "formation_blue": param(int(self.spawn_in_formation), "int"),
            "formation_red": param(int(self.spawn_in_formation and not self.only_blue_formation), "int"),
            "randomise_formation": param(int(self.randomise_formation_indices), "int"),
            "formation_noise": param(self.formation_noise), "formation_x": const(fx), "formation_y": const(fy),
            "formation_slot": scratch("int", max(self.n_blue_agents, self.n_red_agents)),
            "goal_line": param(self.pitch_length / 2 + self.ball_size / 2), "goal_half": param(self.goal_size / 2),
            "scoring_reward": param(self.scoring_reward), "dense": param(int(self.dense_reward), "int"),
            "shaping_goal": param(self.pos_shaping_factor_ball_goal),
            "shaping_agent": param(self.pos_shaping_factor_agent_ball),
            "ball_trigger": param(self.distance_to_ball_trigger),
            "touch_dist": param(self.agent_size + self.ball_size + 1e-2),
            "observe_teammates": param(int(self.observe_teammates), "int"),
            "observe_adversaries": param(int(self.observe_adversaries), "int"),
            **self._ai_fields(),
            "pos_shaping": state("float", 2), "pos_shaping_agent": state("float", 2),
            "min_dist_to_ball": state("float", 2),
            "agent_forces": state("float", self.n_blue_agents + self.n_red_agents + 1, 2),
            "sparse_reward": info("float", n_pol), "ball_goal_pos_rew": info("float", n_pol),
            "all_agent_ball_pos_rew": info("float", n_pol), "dist_ball_to_goal": info("float", n_pol),
            "min_agent_dist_to_ball": info("float", n_pol), "touching_ball": info("bool", n_pol),
            "ball_pos": info("float", n_pol, 2),
        }

    # ------------------------------------------------------------------ the scripted team's draws
    def ai_draws(self) -> dict[str, torch.Tensor]:
        """The standard normals every scripted player may draw in the next step, by purpose
        (``football_ai``'s module docstring): ``samples`` ``[E, n, 4]``, ``values`` ``[E, n,
        3]``, ``precision`` ``[E, n, 4]``, ``possession`` ``[E, n, n_blue + n_red]`` (what the
        parity tests give VMAS's ``torch.randn``)."""
        n = self.n_red_agents if self.ai_red_agents else 0
        E = self.num_envs
        clock = AI.Clock()
        clock.world_seed, clock.episode, clock.t = self._w.world_seed, self._w.episode, self._w.t
        shapes = {"samples": 4, "values": 3, "precision": 4, "possession": self.n_blue_agents + self.n_red_agents}
        device = self._w.t.device
        out = {k: wp.zeros((E, n, m), dtype=wp.float32, device=device) for k, m in shapes.items()}
        if n:
            wp.launch(AI.ai_draws_kernel, dim=(E, n), inputs=[clock, *out.values()], device=device)
        return {k: wp.to_torch(a) for k, a in out.items()}
