"""BallTrajectory-v0: VMAS 1.5.2's ``ball_trajectory`` scenario (two agents, each joined to a ball
by a rod, drive the ball around a circle at a desired speed)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import Body, Joint, Layout, VmasBase

N_AGENTS = 2
AGENT_RADIUS = 0.03
BALL_RADIUS = 2 * AGENT_RADIUS
AGENT_SPACING = 0.4
DESIRED_SPEED = 1
DESIRED_RADIUS = 0.5
BALL = 0


@wp.func
def circle_gap(w: Any, p: Any):
    """|p - VMAS's ``get_closest_point_circle(p)``|: the closest point is ``p / |p|`` times the
    desired radius (``nan_to_num``: the origin where ``|p| = 0``)."""
    n = G.vector_norm(p)
    closest = p * type(n)(0.0)
    if n > type(n)(0.0):
        closest = wp.vector(p[0] / n, p[1] / n) * w.desired_radius
    return G.vector_norm(p - closest)


@wp.func
def pos_shaping(w: Any, e: int):
    """``|ball - closest point on the circle| ** 0.5 * pos_shaping_factor``."""
    return wp.sqrt(circle_gap(w, W.position(w, e, BALL))) * w.pos_shaping_factor


@wp.func
def speed_shaping(w: Any, e: int):
    """``|desired_speed - |ball velocity|| * speed_shaping_factor``."""
    return wp.abs(w.desired_speed - G.vector_norm(W.velocity(w, e, BALL))) * w.speed_shaping_factor


@wp.func
def dist_shaping(w: Any, e: int):
    """``(|agent_0 - ball| + |agent_1 - ball|) * dist_shaping_factor``."""
    ball = W.position(w, e, BALL)
    d0 = W.distance(W.position(w, e, W.body_of(w, 0)), ball)
    d1 = W.distance(W.position(w, e, W.body_of(w, 1)), ball)
    return (d0 + d1) * w.dist_shaping_factor


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the ball ~ U(-0.5, 0.5)², a random agent (``randperm``) at
    the ball minus (0.2, 0), the other at the ball plus (0.2, 0), the rods between them and the
    ball (``Joint.notify``) and the three shaping values of the start."""
    rng = W.episode_stream(w, e)
    bx = W.uniform(wp.randf(rng), -w.desired_radius, w.desired_radius)
    by = W.uniform(wp.randf(rng), -w.desired_radius, w.desired_radius)
    W.set_position(w, e, BALL, wp.vector(bx, by))
    first = int(0)
    if wp.randf(rng) < 0.5:
        first = 1
    W.set_position(w, e, W.body_of(w, first), wp.vector(bx + (-w.half_spacing), by))
    W.set_position(w, e, W.body_of(w, 1 - first), wp.vector(bx + w.half_spacing, by))
    W.place_joint_landmarks(w, e)
    w.pos_shaping[e] = pos_shaping(w, e)
    w.speed_shaping[e] = speed_shaping(w, e)
    w.dist_shaping[e] = dist_shaping(w, e)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward(agent)``, called for agent_0 and then agent_1 as VMAS's environment does:
    each call works the three shaping values out again, rewards their decrease since the last
    call and stores them, so agent_0 gets the decrease over the step and agent_1 exactly 0;
    VMAS's ``info`` (read after both calls) is agent_1's: 0.  Never done."""
    for i in range(N_AGENTS):
        p = pos_shaping(w, e)
        pos_rew = w.pos_shaping[e] - p
        w.pos_shaping[e] = p
        s = speed_shaping(w, e)
        speed_rew = w.speed_shaping[e] - s
        w.speed_shaping[e] = s
        d = dist_shaping(w, e)
        dist_rew = w.dist_shaping[e] - d
        w.dist_shaping[e] = d
        w.reward[e, i] = (pos_rew + speed_rew) + dist_rew
        for j in range(N_AGENTS):
            w.pos_rew[e, j] = pos_rew
            w.speed_rew[e, j] = speed_rew
            w.dist_rew[e, j] = dist_rew
    w.speed_error[e] = wp.abs(w.desired_speed - G.vector_norm(W.velocity(w, e, BALL)))
    w.radius_error[e] = circle_gap(w, W.position(w, e, BALL))
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """``[pos, vel, pos - ball, pos]``."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p - W.position(w, e, BALL))
    W.write_vec(out, e, i, o, p)


def _speed_error(info: dict) -> torch.Tensor:
    return info["speed_error"]


def _radius_error(info: dict) -> torch.Tensor:
    return info["radius_error"]


