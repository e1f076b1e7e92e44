"""LineTrajectory-v0: VMAS 1.5.2's debug scenario ``line_trajectory`` (one robot with VMAS's
velocity controller follows the line x = 0 upwards)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core.fields import Field, info, param, scratch
from war_envs.scenarios.vmas import debug_common as D
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase

AGENT_RADIUS = 0.03
LINE_LENGTH = 3
DRAG = 0.1
MASS = 2.0
F_RANGE = 0.5
U_RANGE = 1.0
#: VMAS's VelocityController parameters in line_trajectory: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (4, 1.25, 0.001)
DT = 0.1  # VMAS's World default, one substep


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the controller cleared; the agent at U(-1, 1) x U(-1, 0)."""
    rng = W.episode_stream(w, e)
    D.clear_controller(w, e, 0)
    one = type(w.dt)(1.0)
    x = W.uniform(wp.randf(rng), -one, one)
    y = W.uniform(wp.randf(rng), -one, type(one)(0.0))
    W.set_position(w, e, W.body_of(w, 0), wp.vector(x, y))


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action``: the action (kept as ``vel_action``) is the desired velocity of
    VMAS's PID controller (gain 4, integral time 1.25, derivative time 0.001, windup ±0.5
    f_range 1.25 / (dt 4)); its output times the mass is the force ``u``."""
    command = wp.vector(type(w.dt)(w.u[e, i, 0]), type(w.dt)(w.u[e, i, 1]))
    w.vel_action[e, 0] = command[0]
    w.vel_action[e, 1] = command[1]
    D.control(w, e, i, command)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: ``-sqrt(|x|)`` (the distance to the line x = 0, square-rooted), plus
    half the y velocity (along the line), plus 0.2 x the cosine between the velocity and the
    commanded velocity (0 where either is 0).  Returns VMAS's ``done``: y > 2."""
    b = W.body_of(w, 0)
    p = W.position(w, e, b)
    vel = W.velocity(w, e, b)
    zero = type(w.dt)(0.0)
    pos_rew = -wp.sqrt(W.distance(p, wp.vector(zero, p[1]))) * type(zero)(1.0)
    dot_product = D.dot(wp.vector(zero, type(zero)(1.0)), vel) * w.half
    command = wp.vector(w.vel_action[e, 0], w.vel_action[e, 1])
    steady = D.dot(D.normalized(vel), D.normalized(command)) * w.steady_coeff
    w.pos_rew[e, 0] = pos_rew
    w.dot_product[e, 0] = dot_product
    w.steady_rew[e, 0] = steady
    w.reward[e, 0] = (pos_rew + dot_product) + steady
    return p[1] > w.end_y


class LineTrajectory(VmasBase):
    """VMAS 1.5.2's debug scenario ``line_trajectory``: one robot, steered through VMAS's velocity
    controller, should drive up the line x = 0 (from y = -1) steadily.

    Same keyword argument and default as VMAS's scenario: ``obs_noise=0`` (>= 0), plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agent** ``agent_0``, group ``agents``: a sphere of radius 0.03, mass 2, force limit 0.5
    per component.  VMAS's default world (steps of 0.1 s, one substep) with drag 0.1.  It starts
    at U(-1, 1) x U(-1, 0), at rest.  **Actions**: a desired velocity in ``[-1, 1]²``, tracked
    by VMAS's PID velocity controller (gain 4, integral time 1.25, derivative time 0.001; its
    force goes to the physics).  Discrete: ``Discrete(9)`` (0, -1, +1 per component).
    **Observation** ``[pos, vel, pos]`` (6, VMAS's), plus U(-obs_noise, obs_noise) on every
    entry.  **Reward**: ``-sqrt(|x|) + 0.5 v_y + 0.2 cos(vel, command)`` (``pos_rew``,
    ``dot_product``, ``steady_rew``; the cosine is 0 where the velocity or the command is 0).
    **Termination**: y > 2 (VMAS's ``done``: the top of the 3 m line); truncation at
    ``max_steps``.  **Info** (VMAS's, per agent): ``pos_rew``, ``dot_product``,
    ``steady_rew``.  **State**: ``accum_errs``, ``prev_err`` (the controller's).

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  Observation noise is drawn from the world's own stream (VMAS: torch's
    global generator).  The line VMAS's picture adds is not drawn.  In float64 worlds the
    controller's force ``u`` is float32, as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``line_trajectory``.
    """

    env_id = "LineTrajectory-v0"
    vmas_scenario = "line_trajectory"
    per_agent_metrics = ("pos_rew", "dot_product", "steady_rew")

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = D.observe_trajectory
    process_action = process_action

    def __init__(self, *, obs_noise: float = 0, **kwargs) -> None:
        self.obs_noise = D.check_obs_noise(obs_noise)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agent = Body("agent_0", agent=True, radius=AGENT_RADIUS, mass=MASS, f_range=F_RANGE, u_range=U_RANGE,
                     color=COLORS["blue"])
        return Layout(bodies=[agent], groups=[("agents", ["agent_0"])], dt=DT, drag=DRAG)

    def _obs_dim(self, group: str) -> int:
        return 6

    def _fields(self) -> dict[str, Field]:
        return {
            **D.controller_fields(1, CONTROLLER_PARAMS, DT, F_RANGE),
            "obs_noise": param(self.obs_noise), "half": param(0.5), "steady_coeff": param(0.2),
            "end_y": param(float(LINE_LENGTH - 1)),
            "vel_action": scratch("float", 2),
            "pos_rew": info("float", 1), "dot_product": info("float", 1), "steady_rew": info("float", 1),
        }
