"""Goal-v0: VMAS 1.5.2's debug scenario ``goal`` (one robot with VMAS's velocity controller
drives to a goal in a 6 x 3 lab)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import debug_common as D
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

DT = 0.05
SUBSTEPS = 5
AGENT_RADIUS = 0.16
GOAL_RADIUS = 0.06
LAB_LENGTH, LAB_WIDTH = 6, 3
#: VMAS's VelocityController parameters in goal: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (2, 6, 0.002)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the controller cleared; the agent at U(-3, 3) x U(-1.5, 1.5)
    (x, then y), then the goal likewise; the goal's shaping distance.  The delay queue is
    emptied too (VMAS keeps it across resets: see the class)."""
    rng = W.episode_stream(w, e)
    b = W.body_of(w, 0)
    D.clear_controller(w, e, 0)
    D.clear_queue(w, e, 0)
    for body in range(2):
        x = W.uniform(wp.randf(rng), -w.half_length, w.half_length)
        y = W.uniform(wp.randf(rng), -w.half_width, w.half_width)
        target = b
        if body == 1:
            target = 0
        W.set_position(w, e, target, wp.vector(x, y))
    w.pos_shaping[e] = W.distance(W.position(w, e, 0), W.position(w, e, b)) * w.pos_shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: the goal reached while the agent is within 0.06 of it; the decrease of
    the distance (times ``pos_shaping_factor``) and ``time_rew_coeff`` while not reached, and
    ``-energy_rew_coeff |u| / sqrt(2 f_range²)``.  VMAS's ``done`` is always False."""
    F0 = type(w.dt)(0.0)
    b = W.body_of(w, 0)
    goal_dist = W.distance(W.position(w, e, 0), W.position(w, e, b))
    reached = goal_dist < w.goal_radius
    shaping = goal_dist * w.pos_shaping_factor
    pos_rew = F0
    time_rew = F0
    if not reached:
        pos_rew = w.pos_shaping[e] - shaping
        time_rew = F0 + w.time_rew_coeff
    w.pos_shaping[e] = shaping
    u = wp.vector(type(F0)(w.u[e, 0, 0]), type(F0)(w.u[e, 0, 1]))
    energy = -(G.vector_norm(u) / w.energy_norm) * w.energy_rew_coeff
    w.pos_rew[e, 0] = pos_rew
    w.time_rew[e, 0] = time_rew
    w.energy_rew[e, 0] = energy
    w.reward[e, 0] = (pos_rew + energy) + time_rew
    w.reached_goal[e] = F0
    if reached:
        w.reached_goal[e] = type(F0)(1.0)
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel, pos - goal pos], each entry plus U(-obs_noise, obs_noise) where obs_noise > 0."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p - W.position(w, e, 0))
    D.add_obs_noise(w, e, i, out, o)


def _reached(info: dict):
    return info["reached_goal"]


