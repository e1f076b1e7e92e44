"""WindFlocking-v0: VMAS 1.5.2's ``wind_flocking`` scenario (two agents of different sizes fly
side by side against a wind that the big one is sheltered from while it flies behind the small
one), with VMAS's velocity controller as Warp functions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, scratch, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

DT = 0.1  # VMAS's World default, one substep
LINEAR_FRICTION = 0.1
BIG_RADIUS, SMALL_RADIUS = 0.05, 0.03
DESIRED_DISTANCE = 1
DESIRED_POS = 10.0
#: VMAS's VelocityController parameters in wind_flocking: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (1.5, 0.6, 0.002)


def _f32(x: float) -> float:
    """x rounded to float32 (VMAS's float32 tensors: the wind, the desired velocity)."""
    return float(np.float32(x))


@wp.func(inline=True)
def agents_angle(w: Any, e: int):
    """VMAS's ``get_agents_angle``: ``atan2`` of the big agent's position minus the small one's."""
    return wp.atan2(w.pos[e, 0, 1] - w.pos[e, 1, 1], w.pos[e, 0, 0] - w.pos[e, 1, 0])


@wp.func(inline=True)
def line_angle_dist_0_180(w: Any, angle: Any):
    """VMAS's ``get_line_angle_dist_0_180(angle, 0)``: the angle between the agents' line and the
    x axis, in [0, pi/2] (``angle % pi`` as torch's remainder, then the nearest of 0 and ±pi)."""
    a = G.torch_remainder(angle, w.pi)
    return wp.min(wp.abs(a), wp.min(wp.abs(a + w.pi), wp.abs(a - w.pi)))


@wp.func(inline=True)
def shaping_terms(w: Any, e: int):
    """The distance, rotation and height shaping values of world e (VMAS's ``distance_shaping``,
    ``rot_shaping``, ``pos_shaping``)."""
    big = W.position(w, e, 0)
    small = W.position(w, e, 1)
    dist = wp.abs(W.distance(small, big) - w.desired_distance) * w.dist_shaping_factor
    rot = line_angle_dist_0_180(w, agents_angle(w, e)) * w.rot_shaping_factor
    pos = wp.abs(wp.max(big[1], small[1]) - w.desired_pos) * w.pos_shaping_factor
    return dist, rot, pos


@wp.func(inline=True)
def delta_vel(w: Any, e: int, i: int):
    """|agent i's velocity - the desired velocity (0, desired_vel)|."""
    return W.distance(W.velocity(w, e, i), wp.vector(type(w.dt)(0.0), w.desired_vel))


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: an angle ~ U(-pi/8, pi/8); a random one of the two agents
    (VMAS's ``randperm``) at ``-0.5 (cos, sin)`` of it, the other at ``+0.5 (cos, sin)``; the
    controllers' errors cleared; both agents' gravity the full wind (see the class); the
    shaping values."""
    rng = W.episode_stream(w, e)
    zero = type(w.dt)(0.0)
    angle = W.uniform(wp.randf(rng), -w.start_angle, w.start_angle)
    dx = w.half_distance * wp.cos(angle)
    dy = w.half_distance * wp.sin(angle)
    first = int(0)
    if wp.randf(rng) < 0.5:
        first = 1
    w.pos[e, first, 0] = -dx
    w.pos[e, first, 1] = -dy
    w.pos[e, 1 - first, 0] = dx
    w.pos[e, 1 - first, 1] = dy
    for i in range(2):
        for k in range(2):
            w.accum_errs[e, i, k] = zero
            w.prev_err[e, i, k] = zero
        w.gravity[e, i, 0] = zero
        w.gravity[e, i, 1] = w.wind_y
        w.vel_shaping[e, i] = delta_vel(w, e, i) * w.vel_shaping_factor
        w.energy_shaping[e, i] = zero
        w.wind_shaping[e, i] = G.vector_norm(wp.vector(w.gravity[e, i, 0], w.gravity[e, i, 1])) * w.wind_shaping_factor
    dist, rot, pos = shaping_terms(w, e)
    w.distance_shaping[e] = dist
    w.rot_shaping[e] = rot
    w.pos_shaping[e] = pos


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action`` (with ``use_controller``: the action is the desired velocity
    of VMAS's PID ``VelocityController``, standard form, gain 1.5, integral time 0.6,
    derivative time 0.002, integrator clamped to ±0.5 f_range 0.6 / (dt 1.5); its output times
    the mass is the force), then the rest of the agent's force of VMAS's substep, in VMAS's
    order: ``f_range``-clamped action force + linear friction + mass x the agent's own gravity
    (VMAS's ``Entity.gravity``, per world: the wind).  One substep, so the friction from the
    velocity at the start of the step is VMAS's; ``u`` carries the sum to the shared physics
    (the bodies have no friction, force limit or gravity of their own there), and the action
    force's norm (VMAS's ``|action.u|``) is kept for the energy reward."""
    F0 = type(w.dt)(0.0)
    b = W.body_of(w, i)
    if w.use_controller != 0:
        for k in range(2):
            W.velocity_controller(w, e, i, b, k, type(F0)(w.u[e, i, k]))
    ux = type(F0)(w.u[e, i, 0])
    uy = type(F0)(w.u[e, i, 1])
    w.u_norm[e, i] = G.vector_norm(wp.vector(ux, uy))
    vel = W.velocity(w, e, b)
    speed = G.vector_norm(vel)
    for k in range(2):
        f = wp.clamp(type(F0)(w.u[e, i, k]), -w.force_range, w.force_range)
        f = f + W.friction(vel[k], speed, w.friction_coeff, w.mass[b], w.dt)
        f = f + w.mass[b] * w.gravity[e, i, k]
        w.u[e, i, k] = wp.float32(f)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by both): first the big agent's
    wind for the next step (``set_friction``: the full wind times ``min((1 - cos θ) / tol, 1)``,
    θ the angle between the line from the small agent to the big one and straight down, tol
    ``cover_angle_tolerance``); then the decreases of the distance, rotation and height
    shaping values, the mean over the agents of the decreases of their velocity, energy (0 for
    the first 9 steps) and wind (0 for the first 4 steps) shaping values, summed.  VMAS's
    ``done`` is always False."""
    F0 = type(w.dt)(0.0)
    t = w.t[e] + 1  # VMAS's self.t, counted up at the first agent's reward
    angle = agents_angle(w, e)
    d = -(wp.cos(angle) * w.goal_cos + wp.sin(angle) * w.goal_sin)
    cover = wp.min(d + type(F0)(1.0), w.cover_angle_tolerance) + w.one_minus_tolerance
    cover = ((cover - type(F0)(1.0)) + w.cover_angle_tolerance) / w.cover_angle_tolerance
    w.gravity[e, 0, 0] = w.wind_x * cover
    w.gravity[e, 0, 1] = w.wind_y * cover
    dist, rot, pos = shaping_terms(w, e)
    dist_rew = w.distance_shaping[e] - dist
    w.distance_shaping[e] = dist
    rot_rew = w.rot_shaping[e] - rot
    w.rot_shaping[e] = rot
    pos_rew = w.pos_shaping[e] - pos
    w.pos_shaping[e] = pos
    vel_sum = F0
    energy_sum = F0
    wind_sum = F0
    for i in range(2):
        dv = delta_vel(w, e, i)
        w.delta_vel_to_goal[e, i] = dv
        vel_shaping = dv * w.vel_shaping_factor
        vel_rew = w.vel_shaping[e, i] - vel_shaping
        w.vel_shaping[e, i] = vel_shaping
        energy_shaping = w.u_norm[e, i] * w.energy_shaping_factor
        energy_rew = w.energy_shaping[e, i] - energy_shaping
        if t < 10:
            energy_rew = F0
        w.energy_shaping[e, i] = energy_shaping
        wind_shaping = G.vector_norm(wp.vector(w.gravity[e, i, 0], w.gravity[e, i, 1])) * w.wind_shaping_factor
        wind_rew = w.wind_shaping[e, i] - wind_shaping
        if t < 5:
            wind_rew = F0
        w.wind_shaping[e, i] = wind_shaping
        w.agent_vel_rew[e, i] = vel_rew
        w.agent_energy_rew[e, i] = energy_rew
        w.agent_wind_rew[e, i] = wind_rew
        if i == 0:
            vel_sum = vel_rew
            energy_sum = energy_rew
            wind_sum = wind_rew
        else:
            vel_sum = vel_sum + vel_rew
            energy_sum = energy_sum + energy_rew
            wind_sum = wind_sum + wind_rew
    two = type(F0)(2.0)
    reward = ((((dist_rew + vel_sum / two) + rot_rew) + energy_sum / two) + wind_sum / two) + pos_rew
    for i in range(2):
        w.dist_rew[e, i] = dist_rew
        w.rot_rew[e, i] = rot_rew
        w.pos_rew[e, i] = pos_rew
        w.reward[e, i] = reward
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2, with observe_pos), vel (2), the other agent's pos - pos (2, with observe_rel_pos),
    the other agent's vel - vel (2, with observe_rel_vel)]."""
    b = W.body_of(w, i)
    other = 1 - b
    p = W.position(w, e, b)
    vel = W.velocity(w, e, b)
    o = int(0)
    if w.observe_pos != 0:
        o = W.write_vec(out, e, i, o, p)
    o = W.write_vec(out, e, i, o, vel)
    if w.observe_rel_pos != 0:
        o = W.write_vec(out, e, i, o, W.position(w, e, other) - p)
    if w.observe_rel_vel != 0:
        o = W.write_vec(out, e, i, o, W.velocity(w, e, other) - vel)


def _delta_vel(info: dict) -> torch.Tensor:
    return info["delta_vel_to_goal"].mean(-1)


class WindFlocking(VmasBase):
    """VMAS 1.5.2's ``wind_flocking``: a big and a small agent fly upwards side by side, one
    metre apart, against a downward wind; the big agent is sheltered from the wind while it
    flies straight behind (below) the small one.

    Same keyword arguments and defaults as VMAS's scenario: ``vel_shaping_factor=1``,
    ``dist_shaping_factor=1``, ``wind_shaping_factor=1``, ``pos_shaping_factor=0``,
    ``rot_shaping_factor=0``, ``energy_shaping_factor=0``, ``observe_rel_pos=False``,
    ``observe_rel_vel=False``, ``observe_pos=True``, ``use_controller=True``, ``wind=2``,
    ``v_range=0.5``, ``desired_vel=v_range``, ``f_range=100``, ``cover_angle_tolerance=1``
    (> 0) and ``horizon=200`` (VMAS only uses it to draw a line; it does not end episodes:
    ``max_steps`` does), plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0`` (the big one, a sphere of radius 0.05) and ``agent_1`` (the small
    one, radius 0.03), one group ``agents``: mass 1, they collide with each other.  Steps of
    0.1 s (one substep), no drag, linear friction 0.1, speed limit ``v_range`` per component,
    force limit ``f_range`` per component.  Each agent's own gravity is the wind ``(0, -wind)``;
    after every step the big agent's becomes the wind times ``min((1 - cos θ) /
    cover_angle_tolerance, 1)``, θ the angle between the line from the small agent to the big
    one and straight down: no wind while the big agent is straight below (behind) the small one,
    the full wind from θ = 90° on (sooner with ``cover_angle_tolerance`` < 1, never with > 2).
    They start 1 apart, the line between them at an angle ~ U(-π/8, π/8) from the x axis,
    either agent on the left.  **Actions**: with ``use_controller`` a desired velocity in
    ``[-v_range, v_range]²`` tracked by VMAS's PID velocity controller (gain 1.5, integral time
    0.6, derivative time 0.002; its force goes to the physics); otherwise a force in
    ``[-f_range, f_range]²``.  Discrete: ``Discrete(9)`` (0, -max, +max per component).
    **Observation** ``[pos (observe_pos), vel, other's pos - pos (observe_rel_pos), other's
    vel - vel (observe_rel_vel)]``.  **Reward** (shared): the decreases of ``|distance - 1|``
    (times ``dist_shaping_factor``), of the line's angle from horizontal (in [0, π/2], times
    ``rot_shaping_factor``) and of ``|10 - the higher agent's y|`` (times
    ``pos_shaping_factor``), plus the means over the agents of the decreases of ``|vel - (0,
    desired_vel)|`` (times ``vel_shaping_factor``), of ``|u|`` (the action force, times
    ``energy_shaping_factor``; 0 for the episode's first 9 steps) and of the agent's wind
    strength (times ``wind_shaping_factor``; 0 for the first 4 steps).  **Termination**: never
    (VMAS's default ``done``); truncation at ``max_steps``.  **Info** (per agent, VMAS's):
    ``dist_rew``, ``rot_rew``, ``pos_rew`` (shared), ``agent_wind_rew``, ``agent_vel_rew``,
    ``agent_energy_rew``, ``delta_vel_to_goal`` (``|vel - (0, desired_vel)|``); the episode
    metric ``delta_vel_to_goal`` is its mean over the agents and the episode.

    **Where this differs from VMAS.**  VMAS never resets the big agent's gravity: an episode
    after a reset starts with the wind the last one ended with (its first episode with the full
    wind); here every episode starts with the full wind, so an episode depends only on its own
    start and actions (the shaping rewards are the same either way: the wind term is 0 for the
    first 4 steps).  VMAS draws one start angle and one agent order for the whole batch when it
    resets every world at once (``env.reset()``), so all its worlds start alike; each world here
    draws its own (VMAS's ``reset_at(i)``).  The lines VMAS's picture adds (the agents' line,
    the height ``horizon`` reaches) are not drawn.  In float64 worlds the agents' forces are
    rounded to float32 (VMAS's actions are float32; here they carry friction and the wind too).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``wind_flocking``.
    """

    env_id = "WindFlocking-v0"
    vmas_scenario = "wind_flocking"
    per_agent_metrics = ("dist_rew", "rot_rew", "pos_rew", "agent_wind_rew", "agent_vel_rew", "agent_energy_rew",
                         "delta_vel_to_goal")
    episode_metrics = (EpisodeMetric("delta_vel_to_goal", "|velocity - desired velocity|, the mean over the agents "
                                     "and the episode", _delta_vel, "mean"),)

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, vel_shaping_factor: float = 1, dist_shaping_factor: float = 1,
                 wind_shaping_factor: float = 1, pos_shaping_factor: float = 0, rot_shaping_factor: float = 0,
                 energy_shaping_factor: float = 0, observe_rel_pos: bool = False, observe_rel_vel: bool = False,
                 observe_pos: bool = True, use_controller: bool = True, wind: float = 2, v_range: float = 0.5,
                 desired_vel: float | None = None, f_range: float = 100, cover_angle_tolerance: float = 1,
                 horizon: int = 200, **kwargs) -> None:
        self.vel_shaping_factor = v.check_float("vel_shaping_factor", vel_shaping_factor)
        self.dist_shaping_factor = v.check_float("dist_shaping_factor", dist_shaping_factor)
        self.wind_shaping_factor = v.check_float("wind_shaping_factor", wind_shaping_factor)
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.rot_shaping_factor = v.check_float("rot_shaping_factor", rot_shaping_factor)
        self.energy_shaping_factor = v.check_float("energy_shaping_factor", energy_shaping_factor)
        self.observe_rel_pos = v.check_bool("observe_rel_pos", observe_rel_pos)
        self.observe_rel_vel = v.check_bool("observe_rel_vel", observe_rel_vel)
        self.observe_pos = v.check_bool("observe_pos", observe_pos)
        self.use_controller = v.check_bool("use_controller", use_controller)
        self.wind = v.check_float("wind", wind)
        self.v_range = check_positive("v_range", v_range)
        self.desired_vel = self.v_range if desired_vel is None else v.check_float("desired_vel", desired_vel)
        self.f_range = check_positive("f_range", f_range)
        self.cover_angle_tolerance = check_positive("cover_angle_tolerance", cover_angle_tolerance)
        self.horizon = v.check_int("horizon", horizon, minimum=1)
        self.u_range = self.v_range if self.use_controller else self.f_range
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        # friction, the force limit and the wind are applied in process_action (see there); the
        # bodies keep VMAS's speed limit
        agents = [Body(name, agent=True, radius=radius, u_range=self.u_range, v_range=self.v_range,
                       color=COLORS["blue"])
                  for name, radius in (("agent_0", BIG_RADIUS), ("agent_1", SMALL_RADIUS))]
        return Layout(bodies=agents, groups=[("agents", [a.name for a in agents])], dt=DT, drag=0.0)

    def _obs_dim(self, group: str) -> int:
        return 2 + 2 * (int(self.observe_pos) + int(self.observe_rel_pos) + int(self.observe_rel_vel))

    def _fields(self) -> dict[str, Field]:
        n = 2
        gain, integral_ts, derivative_ts = CONTROLLER_PARAMS
        # VMAS's VelocityController: the integrator's windup limit is half the smaller force limit
        windup_cutoff = 0.5 * self.f_range * integral_ts / (DT * gain)
        goal = torch.tensor([-torch.pi / 2])  # set_friction's downwind direction, float32
        return {
            "wind_x": param(0.0), "wind_y": param(_f32(-self.wind)),
            "desired_vel": param(_f32(self.desired_vel)),
            "desired_distance": param(float(DESIRED_DISTANCE)), "half_distance": param(DESIRED_DISTANCE / 2),
            "desired_pos": param(DESIRED_POS),
            "start_angle": param(math.pi / 8), "pi": param(math.pi),
            "goal_cos": param(float(torch.cos(goal))), "goal_sin": param(float(torch.sin(goal))),
            "cover_angle_tolerance": param(self.cover_angle_tolerance),
            "one_minus_tolerance": param(1 - self.cover_angle_tolerance),
            "use_controller": param(int(self.use_controller), "int"),
            "ctrl_gain": param(gain), "inv_integral_ts": param(1.0 / integral_ts),
            "derivative_ts": param(derivative_ts), "windup_cutoff": param(windup_cutoff),
            "force_range": param(self.f_range), "friction_coeff": param(LINEAR_FRICTION),
            "vel_shaping_factor": param(self.vel_shaping_factor),
            "dist_shaping_factor": param(self.dist_shaping_factor),
            "wind_shaping_factor": param(self.wind_shaping_factor),
            "pos_shaping_factor": param(self.pos_shaping_factor),
            "rot_shaping_factor": param(self.rot_shaping_factor),
            "energy_shaping_factor": param(self.energy_shaping_factor),
            "observe_pos": param(int(self.observe_pos), "int"),
            "observe_rel_pos": param(int(self.observe_rel_pos), "int"),
            "observe_rel_vel": param(int(self.observe_rel_vel), "int"),
            # VMAS's names: agent.gravity, agent.controller.accum_errs / prev_err, the agents' and
            # the scenario's shaping values
            "gravity": state("float", n, 2),
            "accum_errs": state("float", n, 2), "prev_err": state("float", n, 2),
            "vel_shaping": state("float", n), "energy_shaping": state("float", n),
            "wind_shaping": state("float", n),
            "distance_shaping": state("float"), "rot_shaping": state("float"), "pos_shaping": state("float"),
            "u_norm": scratch("float", n),
            "dist_rew": info("float", n), "rot_rew": info("float", n), "pos_rew": info("float", n),
            "agent_wind_rew": info("float", n), "agent_vel_rew": info("float", n),
            "agent_energy_rew": info("float", n), "delta_vel_to_goal": info("float", n),
        }
