"""JointPassageSize-v0: VMAS 1.5.2's ``joint_passage_size`` scenario (a small and a big agent
joined by a rod carry it, upright, through a wall with a two-box and a one-box gap, and onto a
goal pose above the wall).

It shares ``joint_passage``'s arena, rod, spawn, shaping and info: the functions both use are
``war_envs.scenarios.vmas.joint_passage``'s (imported as ``JP``)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, param
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import joint_passage as JP
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Joint, Layout, VmasBase

#: agent_1's radius (VMAS's ``agent_radius_2 = 3 * agent_radius``); the spawn keeps it from the
#: arena's sides and the wall (VMAS's ``bigger_radius``)
BIG_RADIUS = 3 * JP.AGENT_RADIUS
F_RANGE = 10.0
#: with ``fixed_passage``: the big gap's first slot (VMAS's ``big_passage_start_index``)
FIXED_BIG_SLOT = 5


@wp.func(inline=True)
def spawn_passage_map(w: Any, e: int, rng: wp.uint32):
    """VMAS's ``spawn_passage_map``: the big gap's first slot (``FIXED_BIG_SLOT`` with
    ``fixed_passage``, else uniform in ``0 .. N_BOXES - 2``) and the small gap's side (right with
    ``fixed_passage``, else a coin); the side is forced left where the big gap starts after slot
    ``N_BOXES - 2 - n_passages``, then right where it starts before slot ``n_passages``.  Gap
    boxes 0 and 1 on the big gap's two slots, box 2 (the small gap) 4 slots right of the big
    gap's first or 3 left of it (VMAS's ``+= 3`` on 1, ``-= 3`` on 0), box 3 (``n_passages =
    4``) one further out; then ``JP.place_wall_boxes``."""
    big = w.fixed_big_slot
    right = int(1)
    if w.fixed_passage == 0:
        big = wp.randi(rng, 0, w.n_boxes - 1)
        right = wp.randi(rng, 0, 2)
    if big > w.n_boxes - 1 - (w.n_passages + 1):
        right = 0
    if big < w.n_passages:
        right = 1
    small = big + 4
    outward = int(1)
    if right == 0:
        small = big - 3
        outward = -1
    w.slot[e, 0] = big
    w.slot[e, 1] = big + 1
    w.slot[e, 2] = small
    if w.n_passages == 4:
        w.slot[e, 3] = small + outward
    JP.place_wall_boxes(w, e)
    return rng


@wp.func(inline=True)
def passage_centres(w: Any, e: int):
    """VMAS's ``big_passage_pos`` (the middle of gap boxes 0 and 1) and ``small_passage_pos``
    (gap box 2), from the boxes' places."""
    big = (W.position(w, e, w.first_box) + W.position(w, e, w.first_box + 1)) / type(w.dt)(2.0)
    return big, W.position(w, e, w.first_box + 2)


@wp.func(inline=True)
def pass_distance(w: Any, e: int, big: Any, small: Any):
    """The rod's centre's distance to VMAS's ``pass_center`` (the middle of the two gaps')."""
    return W.distance(W.position(w, e, w.joint_body), (big + small) / type(w.dt)(2.0))


