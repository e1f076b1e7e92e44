"""Wheel-v0: VMAS 1.5.2's ``wheel`` scenario (agents push a line pivoted at its centre so that it
turns at a desired angular speed)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

AGENT_RADIUS = 0.03
CENTER_RADIUS = 0.02
LINE = 0  # the line's body index (the first landmark)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: every agent uniform in [-1, 1]² (x, then y), the line's
    rotation uniform in [-pi/2, pi/2] (the line stays at the origin, at rest)."""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    one = type(w.dt)(1.0)
    for i in range(w.u.shape[1]):
        x = W.uniform(wp.randf(rng), -one, one)
        y = W.uniform(wp.randf(rng), -one, one)
        W.set_position(w, e, L + i, wp.vector(x, y))
    w.rot[e, LINE] = W.uniform(wp.randf(rng), -w.half_pi, w.half_pi)


@wp.func(inline=True)
def speed_error(w: Any, e: int):
    """VMAS's ``(|line.ang_vel| - desired_velocity).abs()``."""
    return wp.abs(wp.abs(w.ang_vel[e, LINE]) - w.desired_velocity)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, the same [E, 1] value for every agent):
    minus the gap between the line's angular speed and the desired one.  No ``done``."""
    err = speed_error(w, e)
    for i in range(w.u.shape[1]):
        w.reward[e, i] = -err
    w.line_ang_vel[e] = w.ang_vel[e, LINE]
    w.ang_vel_error[e] = err
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos(2), vel(2), line pos - pos(2), end 1 - pos(2), end 2 - pos(2), line rot mod pi,
    |line ang_vel|, ||line ang_vel| - desired|] (end 1 = half the length times (cos, sin) of the
    line's rotation, end 2 = -end 1, both about the origin as VMAS's).  The last three are the
    same for every agent: worked out for the first agent and copied to the others' rows (the
    observe kernel writes the agents in order)."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    rv = W.current_direction(w, e, LINE)
    end = wp.vector(w.half_length * rv[0], w.half_length * rv[1])
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, W.position(w, e, LINE) - p)
    o = W.write_vec(out, e, i, o, end - p)
    o = W.write_vec(out, e, i, o, -end - p)
    if i == 0:
        o = W.write_value(out, e, i, o, G.torch_remainder(w.rot[e, LINE], w.pi))  # torch's %
        o = W.write_value(out, e, i, o, wp.abs(w.ang_vel[e, LINE]))
        o = W.write_value(out, e, i, o, speed_error(w, e))
    else:
        for k in range(3):
            out[e, i, o + k] = out[e, 0, o + k]


def _error(info: dict) -> torch.Tensor:
    return info["ang_vel_error"]


def _speed(info: dict) -> torch.Tensor:
    return info["line_ang_vel"].abs()


class Wheel(VmasBase):
    """VMAS 1.5.2's ``wheel``: ``n_agents`` small spheres push a long line (a heavy rod pivoted
    at the origin, free to turn but not to move) so that it turns at ``desired_velocity``.

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=4``, ``line_length=2``,
    ``line_mass=30``, ``desired_velocity=0.05``) plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``): holonomic spheres of radius 0.03, force
    ``0.6 u`` with ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one 0.1 s step, drag 0.25.
    The line (landmark ``line``, mass ``line_mass``, moment of inertia ``line_mass ×
    line_length² / 12``) turns under the agents' contact torques; the ``center`` marker does not
    collide.  **Observation** (13) ``[pos, vel, line pos - pos, end 1 - pos, end 2 - pos,
    line rot mod π, |ω|, ||ω| - desired_velocity|]``, ``ω`` the line's angular velocity.
    **Reward**: ``-||ω| - desired_velocity|``, the same for every agent (VMAS's reward is one
    ``[E, 1]`` value shared by all agents; ours is that value in every agent's column).
    **Termination**: none (VMAS's scenario has no ``done``); truncation at ``max_steps``.
    **Info** (per world, ours: VMAS's info is empty): ``line_ang_vel`` (ω) and
    ``ang_vel_error`` (``||ω| - desired_velocity|``, minus the reward).  **Episode metrics**:
    ``ang_vel_error`` and ``ang_speed`` (``|ω|``), both averaged over the episode.

    **Version history**

    * v0: initial version (VMAS 1.5.2's wheel)
    """

    env_id = "Wheel-v0"
    vmas_scenario = "wheel"
    episode_metrics = (
        EpisodeMetric("ang_vel_error", "the line's ||angular velocity| - desired_velocity|, averaged over the "
                      "episode (VMAS's task measure; minus the reward)", _error, "mean"),
        EpisodeMetric("ang_speed", "the line's |angular velocity|, averaged over the episode", _speed, "mean"),
    )

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, line_length: float = 2, line_mass: float = 30,
                 desired_velocity: float = 0.05, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.line_length = check_positive("line_length", line_length)
        self.line_mass = check_positive("line_mass", line_mass)
        self.desired_velocity = v.check_float("desired_velocity", desired_velocity)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.6, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        line = Body("line", shape="line", length=self.line_length, rotatable=True, mass=self.line_mass,
                    color=COLORS["black"])
        center = Body("center", radius=CENTER_RADIUS, collide=False, color=COLORS["black"])
        return Layout(bodies=[line, center] + agents, groups=[("agents", [a.name for a in agents])])

    def _obs_dim(self, group: str) -> int:
        return 13

    def _fields(self) -> dict[str, Field]:
        return {
            "half_length": param(self.line_length / 2), "desired_velocity": param(self.desired_velocity),
            # VMAS's float32 torch.pi / 2 bounds and torch.pi divisor
            "half_pi": param(math.pi / 2), "pi": param(math.pi),
            "line_ang_vel": info("float"), "ang_vel_error": info("float"),
        }
