"""Flocking-v0: VMAS 1.5.2's ``flocking`` scenario (agents keep together around a scripted target
that circles the arena, avoiding obstacles they see through a lidar)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, Lidar, VmasBase, check_room

DESIRED_DISTANCE = 0.1
MIN_COLLISION_DISTANCE = 0.005
OBSTACLE_RADIUS = 0.1
LIDAR_RANGE = 0.2
X_DIM = 1.0
Y_DIM = 1.0
#: the target's angular period in steps: its force is (cos(t / 30), sin(t / 30)) at step t
TARGET_PERIOD = 30.0


@wp.func(inline=True)
def target_body(w: Any):
    """The target (VMAS's first agent, scripted): the body just before the policy agents."""
    return w.n_landmarks - 1


@wp.func(inline=True)
def pre_step(w: Any, e: int):
    """The target's action script: force ``(cos(t / 30), sin(t / 30))`` in float32, ``t`` the
    steps taken so far this episode (VMAS's ``self.t``, counted up in its ``reward``)."""
    t = wp.float32(w.t[e]) / wp.float32(TARGET_PERIOD)
    w.script_u[e, 0, 0] = wp.cos(t)
    w.script_u[e, 0, 1] = wp.sin(t)


@wp.func(inline=True)
def distance_shaping(w: Any, e: int, i: int):
    """VMAS's separation term of agent i: the mean over every other agent (the target first) of
    ``(|p_i - p_j| - 0.1)^2``, times ``dist_shaping_factor``."""
    L = w.n_landmarks
    n = w.u.shape[1]
    p = W.position(w, e, L + i)
    d0 = W.distance(p, W.position(w, e, target_body(w))) - w.desired_distance
    total = d0 * d0
    for j in range(n):
        if j != i:
            d = W.distance(p, W.position(w, e, L + j)) - w.desired_distance
            total = total + d * d
    return (total / type(total)(float(n))) * w.dist_shaping_factor


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the target at (0, -1); the obstacles, then the agents, at
    random in [-1, 1]^2 at least ``min_dist_between_entities`` from every body placed before them
    (the target included); then each agent's shaping value."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    T = target_body(w)
    zero = type(w.dt)(0.0)
    W.place_at(w, e, T, wp.vector(zero, -w.y_dim))
    for k in range(T):
        rng = W.place_randomly(w, e, rng, k, w.min_dist, -w.x_dim, w.x_dim, -w.y_dim, w.y_dim)
    L = w.n_landmarks
    for i in range(w.u.shape[1]):
        rng = W.place_randomly(w, e, rng, L + i, w.min_dist, -w.x_dim, w.x_dim, -w.y_dim, w.y_dim)
    for i in range(w.u.shape[1]):
        w.distance_shaping[e, i] = distance_shaping(w, e, i)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: ``collision_reward`` for every other body among the agents and the
    target within 0.005 of the agent (``get_distance``), plus the decrease of its separation
    term (``distance_shaping``).  VMAS's ``done`` is always False."""
    L = w.n_landmarks
    n = w.u.shape[1]
    T = target_body(w)
    zero = type(w.dt)(0.0)
    for i in range(n):
        w.agent_collision_rew[e, i] = zero
    if w.collision_reward != zero:
        for i in range(n):
            if W.distance_at_most(w, e, T, L + i, w.min_collision_distance):
                w.agent_collision_rew[e, i] = w.agent_collision_rew[e, i] + w.collision_reward
            for j in range(i + 1, n):
                if W.distance_at_most(w, e, L + i, L + j, w.min_collision_distance):
                    w.agent_collision_rew[e, i] = w.agent_collision_rew[e, i] + w.collision_reward
                    w.agent_collision_rew[e, j] = w.agent_collision_rew[e, j] + w.collision_reward
    for i in range(n):
        shaping = distance_shaping(w, e, i)
        r = w.distance_shaping[e, i] - shaping
        w.distance_shaping[e, i] = shaping
        w.agent_distance_rew[e, i] = r
        w.reward[e, i] = w.agent_collision_rew[e, i] + r
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), pos - target pos (2), lidar distances to the obstacles (n_lidar_rays)]."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p - W.position(w, e, target_body(w)))
    o = W.write_lidar_distances(out, e, i, o, w, i)


def _collisions(info: dict) -> torch.Tensor:
    return info["agent_collision_rew"].sum(-1)


def _separation(info: dict) -> torch.Tensor:
    return info["agent_distance_rew"].sum(-1)