@wp.func(inline=True)
def middle_distance(w: Any, e: int, big: Any, small: Any):
    """The rod's rotation's distance to VMAS's ``middle_angle`` (pi where the small gap is right
    of the big one, else 0): with ``middle_angle_180`` ``get_line_angle_dist_0_180`` (lines,
    mod pi), else ``get_line_angle_dist_0_360``: ``-(cos, sin)(rot) · (cos, sin)(middle)``."""
    rot = w.rot[e, w.joint_body]
    middle = type(w.dt)(0.0)
    if small[0] > big[0]:
        middle = type(w.dt)(wp.pi)
    if w.middle_angle_180 != 0:
        return JP.angle_dist_to(rot, middle)
    return -wp.dot(G.cos_sin(rot), G.cos_sin(middle))


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the rod upright (its start angle ``±pi/2`` by a coin:
    ``agent_1`` above or below ``agent_0``), ``JP.place_pair`` (``agent_0`` first), the passage
    map, ``JP.reset_walls_and_rod`` and the three shaping values."""
    rng = W.episode_stream(w, e)
    a = -w.start_angle
    if wp.randf(rng) >= 0.5:
        a = w.start_angle
    rng = JP.place_pair(w, e, rng, a, False)
    rng = spawn_passage_map(w, e, rng)
    JP.reset_walls_and_rod(w, e)
    big, small = passage_centres(w, e)
    w.pos_shaping_pre[e] = pass_distance(w, e, big, small) * w.pos_shaping_factor
    goal = W.position(w, e, w.goal_body)
    w.pos_shaping_post[e] = W.distance(W.position(w, e, w.joint_body), goal) * w.pos_shaping_factor
    w.rot_shaping_pre[e] = middle_distance(w, e, big, small) * w.rot_shaping_factor


@wp.func(inline=True)
def collision_penalty(w: Any, e: int):
    """VMAS's collision reward where ``collision_reward != 0``: ``collision_reward`` for every
    (agent or mass, colliding wall box) pair within ``MIN_COLLISION_DISTANCE``, then for every
    wall within it of the last of those bodies only (the mass with ``asym_package``, else
    ``agent_1``: VMAS's wall loop follows its body loop and sees the loop variable's last
    value).  The rod is not counted (it does not collide)."""
    rew = type(w.dt)(0.0)
    if w.collision_reward != type(w.dt)(0.0):
        last = w.n_landmarks + JP.N_AGENTS - 1
        for i in range(JP.N_AGENTS):
            rew = JP.box_contacts(w, e, w.n_landmarks + i, rew)
        if w.mass_body >= 0:
            rew = JP.box_contacts(w, e, w.mass_body, rew)
            last = w.mass_body
        rew = JP.wall_contacts(w, e, last, rew)
    return rew


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by both) and ``info``:
    ``JP.pos_reward`` (toward the two gaps' middle, times ``pos_shaping_factor`` twice as VMAS
    has it, while the rod's centre is below y = 0; toward the goal after), the decrease of
    ``middle_distance`` times ``rot_shaping_factor`` (every step), ``collision_penalty`` and,
    where ``energy_reward_coeff != 0``, ``JP.energy_reward``, into ``JP.record_rewards``."""
    zero = type(w.dt)(0.0)
    jp = W.position(w, e, w.joint_body)
    big, small = passage_centres(w, e)
    to_goal = W.distance(jp, W.position(w, e, w.goal_body))
    to_pass = pass_distance(w, e, big, small) * w.pos_shaping_factor
    pos_rew = JP.pos_reward(w, e, to_pass * w.pos_shaping_factor, to_goal, jp[1] > zero)
    shaping = middle_distance(w, e, big, small) * w.rot_shaping_factor
    rot_rew = w.rot_shaping_pre[e] - shaping
    w.rot_shaping_pre[e] = shaping
    energy_rew = zero
    if w.energy_reward_coeff != zero:
        energy_rew = JP.energy_reward(w, e)
    return JP.record_rewards(w, e, pos_rew, rot_rew, collision_penalty(w, e), energy_rew, JP.agents_passed(w, e),
                             to_goal)


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel, pos - goal, pos - big gap's middle, pos - small gap, (cos, sin) of the goal's
    rotation (, of the rod's)] (``JP.observe_pose``, ``JP.observe_angles``)."""
    p = W.position(w, e, W.body_of(w, i))
    big, small = passage_centres(w, e)
    o = JP.observe_pose(w, e, i, out)
    o = W.write_vec(out, e, i, o, p - big)
    o = W.write_vec(out, e, i, o, p - small)
    JP.observe_angles(w, e, i, out, o)


class JointPassageSize(VmasBase):
    """VMAS 1.5.2's ``joint_passage_size``: a small agent (``agent_0``, radius 0.03333) and a big
    one (``agent_1``, radius 0.09999) joined by a rod (VMAS's ``Joint`` of length
    ``joint_length``: a line that collides with nothing) start upright below a wall of boxes
    across the 2 x 2 arena and must bring the rod onto a goal pose above it: the wall has a
    big gap (two boxes wide) and, 2 boxes to its right or 2 to its left, a small one (one box;
    two with ``n_passages=4``), so the big agent must take the big gap and the small one the
    small gap, with the rod turned flat.

    Same keyword arguments and defaults as VMAS's scenario: ``n_passages=3`` (the gaps' boxes:
    3, or 4 for a two-box small gap; VMAS asserts it), ``fixed_passage=False`` (``True``: the
    big gap from slot 5, the small one right of it; else both at random every episode),
    ``joint_length=0.52``, ``random_start_angle=False`` (taken and ignored, as in VMAS: the rod
    always starts upright, ``agent_1`` above or below ``agent_0`` at random),
    ``random_goal_angle=False`` (the goal's angle pi; ``True``: ~ U(-pi/2, pi/2)),
    ``observe_joint_angle=False``, ``joint_angle_obs_noise=0.0`` (needs ``observe_joint_angle``),
    ``asym_package=False`` (``True``: a mass of ``mass_ratio`` at ``mass_position`` of the rod's
    half length toward ``agent_1``, and VMAS's heavier physics: 10 substeps, joint force 700,
    collision force 2500, drag 0.15; ``False``: ``agent_1`` weighs ``mass_ratio``, 5 substeps,
    joint force 400, collision force 1500, drag 0.25), ``mass_ratio=1``, ``mass_position=0.75``,
    ``max_speed_1=None`` (``agent_1``'s speed limit), ``pos_shaping_factor=1``,
    ``rot_shaping_factor=1``, ``collision_reward=0``, ``energy_reward_coeff=0``,
    ``obs_noise=0.0``, ``middle_angle_180=False``, ``use_vel_controller=False``, plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``joint agent_0 agent_1`` (the rod: a movable, rotatable
    line of mass 1 held to both agents' centres by VMAS's joint constraints), ``mass`` (with
    ``asym_package``: a sphere of radius 0.0222 held at ``mass_position`` on the rod; it
    collides with the wall boxes and walls only), ``joint_goal`` (a line, no collisions),
    ``wall 0 … wall 3`` (the arena's sides), ``passage 0 … passage 13`` (the wall's 0.1476 x 0.2
    boxes on y = 0: boxes 0 to ``n_passages - 1`` are the gaps, which do not collide and are
    not drawn), then the agents; positions kept in ``[-1, 1]²``.

    **Agents** ``agent_0``, ``agent_1`` (one group ``agents``): force ``u`` for ``u ∈ [-1,
    1]²`` (continuous) or ``Discrete(9)``, clamped to ``±10``; with ``use_vel_controller`` the
    action is the desired velocity of VMAS's PID ``VelocityController`` (gain 2, integral time
    10, derivative time 1e-5, windup limit from the force range 10).  The rod starts upright
    below the wall at a uniform place 0.09999 from the sides and the wall, the goal above it.
    **Observation** (12, +2 with ``observe_joint_angle``) ``[pos, vel, pos - goal, pos - big
    gap's middle, pos - small gap, cos, sin of the goal's angle (, of the rod's angle)]``, plus
    U(-obs_noise, obs_noise) on every entry.  **Reward** (shared): the decrease of the rod
    centre's distance to the middle of the two gaps (times ``pos_shaping_factor²``: VMAS
    multiplies it twice, once at a reset) while the centre is below y = 0, to the goal after
    (times ``pos_shaping_factor``); the decrease of the rod angle's distance to the middle angle
    (pi where the small gap is right of the big one, else 0: ``-cos(angle - middle)``, or with
    ``middle_angle_180`` its distance mod pi, which puts the rod flat either way) times
    ``rot_shaping_factor``, every step; ``collision_reward`` per agent- or mass-box contact
    within 0.005 and per wall contact of the last of those bodies (see below);
    ``-energy_reward_coeff (|u_0| + |u_1|) / sqrt(2)``.  **Termination**: the rod within 0.01
    of the goal's position and angle (mod pi); truncation at ``max_steps``.  **Info** (per agent,
    VMAS's): ``pos_rew``, ``rot_rew``, ``collision_rew``, ``energy_rew``, ``passed`` (1.0 on the
    step both agents first got above the wall; VMAS's int); per world ``reached_goals``.
    **State** beyond the bodies: ``pos_shaping_pre``, ``pos_shaping_post``, ``rot_shaping_pre``
    (VMAS's ``joint.*``), ``passed_mark`` (VMAS's ``passed``: 0, or 100 once both agents got
    above the wall), the controllers' ``accum_errs`` / ``prev_err``; VMAS's ``pass_center``,
    ``big_passage_pos``, ``small_passage_pos`` and ``middle_angle`` are worked out from the gap
    boxes' places.  Episode metrics: ``success`` (the goal pose reached) and ``passed``.

    VMAS's quirks kept: the position shaping's ``pos_shaping_factor`` is applied twice in the
    steps and once at a reset; only the last body of the collision loop (the mass, else
    ``agent_1``) is checked against the walls; the rotation shaping pays every step, before and
    after the wall.

    **Where this differs from VMAS.**  VMAS's ``done()`` multiplies a ``[B]`` by a ``[B, 1]``
    tensor, so a world is done only when its rod's angle is on the goal's *and every world's*
    rod is on its goal's position; here each world's done is its own (VMAS's with one world).
    When VMAS resets one world (``reset_at``), its ``Joint.notify`` moves the rod of *every*
    world of the batch to the middle of its agents; each world here only places its own rod.
    With ``joint_angle_obs_noise`` VMAS adds each agent's noise into the rod's rotation itself
    (an in-place ``+=`` on its state, so the physics and the other agent's observation see it);
    here the noise is in the observation only.  VMAS draws a batch's starts from torch's
    generator; each world here draws its own from its stream (the same distribution, compared in
    the tests).  VMAS's ``set_n_passages`` method (not a keyword argument) has no counterpart.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``joint_passage_size``.
    """

    env_id = "JointPassageSize-v0"
    vmas_scenario = "joint_passage_size"
    per_agent_metrics = JP.JointPassage.per_agent_metrics
    episode_metrics = JP.JointPassage.episode_metrics
    progress_metric = JP.JointPassage.progress_metric

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = JP.process_action

    def __init__(self, *, fixed_passage: bool = False, joint_length: float = 0.52, random_start_angle: bool = False,
                 random_goal_angle: bool = False, observe_joint_angle: bool = False,
                 joint_angle_obs_noise: float = 0.0, asym_package: bool = False, mass_ratio: float = 1,
                 mass_position: float = 0.75, max_speed_1: float | None = None, pos_shaping_factor: float = 1,
                 rot_shaping_factor: float = 1, collision_reward: float = 0, energy_reward_coeff: float = 0,
                 obs_noise: float = 0.0, n_passages: int = 3, middle_angle_180: bool = False,
                 use_vel_controller: bool = False, **kwargs) -> None:
        self.n_passages = v.check_int("n_passages", n_passages)
        if self.n_passages not in (3, 4):
            raise ValueError(f"n_passages: expected 3 or 4 (VMAS asserts it), got {self.n_passages}")
        JP.set_rod_arguments(self, fixed_passage=fixed_passage, joint_length=joint_length,
                             random_start_angle=random_start_angle, random_goal_angle=random_goal_angle,
                             observe_joint_angle=observe_joint_angle, joint_angle_obs_noise=joint_angle_obs_noise,
                             asym_package=asym_package, mass_ratio=mass_ratio, mass_position=mass_position,
                             max_speed_1=max_speed_1, pos_shaping_factor=pos_shaping_factor,
                             rot_shaping_factor=rot_shaping_factor, collision_reward=collision_reward,
                             energy_reward_coeff=energy_reward_coeff, obs_noise=obs_noise)
        self.middle_angle_180 = v.check_bool("middle_angle_180", middle_angle_180)
        self.use_vel_controller = v.check_bool("use_vel_controller", use_vel_controller)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        asym = self.asym_package
        agents = [Body("agent_0", agent=True, radius=JP.AGENT_RADIUS, f_range=F_RANGE, color=COLORS["blue"]),
                  Body("agent_1", agent=True, radius=BIG_RADIUS, mass=1 if asym else self.mass_ratio,
                       max_speed=self.max_speed_1, f_range=F_RANGE, color=COLORS["blue"])]
        rod = Joint("agent_0", "agent_1", dist=self.joint_length)
        return JP.rod_layout(self, agents, rod, list(range(self.n_passages)), substeps=10 if asym else 5,
                             joint_force=700 if asym else 400, collision_force=2500 if asym else 1500,
                             drag=0.15 if asym else 0.25)

    def _obs_dim(self, group: str) -> int:
        return 12 + 2 * int(self.observe_joint_angle)

    def _fields(self) -> dict[str, Field]:
        goal = (-math.pi / 2, math.pi / 2) if self.random_goal_angle else (math.pi, math.pi)
        return JP.rod_fields(self, gap_start=0, spawn_radius=max(JP.AGENT_RADIUS, BIG_RADIUS), goal_angles=goal,
                             f_range=F_RANGE, energy_norm=math.sqrt(2 * 1.0**2),
                             use_controller=self.use_vel_controller) | {
            "start_angle": param(math.pi / 2), "fixed_big_slot": param(FIXED_BIG_SLOT, "int"),
            "middle_angle_180": param(int(self.middle_angle_180), "int"),
        }
