"""BuzzWire-v0: VMAS 1.5.2's ``buzz_wire`` scenario (two agents, each joined to a ball by a rod,
carry the ball up a narrow corridor without touching its walls)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Joint, Layout, VmasBase

N_AGENTS = 2
AGENT_RADIUS = 0.03
BALL_RADIUS = AGENT_RADIUS
AGENT_SPACING = 0.5
WALL_LENGTH = 2
GOAL, BALL, ROD_0, ROD_1, FIRST_WALL = 0, 1, 2, 3, 4
N_WALLS = 4  # wall 0, wall 1 (the corridor's sides), floor 0, floor 1 (its ends)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the pair's angle ``a`` ~ U(-pi/6, pi/6) (0 without
    ``random_start_angle``), the ball and the goal uniformly in the corridor's bottom and top
    parts (VMAS's ``(lo - hi) * u + hi``), the agents at the ball -+ 0.25 (cos a, sin a), the rods
    at the ball -+ half that, turned to ``a`` and ``a + pi``, the corridor's walls and ends, and
    the position shaping of the start."""
    rng = W.episode_stream(w, e)
    F0 = type(w.dt)(0.0)
    a = W.uniform(wp.randf(rng), w.angle_lo, w.angle_hi)
    delta = wp.vector(w.half_spacing * wp.cos(a), w.half_spacing * wp.sin(a))
    ball = wp.vector(w.x_span * type(F0)(wp.randf(rng)) + w.x_hi, w.ball_y_span * type(F0)(wp.randf(rng)) + w.ball_y_hi)
    goal = wp.vector(w.x_span * type(F0)(wp.randf(rng)) + w.x_hi, w.goal_y_span * type(F0)(wp.randf(rng)) + w.goal_y_hi)
    W.set_position(w, e, GOAL, goal)
    W.set_position(w, e, BALL, ball)
    W.set_position(w, e, W.body_of(w, 0), ball - delta)
    W.set_position(w, e, W.body_of(w, 1), ball + delta)
    half = delta / type(F0)(2.0)
    W.set_position(w, e, ROD_0, ball - half)
    w.rot[e, ROD_0] = a
    W.set_position(w, e, ROD_1, ball + half)
    w.rot[e, ROD_1] = a + w.pi
    for k in range(N_WALLS):
        w.pos[e, FIRST_WALL + k, 0] = w.wall_x[k]
        w.pos[e, FIRST_WALL + k, 1] = w.wall_y[k]
        w.rot[e, FIRST_WALL + k] = w.wall_rot[k]
    w.pos_shaping[e] = W.distance(ball, goal) * w.pos_shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at agent_0, shared) and ``info``: the decrease of the ball's
    distance to the goal (times ``pos_shaping_factor``) plus ``collision_reward`` for every
    (agent or ball, wall or end) overlap (VMAS's ``is_overlapping``).  Returns VMAS's ``done()``:
    the ball within 0.01 of the goal, or any such overlap."""
    zero = type(w.dt)(0.0)
    ball = W.position(w, e, BALL)
    dist = W.distance(ball, W.position(w, e, GOAL))
    shaping = dist * w.pos_shaping_factor
    pos_rew = zero + (w.pos_shaping[e] - shaping)
    w.pos_shaping[e] = shaping
    collision_rew = zero
    collided = bool(False)
    for q in range(N_AGENTS + 1):
        body = BALL
        if q < N_AGENTS:
            body = W.body_of(w, q)
        for k in range(N_WALLS):
            if W.is_overlapping(w, e, body, FIRST_WALL + k):
                collision_rew = collision_rew + w.collision_reward
                collided = True
    rew = pos_rew + collision_rew
    for i in range(N_AGENTS):
        w.reward[e, i] = rew
        w.pos_rew[e, i] = pos_rew
        w.collision_rew[e, i] = collision_rew
    reached = dist <= w.done_dist
    w.reached_goal[e] = zero
    if reached:
        w.reached_goal[e] = type(zero)(1.0)
    w.collided[e] = zero
    if collided:
        w.collided[e] = type(zero)(1.0)
    return reached or collided


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """``[pos, vel, pos - goal]``."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    W.write_vec(out, e, i, o, p - W.position(w, e, GOAL))


def _reached(info: dict) -> torch.Tensor:
    return info["reached_goal"]


def _collided(info: dict) -> torch.Tensor:
    return info["collided"]


class BuzzWire(VmasBase):
    """VMAS 1.5.2's ``buzz_wire``: two agents, each held to a ball by a rod (VMAS's ``Joint`` of
    length 0.25, free to turn at both ends), carry the ball from the bottom of a vertical corridor
    (0.25 wide, 2 long) to a goal in its top part without the agents or the ball touching its
    walls — the buzz-wire game: a touch ends the episode.

    Same keyword arguments and defaults as VMAS's scenario: ``random_start_angle=True`` (the
    pair's angle ~ U(-pi/6, pi/6), else 0: horizontal), ``pos_shaping_factor=1``,
    ``collision_reward=-10`` and ``max_speed_1=None`` (``agent_1``'s speed limit), plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``goal`` (a sphere of radius 0.03, no collisions),
    ``ball`` (a movable sphere of radius 0.03, mass 1), ``joint agent_0 ball`` and ``joint
    agent_1 ball`` (the rods: movable, rotatable lines of length 0.25 and mass 1 that collide
    with nothing, held by VMAS's joint constraints from one end to the agent's centre and from
    the other to the ball's, joint force 900), ``wall 0``, ``wall 1`` (lines of length 2 at x =
    -+0.125, upright: the corridor's sides), ``floor 0``, ``floor 1`` (lines of length 0.25 at
    y = -+1: its ends), then the agents.  15 substeps, collision force 1500, drag 0.25, no arena
    bounds.

    **Agents** ``agent_0``, ``agent_1`` (one group ``agents``): spheres of radius 0.03, mass 1,
    force ``u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``.  The ball starts uniformly
    in ``[-0.03, 0.03] x [-0.94, -0.03]``, the goal in ``[-0.03, 0.03] x [-0.03, 0.94]`` (VMAS's
    bounds), the agents 0.25 from the ball on either side along the pair's angle (agent_0 on the
    left), outside the corridor, the rods between.  **Observation** (6) ``[pos, vel, pos -
    goal]``.  **Reward** (shared): the decrease of the ball's distance to the goal times
    ``pos_shaping_factor``, plus ``collision_reward`` for each (agent or ball, wall or end)
    overlap.  **Termination**: the ball within 0.01 of the goal, or any such overlap (VMAS's
    ``done``); truncation at ``max_steps``.  **Info** (per agent, VMAS's): ``pos_rew``,
    ``collision_rew``; per world (ours): ``reached_goal`` and ``collided`` (1.0 on the step it
    happened).  **State** beyond the bodies: ``pos_shaping`` (VMAS's name).  Episode metrics:
    ``success`` (the ball reached the goal) and ``collided`` (an agent or the ball touched the
    corridor).

    **Where this differs from VMAS.**  VMAS draws a batch's starts from torch's generator; each
    world here draws its own from its stream (the same distribution, compared in the tests).
    The rods are placed as VMAS's ``reset_world_at`` sets them (its explicit ``set_pos`` /
    ``set_rot`` after ``Joint.notify``); when VMAS resets one world (``reset_at``), the
    ``Joint.notify`` of its agents' ``set_pos`` also moves the rods of *every other* world to the
    middle of their bodies, turned to ``atan2`` of the bodies' offset; each world here resets
    only itself.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``buzz_wire``.
    """

    env_id = "BuzzWire-v0"
    vmas_scenario = "buzz_wire"
    per_agent_metrics = ("pos_rew", "collision_rew")
    episode_metrics = (
        EpisodeMetric("success", "1 if the ball reached its goal (within 0.01) during the episode", _reached, "any"),
        EpisodeMetric("collided", "1 if an agent or the ball touched the corridor's walls during the episode",
                      _collided, "any"),
    )
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, random_start_angle: bool = True, pos_shaping_factor: float = 1,
                 collision_reward: float = -10, max_speed_1: float | None = None, **kwargs) -> None:
        self.random_start_angle = v.check_bool("random_start_angle", random_start_angle)
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.collision_reward = v.check_float("collision_reward", collision_reward)
        self.max_speed_1 = None if max_speed_1 is None else v.check_float("max_speed_1", max_speed_1, low=0.0)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body("agent_0", agent=True, radius=AGENT_RADIUS),
                  Body("agent_1", agent=True, radius=AGENT_RADIUS, max_speed=self.max_speed_1)]
        goal = Body("goal", radius=BALL_RADIUS, collide=False, color=COLORS["green"])
        ball = Body("ball", movable=True, radius=BALL_RADIUS)
        joints = [Joint(f"agent_{i}", "ball", dist=AGENT_SPACING / 2, collidable=False) for i in range(N_AGENTS)]
        walls = [Body(f"wall {i}", shape="line", length=WALL_LENGTH, color=COLORS["black"]) for i in range(2)]
        floors = [Body(f"floor {i}", shape="line", length=AGENT_SPACING / 2, color=COLORS["black"])
                  for i in range(2)]
        return Layout(bodies=[goal, ball] + [j.landmark() for j in joints] + walls + floors + agents,
                      groups=[("agents", ["agent_0", "agent_1"])], joints=joints, substeps=15, joint_force=900,
                      collision_force=1500)

    def _obs_dim(self, group: str) -> int:
        return 6

    def _fields(self) -> dict[str, Field]:
        n, r = N_AGENTS, AGENT_RADIUS
        angle = math.pi / 2 - math.pi / 3 if self.random_start_angle else 0.0
        lo = -math.pi / 2 + math.pi / 3 if self.random_start_angle else 0.0
        min_x, max_x = -r, r
        min_y, max_y = -WALL_LENGTH / 2 + 2 * r, -r
        # VMAS's float32 tensors: the walls at (-+spacing / 4, 0) turned by pi / 2, the ends at (0, -+1)
        wall_pos = torch.tensor([[-AGENT_SPACING / 4, 0.0], [AGENT_SPACING / 4, 0.0], [0, -WALL_LENGTH / 2],
                                 [0, WALL_LENGTH / 2]], dtype=torch.float32)
        half_pi = float(torch.tensor(torch.pi / 2))
        return {
            "angle_lo": param(lo), "angle_hi": param(angle), "half_spacing": param(AGENT_SPACING / 2),
            "pi": param(math.pi),
            # (lo - hi) * u + hi with VMAS's Python-float bounds
            "x_span": param(min_x - max_x), "x_hi": param(max_x),
            "ball_y_span": param(min_y - max_y), "ball_y_hi": param(max_y),
            "goal_y_span": param(-min_y - (-max_x)), "goal_y_hi": param(-max_x),
            "wall_x": const(wall_pos[:, 0].tolist()), "wall_y": const(wall_pos[:, 1].tolist()),
            "wall_rot": const([half_pi, half_pi, 0.0, 0.0]),
            "pos_shaping_factor": param(self.pos_shaping_factor), "collision_reward": param(self.collision_reward),
            "done_dist": param(0.01),
            "pos_shaping": state("float"),  # VMAS's scenario.pos_shaping
            "pos_rew": info("float", n), "collision_rew": info("float", n),
            "reached_goal": info("float"), "collided": info("float"),
        }
