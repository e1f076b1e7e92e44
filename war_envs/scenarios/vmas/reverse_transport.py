"""ReverseTransport-v0: VMAS 1.5.2's ``reverse_transport`` scenario (agents inside a hollow box
package push it onto a goal from within)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import (
    COLORS,
    Body,
    Layout,
    VmasBase,
    check_positive,
    reached_goals_metric,
)

SHAPING_FACTOR = 100
AGENT_RADIUS = 0.03
GOAL_RADIUS = 0.09
GOAL = 0  # body indices (VMAS's entity order: the goal, the package, then the agents)
PACKAGE = 1


@wp.func(inline=True)
def on_goal(w: Any, e: int):
    """VMAS's ``is_overlapping(package, goal)`` (a box and a sphere)."""
    return W.is_overlapping(w, e, PACKAGE, GOAL)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the package uniform in [-1, 1]² (x, then y), every agent at a
    uniform offset from it inside the package (x in ``±(package_length / 2 - 0.03)``, then y in
    ``±(package_width / 2 - 0.03)``), then the goal uniform in [-1, 1]²; the shaping value
    ``100 |package - goal|``."""
    rng = W.episode_stream(w, e)
    one = type(w.dt)(1.0)
    px = W.uniform(wp.randf(rng), -one, one)
    py = W.uniform(wp.randf(rng), -one, one)
    W.set_position(w, e, PACKAGE, wp.vector(px, py))
    L = w.n_landmarks
    for i in range(w.u.shape[1]):
        ox = W.uniform(wp.randf(rng), -w.spawn_x, w.spawn_x)
        oy = W.uniform(wp.randf(rng), -w.spawn_y, w.spawn_y)
        W.set_position(w, e, L + i, wp.vector(ox + px, oy + py))
    gx = W.uniform(wp.randf(rng), -one, one)
    gy = W.uniform(wp.randf(rng), -one, one)
    W.set_position(w, e, GOAL, wp.vector(gx, gy))
    w.global_shaping[e] = W.distance(W.position(w, e, PACKAGE), W.position(w, e, GOAL)) * w.shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by all): while the package is off
    the goal, 100 times the decrease of its distance to the goal (VMAS adds the shaping
    difference a second time after updating it: that second term is exactly 0).  Returns VMAS's
    ``done()``: the package on the goal."""
    d = W.distance(W.position(w, e, PACKAGE), W.position(w, e, GOAL))
    flag = on_goal(w, e)
    shaping = d * w.shaping_factor
    rew = type(w.dt)(0.0)
    if not flag:
        rew = rew + (w.global_shaping[e] - shaping)
    w.global_shaping[e] = shaping
    for i in range(w.u.shape[1]):
        w.reward[e, i] = rew
    w.dist_to_goal[e] = d
    W.record_reached(w, e, flag)
    return flag


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), package vel (2), package - pos (2), package - goal (2)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    q = W.position(w, e, PACKAGE)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, W.velocity(w, e, PACKAGE))
    o = W.write_vec(out, e, i, o, q - p)
    o = W.write_vec(out, e, i, o, q - W.position(w, e, GOAL))


def _dist_to_goal(info: dict) -> torch.Tensor:
    return info["dist_to_goal"]


class ReverseTransport(VmasBase):
    """VMAS 1.5.2's ``reverse_transport``: ``n_agents`` spheres enclosed in a large hollow box
    (the package) push it from inside onto a goal.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=4``, ``package_width=0.6``,
    ``package_length=0.6`` and ``package_mass=50``, plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).  The package must be at least 0.06 long and wide (VMAS's
    spawning draws agents' offsets in ``±(size / 2 - 0.03)``, and torch refuses an empty range).

    **Bodies** (VMAS's entity order): ``goal`` (a disc of radius 0.09, no collisions), the package
    (a hollow box of ``package_length`` along x by ``package_width``, mass ``package_mass``,
    movable, not rotating; VMAS names it ``package {n_agents - 1}``, its loop variable's last
    value, and so do we), then the agents.  World: 5 substeps of one 0.1 s step, collision force
    500, contact margin 6e-3, drag 0.25, no arena bounds.

    **Agents** ``agent_0 …`` (one group ``agents``): spheres of radius 0.03, mass 1, force
    ``0.5 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``.  They touch the package's
    walls from inside (a hollow box's contact pushes a sphere away from its closest wall point)
    and each other.  **Start**: the package uniform in ``[-1, 1]²``, every agent uniform inside it
    (offsets in ``±(package_length / 2 - 0.03) × ±(package_width / 2 - 0.03)``, agents may
    overlap), the goal uniform in ``[-1, 1]²`` (it may start under the package).
    **Observation** (10) ``[pos, vel, package vel, package - pos, package - goal]``.
    **Reward** (shared): while the package is off the goal, 100 times the decrease of its distance
    to the goal (0 while on it).  **Termination**: the package on the goal (its box overlaps the
    goal's disc: VMAS's ``done``); truncation at ``max_steps``.  **Info** (per world, ours: VMAS's
    is empty): ``dist_to_goal`` (the package's distance to the goal) and ``reached_goals`` (1.0
    where VMAS's done holds); episode metrics ``success`` and ``final_dist_to_goal``.

    **Where this differs from VMAS.**  Nothing in a world's dynamics, rewards, observations or
    dones.  The start draws other random numbers than VMAS's (each world from its own stream):
    the same distribution, compared in the tests.  VMAS recolours the package green while it is
    on the goal; pictures here keep it red.

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``reverse_transport``)
    """

    env_id = "ReverseTransport-v0"
    vmas_scenario = "reverse_transport"
    episode_metrics = (
        reached_goals_metric("1 if the package was on the goal (VMAS's done) during the episode"),
        EpisodeMetric("final_dist_to_goal", "the package's distance to the goal at the episode's last step",
                      _dist_to_goal, "last"),
    )
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, package_width: float = 0.6, package_length: float = 0.6,
                 package_mass: float = 50, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.package_width = check_positive("package_width", package_width)
        self.package_length = check_positive("package_length", package_length)
        self.package_mass = check_positive("package_mass", package_mass)
        for name, size in (("package_length", self.package_length), ("package_width", self.package_width)):
            if not -size / 2 + AGENT_RADIUS <= size / 2 - AGENT_RADIUS:  # VMAS's uniform_ bounds
                raise ValueError(f"{name}: expected at least {2 * AGENT_RADIUS} (the agents spawn inside "
                                 f"the package), got {size}")
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.5, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        goal = Body("goal", collide=False, radius=GOAL_RADIUS, color=COLORS["light_green"])
        package = Body(f"package {self.n_agents - 1}", shape="box", length=self.package_length,
                       width=self.package_width, hollow=True, movable=True, mass=self.package_mass,
                       color=COLORS["red"])
        return Layout(bodies=[goal, package] + agents, groups=[("agents", [a.name for a in agents])],
                      substeps=5, collision_force=500.0, contact_margin=6e-3)

    def _obs_dim(self, group: str) -> int:
        return 10

    def _fields(self) -> dict[str, Field]:
        return {
            # VMAS's uniform_ bounds of the agents' offsets, Python floats as VMAS computes them
            "spawn_x": param(self.package_length / 2 - AGENT_RADIUS),
            "spawn_y": param(self.package_width / 2 - AGENT_RADIUS),
            "shaping_factor": param(float(SHAPING_FACTOR)),
            "global_shaping": state("float"),
            "dist_to_goal": info("float"), "reached_goals": info("float"),
        }
