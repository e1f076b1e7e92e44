"""VelControl-v0: VMAS 1.5.2's debug scenario ``vel_control`` (three agents with VMAS's velocity
controller and different force limits track commanded velocities; the second one's commands
are also limited in acceleration)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core.fields import Field, const, info, param
from war_envs.scenarios.vmas import debug_common as D
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

DT = 0.05
SUBSTEPS = 4
LINEAR_FRICTION = 0.1
V_RANGE = 1.0
A_RANGE = 1.0
#: the agents' force limits (VMAS: agent 0 ``linear_friction + a_range``, agent 1 none, agent 2 30)
F_RANGES = (LINEAR_FRICTION + A_RANGE, None, 30.0)
MIN_INPUT_NORM = 0.08
MAX_ACCELERATION = 1.0  # agent 1's commanded acceleration limit
ENERGY_COEFF = 3.0
#: VMAS's VelocityController parameters in vel_control: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (2, 6, 0.002)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: every controller cleared, every agent at (-1, 0) (VMAS's
    ``uniform_(-1, -1)``, ``uniform_(0, 0)``); the landmark stays at the origin."""
    for i in range(w.u.shape[1]):
        D.clear_controller(w, e, i)
        W.set_position(w, e, W.body_of(w, i), wp.vector(-type(w.dt)(1.0), type(w.dt)(0.0)))


