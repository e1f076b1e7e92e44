"""Pollock-v0: VMAS 1.5.2's debug scenario ``pollock`` (a crowd of spheres, lines and boxes that
agents push about in a walled square: a stress test of the contact physics, without a task)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, param
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import (
    COLORS,
    Body,
    Layout,
    Lidar,
    VmasBase,
    check_room,
)

AGENT_RADIUS = 0.05
LINE_LENGTH = 0.3
BOX_LENGTH, BOX_WIDTH = 0.2, 0.1
WORLD_SEMIDIM = 1.0
MIN_DIST = 0.1
U_MULTIPLIER = 0.7
LIDAR_RAYS, LIDAR_RANGE = 16, 0.5


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: ``spawn_entities_randomly`` of the agents, then the lines, then
    the boxes: each uniform in ``[-1, 1]²``, redrawn until it is at least 0.1 from every body
    placed before it (rotations 0, at rest)."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    L = w.n_landmarks
    n = w.u.shape[1]
    s = w.semidim
    for i in range(n):
        rng = W.place_randomly(w, e, rng, L + i, w.min_dist, -s, s, -s, s)
    for b in range(L):
        rng = W.place_randomly(w, e, rng, b, w.min_dist, -s, s, -s, s)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: 0 for every agent.  VMAS's ``done`` is always False."""
    for i in range(w.u.shape[1]):
        w.reward[e, i] = type(w.dt)(0.0)
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """With ``lidar``: the agent's 16 lidar readings (VMAS's ``measure()``); otherwise VMAS's
    single 0."""
    if w.has_lidar != 0:
        W.write_lidar_distances(out, e, i, 0, w, i)
    else:
        W.write_value(out, e, i, 0, type(w.dt)(0.0))


class Pollock(VmasBase):
    """VMAS 1.5.2's debug scenario ``pollock``: ``n_agents`` small spheres among ``n_lines``
    loose lines and ``n_boxes`` loose boxes in a 2 x 2 square; every body collides with every
    other one.  There is no task (every reward is 0): it shows the contact physics of every
    pair of shapes at work, and is a stress test of it.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=15`` (>= 1),
    ``n_lines=15``, ``n_boxes=15`` (>= 0), ``lidar=False``, ``vectorized_lidar=True`` (VMAS's
    choice between two ways of casting the same rays: accepted, with the same readings either
    way), plus VMAS's environment arguments (``continuous_actions``, ``max_steps``,
    ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``line 0 …`` (length 0.3, mass 1) and ``box 0 …`` (0.2 x
    0.1, mass 1), movable and rotatable landmarks, then the agents ``agent_0 …``, one group
    ``agents``: spheres of radius 0.05, mass 1.  Steps of 0.1 s in 5 substeps, drag 0.25,
    contact stiffness 500, positions clamped to ``[-1, 1]²``.  Start: the agents, then the lines,
    then the boxes, each uniform in ``[-1, 1]²`` at least 0.1 from every body placed before it
    (rotation 0, at rest); a count that cannot fit that far apart is refused.  **Actions**: a
    force in ``[-1, 1]²`` times 0.7 (VMAS's ``u_multiplier``).  Discrete: ``Discrete(9)`` (0,
    -1, +1 per component, times 0.7).  **Observation**: with ``lidar``, 16 lidar readings (range
    0.5, rays from angle 0 round the agent's rotation, seeing every other body: the distance to
    the nearest, 0.5 where none); otherwise VMAS's ``[0]``.  **Reward**: 0.  **Termination**:
    never; truncation at ``max_steps``.  **Info**: none.

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  Our worlds always work every contact pair out (VMAS's batch-wide
    ``collides`` gate: ``docs/vmas.md``).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``pollock``.
    """

    env_id = "Pollock-v0"
    vmas_scenario = "pollock"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 15, n_lines: int = 15, n_boxes: int = 15, lidar: bool = False,
                 vectorized_lidar: bool = True, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.n_lines = v.check_int("n_lines", n_lines, minimum=0)
        self.n_boxes = v.check_int("n_boxes", n_boxes, minimum=0)
        self.lidar = v.check_bool("lidar", lidar)
        self.informative_observation = self.lidar   # without lidar every observation is VMAS's [0]
        self.vectorized_lidar = v.check_bool("vectorized_lidar", vectorized_lidar)
        check_room("n_agents + n_lines + n_boxes", MIN_DIST, self.n_agents + self.n_lines + self.n_boxes, WORLD_SEMIDIM, WORLD_SEMIDIM)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        lines = [Body(f"line {i}", shape="line", length=LINE_LENGTH, movable=True, rotatable=True,
                      color=COLORS["black"]) for i in range(self.n_lines)]
        boxes = [Body(f"box {i}", shape="box", length=BOX_LENGTH, width=BOX_WIDTH, movable=True, rotatable=True,
                      color=COLORS["red"]) for i in range(self.n_boxes)]
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=U_MULTIPLIER,
                       color=COLORS["blue"]) for i in range(self.n_agents)]
        bodies = lines + boxes + agents
        names = tuple(b.name for b in bodies)
        lidars = ([Lidar(a.name, n_rays=LIDAR_RAYS, max_range=LIDAR_RANGE, sees=names) for a in agents]
                  if self.lidar else [])
        return Layout(bodies=bodies, groups=[("agents", [a.name for a in agents])], dt=0.1, substeps=5, drag=0.25,
                      collision_force=500, x_semidim=WORLD_SEMIDIM, y_semidim=WORLD_SEMIDIM, lidars=lidars)

    def _obs_dim(self, group: str) -> int:
        return LIDAR_RAYS if self.lidar else 1

    def _fields(self) -> dict[str, Field]:
        return {"semidim": param(WORLD_SEMIDIM), "min_dist": param(MIN_DIST),
                "has_lidar": param(int(self.lidar), "int")}
