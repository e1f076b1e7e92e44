"""CircleTrajectory-v0: VMAS 1.5.2's debug scenario ``circle_trajectory`` (one robot with VMAS's
velocity controller circles the origin at radius 1.5)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.scenarios.vmas import debug_common as D
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

DT = 0.05
AGENT_RADIUS = 0.16
DESIRED_RADIUS = 1.5
#: VMAS's VelocityController parameters in circle_trajectory: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (2, 6, 0.002)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the controller cleared; the agent at U(-1.5, 1.5)² (x, then
    y).  The delay queue is emptied too (VMAS keeps it across resets: see the class)."""
    rng = W.episode_stream(w, e)
    D.clear_controller(w, e, 0)
    D.clear_queue(w, e, 0)
    x = W.uniform(wp.randf(rng), -w.desired_radius, w.desired_radius)
    y = W.uniform(wp.randf(rng), -w.desired_radius, w.desired_radius)
    W.set_position(w, e, W.body_of(w, 0), wp.vector(x, y))


@wp.func(inline=True)
def rotate_quarter(w: Any, d: Any, sign: Any):
    """VMAS's ``TorchUtils.rotate_vector(d, ±float32(π/2))`` with torch's float32 cos and sin of
    that angle (``quarter_cos``, ``quarter_sin``; ``sign`` -1 for the negative angle)."""
    c = w.quarter_cos
    s = sign * w.quarter_sin
    return wp.vector(d[0] * c - d[1] * s, d[0] * s + d[1] * c)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: ``-sqrt(distance to the circle of radius 1.5)`` (the closest point
    ``1.5 pos / |pos|``, the origin at the origin), plus half the velocity along the circle's
    tangent (``pos - closest`` turned by +90° outside the circle and by -90° inside, made unit;
    0 on the circle).  VMAS's ``done`` is always False."""
    b = W.body_of(w, 0)
    p = W.position(w, e, b)
    vel = W.velocity(w, e, b)
    zero = type(w.dt)(0.0)
    norm = G.vector_norm(p)
    closest = wp.vector(zero, zero)
    if norm != zero:
        closest = wp.vector((p[0] / norm) * w.desired_radius, (p[1] / norm) * w.desired_radius)
    pos_rew = -wp.sqrt(W.distance(p, closest)) * type(zero)(1.0)
    to_circle = p - closest
    sign = type(zero)(1.0)
    if norm < w.desired_radius:
        sign = -sign
    tangent = D.normalized(rotate_quarter(w, to_circle, sign))
    dot_product = D.dot(tangent, vel) * w.half
    w.pos_rew[e, 0] = pos_rew
    w.dot_product[e, 0] = dot_product
    w.reward[e, 0] = pos_rew + dot_product
    return False


class CircleTrajectory(VmasBase):
    """VMAS 1.5.2's debug scenario ``circle_trajectory``: one robot, steered through VMAS's
    velocity controller, should drive round the circle of radius 1.5 about the origin.

    Same keyword arguments and defaults as VMAS's scenario: ``u_range=1`` (the largest
    commanded speed), ``a_range=1``, ``obs_noise=0.0``, ``dt_delay=0``, ``min_input_norm=0.08``,
    ``linear_friction=0.1``, plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agent** ``agent_0``, group ``agents``: a sphere of radius 0.16, mass 1, force limit
    ``f_range = a_range + linear_friction`` per component; the world's linear friction
    ``linear_friction``, no drag, steps of 0.05 s (one substep).  It starts at U(-1.5, 1.5)², at
    rest.  **Actions**: a desired velocity in ``[-u_range, u_range]²``, delayed by ``dt_delay``
    steps, clamped to norm ``u_range``, zeroed below norm ``min_input_norm`` and tracked by
    VMAS's PID velocity controller (gain 2, integral time 6, derivative time 0.002; its force
    goes to the physics).  Discrete: ``Discrete(9)`` (0, -u_range, +u_range per component).
    **Observation** ``[pos, vel, pos]`` (6, VMAS's), plus U(-obs_noise, obs_noise) on every
    entry.  **Reward**: ``-sqrt(d) + 0.5 vel · t`` (``pos_rew``, ``dot_product``): ``d`` the
    distance to the circle, ``t`` the unit vector along ``pos - closest point`` turned by +90°
    outside the circle and -90° inside (both the anticlockwise tangent's direction), 0 on the
    circle.  **Termination**: never (VMAS's scenario has no ``done``); truncation at
    ``max_steps``.  **Info** (VMAS's, per agent): ``pos_rew``, ``dot_product``.  **State**:
    ``accum_errs``, ``prev_err`` (the controller's), ``input_queue`` (``[E, 1, dt_delay, 2]``).

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  VMAS makes the ``dt_delay`` queue once and never empties it, so after a
    reset the first ``dt_delay`` commands are the last episode's; here a reset empties it.
    Observation noise is drawn from the world's own stream (VMAS: torch's global generator).
    The circle and tangent VMAS's picture adds are not drawn.  In float64 worlds the
    controller's force ``u`` is float32, as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``circle_trajectory``.
    """

    env_id = "CircleTrajectory-v0"
    vmas_scenario = "circle_trajectory"
    per_agent_metrics = ("pos_rew", "dot_product")

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = D.observe_trajectory
    process_action = D.delayed_control

    def __init__(self, *, u_range: float = 1, a_range: float = 1, obs_noise: float = 0.0, dt_delay: int = 0,
                 min_input_norm: float = 0.08, linear_friction: float = 0.1, **kwargs) -> None:
        self.u_range = check_positive("u_range", u_range)
        self.a_range = check_positive("a_range", a_range)
        self.obs_noise = D.check_obs_noise(obs_noise)
        self.dt_delay = v.check_int("dt_delay", dt_delay, minimum=0)
        self.min_input_norm = D.check_nonnegative("min_input_norm", min_input_norm)
        self.linear_friction = D.check_nonnegative("linear_friction", linear_friction)
        self.f_range = self.a_range + self.linear_friction
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agent = Body("agent_0", agent=True, radius=AGENT_RADIUS, f_range=self.f_range, u_range=self.u_range,
                     color=COLORS["blue"])
        return Layout(bodies=[agent], groups=[("agents", ["agent_0"])], dt=DT, drag=0.0,
                      linear_friction=self.linear_friction)

    def _obs_dim(self, group: str) -> int:
        return 6

    def _fields(self) -> dict[str, Field]:
        quarter = torch.tensor(math.pi / 2)  # VMAS's float32 angle
        return {
            **D.controller_fields(1, CONTROLLER_PARAMS, DT, self.f_range),
            "desired_radius": param(DESIRED_RADIUS), "half": param(0.5),
            "quarter_cos": param(float(torch.cos(quarter))), "quarter_sin": param(float(torch.sin(quarter))),
            "command_range": param(self.u_range), "min_input_norm": param(self.min_input_norm),
            "obs_noise": param(self.obs_noise),
            # VMAS's name: the scenario's input_queue
            "input_queue": state("float", 1, self.dt_delay, 2),
            "pos_rew": info("float", 1), "dot_product": info("float", 1),
        }