class Flocking(VmasBase):
    """VMAS 1.5.2's ``flocking``: ``n_agents`` spheres keep about 0.1 from each other and from a
    scripted target that circles the arena, among ``n_obstacles`` fixed round obstacles they see
    through a lidar.

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=4``, ``n_obstacles=5``,
    ``min_dist_between_entities=0.15``, ``n_lidar_rays=12``, ``collision_reward=-0.1``,
    ``dist_shaping_factor=1``) plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``): holonomic spheres of radius 0.05, force
    ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; five substeps of 0.02 s per step, drag
    0.25, contact force 400.  **The target** (VMAS's first agent, ``target``; not a policy
    agent) starts at (0, -1) and is pushed by the force ``(cos(t / 30), sin(t / 30))`` at step
    ``t``; it collides like the agents.  **Obstacles** ``obstacle_0 …``: fixed spheres of radius
    0.1.  At the start the obstacles, then the agents, are placed at random in ``[-1, 1]²`` at
    least ``min_dist_between_entities`` from every body placed before them (the target
    included).  **Observation** ``[pos, vel, pos - target pos, lidar]`` (``6 + n_lidar_rays``):
    ``n_lidar_rays`` readings of the distance (up to 0.2) to the nearest obstacle along each
    ray (the lidar sees the obstacles only, as VMAS's ``entity_filter``).  **Reward**:
    ``collision_reward`` for each other agent or the target within 0.005 of the agent's surface,
    plus the decrease of ``dist_shaping_factor`` times the mean over the other agents and the
    target of ``(distance - 0.1)²``.  **Termination**: never (VMAS's default ``done``);
    truncation at ``max_steps``.  **Info** (per agent, VMAS's): ``agent_collision_rew``,
    ``agent_distance_rew``; the episode metrics ``collision_rew`` and ``distance_rew`` are their
    sums over the agents and the episode.

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``flocking``)
    """

    env_id = "Flocking-v0"
    vmas_scenario = "flocking"
    per_agent_metrics = ("agent_collision_rew", "agent_distance_rew")
    episode_metrics = (
        EpisodeMetric("collision_rew", "the collision rewards of every agent, summed over the episode", _collisions,
                      "sum"),
        EpisodeMetric("distance_rew", "the separation (distance shaping) rewards of every agent, summed over the "
                      "episode", _separation, "sum"),
    )

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    pre_step = pre_step

    def __init__(self, *, n_agents: int = 4, n_obstacles: int = 5, min_dist_between_entities: float = 0.15,
                 n_lidar_rays: int = 12, collision_reward: float = -0.1, dist_shaping_factor: float = 1,
                 **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.n_obstacles = v.check_int("n_obstacles", n_obstacles, minimum=0)
        self.min_dist_between_entities = v.check_float("min_dist_between_entities", min_dist_between_entities,
                                                       low=0.0)
        check_room("min_dist_between_entities", self.min_dist_between_entities,
                   self.n_agents + self.n_obstacles + 1, X_DIM, Y_DIM)
        self.n_lidar_rays = v.check_int("n_lidar_rays", n_lidar_rays, minimum=1)
        self.collision_reward = v.check_float("collision_reward", collision_reward)
        self.dist_shaping_factor = v.check_float("dist_shaping_factor", dist_shaping_factor)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        obstacles = [Body(f"obstacle_{i}", radius=OBSTACLE_RADIUS, color=COLORS["red"])
                     for i in range(self.n_obstacles)]
        target = Body("target", scripted=True, color=COLORS["green"])
        agents = [Body(f"agent_{i}", agent=True, color=COLORS["blue"]) for i in range(self.n_agents)]
        lidars = [Lidar(a.name, n_rays=self.n_lidar_rays, max_range=LIDAR_RANGE,
                        sees=tuple(o.name for o in obstacles)) for a in agents]
        return Layout(bodies=obstacles + [target] + agents, groups=[("agents", [a.name for a in agents])],
                      substeps=5, collision_force=400, lidars=lidars)

    def _obs_dim(self, group: str) -> int:
        return 6 + self.n_lidar_rays

    def _fields(self) -> dict[str, Field]:
        n = self.n_agents
        return {
            "min_dist": param(self.min_dist_between_entities),
            "x_dim": param(X_DIM), "y_dim": param(Y_DIM),
            "desired_distance": param(DESIRED_DISTANCE),
            "min_collision_distance": param(MIN_COLLISION_DISTANCE),
            "collision_reward": param(self.collision_reward),
            "dist_shaping_factor": param(self.dist_shaping_factor),
            "distance_shaping": state("float", n),
            "agent_collision_rew": info("float", n), "agent_distance_rew": info("float", n),
        }
