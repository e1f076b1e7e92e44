"""Navigation-v0: VMAS 1.5.2's ``navigation`` scenario."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import Body, Layout, Lidar, VmasBase, check_positive, reached_goals_metric

#: VMAS's navigation colours (the first seven agents; further ones are drawn at random there)
KNOWN_COLORS = [(0.22, 0.49, 0.72), (1.00, 0.50, 0), (0.30, 0.69, 0.29), (0.97, 0.51, 0.75),
                (0.60, 0.31, 0.64), (0.89, 0.10, 0.11), (0.87, 0.87, 0)]
GOAL_RADIUS = 0.05  # VMAS's default Sphere() of the goal landmarks


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: agents spawned at random at least ``min_dist`` apart, then one
    goal position per agent away from the agents and the goals before it, then each agent's goal
    (shared goals: ``goal_index``), then the shaping distances."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    n = w.u.shape[1]
    L = w.n_landmarks
    sx = w.spawn_x
    sy = w.spawn_y
    for i in range(n):
        rng = W.place_randomly(w, e, rng, L + i, w.min_dist, -sx, sx, -sy, sy)
    # the goal positions, drawn for every agent (VMAS draws n even when goals are shared)
    for i in range(n):
        p, rng = W.random_free_position(w, e, rng, w.min_dist, -sx, sx, -sy, sy)
        W.place_at(w, e, i, p)
    for i in range(n):
        g = i
        if w.split_goals != 0:
            g = i // w.agents_with_same_goal
        elif i < w.agents_with_same_goal:
            g = 0
        w.goal_pos[e, i, 0] = w.pos[e, g, 0]
        w.goal_pos[e, i, 1] = w.pos[e, g, 1]
    for i in range(n):
        w.pos[e, i, 0] = w.goal_pos[e, i, 0]
        w.pos[e, i, 1] = w.goal_pos[e, i, 1]
        w.pos_shaping[e, i] = W.distance(W.position(w, e, L + i), W.position(w, e, i)) * w.pos_shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent for all): the shaping reward (each
    agent's decrease in distance to its goal, summed over agents when shared), the final reward
    when every agent is on its goal (within the goal's radius), and -1 per agent collision (a
    pair whose sphere distance is at most 0.005).  Returns VMAS's ``done()``: every agent
    within its own radius of its goal."""
    n = w.u.shape[1]
    L = w.n_landmarks
    zero = type(w.dt)(0.0)
    total = zero
    all_on_goal = bool(True)
    done = bool(True)
    for i in range(n):
        d = W.distance(W.position(w, e, L + i), W.position(w, e, i))
        if not (d < type(w.dt)(w.goal_radius)):
            all_on_goal = False
        if not (d < w.radius[L + i]):
            done = False
        shaping = d * w.pos_shaping_factor
        r = w.pos_shaping[e, i] - shaping
        w.pos_shaping[e, i] = shaping
        w.agent_pos_rew[e, i] = r
        total = total + r
        w.agent_collisions[e, i] = zero
    final = zero
    if all_on_goal:
        final = w.final_reward
    if w.collisions != 0:
        for i in range(n):
            for j in range(i):
                # VMAS's get_distance(a, b) <= 0.005 (its batch-wide collides gate: world.py)
                centre = W.distance(W.position(w, e, L + i), W.position(w, e, L + j))
                if centre - w.radius[L + i] - w.radius[L + j] <= w.min_collision_distance:
                    w.agent_collisions[e, i] = w.agent_collisions[e, i] + w.agent_collision_penalty
                    w.agent_collisions[e, j] = w.agent_collisions[e, j] + w.agent_collision_penalty
    for i in range(n):
        pos_rew = w.agent_pos_rew[e, i]
        if w.shared_rew != 0:
            pos_rew = total
        w.pos_rew[e, i] = pos_rew
        w.final_rew[e, i] = final
        w.reward[e, i] = pos_rew + final + w.agent_collisions[e, i]
    W.record_reached(w, e, done)
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos(2), vel(2), pos - goal (2; every agent's goal with observe_all_goals),
    lidar: range - reading (n_lidar_rays, with collisions)]."""
    L = w.n_landmarks
    b = L + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    if w.observe_all_goals != 0:
        for j in range(w.u.shape[1]):
            o = W.write_vec(out, e, i, o, p - W.position(w, e, j))
    else:
        o = W.write_vec(out, e, i, o, p - W.position(w, e, i))
    if w.collisions != 0:
        o = W.write_lidar(out, e, i, o, w, i)


class Navigation(VmasBase):
    """VMAS 1.5.2's ``navigation``: ``n_agents`` spheres each drive to its own goal (or a shared
    one), seeing the others through a lidar.

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=4``, ``collisions=True``,
    ``world_spawning_x/y=1``, ``enforce_bounds=False``, ``agents_with_same_goal=1``,
    ``split_goals=False``, ``observe_all_goals=False``, ``lidar_range=0.35``,
    ``agent_radius=0.1``, ``comms_range=0`` (drawing only), ``n_lidar_rays=12``,
    ``shared_rew=True``, ``pos_shaping_factor=1``, ``final_reward=0.01``,
    ``agent_collision_penalty=-1``) plus VMAS's environment arguments (``continuous_actions``,
    ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``, VMAS's and TorchRL's ``VmasEnv`` name):
    holonomic spheres, force ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; two substeps of
    0.05 s per step, drag 0.25.  **Observation** ``[pos, vel, pos - goal, lidar]``: the goal of
    every agent with ``observe_all_goals``, and with ``collisions`` ``n_lidar_rays`` readings
    ``lidar_range - distance`` to the nearest other agent along each ray.  **Reward**: the
    decrease of the distance to the goal (summed over agents with ``shared_rew``), plus
    ``final_reward`` while every agent is within 0.05 of its goal, plus
    ``agent_collision_penalty`` for each other agent touching it.  **Termination**: every agent
    within its own radius of its goal (VMAS's ``done``); truncation at ``max_steps``.
    **Info** (per agent): ``pos_rew``, ``final_rew``, ``agent_collisions`` (VMAS's), and
    ``reached_goals`` (per world: 1.0 where VMAS's done holds).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``navigation``.
    """

    env_id = "Navigation-v0"
    vmas_scenario = "navigation"
    per_agent_metrics = ("pos_rew", "final_rew", "agent_collisions")
    episode_metrics = (reached_goals_metric(),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, collisions: bool = True, world_spawning_x: float = 1,
                 world_spawning_y: float = 1, enforce_bounds: bool = False, agents_with_same_goal: int = 1,
                 split_goals: bool = False, observe_all_goals: bool = False, lidar_range: float = 0.35,
                 agent_radius: float = 0.1, comms_range: float = 0, n_lidar_rays: int = 12,
                 shared_rew: bool = True, pos_shaping_factor: float = 1, final_reward: float = 0.01,
                 agent_collision_penalty: float = -1, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.collisions = v.check_bool("collisions", collisions)
        self.world_spawning_x = check_positive("world_spawning_x", world_spawning_x)
        self.world_spawning_y = check_positive("world_spawning_y", world_spawning_y)
        self.enforce_bounds = v.check_bool("enforce_bounds", enforce_bounds)
        self.agents_with_same_goal = v.check_int("agents_with_same_goal", agents_with_same_goal, minimum=1)
        if self.agents_with_same_goal > self.n_agents:
            raise ValueError(f"agents_with_same_goal: expected 1..n_agents={self.n_agents}, "
                             f"got {self.agents_with_same_goal}")
        if self.agents_with_same_goal > 1 and self.collisions:
            raise ValueError("agents_with_same_goal: agents that share a goal cannot collide (VMAS); "
                             "pass collisions=False")
        self.split_goals = v.check_bool("split_goals", split_goals)
        if self.split_goals and not (self.n_agents % 2 == 0 and self.agents_with_same_goal == self.n_agents // 2):
            raise ValueError("split_goals: needs an even n_agents and agents_with_same_goal == n_agents // 2 "
                             f"(VMAS), got n_agents={self.n_agents}, agents_with_same_goal="
                             f"{self.agents_with_same_goal}")
        self.observe_all_goals = v.check_bool("observe_all_goals", observe_all_goals)
        self.lidar_range = check_positive("lidar_range", lidar_range)
        self.agent_radius = check_positive("agent_radius", agent_radius)
        self.comms_range = v.check_float("comms_range", comms_range, low=0.0)
        self.n_lidar_rays = v.check_int("n_lidar_rays", n_lidar_rays, minimum=1)
        self.shared_rew = v.check_bool("shared_rew", shared_rew)
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.final_reward = v.check_float("final_reward", final_reward)
        self.agent_collision_penalty = v.check_float("agent_collision_penalty", agent_collision_penalty)
        self.min_distance_between_entities = self.agent_radius * 2 + 0.05
        self.min_collision_distance = 0.005
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n = self.n_agents
        colors = [KNOWN_COLORS[i % len(KNOWN_COLORS)] for i in range(n)]
        goals = [Body(f"goal {i}", collide=False, radius=GOAL_RADIUS, color=colors[i]) for i in range(n)]
        agents = [Body(f"agent_{i}", agent=True, collide=self.collisions, radius=self.agent_radius,
                       color=colors[i]) for i in range(n)]
        lidars = ([Lidar(f"agent_{i}", n_rays=self.n_lidar_rays, max_range=self.lidar_range,
                         sees=tuple(a.name for a in agents)) for i in range(n)] if self.collisions else [])
        bound = self.enforce_bounds
        return Layout(bodies=goals + agents, groups=[("agents", [a.name for a in agents])], substeps=2,
                      x_semidim=self.world_spawning_x if bound else None,
                      y_semidim=self.world_spawning_y if bound else None, lidars=lidars)

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * (self.n_agents if self.observe_all_goals else 1) + (self.n_lidar_rays if self.collisions else 0)

    def _fields(self) -> dict[str, Field]:
        n = self.n_agents
        return {
            "spawn_x": param(self.world_spawning_x), "spawn_y": param(self.world_spawning_y),
            "min_dist": param(self.min_distance_between_entities),
            "agents_with_same_goal": param(self.agents_with_same_goal, "int"),
            "split_goals": param(int(self.split_goals), "int"),
            "observe_all_goals": param(int(self.observe_all_goals), "int"),
            "collisions": param(int(self.collisions), "int"), "shared_rew": param(int(self.shared_rew), "int"),
            "goal_radius": param(GOAL_RADIUS), "pos_shaping_factor": param(self.pos_shaping_factor),
            "final_reward": param(self.final_reward), "agent_collision_penalty": param(self.agent_collision_penalty),
            "min_collision_distance": param(self.min_collision_distance),
            "pos_shaping": state("float", n),
            "goal_pos": Field("scratch", "float", (n, 2)),
            "agent_pos_rew": Field("scratch", "float", (n,)),
            "pos_rew": info("float", n), "final_rew": info("float", n), "agent_collisions": info("float", n),
            "reached_goals": info("float"),
        }
