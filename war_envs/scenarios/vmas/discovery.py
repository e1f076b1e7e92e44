"""Discovery-v0: VMAS 1.5.2's ``discovery`` scenario (agents find and cover targets, two at a
time, seen through a lidar that sees only targets; covered targets respawn elsewhere)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, scratch, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, Lidar, VmasBase, check_positive, check_room

AGENT_RADIUS = 0.05
TARGET_RADIUS = AGENT_RADIUS
MIN_COLLISION_DISTANCE = 0.005
#: the agent lidar's first ray (VMAS: angle_start=0.05, angle_end=2 pi + 0.05)
AGENT_LIDAR_START = 0.05


@wp.func(inline=True)
def covers(w: Any, e: int, i: int, k: int):
    """Agent i is within ``covering_range`` of target k (VMAS's ``cdist < covering_range``)."""
    return W.distance(W.position(w, e, W.body_of(w, i)), W.position(w, e, k)) < w.covering_range


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: no target covered yet; the targets, then the agents, at random
    in ``[-x_semidim, x_semidim] x [-y_semidim, y_semidim]`` at least
    ``min_dist_between_entities`` from every body placed before them."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    L = w.n_landmarks
    for k in range(L):
        w.all_time_covered_targets[e, k] = False
    for b in range(w.pos.shape[1]):
        rng = W.place_randomly(w, e, rng, b, w.min_dist, -w.x_semidim, w.x_semidim, -w.y_semidim, w.y_semidim)


@wp.func(inline=True)
def move_covered_targets(w: Any, e: int):
    """VMAS's last-agent step of ``reward``.  ``targets_respawn``: each covered target, in
    order, to a random point of the arena at least ``min_dist_between_entities`` from every
    agent and every other target (those moved before it at their new places); else each
    covered target counts as covered for good and goes out of play, to a uniform point of
    ``[-1000 x_semidim, -10 x_semidim]^2``.  The draws come from the world's stream of this step
    (VMAS: torch's global generator)."""
    L = w.n_landmarks
    rng = W.step_stream(w, e, 0)
    if w.targets_respawn != 0:
        for b in range(w.pos.shape[1]):
            w.placed[e, b] = 1
        for k in range(L):
            if w.covered[e, k] != 0:
                w.placed[e, k] = 0
                p, rng = W.random_free_position(w, e, rng, w.min_dist, -w.x_semidim, w.x_semidim,
                                                -w.y_semidim, w.y_semidim)
                W.set_position(w, e, k, p)
                w.placed[e, k] = 1
    else:
        lo = type(w.dt)(-1000.0) * w.x_semidim
        hi = type(w.dt)(-10.0) * w.x_semidim
        for k in range(L):
            if w.covered[e, k] != 0:
                w.all_time_covered_targets[e, k] = True
                x = W.uniform(wp.randf(rng), lo, hi)
                y = W.uniform(wp.randf(rng), lo, hi)
                W.set_position(w, e, k, wp.vector(x, y))


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: a target is covered when at least ``agents_per_target`` agents are
    within ``covering_range`` of it; each agent earns ``covering_rew_coeff`` per covered target
    it is within range of (``shared_reward``: every agent gets the sum over agents, halved when
    nonzero), plus ``agent_collision_penalty`` per other agent within 0.005 of it, plus
    ``time_penalty``.  Then the covered targets move (``move_covered_targets``).  Returns VMAS's
    ``done()``: every target covered for good (never with ``targets_respawn``)."""
    L = w.n_landmarks
    n = w.u.shape[1]
    zero = type(w.dt)(0.0)
    n_covered = int(0)
    for k in range(L):
        count = int(0)
        for i in range(n):
            if covers(w, e, i, k):
                count = count + 1
        w.covered[e, k] = 0
        if count >= w.agents_per_target:
            w.covered[e, k] = 1
            n_covered = n_covered + 1
    for i in range(n):
        w.targets_covered[e, i] = n_covered
    shared = zero
    for i in range(n):
        count = int(0)
        for k in range(L):
            if w.covered[e, k] != 0 and covers(w, e, i, k):
                count = count + 1
        w.agent_covering[e, i] = zero + type(zero)(float(count)) * w.covering_rew_coeff
        shared = shared + w.agent_covering[e, i]
    if shared != zero:
        shared = shared / type(zero)(2.0)
    for i in range(n):
        coll = zero
        for j in range(n):
            if j != i:
                if W.get_distance(w, e, W.body_of(w, j), W.body_of(w, i)) < w.min_collision_distance:
                    coll = coll + w.agent_collision_penalty
        w.collision_rew[e, i] = coll
        cover = w.agent_covering[e, i]
        if w.shared_reward != 0:
            cover = shared
        w.covering_reward[e, i] = cover
        w.reward[e, i] = (coll + cover) + w.time_penalty
    move_covered_targets(w, e)
    done = bool(True)
    for k in range(L):
        if not w.all_time_covered_targets[e, k]:
            done = False
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), target lidar distances (n_lidar_rays_entities), with
    ``use_agent_lidar`` agent lidar distances (n_lidar_rays_agents)]."""
    b = W.body_of(w, i)
    o = W.write_vec(out, e, i, 0, W.position(w, e, b))
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    per_agent = 1 + w.use_agent_lidar
    o = W.write_lidar_distances(out, e, i, o, w, per_agent * i)
    if w.use_agent_lidar != 0:
        o = W.write_lidar_distances(out, e, i, o, w, per_agent * i + 1)


def _targets_covered(info: dict) -> torch.Tensor:
    return info["targets_covered"][:, 0]


class Discovery(VmasBase):
    """VMAS 1.5.2's ``discovery``: ``n_agents`` spheres search the arena for ``n_targets``
    targets, seen through a lidar that sees only targets; a target is covered while
    ``agents_per_target`` agents are within ``covering_range`` of it, and then respawns elsewhere
    (or, without ``targets_respawn``, leaves play until every target has been covered).

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=5``, ``n_targets=7``,
    ``x_semidim=1``, ``y_semidim=1``, ``min_dist_between_entities=0.2``, ``lidar_range=0.35``,
    ``covering_range=0.25``, ``use_agent_lidar=False``, ``n_lidar_rays_entities=15``,
    ``n_lidar_rays_agents=12``, ``agents_per_target=2``, ``targets_respawn=True``,
    ``shared_reward=False``, ``agent_collision_penalty=0``, ``covering_rew_coeff=1.0``,
    ``time_penalty=0``) plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``): holonomic spheres of radius 0.05, force
    ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; two substeps of 0.05 s per step, drag
    0.25, contact force 500, positions kept in ``[-x_semidim, x_semidim] x [-y_semidim,
    y_semidim]``.  **Targets** ``target_0 …``: fixed spheres of radius 0.05 the agents collide
    with.  At the start the targets, then the agents, are placed at random in the arena at least
    ``min_dist_between_entities`` from every body placed before them.  **Observation**
    ``[pos, vel, target lidar]`` and with ``use_agent_lidar`` ``[…, agent lidar]``: the distance
    (up to ``lidar_range``) to the nearest target along each of ``n_lidar_rays_entities`` rays
    from angle 0, and to the nearest other agent along each of ``n_lidar_rays_agents`` rays from
    angle 0.05 (VMAS's ``entity_filter`` by name).  **Reward**: ``covering_rew_coeff`` for each
    covered target the agent is within ``covering_range`` of (``shared_reward``: the sum of
    every agent's, halved when nonzero, as VMAS), plus ``agent_collision_penalty`` for each
    other agent within 0.005 of it, plus ``time_penalty``.  After the rewards, covered targets
    respawn at random at least ``min_dist_between_entities`` from every agent and other target
    (without ``targets_respawn``: they go out of play, far outside the arena).
    **Termination**: without ``targets_respawn``, every target covered once (VMAS's ``done``);
    truncation at ``max_steps``.  **Info** (VMAS's): ``covering_reward`` and ``collision_rew``
    per agent, and ``targets_covered`` (the targets covered this step, the same for every agent,
    as VMAS's); the episode metric ``targets_covered`` is its sum over the episode.

    **Where this differs from VMAS.**  The respawn and out-of-play positions are drawn from
    the world's own stream of the step (VMAS: torch's global generator; same law, other
    numbers).  VMAS finds the targets' coverage with ``torch.cdist``, which above 25 agents or
    targets switches to a matrix-product formula with a larger rounding error; the distances
    here are ``vector_norm``'s, so a distance within that error of ``covering_range`` can count
    differently.

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``discovery``)
    """

    env_id = "Discovery-v0"
    vmas_scenario = "discovery"
    per_agent_metrics = ("covering_reward", "collision_rew", "targets_covered")
    episode_metrics = (
        EpisodeMetric("targets_covered", "the number of target coverings (targets covered each step, summed over "
                      "the episode)", _targets_covered, "sum"),
    )
    progress_metric = "targets_covered"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 5, n_targets: int = 7, x_semidim: float = 1, y_semidim: float = 1,
                 min_dist_between_entities: float = 0.2, lidar_range: float = 0.35, covering_range: float = 0.25,
                 use_agent_lidar: bool = False, n_lidar_rays_entities: int = 15, n_lidar_rays_agents: int = 12,
                 agents_per_target: int = 2, targets_respawn: bool = True, shared_reward: bool = False,
                 agent_collision_penalty: float = 0, covering_rew_coeff: float = 1.0, time_penalty: float = 0,
                 **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.n_targets = v.check_int("n_targets", n_targets, minimum=1)
        self.x_semidim = check_positive("x_semidim", x_semidim)
        self.y_semidim = check_positive("y_semidim", y_semidim)
        self.min_dist_between_entities = v.check_float("min_dist_between_entities", min_dist_between_entities,
                                                       low=0.0)
        check_room("min_dist_between_entities", self.min_dist_between_entities, self.n_agents + self.n_targets,
                   self.x_semidim, self.y_semidim)
        self.lidar_range = check_positive("lidar_range", lidar_range)
        self.covering_range = v.check_float("covering_range", covering_range, low=0.0)
        self.use_agent_lidar = v.check_bool("use_agent_lidar", use_agent_lidar)
        self.n_lidar_rays_entities = v.check_int("n_lidar_rays_entities", n_lidar_rays_entities, minimum=1)
        self.n_lidar_rays_agents = v.check_int("n_lidar_rays_agents", n_lidar_rays_agents, minimum=1)
        self.agents_per_target = v.check_int("agents_per_target", agents_per_target, minimum=0)
        self.targets_respawn = v.check_bool("targets_respawn", targets_respawn)
        self.shared_reward = v.check_bool("shared_reward", shared_reward)
        self.agent_collision_penalty = v.check_float("agent_collision_penalty", agent_collision_penalty)
        self.covering_rew_coeff = v.check_float("covering_rew_coeff", covering_rew_coeff)
        self.time_penalty = v.check_float("time_penalty", time_penalty)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        targets = [Body(f"target_{k}", radius=TARGET_RADIUS, color=COLORS["green"]) for k in range(self.n_targets)]
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        lidars = []
        for a in agents:
            lidars.append(Lidar(a.name, n_rays=self.n_lidar_rays_entities, max_range=self.lidar_range,
                                sees=tuple(t.name for t in targets)))
            if self.use_agent_lidar:
                lidars.append(Lidar(a.name, n_rays=self.n_lidar_rays_agents, max_range=self.lidar_range,
                                    sees=tuple(b.name for b in agents), angle_start=AGENT_LIDAR_START,
                                    angle_end=2 * math.pi + AGENT_LIDAR_START))
        return Layout(bodies=targets + agents, groups=[("agents", [a.name for a in agents])], substeps=2,
                      collision_force=500, x_semidim=self.x_semidim, y_semidim=self.y_semidim, lidars=lidars)

    def _obs_dim(self, group: str) -> int:
        return 4 + self.n_lidar_rays_entities + (self.n_lidar_rays_agents if self.use_agent_lidar else 0)

    def _fields(self) -> dict[str, Field]:
        n, m = self.n_agents, self.n_targets
        return {
            "min_dist": param(self.min_dist_between_entities),
            "covering_range": param(self.covering_range),
            "agents_per_target": param(self.agents_per_target, "int"),
            "targets_respawn": param(int(self.targets_respawn), "int"),
            "shared_reward": param(int(self.shared_reward), "int"),
            "use_agent_lidar": param(int(self.use_agent_lidar), "int"),
            "agent_collision_penalty": param(self.agent_collision_penalty),
            "covering_rew_coeff": param(float(self.covering_rew_coeff)),
            "time_penalty": param(self.time_penalty),
            "min_collision_distance": param(MIN_COLLISION_DISTANCE),
            "all_time_covered_targets": state("bool", m),
            "covered": scratch("int", m),
            "agent_covering": scratch("float", n),
            "covering_reward": info("float", n), "collision_rew": info("float", n),
            "targets_covered": info("int", n),
        }
