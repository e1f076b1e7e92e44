"""Transport-v0: VMAS 1.5.2's ``transport`` scenario (agents push heavy box packages onto a goal)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive, reached_goals_metric

SHAPING_FACTOR = 100
WORLD_SEMIDIM = 1
AGENT_RADIUS = 0.03
GOAL_RADIUS = 0.15


@wp.func(inline=True)
def on_goal(w: Any, e: int, k: int):
    """VMAS's ``is_overlapping(package k, goal)`` (a box and a sphere)."""
    return W.is_overlapping(w, e, 1 + k, 0)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the agents spawned at random in ``[-1, 1]²`` at least 0.06
    apart, then the goal and the packages (in that order) at least ``min_dist`` (a package's
    circumscribed radius + the goal's radius + 0.01) from the agents and from each other; each
    package's on-goal flag and shaping distance."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    n = w.u.shape[1]
    L = w.n_landmarks
    s = w.spawn
    for i in range(n):
        rng = W.place_randomly(w, e, rng, L + i, w.agent_min_dist, -s, s, -s, s)
    for b in range(L):
        rng = W.place_randomly(w, e, rng, b, w.min_dist, -s, s, -s, s)
    for k in range(L - 1):
        w.on_goal[e, k] = on_goal(w, e, k)
        w.global_shaping[e, k] = W.distance(W.position(w, e, 1 + k), W.position(w, e, 0)) * w.shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by all): for every package not on
    the goal, 100 times the decrease of its distance to the goal (in package order).  Returns
    VMAS's ``done()``: every package on the goal."""
    n = w.u.shape[1]
    n_packages = w.n_landmarks - 1
    zero = type(w.dt)(0.0)
    rew = zero
    done = bool(True)
    count = zero
    for k in range(n_packages):
        d = W.distance(W.position(w, e, 1 + k), W.position(w, e, 0))
        flag = on_goal(w, e, k)
        w.on_goal[e, k] = flag
        shaping = d * w.shaping_factor
        if not flag:
            rew = rew + (w.global_shaping[e, k] - shaping)
            done = False
        else:
            count = count + type(zero)(1.0)
        w.global_shaping[e, k] = shaping
    for i in range(n):
        w.reward[e, i] = rew
    w.packages_on_goal[e] = count
    W.record_reached(w, e, done)
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), then per package: package - goal (2), package - pos (2), package vel
    (2), on goal (1)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    goal = W.position(w, e, 0)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    for k in range(w.n_landmarks - 1):
        q = W.position(w, e, 1 + k)
        o = W.write_vec(out, e, i, o, q - goal)
        o = W.write_vec(out, e, i, o, q - p)
        o = W.write_vec(out, e, i, o, W.velocity(w, e, 1 + k))
        o = W.write_flag(out, e, i, o, w.on_goal[e, k])


class Transport(VmasBase):
    """VMAS 1.5.2's ``transport``: ``n_agents`` spheres push ``n_packages`` heavy boxes onto one
    goal (a disc of radius 0.15).

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=4``, ``n_packages=1``,
    ``package_width=0.15``, ``package_length=0.15`` and ``package_mass=50``, plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``goal`` (no collisions), ``package 0 …`` (movable boxes
    that do not rotate, mass ``package_mass``), then the agents.  Positions are kept in
    ``[-s, s]²`` with ``s = 1 + 0.06 + max(package_length, package_width)``.

    **Agents** ``agent_0 …`` (one group ``agents``): spheres of radius 0.03, mass 1, force
    ``0.6 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one step of 0.1 s, drag 0.25.
    Agents, goal and packages start at random in ``[-1, 1]²`` (agents at least 0.06 apart; goal and
    packages at least a package's circumscribed radius + 0.16 from everything placed before).
    **Observation** (``4 + 7 n_packages``) ``[pos, vel]`` then per package ``[package - goal,
    package - pos, package vel, on goal]``.  **Reward** (shared): 100 times the decrease of the
    distance to the goal of every package not on it (a package is on the goal while its box
    overlaps the goal's disc).  **Termination**: every package on the goal (VMAS's ``done``);
    truncation at ``max_steps``.  **Info**: VMAS's scenario has none; per world
    ``packages_on_goal`` (how many) and ``reached_goals`` (1.0 where VMAS's done holds), the
    ``success`` metric.

    **Where this differs from VMAS.**  Nothing in a world's dynamics, rewards or observations.
    VMAS's spawning redraws every world of the batch until all of them are free (each world keeps
    its first acceptable draw); each world here redraws from its own stream: the same
    distribution, compared in the tests.  Too many or too large packages for the arena make the
    spawning loop forever, as VMAS's does (VMAS warns after 50 000 tries).

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``transport``)
    """

    env_id = "Transport-v0"
    vmas_scenario = "transport"
    episode_metrics = (reached_goals_metric("1 if every package was on the goal (VMAS's done) during the episode"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, n_packages: int = 1, package_width: float = 0.15,
                 package_length: float = 0.15, package_mass: float = 50, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.n_packages = v.check_int("n_packages", n_packages, minimum=1)
        self.package_width = check_positive("package_width", package_width)
        self.package_length = check_positive("package_length", package_length)
        self.package_mass = check_positive("package_mass", package_mass)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.6, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        goal = Body("goal", collide=False, radius=GOAL_RADIUS, color=COLORS["light_green"])
        packages = [Body(f"package {i}", shape="box", length=self.package_length, width=self.package_width,
                         movable=True, mass=self.package_mass, color=COLORS["red"]) for i in range(self.n_packages)]
        semidim = WORLD_SEMIDIM + 2 * AGENT_RADIUS + max(self.package_length, self.package_width)
        return Layout(bodies=[goal] + packages + agents, groups=[("agents", [a.name for a in agents])],
                      x_semidim=semidim, y_semidim=semidim)

    def _obs_dim(self, group: str) -> int:
        return 4 + 7 * self.n_packages

    def _fields(self) -> dict[str, Field]:
        m = self.n_packages
        package = self.layout.bodies[1]
        return {
            "spawn": param(float(WORLD_SEMIDIM)),
            "agent_min_dist": param(AGENT_RADIUS * 2),
            "min_dist": param(package.circumscribed_radius() + GOAL_RADIUS + 0.01),
            "shaping_factor": param(float(SHAPING_FACTOR)),
            "global_shaping": state("float", m),
            "on_goal": state("bool", m),
            "packages_on_goal": info("float"), "reached_goals": info("float"),
        }
