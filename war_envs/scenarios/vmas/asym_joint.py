"""AsymJoint-v0: VMAS 1.5.2's debug scenario ``asym_joint`` (two agents joined by a rod, with a
heavy mass fixed off its centre, turn it upright)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.scenarios.vmas import debug_common as D
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Joint, Layout, VmasBase, reached_goals_metric
from war_envs.scenarios.vmas.joint_passage import angle_dist_0_180, place_agents_on_rod

N_AGENTS = 2
AGENT_RADIUS = 0.03333
U_MULTIPLIER = 0.8
ROD = 0  # the rod (VMAS's joint landmark) is the first body
#: VMAS's goal angle of the rod (a Python float): upright
GOAL_ANGLE = math.pi / 2


@wp.func(inline=True)
def rot_shaping(w: Any, e: int):
    """``get_line_angle_dist_0_180(rod rotation, pi / 2) * rot_shaping_factor``."""
    return angle_dist_0_180(w.rot[e, ROD], w.goal_angle, w.goal_angle_minus_pi) * w.rot_shaping_factor


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the start angle ~ U(-pi/2, pi/2) (``random_start_angle``, else
    0); a random agent (``randperm``) at minus the half-rod offset from the origin, the other at
    plus it; the mass (with ``asym_package``) ``mass_position`` of the offset toward ``agent_1``;
    the rod between the agents (``Joint.notify``); the rotation shaping of the start."""
    rng = W.episode_stream(w, e)
    F0 = type(w.dt)(0.0)
    a = W.uniform(wp.randf(rng), -w.start_angle, w.start_angle)
    dx = w.half_length * wp.cos(a)
    dy = w.half_length * wp.sin(a)
    place_agents_on_rod(w, e, rng, F0, F0, dx, dy, True)
    W.place_joint_landmarks(w, e)
    w.rot_shaping_pre[e] = rot_shaping(w, e)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared): the decrease of the rod's angle
    distance (mod pi) to upright times ``rot_shaping_factor``, and ``-energy_reward_coeff (|u_0|
    + |u_1|) / sqrt(2 · 0.8²)``.  Returns VMAS's ``done()``: the rod within 0.01 of upright."""
    zero = type(w.dt)(0.0)
    shaping = rot_shaping(w, e)
    rot_rew = zero + (w.rot_shaping_pre[e] - shaping)
    w.rot_shaping_pre[e] = shaping
    energy = zero
    for i in range(N_AGENTS):
        u = wp.vector(type(zero)(w.u[e, i, 0]), type(zero)(w.u[e, i, 1]))
        energy = energy + G.vector_norm(u) / w.energy_norm
    energy_rew = -energy * w.energy_reward_coeff
    for i in range(N_AGENTS):
        w.reward[e, i] = rot_rew + energy_rew
        w.rot_rew[e, i] = rot_rew
        w.energy_rew[e, i] = energy_rew
    done = angle_dist_0_180(w.rot[e, ROD], w.goal_angle, w.goal_angle_minus_pi) <= w.done_angle
    W.record_reached(w, e, done)
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel (, with ``observe_joint_angle`` (cos, sin) of the rod's rotation plus N(0,
    joint_angle_obs_noise²))], every entry plus U(-obs_noise, obs_noise) where obs_noise > 0."""
    b = W.body_of(w, i)
    o = W.write_vec(out, e, i, 0, W.position(w, e, b))
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    if w.observe_joint_angle != 0:
        angle = w.rot[e, ROD]
        if w.joint_angle_obs_noise > type(w.dt)(0.0):
            rng = W.step_stream(w, e, N_AGENTS + i)  # (apart from add_obs_noise's stream i)
            angle = angle + type(w.dt)(wp.randn(rng)) * w.joint_angle_obs_noise
        o = W.write_vec(out, e, i, o, G.cos_sin(angle))
    D.add_obs_noise(w, e, i, out, o)


class AsymJoint(VmasBase):
    """VMAS 1.5.2's debug scenario ``asym_joint``: two agents joined by a rod (VMAS's ``Joint`` of
    length ``joint_length``, free to turn at both ends), with a heavy mass fixed on the rod
    toward ``agent_1``, are to turn the rod upright while spending little force.

    Same keyword arguments and defaults as VMAS's scenario: ``joint_length=0.5`` (> 0),
    ``random_start_angle=False`` (``True``: the rod starts at an angle ~ U(-pi/2, pi/2), else
    horizontal), ``observe_joint_angle=False``, ``joint_angle_obs_noise=0.0`` (needs
    ``observe_joint_angle``), ``asym_package=True`` (a mass of ``mass_ratio`` at
    ``mass_position`` of the rod's half length toward ``agent_1``; ``False``: no mass,
    ``agent_1`` weighs ``mass_ratio``, and VMAS's lighter physics: 7 substeps, joint force 400,
    drag 0.25), ``mass_ratio=5`` (> 0), ``mass_position=0.75`` (in [-1, 1], VMAS's anchor range),
    ``max_speed_1=None`` (``agent_1``'s speed limit), ``obs_noise=0.2``,
    ``rot_shaping_factor=1``, ``energy_reward_coeff=0.08``, plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``joint agent_0 agent_1`` (the rod: a movable, rotatable
    line of mass 1 that collides with nothing, held at its ends to both agents' centres by
    VMAS's joint constraints), ``mass`` (with ``asym_package``: a movable sphere of radius
    0.0222 that collides with nothing, held on the rod by a joint of distance 0), then the
    agents.  10 substeps (7 without ``asym_package``), joint force 900 (400), drag 0.15 (0.25),
    VMAS's default collision force, no arena bounds.

    **Agents** ``agent_0``, ``agent_1`` (VMAS's ``agent 0``, ``agent 1``; one group ``agents``):
    spheres of radius 0.03333 (they collide with each other), force ``0.8 u`` for ``u ∈ [-1,
    1]²`` (continuous) or ``Discrete(9)``.  The rod starts centred on the origin, a random
    agent at its left end; everything at rest.  **Observation** (4, +2 with
    ``observe_joint_angle``) ``[pos, vel (, cos, sin of the rod's angle)]``, every entry plus
    U(-obs_noise, obs_noise).  **Reward** (shared): the decrease of the rod's angle distance
    (mod pi) to upright times ``rot_shaping_factor``, minus ``energy_reward_coeff (|u_0| +
    |u_1|) / sqrt(2 · 0.8²)`` (``u`` the force).  **Termination**: the rod within 0.01 rad of
    upright (VMAS's ``done``); truncation at ``max_steps``.  **Info** (per agent, VMAS's):
    ``rot_rew``, ``energy_rew``; per world ``reached_goals`` (ours: VMAS's done).  **State**
    beyond the bodies: ``rot_shaping_pre`` (VMAS's ``joint.rot_shaping_pre``).  Episode metric
    ``success`` (the rod upright).

    **Where this differs from VMAS.**  VMAS draws the observation noise from torch's global
    generator; here each world draws it from its own stream (the same law, tested).  With
    ``joint_angle_obs_noise`` VMAS adds each agent's angle noise into the rod's rotation itself
    (an in-place ``+=`` on its state, so the physics and the other agent's observation see it);
    here the noise is in the observation only.  When VMAS resets one world (``reset_at``), its
    ``Joint.notify`` moves the rod of *every* world to the middle of its agents; each world here
    only places its own rod.  VMAS's batched reset (``env.reset()``) draws one agent order
    (``randperm``) for the whole batch, each world here its own (VMAS's ``reset_at(i)``).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``asym_joint``.
    """

    env_id = "AsymJoint-v0"
    vmas_scenario = "asym_joint"
    vmas_agent_names_spaced = True
    per_agent_metrics = ("rot_rew", "energy_rew")
    episode_metrics = (reached_goals_metric("1 if the rod got upright (VMAS's done) during the episode"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, joint_length: float = 0.5, random_start_angle: bool = False,
                 observe_joint_angle: bool = False, joint_angle_obs_noise: float = 0.0, asym_package: bool = True,
                 mass_ratio: float = 5, mass_position: float = 0.75, max_speed_1: float | None = None,
                 obs_noise: float = 0.2, rot_shaping_factor: float = 1, energy_reward_coeff: float = 0.08,
                 **kwargs) -> None:
        self.joint_length = v.check_float("joint_length", joint_length)
        if not self.joint_length > 0:
            raise ValueError(f"joint_length: expected a float > 0 (VMAS's rod), got {self.joint_length}")
        self.random_start_angle = v.check_bool("random_start_angle", random_start_angle)
        self.observe_joint_angle = v.check_bool("observe_joint_angle", observe_joint_angle)
        self.joint_angle_obs_noise = v.check_float("joint_angle_obs_noise", joint_angle_obs_noise, low=0.0)
        if self.joint_angle_obs_noise != 0 and not self.observe_joint_angle:
            raise ValueError("joint_angle_obs_noise: expected 0 without observe_joint_angle (VMAS asserts it)")
        self.asym_package = v.check_bool("asym_package", asym_package)
        self.mass_ratio = v.check_float("mass_ratio", mass_ratio)
        if not self.mass_ratio > 0:
            raise ValueError(f"mass_ratio: expected a float > 0, got {self.mass_ratio}")
        self.mass_position = v.check_float("mass_position", mass_position, low=-1.0, high=1.0)
        self.max_speed_1 = None if max_speed_1 is None else v.check_float("max_speed_1", max_speed_1, low=0.0)
        self.obs_noise = D.check_obs_noise(obs_noise)
        self.rot_shaping_factor = v.check_float("rot_shaping_factor", rot_shaping_factor)
        self.energy_reward_coeff = v.check_float("energy_reward_coeff", energy_reward_coeff)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        r, asym = AGENT_RADIUS, self.asym_package
        agents = [Body("agent_0", agent=True, radius=r, u_multiplier=U_MULTIPLIER),
                  Body("agent_1", agent=True, radius=r, u_multiplier=U_MULTIPLIER, mass=1 if asym else self.mass_ratio,
                       max_speed=self.max_speed_1, color=COLORS["blue"])]
        rod = Joint("agent_0", "agent_1", dist=self.joint_length)
        bodies, joints = [rod.landmark()], [rod]
        if asym:
            bodies.append(Body("mass", radius=r * (2 / 3), movable=True, collide=False, mass=self.mass_ratio,
                               color=COLORS["black"]))
            joints.append(Joint("mass", rod.landmark_name, anchor_b=(self.mass_position, 0)))
        return Layout(bodies=bodies + agents, groups=[("agents", ["agent_0", "agent_1"])], joints=joints,
                      substeps=10 if asym else 7, joint_force=900 if asym else 400, drag=0.15 if asym else 0.25)

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * int(self.observe_joint_angle)

    def _fields(self) -> dict[str, Field]:
        n = N_AGENTS
        return {
            "mass_body": param(1 if self.asym_package else -1, "int"),
            "half_length": param(self.joint_length / 2), "mass_position": param(self.mass_position),
            "start_angle": param(math.pi / 2 if self.random_start_angle else 0.0),
            # VMAS's goal angle pi / 2 (a Python float) and pi / 2 - pi, as float32 (or float64)
            "goal_angle": param(GOAL_ANGLE), "goal_angle_minus_pi": param(GOAL_ANGLE - math.pi),
            "done_angle": param(0.01),
            "rot_shaping_factor": param(self.rot_shaping_factor),
            "energy_reward_coeff": param(self.energy_reward_coeff),
            "energy_norm": param(math.sqrt(2 * ((1 * U_MULTIPLIER) ** 2))),
            "observe_joint_angle": param(int(self.observe_joint_angle), "int"),
            "joint_angle_obs_noise": param(self.joint_angle_obs_noise), "obs_noise": param(self.obs_noise),
            # VMAS's name: joint.rot_shaping_pre
            "rot_shaping_pre": state("float"),
            "rot_rew": info("float", n), "energy_rew": info("float", n), "reached_goals": info("float"),
        }