@wp.func(inline=True)
def controller_axis(w: Any, e: int, i: int, b: int, k: int, target: Any):
    """``world.velocity_controller`` with agent i's own windup cutoff (``windup[i]``; < 0: none,
    VMAS's ``integrator_windup_cutoff = None`` for an agent without force limits)."""
    err = target - w.vel[e, b, k]
    accum = w.accum_errs[e, i, k] + w.dt * err
    if w.windup[i] >= type(err)(0.0):
        accum = wp.clamp(accum, -w.windup[i], w.windup[i])
    w.accum_errs[e, i, k] = accum
    integral = w.inv_integral_ts * accum
    rate = (w.derivative_ts * (err - w.prev_err[e, i, k])) / w.dt
    w.prev_err[e, i, k] = err
    w.u[e, i, k] = wp.float32((w.ctrl_gain * ((err + integral) + rate)) * w.mass[b])


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action``: the command clamped to norm ``u_range`` and zeroed below norm
    0.08; agent 1's x command moved toward its x velocity so that the change asks at most 1 m/s²
    (``vel_x + clamp((cmd - vel_x) / dt, -1, 1) dt``); then VMAS's PID controller (gain 2,
    integral time 6, derivative time 0.002; windup ±0.5 f_range 6 / (dt 2), none for agent 1)."""
    F0 = type(w.dt)(0.0)
    b = W.body_of(w, i)
    u = G.clamp_with_norm(wp.vector(type(F0)(w.u[e, i, 0]), type(F0)(w.u[e, i, 1])), w.command_range)
    if G.vector_norm(u) < w.min_input_norm:
        u = wp.vector(F0, F0)
    if i == 1:
        vx = w.vel[e, b, 0]
        requested = (u[0] - vx) / w.dt
        achievable = wp.clamp(requested, -w.max_acceleration, w.max_acceleration)
        u = wp.vector(achievable * w.dt + vx, u[1])
    for k in range(2):
        controller_axis(w, e, i, b, k, u[k])


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (shared): -3 x the sum of the agents' ``|u|`` (the controllers' forces).
    VMAS's ``done`` is always False."""
    total = type(w.dt)(0.0)
    for i in range(w.u.shape[1]):
        n = G.vector_norm(wp.vector(type(w.dt)(w.u[e, i, 0]), type(w.dt)(w.u[e, i, 1])))
        if i == 0:
            total = n
        else:
            total = total + n
    energy = -total * w.energy_coeff
    for i in range(w.u.shape[1]):
        w.energy_expenditure[e, i] = energy
        w.reward[e, i] = energy
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel]."""
    b = W.body_of(w, i)
    o = W.write_vec(out, e, i, 0, W.position(w, e, b))
    W.write_vec(out, e, i, o, W.velocity(w, e, b))


class VelControl(VmasBase):
    """VMAS 1.5.2's debug scenario ``vel_control``: three agents, each tracking its commanded
    velocity with VMAS's PID velocity controller, differ in force limit (1.1, none, 30) and the
    second one's commands are limited in acceleration; they share a penalty on the forces.

    Same keyword argument and default as VMAS's scenario: ``green_mass=1`` (agent_0's mass,
    > 0), plus VMAS's environment arguments (``continuous_actions``, ``max_steps``,
    ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0`` (green, mass ``green_mass``, force limit 1.1 per component),
    ``agent_1`` (mass 1, no force limit, its x command limited to 1 m/s² of change) and
    ``agent_2`` (mass 1, force limit 30), one group ``agents``: spheres of radius 0.05 that
    collide with nothing; the world's linear friction 0.1, no drag, steps of 0.05 s in 4
    substeps.  A movable landmark ``landmark 0`` (VMAS's; nothing pushes it) stays at the
    origin.  Every agent starts at (-1, 0), at rest: **the start is fixed** (no random draw).
    **Actions**: a desired velocity in ``[-1, 1]²``, clamped to norm 1, zeroed below norm 0.08
    (agent_1's x moved to at most ``dt`` m/s from its x velocity), tracked by VMAS's PID
    controller (gain 2, integral time 6, derivative time 0.002; integrator windup ±33 for
    agent_0, ±900 for agent_2, none for agent_1, as VMAS's ``0.5 f_range Ts / (dt gain)``).
    Discrete: ``Discrete(9)`` (0, -1, +1 per component).  **Observation** ``[pos, vel]`` (4).
    **Reward** (shared): ``-3 (|u_0| + |u_1| + |u_2|)``, ``u`` the controllers' forces (before the
    force limits).  **Termination**: never (VMAS's scenario has no ``done``); truncation at
    ``max_steps``.  **Info** (VMAS's, per agent): ``energy_expenditure`` (the reward).
    **State**: ``accum_errs``, ``prev_err`` (``[E, 3, 2]``, the controllers').

    **Where this differs from VMAS.**  Nothing in the dynamics (VMAS's reset draws
    ``uniform_(-1, -1)``, a constant).  In float64 worlds the controllers' forces are float32,
    as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``vel_control``.
    """

    env_id = "VelControl-v0"
    vmas_scenario = "vel_control"
    vmas_agent_names_spaced = True
    per_agent_metrics = ("energy_expenditure",)
    random_start = False

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, green_mass: float = 1, **kwargs) -> None:
        self.green_mass = check_positive("green_mass", green_mass)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        landmark = Body("landmark 0", movable=True, collide=False, color=COLORS["gray"])
        agents = [Body(f"agent_{i}", agent=True, collide=False, mass=self.green_mass if i == 0 else 1.0,
                       f_range=F_RANGES[i], u_range=V_RANGE, color=COLORS["green" if i == 0 else "blue"])
                  for i in range(3)]
        return Layout(bodies=[landmark] + agents, groups=[("agents", [a.name for a in agents])], dt=DT,
                      substeps=SUBSTEPS, drag=0.0, linear_friction=LINEAR_FRICTION)

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        gain, integral_ts, _ = CONTROLLER_PARAMS
        fields = D.controller_fields(3, CONTROLLER_PARAMS, DT, None)
        del fields["windup_cutoff"]
        return {
            **fields,
            "windup": const([D.windup_cutoff(f, gain, integral_ts, DT) for f in F_RANGES]),
            "command_range": param(V_RANGE), "min_input_norm": param(MIN_INPUT_NORM),
            "max_acceleration": param(MAX_ACCELERATION), "energy_coeff": param(ENERGY_COEFF),
            "energy_expenditure": info("float", 3),
        }

