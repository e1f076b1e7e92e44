"""JointPassage-v0: VMAS 1.5.2's ``joint_passage`` scenario (two agents joined by a rod carry it,
with a heavy mass on it, through a gap in a wall and onto a goal pose)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Joint, Layout, VmasBase

N_AGENTS = 2
AGENT_RADIUS = 0.03333
PASSAGE_WIDTH = 0.2  # the wall boxes' width (y extent)
PASSAGE_LENGTH = 0.1476  # the wall boxes' length (x extent)
X_SEMIDIM = Y_SEMIDIM = 1
#: VMAS: int(scenario_length // passage_length) with scenario_length = 2 x_semidim + 2 r (14)
N_BOXES = int((2 * X_SEMIDIM + 2 * AGENT_RADIUS) // PASSAGE_LENGTH)
MIN_COLLISION_DISTANCE = 0.005
#: VMAS's VelocityController parameters (standard form: gain, integral time, derivative time)
CONTROLLER_PARAMS = (2.0, 10, 0.00001)
F_RANGE = 0.8
DT = 0.1
JOINT = "joint agent_0 agent_1"


def gap_boxes(n_passages: int) -> list[int]:
    """The boxes that do not collide (VMAS's ``create_passage_map``'s ``removed``): the
    ``n_passages`` consecutive indices around ``N_BOXES // 2``."""
    return [i for i in range(N_BOXES)
            if (N_BOXES // 2) - n_passages / 2 <= i < (N_BOXES // 2) + n_passages / 2]


def fixed_slots(n_passages: int) -> list[int]:
    """The wall slots of the gaps with ``fixed_passage`` (VMAS's ``spawn_passage_map``:
    ``j += i * (-1 if i % 2 == 0 else 1)`` from ``N_BOXES // 2``)."""
    slots, j = [], N_BOXES // 2
    for i in range(n_passages):
        j += i * (-1 if i % 2 == 0 else 1)
        slots.append(j)
    return slots


def slot_x(n_slots: int) -> list[float]:
    """The x of wall slot i as VMAS's float32 ``get_pos`` works it out."""
    i = torch.arange(n_slots, dtype=torch.int)
    pos = torch.tensor([-1 - AGENT_RADIUS + PASSAGE_LENGTH / 2, 0.0], dtype=torch.float32).repeat(n_slots, 1)
    pos[:, 0] += PASSAGE_LENGTH * i
    return pos[:, 0].tolist()


def collide_slots(gap_slots: list[int], n_collide: int) -> list[int]:
    """The slots of the wall boxes that collide, in box order (VMAS: the next slot that is not a
    gap's, from 0)."""
    out, i = [], 0
    for _ in range(n_collide):
        while i in gap_slots:
            i += 1
        out.append(i)
        i += 1
    return out


@wp.func
def angle_dist_0_180(angle: Any, g: Any, g_minus_pi: Any):
    """VMAS's ``get_line_angle_dist_0_180(angle, goal)`` with ``g = goal % pi`` and
    ``g_minus_pi = g - pi`` worked out by the caller: the smallest of ``|a - g|``,
    ``|a - (g - pi)|`` and ``|(a - pi) - g|`` for ``a = angle % pi`` (torch's ``%``)."""
    pi = type(angle)(wp.pi)
    a = G.torch_remainder(angle, pi)
    return G.torch_min(wp.abs(a - g), G.torch_min(wp.abs(a - g_minus_pi), wp.abs((a - pi) - g)))


@wp.func
def angle_dist_to(angle: Any, goal: Any):
    """``get_line_angle_dist_0_180`` to a rotation of the world's float type (the goal's)."""
    g = G.torch_remainder(goal, type(goal)(wp.pi))
    return angle_dist_0_180(angle, g, g - type(goal)(wp.pi))


@wp.func(inline=True)
def gap_distance(w: Any, e: int):
    """The joint's distance to the nearest gap box (``torch.stack(...).min``: gap boxes in box
    order)."""
    p = W.position(w, e, w.joint_body)
    best = type(w.dt)(0.0)
    for j in range(w.n_passages):
        d = W.distance(p, W.position(w, e, w.first_box + w.gap_start + j))
        if j == 0:
            best = d
        else:
            best = G.torch_min(best, d)
    return best


@wp.func(inline=True)
def is_slot_of_gap(w: Any, e: int, s: int):
    for j in range(w.n_passages):
        if w.slot[e, j] == s:
            return True
    return False


@wp.func(inline=True)
def place_wall_boxes(w: Any, e: int):
    """The end of VMAS's ``spawn_passage_map``: gap box j (``gap_start + j``) on slot
    ``w.slot[e, j]``, the other boxes on the free slots from 0, in box order."""
    for j in range(w.n_passages):
        b = w.first_box + w.gap_start + j
        w.pos[e, b, 0] = w.box_x[w.slot[e, j]]
        w.pos[e, b, 1] = type(w.dt)(0.0)
    s = int(0)
    for k in range(w.n_boxes):
        if k < w.gap_start or k >= w.gap_start + w.n_passages:
            while is_slot_of_gap(w, e, s):
                s = s + 1
            w.pos[e, w.first_box + k, 0] = w.box_x[s]
            w.pos[e, w.first_box + k, 1] = type(w.dt)(0.0)
            s = s + 1


@wp.func(inline=True)
def spawn_passage_map(w: Any, e: int, rng: wp.uint32):
    """VMAS's ``spawn_passage_map``: the gaps' slots (``fixed_slots``, or each uniform in
    ``0 .. N_BOXES - 2``, VMAS's ``randint(0, n_boxes - 1)``, coinciding or not), then
    ``place_wall_boxes``."""
    for j in range(w.n_passages):
        if w.fixed_passage != 0:
            w.slot[e, j] = w.fixed_slot[j]
        else:
            w.slot[e, j] = wp.randi(rng, 0, w.n_boxes - 1)
    place_wall_boxes(w, e)
    return rng


@wp.func(inline=True)
def place_pair(w: Any, e: int, rng: wp.uint32, a: Any, shuffle: bool):
    """The rod at start angle ``a`` (the caller's draw): the goal's angle, the rod's centre and
    the goal's (x, then y), VMAS's bounds in its float32 operation order (``(lo - hi) * u +
    hi``, ``spawn_radius`` from the arena's sides); the agents (with ``shuffle`` a random one
    first, VMAS's ``randperm``, else ``agent_0``; the first at the centre minus the half offset)
    and the mass (toward the second); returns the stream."""
    F0 = type(w.dt)(0.0)
    one = type(w.dt)(1.0)
    g = W.uniform(wp.randf(rng), w.goal_lo, w.goal_hi)
    dx = w.half_length * wp.cos(a)
    dy = w.half_length * wp.sin(a)
    gdx = wp.abs(w.half_length * wp.cos(g))
    gdy = wp.abs(w.half_length * wp.sin(g))
    min_x = -one + (w.spawn_radius + wp.abs(dx))
    max_x = one - (w.spawn_radius + wp.abs(dx))
    min_y = -one + (w.spawn_radius + wp.abs(dy))
    max_y = w.start_y_top - wp.abs(dy)
    jx = (min_x - max_x) * type(F0)(wp.randf(rng)) + max_x
    jy = (min_y - max_y) * type(F0)(wp.randf(rng)) + max_y
    min_gx = -one + (w.spawn_radius + gdx)
    max_gx = one - (w.spawn_radius + gdx)
    min_gy = w.goal_y_bottom + gdy
    max_gy = one - (w.spawn_radius + gdy)
    w.pos[e, w.goal_body, 0] = (min_gx - max_gx) * type(F0)(wp.randf(rng)) + max_gx
    w.pos[e, w.goal_body, 1] = (min_gy - max_gy) * type(F0)(wp.randf(rng)) + max_gy
    w.rot[e, w.goal_body] = g
    return place_agents_on_rod(w, e, rng, jx, jy, dx, dy, shuffle)


@wp.func(inline=True)
def place_agents_on_rod(w: Any, e: int, rng: wp.uint32, jx: Any, jy: Any, dx: Any, dy: Any, shuffle: bool):
    """The two agents at the rod centre ``(jx, jy)`` minus and plus the half offset ``(dx, dy)``
    (with ``shuffle`` a random one first, VMAS's ``randperm``, else ``agent_0``) and the mass
    (with ``asym_package``) ``mass_position`` of the offset toward the second; returns the
    stream (JointPassage-v0, JointPassageSize-v0, AsymJoint-v0)."""
    one = type(w.dt)(1.0)
    first = int(0)
    if shuffle:
        if wp.randf(rng) < 0.5:
            first = 1
    L = w.n_landmarks
    W.set_position(w, e, L + first, wp.vector(jx - dx, jy - dy))
    W.set_position(w, e, L + 1 - first, wp.vector(jx + dx, jy + dy))
    if w.mass_body >= 0:
        side = one
        if first == 1:
            side = -one
        W.set_position(w, e, w.mass_body, wp.vector(jx + (w.mass_position * dx) * side,
                                                    jy + (w.mass_position * dy) * side))
    return rng


@wp.func(inline=True)
def clear_controller(w: Any, e: int, i: int):
    """Agent i's ``VelocityController.reset``: its integral and last error zeroed."""
    for k in range(2):
        w.accum_errs[e, i, k] = type(w.dt)(0.0)
        w.prev_err[e, i, k] = type(w.dt)(0.0)


@wp.func(inline=True)
def reset_walls_and_rod(w: Any, e: int):
    """The rest of a reset once the agents and the wall boxes are placed: the controllers
    cleared, the four walls (VMAS's ``spawn_walls``), the rod's landmark at its agents' middle
    (``Joint.notify``) and ``passed_mark`` cleared."""
    for i in range(N_AGENTS):
        clear_controller(w, e, i)
    for k in range(4):
        w.pos[e, w.first_wall + k, 0] = w.wall_x[k]
        w.pos[e, w.first_wall + k, 1] = w.wall_y[k]
        w.rot[e, w.first_wall + k] = w.wall_rot[k]
    W.place_joint_landmarks(w, e)
    w.passed_mark[e] = type(w.dt)(0.0)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the start angle, ``place_pair``, the passage map,
    ``reset_walls_and_rod`` and the four shaping values."""
    rng = W.episode_stream(w, e)
    a = W.uniform(wp.randf(rng), w.start_lo, w.start_hi)
    rng = place_pair(w, e, rng, a, True)
    rng = spawn_passage_map(w, e, rng)
    reset_walls_and_rod(w, e)
    jp = W.position(w, e, w.joint_body)
    rot = w.rot[e, w.joint_body]
    w.pos_shaping_pre[e] = gap_distance(w, e) * w.pos_shaping_factor
    w.pos_shaping_post[e] = W.distance(jp, W.position(w, e, w.goal_body)) * w.pos_shaping_factor
    w.rot_shaping_pre[e] = angle_dist_0_180(rot, w.middle_angle, w.middle_angle_minus_pi) * w.rot_shaping_factor
    w.rot_shaping_post[e] = angle_dist_to(rot, w.rot[e, w.goal_body]) * w.rot_shaping_factor


@wp.func(inline=True)
def box_contacts(w: Any, e: int, a: int, rew: Any):
    """``rew`` plus ``collision_reward`` for every wall box that collides within
    ``MIN_COLLISION_DISTANCE`` of body a (VMAS's ``get_distance``), in box order."""
    out = rew
    for k in range(w.n_boxes):
        if k < w.gap_start or k >= w.gap_start + w.n_passages:
            if W.distance_at_most(w, e, a, w.first_box + k, w.min_collision_distance):
                out = out + w.collision_reward
    return out


@wp.func(inline=True)
def wall_contacts(w: Any, e: int, a: int, rew: Any):
    """``rew`` plus ``collision_reward`` for every wall within ``MIN_COLLISION_DISTANCE`` of
    body a."""
    out = rew
    for k in range(4):
        if W.distance_at_most(w, e, a, w.first_wall + k, w.min_collision_distance):
            out = out + w.collision_reward
    return out


@wp.func(inline=True)
def collision_penalty(w: Any, e: int):
    """VMAS's collision reward: ``collision_reward`` for every (agent or mass, wall box) and
    (agent or mass, wall) pair within ``MIN_COLLISION_DISTANCE`` (VMAS's ``get_distance``), then
    every (wall box, joint) pair, in VMAS's order."""
    rew = type(w.dt)(0.0)
    L = w.n_landmarks
    n_bodies = N_AGENTS
    if w.mass_body >= 0:
        n_bodies = N_AGENTS + 1
    for q in range(n_bodies):
        a = L + q
        if q == N_AGENTS:
            a = w.mass_body
        rew = wall_contacts(w, e, a, box_contacts(w, e, a, rew))
    for k in range(w.n_boxes):
        if k < w.gap_start or k >= w.gap_start + w.n_passages:
            if W.distance_at_most(w, e, w.first_box + k, w.joint_body, w.min_collision_distance):
                rew = rew + w.collision_reward
    return rew


@wp.func(inline=True)
def rot_reward(w: Any, e: int, rot_passed: bool):
    """The rotation shaping: toward upright (pi/2) until ``rot_passed``, toward the goal's
    rotation after (both shaping values updated every step)."""
    zero = type(w.dt)(0.0)
    rot = w.rot[e, w.joint_body]
    rot_rew = zero
    shaping = angle_dist_0_180(rot, w.middle_angle, w.middle_angle_minus_pi) * w.rot_shaping_factor
    if not rot_passed:
        rot_rew = rot_rew + (w.rot_shaping_pre[e] - shaping)
    w.rot_shaping_pre[e] = shaping
    shaping = angle_dist_to(rot, w.rot[e, w.goal_body]) * w.rot_shaping_factor
    if rot_passed:
        rot_rew = rot_rew + (w.rot_shaping_post[e] - shaping)
    w.rot_shaping_post[e] = shaping
    return rot_rew


@wp.func(inline=True)
def agents_passed(w: Any, e: int):
    """Both agents above the wall (VMAS's ``all_passed``: y > passage_width / 2)."""
    all_passed = bool(True)
    for i in range(N_AGENTS):
        if not (w.pos[e, w.n_landmarks + i, 1] > w.half_passage_width):
            all_passed = False
    return all_passed


@wp.func(inline=True)
def pos_reward(w: Any, e: int, shaping_pre: Any, to_goal: Any, joint_passed: bool):
    """The position shaping: the decrease of ``shaping_pre`` (the rod toward the passage) until
    the rod's centre is above y = 0, of ``to_goal * pos_shaping_factor`` after (both shaping
    values updated every step)."""
    pos_rew = type(w.dt)(0.0)
    if not joint_passed:
        pos_rew = pos_rew + (w.pos_shaping_pre[e] - shaping_pre)
    w.pos_shaping_pre[e] = shaping_pre
    shaping = to_goal * w.pos_shaping_factor
    if joint_passed:
        pos_rew = pos_rew + (w.pos_shaping_post[e] - shaping)
    w.pos_shaping_post[e] = shaping
    return pos_rew


@wp.func(inline=True)
def energy_reward(w: Any, e: int):
    """``-energy_reward_coeff (|u_0| + |u_1|) / energy_norm`` (the agents' forces)."""
    energy = type(w.dt)(0.0)
    for i in range(N_AGENTS):
        u = wp.vector(type(w.dt)(w.u[e, i, 0]), type(w.dt)(w.u[e, i, 1]))
        energy = energy + G.vector_norm(u) / w.energy_norm
    return -energy * w.energy_reward_coeff


@wp.func(inline=True)
def record_rewards(w: Any, e: int, pos_rew: Any, rot_rew: Any, collision_rew: Any, energy_rew: Any,
                   all_passed: bool, to_goal: Any):
    """Both agents' reward ``((pos + rot) + collision) + energy`` and VMAS's ``info`` (``passed``:
    1.0 on the step both agents first got above the wall, when ``passed_mark`` becomes 100).
    Returns VMAS's ``done()``: the rod within 0.01 of the goal's position (``to_goal``) and of its
    angle (mod pi)."""
    zero = type(w.dt)(0.0)
    rew = ((pos_rew + rot_rew) + collision_rew) + energy_rew
    just_passed = all_passed and w.passed_mark[e] == zero
    flag = zero
    if just_passed:
        w.passed_mark[e] = type(zero)(100.0)
        flag = type(zero)(1.0)
    for i in range(N_AGENTS):
        w.reward[e, i] = rew
        w.pos_rew[e, i] = pos_rew
        w.rot_rew[e, i] = rot_rew
        w.collision_rew[e, i] = collision_rew
        w.energy_rew[e, i] = energy_rew
        w.passed[e, i] = flag
    done = to_goal <= w.done_dist and angle_dist_to(w.rot[e, w.joint_body], w.rot[e, w.goal_body]) <= w.done_dist
    W.record_reached(w, e, done)
    return done


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by both) and ``info``:
    ``pos_reward`` (toward the nearest gap, then the goal), ``rot_reward``,
    ``collision_penalty`` and ``energy_reward``, into ``record_rewards``."""
    jp = W.position(w, e, w.joint_body)
    joint_passed = jp[1] > type(w.dt)(0.0)
    all_passed = agents_passed(w, e)
    to_goal = W.distance(jp, W.position(w, e, w.goal_body))
    pos_rew = pos_reward(w, e, gap_distance(w, e) * w.pos_shaping_factor, to_goal, joint_passed)
    rot_passed = joint_passed
    if w.all_passed_rot != 0:
        rot_passed = all_passed
    rot_rew = rot_reward(w, e, rot_passed)
    collision_rew = collision_penalty(w, e)
    return record_rewards(w, e, pos_rew, rot_rew, collision_rew, energy_reward(w, e), all_passed, to_goal)


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action``: with ``use_controller`` the action is the desired velocity of
    VMAS's PID ``VelocityController`` (standard form, gain 2, integral time 10, derivative time
    1e-5), whose errors are cleared first where ``|u| < 1e-3``."""
    if w.use_controller != 0:
        b = W.body_of(w, i)
        u = wp.vector(type(w.dt)(w.u[e, i, 0]), type(w.dt)(w.u[e, i, 1]))
        if G.vector_norm(u) < type(w.dt)(1e-3):
            clear_controller(w, e, i)
        for k in range(2):
            W.velocity_controller(w, e, i, b, k, u[k])


@wp.func(inline=True)
def observe_pose(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Agent i's [pos, vel, pos - goal] from offset 0; returns the next offset."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    return W.write_vec(out, e, i, o, p - W.position(w, e, w.goal_body))


@wp.func(inline=True)
def observe_angles(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32), offset: int):
    """From ``offset``: (cos, sin) of the goal's rotation, with ``observe_joint_angle`` (cos,
    sin) of the rod's rotation plus N(0, joint_angle_obs_noise²); then every entry of agent i's
    row plus U(-obs_noise, obs_noise) where obs_noise > 0."""
    o = W.write_vec(out, e, i, offset, G.cos_sin(w.rot[e, w.goal_body]))
    rng = W.step_stream(w, e, i)
    if w.observe_joint_angle != 0:
        angle = w.rot[e, w.joint_body]
        if w.joint_angle_obs_noise > type(w.dt)(0.0):
            angle = angle + type(w.dt)(wp.randn(rng)) * w.joint_angle_obs_noise
        o = W.write_vec(out, e, i, o, G.cos_sin(angle))
    if w.obs_noise > type(w.dt)(0.0):
        for k in range(o):
            noise = W.uniform(wp.randf(rng), -w.obs_noise, w.obs_noise)
            out[e, i, k] = wp.float32(type(noise)(out[e, i, k]) + noise)


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel, pos - goal, pos - gap box (2 per gap, box order), (cos, sin) of the goal's
    rotation (, of the rod's)] (``observe_pose``, ``observe_angles``)."""
    p = W.position(w, e, W.body_of(w, i))
    o = observe_pose(w, e, i, out)
    for j in range(w.n_passages):
        o = W.write_vec(out, e, i, o, p - W.position(w, e, w.first_box + w.gap_start + j))
    observe_angles(w, e, i, out, o)


def set_rod_arguments(env, *, fixed_passage, joint_length, random_start_angle, random_goal_angle, observe_joint_angle,
                      joint_angle_obs_noise, asym_package, mass_ratio, mass_position, max_speed_1, pos_shaping_factor,
                      rot_shaping_factor, collision_reward, energy_reward_coeff, obs_noise) -> None:
    """The keyword arguments both rod scenarios take (JointPassage-v0's and
    JointPassageSize-v0's: VMAS's names), checked, as ``env``'s attributes."""
    env.fixed_passage = v.check_bool("fixed_passage", fixed_passage)
    env.joint_length = v.check_float("joint_length", joint_length)
    if not env.joint_length > 0:
        raise ValueError(f"joint_length: expected a float > 0, got {env.joint_length}")
    env.random_start_angle = v.check_bool("random_start_angle", random_start_angle)
    env.random_goal_angle = v.check_bool("random_goal_angle", random_goal_angle)
    env.observe_joint_angle = v.check_bool("observe_joint_angle", observe_joint_angle)
    env.joint_angle_obs_noise = v.check_float("joint_angle_obs_noise", joint_angle_obs_noise, low=0.0)
    if env.joint_angle_obs_noise != 0 and not env.observe_joint_angle:
        raise ValueError("joint_angle_obs_noise: expected 0 without observe_joint_angle (VMAS asserts it)")
    env.asym_package = v.check_bool("asym_package", asym_package)
    env.mass_ratio = v.check_float("mass_ratio", mass_ratio)
    if not env.mass_ratio > 0:
        raise ValueError(f"mass_ratio: expected a float > 0, got {env.mass_ratio}")
    env.mass_position = v.check_float("mass_position", mass_position, low=-1.0, high=1.0)
    env.max_speed_1 = None if max_speed_1 is None else v.check_float("max_speed_1", max_speed_1, low=0.0)
    env.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
    env.rot_shaping_factor = v.check_float("rot_shaping_factor", rot_shaping_factor)
    env.collision_reward = v.check_float("collision_reward", collision_reward)
    env.energy_reward_coeff = v.check_float("energy_reward_coeff", energy_reward_coeff)
    env.obs_noise = v.check_float("obs_noise", obs_noise, low=0.0)


def rod_layout(env, agents: list[Body], rod: Joint, gaps: list[int], **world) -> Layout:
    """Both rod scenarios' bodies in VMAS's entity order around their ``agents`` and ``rod``: the
    rod's landmark, with ``asym_package`` the mass (a sphere of ``mass_ratio`` held at
    ``mass_position`` on the rod; it collides with neither agent), the goal (a line), the four
    walls and the wall's boxes (``gaps``: those that neither collide nor are drawn; boxes never
    collide with each other); ``world``: VMAS's ``World`` arguments besides the arena's."""
    r = AGENT_RADIUS
    boxes = [f"passage {k}" for k in range(N_BOXES)]
    bodies = [rod.landmark()]
    joints = [rod]
    if env.asym_package:
        bodies.append(Body("mass", radius=r * (2 / 3), movable=True, mass=env.mass_ratio,
                           color=COLORS["black"], ignores=frozenset([JOINT, "agent_0", "agent_1"])))
        joints.append(Joint("mass", JOINT, anchor_b=(env.mass_position, 0)))
    bodies.append(Body("joint_goal", shape="line", length=env.joint_length, collide=False, color=COLORS["green"]))
    bodies += [Body(f"wall {k}", shape="line", length=2 + r * 2, color=COLORS["black"]) for k in range(4)]
    bodies += [Body(name, shape="box", length=PASSAGE_LENGTH, width=PASSAGE_WIDTH, collide=k not in gaps,
                    visible=k not in gaps, color=COLORS["red"], ignores=frozenset(boxes))
               for k, name in enumerate(boxes)]
    return Layout(bodies=bodies + agents, groups=[("agents", ["agent_0", "agent_1"])], joints=joints,
                  x_semidim=X_SEMIDIM, y_semidim=Y_SEMIDIM, **world)


def rod_fields(env, *, gap_start: int, spawn_radius: float, goal_angles: tuple[float, float], f_range: float,
               energy_norm: float, use_controller: bool) -> dict[str, Field]:
    """The fields both rod scenarios' shared functions read, from ``env``'s checked arguments
    (``set_rod_arguments``, ``n_passages``) and these: the bodies' indices, the wall and
    its boxes (the gaps from box ``gap_start``), the spawn bounds (``spawn_radius`` from the
    arena's sides and the wall), the goal's angle range, the rewards' parameters
    (``energy_norm``: the energy term's divisor), the observation's, VMAS's
    ``VelocityController`` (its windup limit from the agents' ``f_range``), the shaping state and
    the info."""
    n, r = N_AGENTS, spawn_radius
    asym = int(env.asym_package)
    gain, integral_ts, derivative_ts = CONTROLLER_PARAMS
    wall_pos = torch.tensor([[X_SEMIDIM + AGENT_RADIUS, 0.0], [0.0, Y_SEMIDIM + AGENT_RADIUS],
                             [-X_SEMIDIM - AGENT_RADIUS, 0.0], [0.0, -Y_SEMIDIM - AGENT_RADIUS]], dtype=torch.float32)
    half_pi = float(torch.tensor([torch.pi / 2])[0])
    return {
        "joint_body": param(0, "int"), "mass_body": param(1 if asym else -1, "int"),
        "goal_body": param(1 + asym, "int"), "first_wall": param(2 + asym, "int"),
        "first_box": param(6 + asym, "int"), "n_boxes": param(N_BOXES, "int"),
        "n_passages": param(env.n_passages, "int"), "gap_start": param(gap_start, "int"),
        "fixed_passage": param(int(env.fixed_passage), "int"),
        "box_x": const(slot_x(N_BOXES + 1)),
        "wall_x": const(wall_pos[:, 0].tolist()), "wall_y": const(wall_pos[:, 1].tolist()),
        "wall_rot": const([half_pi, 0.0, half_pi, 0.0]),
        "goal_lo": param(goal_angles[0]), "goal_hi": param(goal_angles[1]),
        "half_length": param(env.joint_length / 2), "spawn_radius": param(r),
        "start_y_top": param(-2 * r - PASSAGE_WIDTH / 2), "goal_y_bottom": param(2 * r + PASSAGE_WIDTH / 2),
        "half_passage_width": param(PASSAGE_WIDTH / 2),
        "mass_position": param(env.mass_position),
        "pos_shaping_factor": param(env.pos_shaping_factor), "rot_shaping_factor": param(env.rot_shaping_factor),
        "collision_reward": param(env.collision_reward), "energy_reward_coeff": param(env.energy_reward_coeff),
        "energy_norm": param(energy_norm),
        "min_collision_distance": param(MIN_COLLISION_DISTANCE), "done_dist": param(0.01),
        "observe_joint_angle": param(int(env.observe_joint_angle), "int"),
        "joint_angle_obs_noise": param(env.joint_angle_obs_noise), "obs_noise": param(env.obs_noise),
        "use_controller": param(int(use_controller), "int"),
        "ctrl_gain": param(gain), "inv_integral_ts": param(1.0 / integral_ts),
        "derivative_ts": param(derivative_ts),
        "windup_cutoff": param(0.5 * f_range * integral_ts / (DT * gain)),
        # VMAS's names: joint.pos_shaping_pre & co., passed (passed_mark), agent.controller.accum_errs / prev_err
        "pos_shaping_pre": state("float"), "pos_shaping_post": state("float"), "rot_shaping_pre": state("float"),
        "passed_mark": state("float"),
        "accum_errs": state("float", n, 2), "prev_err": state("float", n, 2),
        "slot": Field("scratch", "int", (env.n_passages,)),
        "pos_rew": info("float", n), "rot_rew": info("float", n), "collision_rew": info("float", n),
        "energy_rew": info("float", n), "passed": info("float", n), "reached_goals": info("float"),
    }


def _reached(info: dict) -> torch.Tensor:
    return info["reached_goals"]


def _passed(info: dict) -> torch.Tensor:
    return info["passed"][:, 0]


class JointPassage(VmasBase):
    """VMAS 1.5.2's ``joint_passage``: two agents joined by a rod (VMAS's ``Joint`` of length
    ``joint_length``, a collidable line) carry it, with a heavy mass fixed on it, from below a
    wall of boxes across the 2 x 2 arena through the gap (``n_passages`` boxes taken out of its
    middle) and onto a goal pose above the wall.

    Same keyword arguments and defaults as VMAS's scenario: ``n_passages=1`` (1..14),
    ``fixed_passage=True`` (``False``: each gap at a random slot every episode; the rod then
    collides with every wall box, not only the gap's neighbours), ``joint_length=0.5``,
    ``random_start_angle=True`` and ``random_goal_angle=True`` (the rod's angle ~ U(-pi/2,
    pi/2), else 0), ``observe_joint_angle=False``, ``joint_angle_obs_noise=0.0`` (needs
    ``observe_joint_angle``), ``asym_package=True`` (a mass of ``mass_ratio`` at
    ``mass_position`` of the rod's half length toward ``agent_1``; ``False``: no mass,
    ``agent_1`` weighs ``mass_ratio``, and VMAS's lighter physics: 7 substeps, joint force 400,
    collision force 1500, drag 0.25), ``mass_ratio=5``, ``mass_position=0.75``,
    ``max_speed_1=None`` (``agent_1``'s speed limit), ``pos_shaping_factor=1``,
    ``rot_shaping_factor=1``, ``collision_reward=0``, ``energy_reward_coeff=0``,
    ``all_passed_rot=True``, ``obs_noise=0.0``, ``use_controller=False``, plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``joint agent_0 agent_1`` (the rod: a movable, rotatable
    line of mass 1 held to both agents' centres by VMAS's joint constraints, joint force 900),
    ``mass`` (with ``asym_package``: a sphere of radius 0.0222 held at ``mass_position`` on the
    rod; collides with the wall boxes and walls only), ``joint_goal`` (a line, no collisions),
    ``wall 0 … wall 3`` (the arena's sides), ``passage 0 … passage 13`` (the wall's 0.1476 x 0.2
    boxes on y = 0; the gaps do not collide and are not drawn), then the agents.  10 substeps
    (7 without ``asym_package``), collision force 2500, drag 0.15, positions kept in ``[-1,
    1]²``.

    **Agents** ``agent_0``, ``agent_1`` (one group ``agents``): spheres of radius 0.03333, force
    ``0.8 u`` clamped to ``±0.8`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``.  The rod
    starts below the wall at a uniform place with room for both agents, the goal above it.
    **Observation** (``10 + 2 n_passages``, +2 with ``observe_joint_angle``) ``[pos, vel,
    pos - goal, pos - gap for each gap, cos, sin of the goal's angle (, of the rod's angle)]``.
    **Reward** (shared): the decrease of the rod centre's distance to the nearest gap while it
    is below y = 0, to the goal after; the decrease of its angle's distance (mod pi) to upright
    until both agents are above the wall (``all_passed_rot``; else the rod's centre), to the
    goal's after; ``collision_reward`` per agent/mass-wall contact and rod-wall-box contact
    within 0.005; ``-energy_reward_coeff (|u_0| + |u_1|) / sqrt(2 · 0.8²)``.  **Termination**:
    the rod within 0.01 of the goal's position and angle (VMAS's ``done``); truncation at
    ``max_steps``.  **Info** (per agent, VMAS's): ``pos_rew``, ``rot_rew``, ``collision_rew``,
    ``energy_rew``, ``passed`` (1.0 on the step both agents first got above the wall; VMAS's
    int); per world ``reached_goals``.  **State** beyond the bodies: the four shaping values
    (VMAS's ``joint.pos_shaping_pre`` & co.), ``passed_mark`` (VMAS's ``passed``: 0, or 100 once both
    agents got above the wall), the controllers'
    ``accum_errs`` / ``prev_err``.  Episode metrics: ``success`` (the goal pose reached) and
    ``passed``.

    **Where this differs from VMAS.**  VMAS's ``done`` multiplies a ``[B]`` position test by a
    ``[B, 1]`` angle test before ``all(dim=1)``, so in a batch world i is done when its rod's
    angle is on its goal's and *every* world's rod is on its goal position; here each world is
    done on its own rod (VMAS's with one world).  When VMAS resets one world (``reset_at``), its
    ``Joint.notify`` moves the rod of *every* world of the batch to the middle of its agents
    (``set_pos(..., batch_index=None)``); each world here only places its own rod.  With
    ``joint_angle_obs_noise`` VMAS adds each agent's noise into the rod's rotation itself (an
    in-place ``+=`` on its state, so the physics and the other agent's observation see it); here
    the noise is in the observation only.  VMAS draws a batch's starts from torch's generator;
    each world here draws its own from its stream (the same distribution, compared in the
    tests); VMAS's batched reset (``env.reset()``) draws one agent order (``randperm``: which
    agent starts on the left) for the whole batch, each world here its own (VMAS's
    ``reset_at(i)``).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``joint_passage``.
    """

    env_id = "JointPassage-v0"
    vmas_scenario = "joint_passage"
    per_agent_metrics = ("pos_rew", "rot_rew", "collision_rew", "energy_rew", "passed")
    episode_metrics = (
        EpisodeMetric("success", "1 if the rod reached its goal pose during the episode", _reached, "any"),
        EpisodeMetric("passed", "1 if both agents got through the wall during the episode", _passed, "any"),
    )
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, n_passages: int = 1, fixed_passage: bool = True, joint_length: float = 0.5,
                 random_start_angle: bool = True, random_goal_angle: bool = True, observe_joint_angle: bool = False,
                 joint_angle_obs_noise: float = 0.0, asym_package: bool = True, mass_ratio: float = 5,
                 mass_position: float = 0.75, max_speed_1: float | None = None, pos_shaping_factor: float = 1,
                 rot_shaping_factor: float = 1, collision_reward: float = 0, energy_reward_coeff: float = 0,
                 all_passed_rot: bool = True, obs_noise: float = 0.0, use_controller: bool = False,
                 **kwargs) -> None:
        self.n_passages = v.check_int("n_passages", n_passages, minimum=1)
        if self.n_passages > N_BOXES:
            raise ValueError(f"n_passages: expected 1..{N_BOXES} (VMAS), got {self.n_passages}")
        set_rod_arguments(self, fixed_passage=fixed_passage, joint_length=joint_length,
                          random_start_angle=random_start_angle, random_goal_angle=random_goal_angle,
                          observe_joint_angle=observe_joint_angle, joint_angle_obs_noise=joint_angle_obs_noise,
                          asym_package=asym_package, mass_ratio=mass_ratio, mass_position=mass_position,
                          max_speed_1=max_speed_1, pos_shaping_factor=pos_shaping_factor,
                          rot_shaping_factor=rot_shaping_factor, collision_reward=collision_reward,
                          energy_reward_coeff=energy_reward_coeff, obs_noise=obs_noise)
        self.all_passed_rot = v.check_bool("all_passed_rot", all_passed_rot)
        self.use_controller = v.check_bool("use_controller", use_controller)
        self.gaps = gap_boxes(self.n_passages)
        self.gap_slots = fixed_slots(self.n_passages)
        super().__init__(**kwargs)

    # ------------------------------------------------------------------ layout
    def _rod_collides_with(self) -> list[int]:
        """The wall boxes the rod collides with (VMAS's ``joint_collides``): with
        ``fixed_passage`` the boxes next to a gap (VMAS's ``neighbour``: a gap on either side),
        else every box that collides."""
        boxes = [k for k in range(N_BOXES) if k not in self.gaps]
        if not self.fixed_passage:
            return boxes
        slots = dict(zip(boxes, collide_slots(self.gap_slots, len(boxes))))
        return [k for k in boxes if (slots[k] - 1) in self.gap_slots or (slots[k] + 1) in self.gap_slots]

    def _layout(self) -> Layout:
        r = AGENT_RADIUS
        asym = self.asym_package
        agents = [Body("agent_0", agent=True, radius=r, u_multiplier=0.8, f_range=F_RANGE),
                  Body("agent_1", agent=True, radius=r, mass=1 if asym else self.mass_ratio, color=COLORS["blue"],
                       max_speed=self.max_speed_1, u_multiplier=0.8, f_range=F_RANGE)]
        boxes = [f"passage {k}" for k in range(N_BOXES)]
        walls = [f"wall {k}" for k in range(4)]
        rod_boxes = {boxes[k] for k in self._rod_collides_with()}
        names = ["mass"] * asym + ["joint_goal"] + walls + boxes + ["agent_0", "agent_1"]
        rod = Joint("agent_0", "agent_1", dist=self.joint_length, collidable=True,
                    ignores=frozenset(n for n in names if n not in rod_boxes))
        return rod_layout(self, agents, rod, self.gaps, substeps=10 if asym else 7, joint_force=900 if asym else 400,
                          collision_force=2500 if asym else 1500, drag=0.15 if asym else 0.25)

    def _obs_dim(self, group: str) -> int:
        return 8 + 2 * self.n_passages + 2 * int(self.observe_joint_angle)

    def _fields(self) -> dict[str, Field]:
        start = math.pi / 2 if self.random_start_angle else 0.0
        goal = math.pi / 2 if self.random_goal_angle else 0.0
        return rod_fields(self, gap_start=self.gaps[0], spawn_radius=AGENT_RADIUS, goal_angles=(-goal, goal),
                          f_range=F_RANGE, energy_norm=math.sqrt(2 * (F_RANGE**2)),
                          use_controller=self.use_controller) | {
            "fixed_slot": const(self.gap_slots, "int"),
            "start_lo": param(-start), "start_hi": param(start),
            "all_passed_rot": param(int(self.all_passed_rot), "int"),
            # VMAS's middle angle pi / 2 (a Python float) and pi / 2 - pi, as float32 (or float64)
            "middle_angle": param(math.pi / 2), "middle_angle_minus_pi": param(math.pi / 2 - math.pi),
            "rot_shaping_post": state("float"),  # VMAS's joint.rot_shaping_post
        }
