"""Balance-v0: VMAS 1.5.2's ``balance`` scenario (agents carry a plank with a package on it to the
package's goal, under gravity, without letting the plank or the package touch the floor)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

LINE_LENGTH = 0.8
AGENT_RADIUS = 0.03
PACKAGE_RADIUS = 0.05  # VMAS's default Sphere()
SHAPING_FACTOR = 100
FALL_REWARD = -10
Y_SEMIDIM = 1
GRAVITY = (0.0, -0.05)
FLOOR_LENGTH, FLOOR_WIDTH = 10, 1


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the goal x ~ U(-1, 1), y ~ U(0, y_semidim); the plank's x ~
    U(-0.6, 0.6) at height -0.94, rotation 0; the package's x offset on the plank ~
    U(-0.35, 0.35) (0 without ``random_package_pos_on_line``) at height +0.05 above it; the
    agents evenly under the plank (0.06 below its centre line); the floor; the shaping
    distance."""
    rng = W.episode_stream(w, e)
    n = w.u.shape[1]
    L = w.n_landmarks
    gx = W.uniform(wp.randf(rng), -w.goal_x_hi, w.goal_x_hi)
    gy = W.uniform(wp.randf(rng), type(w.dt)(0.0), w.y_semidim)
    lx = W.uniform(wp.randf(rng), -w.line_x_hi, w.line_x_hi)
    ly = w.line_y
    px = W.uniform(wp.randf(rng), -w.package_x_hi, w.package_x_hi)
    for i in range(n):
        w.pos[e, L + i, 0] = lx + w.agent_dx[i]
        w.pos[e, L + i, 1] = ly + w.agent_dy
    w.pos[e, 2, 0] = lx
    w.pos[e, 2, 1] = ly
    w.pos[e, 0, 0] = gx
    w.pos[e, 0, 1] = gy
    w.pos[e, 1, 0] = lx + px
    w.pos[e, 1, 1] = ly + w.package_dy
    w.pos[e, 3, 0] = type(w.dt)(0.0)
    w.pos[e, 3, 1] = w.floor_y
    w.global_shaping[e] = W.distance(W.position(w, e, 1), W.position(w, e, 0)) * w.shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by all): ``fall_reward`` (-10)
    while the plank or the package overlaps the floor, plus 100 times the decrease of the
    package's distance to its goal.  Returns VMAS's ``done()``: on the ground, or the package
    overlapping its goal."""
    n = w.u.shape[1]
    zero = type(w.dt)(0.0)
    on_the_ground = W.is_overlapping(w, e, 2, 3) or W.is_overlapping(w, e, 1, 3)
    ground = zero
    if on_the_ground:
        ground = w.fall_reward
    shaping = W.distance(W.position(w, e, 1), W.position(w, e, 0)) * w.shaping_factor
    pos = w.global_shaping[e] - shaping
    w.global_shaping[e] = shaping
    for i in range(n):
        w.pos_rew[e, i] = pos
        w.ground_rew[e, i] = ground
        w.reward[e, i] = ground + pos
    on_goal = W.is_overlapping(w, e, 1, 0)
    w.reached_goal[e] = zero
    if on_goal:
        w.reached_goal[e] = type(zero)(1.0)
    w.fell[e] = zero
    if on_the_ground:
        w.fell[e] = type(zero)(1.0)
    return on_the_ground or on_goal


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), pos - package (2), pos - plank (2), package - goal (2), package vel (2),
    plank vel (2), plank angular velocity, plank rotation % pi]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    package = W.position(w, e, 1)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p - package)
    o = W.write_vec(out, e, i, o, p - W.position(w, e, 2))
    o = W.write_vec(out, e, i, o, package - W.position(w, e, 0))
    o = W.write_vec(out, e, i, o, W.velocity(w, e, 1))
    o = W.write_vec(out, e, i, o, W.velocity(w, e, 2))
    o = W.write_value(out, e, i, o, w.ang_vel[e, 2])
    o = W.write_value(out, e, i, o, G.torch_remainder(w.rot[e, 2], w.pi))


def _reached(info: dict) -> torch.Tensor:
    return info["reached_goal"]


def _fell(info: dict) -> torch.Tensor:
    return info["fell"]


class Balance(VmasBase):
    """VMAS 1.5.2's ``balance``: ``n_agents`` spheres hold up a plank (a line of length 0.8) with
    a package (a sphere of radius 0.05) on it, under gravity, and must bring the package onto its
    goal (somewhere in the upper half of the arena) without the plank or the package touching
    the floor.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=3`` (at least 2, as VMAS
    asserts), ``package_mass=5`` and ``random_package_pos_on_line=True`` (the package starts at a
    random place on the plank; ``False``: at its middle), plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``goal`` (no collisions), ``package`` (movable, mass
    ``package_mass``), ``line`` (the plank: movable and rotatable, mass 5), ``floor`` (a static
    10 x 1 box whose top is just below the arena), then the agents.  Gravity ``(0, -0.05)`` pulls
    every movable body; positions are kept in ``|y| <= 1``.

    **Agents** ``agent_0 …`` (one group ``agents``): spheres of radius 0.03, mass 1, force
    ``0.7 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one step of 0.1 s, drag 0.25.
    They start evenly spaced under the plank.  **Observation** (16) ``[pos, vel, pos - package,
    pos - plank, package - goal, package vel, plank vel, plank angular velocity, plank rotation
    % π]``.  **Reward** (shared): 100 times the decrease of the package's distance to the goal,
    plus -10 while the plank or the package overlaps the floor.  **Termination**: the plank or
    the package on the floor, or the package overlapping its goal (VMAS's ``done``); truncation
    at ``max_steps``.  **Info** (per agent): ``pos_rew`` and ``ground_rew`` (VMAS's); per world:
    ``reached_goal`` (1.0 while the package overlaps its goal) and ``fell`` (1.0 while the plank
    or the package overlaps the floor).  Episode metrics: ``success`` (the package reached its
    goal) and ``fell``.

    **Where this differs from VMAS.**  Nothing in a world's dynamics, rewards or observations.
    VMAS draws the starts of a batch from torch's generator; each world here draws its own from
    its stream (the same distribution, compared in the tests).

    **Version history**

    * v0: initial version (VMAS 1.5.2's ``balance``)
    """

    env_id = "Balance-v0"
    vmas_scenario = "balance"
    per_agent_metrics = ("pos_rew", "ground_rew")
    episode_metrics = (
        EpisodeMetric("success", "1 if the package reached its goal during the episode", _reached, "any"),
        EpisodeMetric("fell", "1 if the plank or the package touched the floor during the episode", _fell, "any"),
    )
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 3, package_mass: float = 5, random_package_pos_on_line: bool = True,
                 **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=2)
        self.package_mass = check_positive("package_mass", package_mass)
        self.random_package_pos_on_line = v.check_bool("random_package_pos_on_line", random_package_pos_on_line)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.7, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        goal = Body("goal", collide=False, radius=PACKAGE_RADIUS, color=COLORS["light_green"])
        package = Body("package", movable=True, radius=PACKAGE_RADIUS, mass=self.package_mass, color=COLORS["red"])
        line = Body("line", shape="line", length=LINE_LENGTH, movable=True, rotatable=True, mass=5,
                    color=COLORS["black"])
        floor = Body("floor", shape="box", length=FLOOR_LENGTH, width=FLOOR_WIDTH, color=COLORS["white"])
        return Layout(bodies=[goal, package, line, floor] + agents, groups=[("agents", [a.name for a in agents])],
                      y_semidim=Y_SEMIDIM, gravity=GRAVITY)

    def _obs_dim(self, group: str) -> int:
        return 16

    def _fields(self) -> dict[str, Field]:
        n = self.n_agents
        span = LINE_LENGTH - AGENT_RADIUS
        package_x = LINE_LENGTH / 2 - PACKAGE_RADIUS if self.random_package_pos_on_line else 0.0
        return {
            "goal_x_hi": param(1.0),
            "line_x_hi": param(1.0 - LINE_LENGTH / 2),
            "line_y": param(-Y_SEMIDIM + AGENT_RADIUS * 2),
            "package_x_hi": param(package_x),
            "package_dy": param(PACKAGE_RADIUS),
            "agent_dx": const([-span / 2 + i * span / (n - 1) for i in range(n)]),
            "agent_dy": param(-AGENT_RADIUS * 2),
            "floor_y": param(-Y_SEMIDIM - FLOOR_WIDTH / 2 - AGENT_RADIUS),
            "shaping_factor": param(float(SHAPING_FACTOR)),
            "fall_reward": param(float(FALL_REWARD)),
            "pi": param(float(torch.pi)),
            "global_shaping": state("float"),
            "pos_rew": info("float", n), "ground_rew": info("float", n),
            "reached_goal": info("float"), "fell": info("float"),
        }