class Goal(VmasBase):
    """VMAS 1.5.2's debug scenario ``goal``: one robot (a sphere of radius 0.16) driven by VMAS's
    velocity controller has to reach a goal (radius 0.06) somewhere in a 6 x 3 lab.

    Same keyword arguments and defaults as VMAS's scenario: ``u_range=1`` (the largest
    commanded speed), ``a_range=1``, ``obs_noise=0.0``, ``dt_delay=0``, ``min_input_norm=0.08``,
    ``linear_friction=0.1``, ``pos_shaping_factor=1.0``, ``time_rew_coeff=-0.01``,
    ``energy_rew_coeff=0.0``, plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agent** ``agent_0`` (VMAS's ``agent 0``), group ``agents``: a sphere of radius 0.16, mass
    1, linear friction ``linear_friction``, force limit ``f_range = a_range + linear_friction``
    per component.  Steps of 0.05 s in 5 substeps, no drag.  The goal (``goal``, body 0) does
    not collide.  Both start uniformly in ``[-3, 3] x [-1.5, 1.5]`` (agent first).
    **Actions**: a desired velocity in ``[-u_range, u_range]²``, delayed by ``dt_delay``
    steps, clamped to norm ``u_range``, zeroed below norm ``min_input_norm`` and tracked by
    VMAS's PID velocity controller (gain 2, integral time 6, derivative time 0.002; its force
    goes to the physics).  Discrete: ``Discrete(9)`` (0, -u_range, +u_range per component).
    **Observation** ``[pos, vel, pos - goal pos]`` (6), plus U(-obs_noise, obs_noise) on every
    entry where ``obs_noise > 0``.  **Reward**: while the agent is not on the goal (farther than
    0.06), the decrease of its goal distance times ``pos_shaping_factor`` plus
    ``time_rew_coeff``; always ``-energy_rew_coeff |u| / sqrt(2 f_range²)`` (``u`` the
    controller's force).  **Termination**: never (VMAS's scenario has no ``done``);
    truncation at ``max_steps``.  **Info**: ``pos_rew``, ``energy_rew``, ``time_rew`` (VMAS's,
    per agent) and ``reached_goal`` (per world, ours: 1.0 while the agent is on the goal); the
    episode metric ``success`` (the goal reached during the episode).  **State**: ``pos_shaping``
    (VMAS's ``goal.pos_shaping``), ``accum_errs``, ``prev_err`` (the controller's),
    ``input_queue`` (``[E, 1, dt_delay, 2]``).

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  VMAS makes the ``dt_delay`` queue once and never empties it, so after a
    reset the first ``dt_delay`` commands are the last episode's; here a reset empties it.
    Observation noise is drawn from the world's own stream (VMAS: torch's global generator).
    In float64 worlds the controller's force ``u`` is float32, as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``goal``.
    """

    env_id = "Goal-v0"
    vmas_scenario = "goal"
    vmas_agent_names_spaced = True
    per_agent_metrics = ("pos_rew", "energy_rew", "time_rew")
    episode_metrics = (EpisodeMetric("success", "1 if the agent reached the goal during the episode", _reached,
                                     "any"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = D.delayed_control

    def __init__(self, *, u_range: float = 1, a_range: float = 1, obs_noise: float = 0.0, dt_delay: int = 0,
                 min_input_norm: float = 0.08, linear_friction: float = 0.1, pos_shaping_factor: float = 1.0,
                 time_rew_coeff: float = -0.01, energy_rew_coeff: float = 0.0, **kwargs) -> None:
        self.u_range = check_positive("u_range", u_range)
        self.a_range = check_positive("a_range", a_range)
        self.obs_noise = D.check_obs_noise(obs_noise)
        self.dt_delay = v.check_int("dt_delay", dt_delay, minimum=0)
        self.min_input_norm = D.check_nonnegative("min_input_norm", min_input_norm)
        self.linear_friction = D.check_nonnegative("linear_friction", linear_friction)
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.time_rew_coeff = v.check_float("time_rew_coeff", time_rew_coeff)
        self.energy_rew_coeff = v.check_float("energy_rew_coeff", energy_rew_coeff)
        self.f_range = self.a_range + self.linear_friction
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        goal = Body("goal", collide=False, radius=GOAL_RADIUS, color=COLORS["gray"])
        agent = Body("agent_0", agent=True, radius=AGENT_RADIUS, linear_friction=self.linear_friction,
                     f_range=self.f_range, u_range=self.u_range, color=COLORS["green"])
        return Layout(bodies=[goal, agent], groups=[("agents", ["agent_0"])], dt=DT, substeps=SUBSTEPS, drag=0.0)

    def _obs_dim(self, group: str) -> int:
        return 6

    def _fields(self) -> dict[str, Field]:
        return {
            "half_length": param(LAB_LENGTH / 2), "half_width": param(LAB_WIDTH / 2),
            "goal_radius": param(GOAL_RADIUS),
            "command_range": param(self.u_range), "min_input_norm": param(self.min_input_norm),
            "obs_noise": param(self.obs_noise),
            "pos_shaping_factor": param(self.pos_shaping_factor), "time_rew_coeff": param(self.time_rew_coeff),
            "energy_rew_coeff": param(self.energy_rew_coeff),
            "energy_norm": param(math.sqrt(2 * (self.f_range**2))),
            **D.controller_fields(1, CONTROLLER_PARAMS, DT, self.f_range),
            # VMAS's names: goal.pos_shaping, the scenario's input_queue
            "pos_shaping": state("float"),
            "input_queue": state("float", 1, self.dt_delay, 2),
            "pos_rew": info("float", 1), "energy_rew": info("float", 1), "time_rew": info("float", 1),
            "reached_goal": info("float"),
        }