class BallTrajectory(VmasBase):
    """VMAS 1.5.2's ``ball_trajectory``: two agents, each held to a ball by a rod (VMAS's
    ``Joint`` of length 0.2, free to turn at both ends), are to drive the ball around the circle
    of radius 0.5 about the origin at speed 1.

    Same keyword arguments and defaults as VMAS's scenario: ``pos_shaping_factor=0`` (the
    reward for bringing the ball closer to the circle), ``speed_shaping_factor=1`` (for bringing
    its speed closer to 1), ``dist_shaping_factor=0`` (for bringing the agents closer to it) and
    ``joints=True`` (``False``: no rods, the agents free, and VMAS's lighter physics: 5 substeps,
    collision force 400), plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``ball`` (a movable sphere of radius 0.06, mass 1, linear
    friction 0.04), with ``joints`` ``joint agent_0 ball`` and ``joint agent_1 ball`` (the rods:
    movable, rotatable lines of length 0.2 and mass 1 that collide with nothing, held by VMAS's
    joint constraints from one end to the agent's centre and from the other to the ball's,
    joint force 900), then the agents.  15 substeps (5 without joints), collision force 1500
    (400), no world drag, no arena bounds.

    **Agents** ``agent_0``, ``agent_1`` (one group ``agents``): spheres of radius 0.03, mass 1,
    drag 0.25, force ``u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``.  The ball
    starts uniformly in ``[-0.5, 0.5]²`` at rest, a random agent 0.2 to its left, the other
    0.2 to its right, the rods between.  **Observation** (8) ``[pos, vel, pos - ball, pos]``
    (VMAS's: the position twice).  **Reward** (VMAS's, computed for each agent in turn):
    ``agent_0`` gets the decrease over the step of ``pos_shaping_factor · |ball - circle| ** 0.5
    + speed_shaping_factor · |1 - |ball velocity|| + dist_shaping_factor · (|agent_0 - ball| +
    |agent_1 - ball|)``; ``agent_1`` gets 0 (VMAS's ``reward`` stores the shaping values at
    every call, so its call sees no change).  **Termination**: none (VMAS's default ``done``);
    truncation at ``max_steps``.  **Info** (per agent, VMAS's): ``pos_rew``, ``speed_rew``,
    ``dist_rew`` — as VMAS reads them after both agents' reward calls, agent_1's: always 0;
    per world (ours, task measures): ``speed_error`` ``|1 - |ball velocity||`` and
    ``radius_error`` (the ball's distance to the circle).  **State** beyond the bodies:
    ``pos_shaping``, ``speed_shaping``, ``dist_shaping`` (VMAS's names).  Episode metrics:
    ``speed_error`` and ``radius_error``, averaged over the episode.

    **Where this differs from VMAS.**  VMAS draws a batch's starts from torch's generator; each
    world here draws its own from its stream (the same distribution, compared in the tests);
    VMAS's batched reset (``env.reset()``) draws one agent order (``randperm``) for the whole
    batch, each world here its own (VMAS's ``reset_at(i)``).  When VMAS resets one world
    (``reset_at``), its ``Joint.notify`` moves the rods of *every* world to the middle of their
    bodies, and its ``reset_world_at`` sets *every* world's ``pos_shaping`` to the reset world's
    (a scalar assigned over the batch's tensor: matters only with ``pos_shaping_factor != 0``);
    each world here resets only itself.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``ball_trajectory``.
    """

    env_id = "BallTrajectory-v0"
    vmas_scenario = "ball_trajectory"
    per_agent_metrics = ("pos_rew", "speed_rew", "dist_rew")
    episode_metrics = (
        EpisodeMetric("speed_error", "the ball's |1 - speed| (VMAS's desired speed 1), averaged over the episode",
                      _speed_error, "mean"),
        EpisodeMetric("radius_error", "the ball's distance to the circle of radius 0.5, averaged over the episode",
                      _radius_error, "mean"),
    )

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, pos_shaping_factor: float = 0, speed_shaping_factor: float = 1,
                 dist_shaping_factor: float = 0, joints: bool = True, **kwargs) -> None:
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.speed_shaping_factor = v.check_float("speed_shaping_factor", speed_shaping_factor)
        self.dist_shaping_factor = v.check_float("dist_shaping_factor", dist_shaping_factor)
        self.joints = v.check_bool("joints", joints)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, drag=0.25) for i in range(N_AGENTS)]
        ball = Body("ball", movable=True, radius=BALL_RADIUS, linear_friction=0.04)
        joints = []
        if self.joints:
            joints = [Joint(f"agent_{i}", "ball", dist=AGENT_SPACING / 2, collidable=False)
                      for i in range(N_AGENTS)]
        rods = [j.landmark() for j in joints]
        return Layout(bodies=[ball] + rods + agents, groups=[("agents", [a.name for a in agents])],
                      joints=joints, substeps=15 if self.joints else 5,
                      joint_force=900 if self.joints else G.JOINT_FORCE,
                      collision_force=1500 if self.joints else 400, drag=0.0)

    def _obs_dim(self, group: str) -> int:
        return 8

    def _fields(self) -> dict[str, Field]:
        n = N_AGENTS
        return {
            "desired_radius": param(DESIRED_RADIUS), "desired_speed": param(DESIRED_SPEED),
            "half_spacing": param(AGENT_SPACING / 2),
            "pos_shaping_factor": param(self.pos_shaping_factor),
            "speed_shaping_factor": param(self.speed_shaping_factor),
            "dist_shaping_factor": param(self.dist_shaping_factor),
            # VMAS's names: scenario.pos_shaping & co.
            "pos_shaping": state("float"), "speed_shaping": state("float"), "dist_shaping": state("float"),
            "pos_rew": info("float", n), "speed_rew": info("float", n), "dist_rew": info("float", n),
            "speed_error": info("float"), "radius_error": info("float"),
        }
