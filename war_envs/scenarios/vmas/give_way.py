"""GiveWay-v0: VMAS 1.5.2's ``give_way`` scenario (two robots swap ends of a corridor with one
passing bay), with VMAS's velocity controller (``vmas/simulator/controllers/velocity_controller.py``)
as Warp functions."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive, reached_goals_metric

#: VMAS's map (``spawn_map``): metres, computed in Python floats as VMAS does
SCENARIO_LENGTH = 5
PASSAGE_LENGTH = 0.4
PASSAGE_WIDTH = 0.48
CORRIDOR_WIDTH = PASSAGE_LENGTH
SMALL_CEILING_LENGTH = (SCENARIO_LENGTH / 2) - (PASSAGE_LENGTH / 2)
AGENT_RADIUS = 0.16  # also with box agents (the goals' size and the spawn points use it)
AGENT_BOX_LENGTH = 0.32
AGENT_BOX_WIDTH = 0.24
GOAL_DIST_FROM_WALL = AGENT_RADIUS + 0.05
AGENT_DIST_FROM_WALL = 0.5
SPAWN_POS_NOISE = 0.02
MIN_COLLISION_DISTANCE = 0.005
#: VMAS's VelocityController parameters in give_way: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (2, 6, 0.002)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: agent 0 at the left end and agent 1 at the right end of the
    corridor, each moved by U(-0.02, 0.02)² noise (x then y; agent 0's first), their goals at the
    other ends, the controllers' errors cleared, the walls in place (``reset_map``), the shaping
    distances.  The delay queue is emptied too (VMAS keeps it across resets: see the class)."""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    n = w.u.shape[1]
    for k in range(L):
        w.pos[e, k, 0] = w.landmark_x[k]
        w.pos[e, k, 1] = w.landmark_y[k]
        w.rot[e, k] = w.landmark_rot[k]
    for i in range(n):
        nx = W.uniform(wp.randf(rng), -w.spawn_noise, w.spawn_noise)
        ny = W.uniform(wp.randf(rng), -w.spawn_noise, w.spawn_noise)
        start = w.start_x
        if i == 0:
            start = -w.start_x
        w.pos[e, L + i, 0] = start + nx
        w.pos[e, L + i, 1] = type(nx)(0.0) + ny
        for k in range(2):
            w.accum_errs[e, i, k] = type(nx)(0.0)
            w.prev_err[e, i, k] = type(nx)(0.0)
            for q in range(w.dt_delay):
                w.input_queue[e, i, q, k] = type(nx)(0.0)
    for i in range(n):
        d = W.distance(W.position(w, e, L + i), W.position(w, e, i))
        w.shaping[e, i] = d * w.pos_shaping_factor


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action`` with ``use_velocity_controller`` (nothing otherwise): the
    action goes through the ``dt_delay``-step queue, is clamped to norm ``v_range``, zeroed
    below norm ``min_input_norm``, clears the controller's errors when its norm is below 1e-3,
    and is the desired velocity of VMAS's PID ``VelocityController`` (standard form, gain 2,
    integral time 6, derivative time 0.002, integrator clamped to ±0.5 f_range 6 / (dt 2)), whose
    output times the mass becomes the force ``u``.  Worked out in the world's float type;
    ``u`` keeps VMAS's float32."""
    if w.use_velocity_controller == 0:
        return
    F0 = type(w.dt)(0.0)
    ux = type(w.dt)(w.u[e, i, 0])
    uy = type(w.dt)(w.u[e, i, 1])
    d = w.dt_delay
    if d > 0:
        qx = w.input_queue[e, i, 0, 0]
        qy = w.input_queue[e, i, 0, 1]
        for q in range(d - 1):
            w.input_queue[e, i, q, 0] = w.input_queue[e, i, q + 1, 0]
            w.input_queue[e, i, q, 1] = w.input_queue[e, i, q + 1, 1]
        w.input_queue[e, i, d - 1, 0] = ux
        w.input_queue[e, i, d - 1, 1] = uy
        ux = qx
        uy = qy
    u = G.clamp_with_norm(wp.vector(ux, uy), w.max_velocity)
    if wp.sqrt(u[0] * u[0] + u[1] * u[1]) < w.min_input_norm:
        u = wp.vector(F0, F0)
    if wp.sqrt(u[0] * u[0] + u[1] * u[1]) < type(F0)(1e-3):
        for k in range(2):
            w.accum_errs[e, i, k] = F0
            w.prev_err[e, i, k] = F0
    b = W.body_of(w, i)
    for k in range(2):
        W.velocity_controller(w, e, i, b, k, u[k])


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: both agents get the shaping reward of both (each one's decrease of
    the distance to its goal, blue's plus green's), ``final_reward`` while both are on their
    goals (closer than the goal radius 0.08), their own ``agent_collision_penalty`` (the other
    agent within 0.005) and ``passage_collision_penalty`` / ``obstacle_collision_penalty``
    per wall within 0.005, and the energy
    term ``-energy_rew_coeff |u| / sqrt(2 f_range²)``.  Returns VMAS's ``done()``: both on
    their goals with ``done_on_completion``, else never."""
    L = w.n_landmarks
    n = w.u.shape[1]
    F0 = type(w.dt)(0.0)
    blue_d = W.distance(W.position(w, e, L), W.position(w, e, 0))
    green_d = W.distance(W.position(w, e, L + n - 1), W.position(w, e, 1))
    reached = blue_d < w.goal_radius and green_d < w.goal_radius
    green_shaping = green_d * w.pos_shaping_factor
    green_rew = w.shaping[e, n - 1] - green_shaping
    w.shaping[e, n - 1] = green_shaping
    blue_shaping = blue_d * w.pos_shaping_factor
    blue_rew = w.shaping[e, 0] - blue_shaping
    w.shaping[e, 0] = blue_shaping
    pos_rew = (F0 + blue_rew) + green_rew
    final = F0
    if reached:
        final = w.final_reward
    for i in range(n):
        a = L + i
        agent_coll = F0
        for j in range(n):
            if j != i:
                if W.distance_at_most(w, e, a, L + j, w.min_collision_distance):
                    agent_coll = agent_coll + w.agent_collision_penalty
        obstacle = F0
        # the walls follow the two goals (which do not collide); VMAS's batch-wide collides
        # gate: world.py
        for k in range(w.wall_is_passage.shape[0]):
            if W.distance_at_most(w, e, a, k + 2, w.min_collision_distance):
                penalty = w.obstacle_collision_penalty
                if w.wall_is_passage[k] != 0:
                    penalty = w.passage_collision_penalty
                obstacle = obstacle + penalty
        ux = type(F0)(w.u[e, i, 0])
        uy = type(F0)(w.u[e, i, 1])
        energy = -(wp.sqrt(ux * ux + uy * uy) / w.energy_norm) * w.energy_rew_coeff
        w.pos_rew[e, i] = pos_rew
        w.final_rew[e, i] = final
        w.energy_rew[e, i] = energy
        w.agent_collision_rew[e, i] = agent_coll
        w.obstacle_collision_rew[e, i] = obstacle
        w.reward[e, i] = (((pos_rew + obstacle) + agent_coll) + energy) + final
    W.record_reached(w, e, reached)
    return reached and w.done_on_completion != 0


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), with observe_rel_pos: pos - the other agent's pos (2)], each entry
    plus U(-obs_noise, obs_noise) noise where obs_noise > 0 (drawn from the world's stream of
    this episode step and agent)."""
    L = w.n_landmarks
    n = w.u.shape[1]
    b = L + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    if w.observe_rel_pos != 0:
        for j in range(n):
            if j != i:
                o = W.write_vec(out, e, i, o, p - W.position(w, e, L + j))
    if w.obs_noise > type(w.dt)(0.0):
        rng = W.step_stream(w, e, i)
        for k in range(o):
            noise = W.uniform(wp.randf(rng), -w.obs_noise, w.obs_noise)
            out[e, i, k] = wp.float32(type(noise)(out[e, i, k]) + noise)


class GiveWay(VmasBase):
    """VMAS 1.5.2's ``give_way``: two robots start at opposite ends of a 5 m corridor, 0.4 m wide,
    and must swap places; halfway along, a 0.4 m bay (0.48 m deep) opens on one side
    (``mirror_passage``: on both), so one robot has to pull in and give way to the other.

    Same keyword arguments and defaults as VMAS's scenario: ``v_range=0.5``, ``a_range=1``,
    ``obs_noise=0``, ``box_agents=False``, ``linear_friction=0.1``, ``mirror_passage=False``,
    ``done_on_completion=False``, ``observe_rel_pos=False``, ``pos_shaping_factor=1.0``,
    ``final_reward=0.01``, ``energy_rew_coeff=0``, ``agent_collision_penalty=0``,
    ``passage_collision_penalty=0``, ``obstacle_collision_penalty=0``,
    ``use_velocity_controller=True``, ``min_input_norm=0.08``, ``dt_delay=0``, plus VMAS's
    environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0`` (blue, starts left) and ``agent_1`` (green, starts right), one group
    ``agents``: non-rotating spheres of radius 0.16 (``box_agents``: 0.32 x 0.24 boxes), linear
    friction ``linear_friction``, force limit ``f_range = a_range + linear_friction`` per
    component, speed limit ``v_range`` per component.  Steps of 0.05 s in 5 substeps (16 with box
    agents), no drag, contact stiffness 500 (10 000 with boxes).  **Actions**: with
    ``use_velocity_controller`` a desired velocity in ``[-v_range, v_range]²``, delayed by
    ``dt_delay`` steps, clamped to norm ``v_range``, zeroed below norm ``min_input_norm``,
    tracked by VMAS's PID velocity controller (its force goes to the physics); otherwise a force
    in ``[-f_range, f_range]²``.  Discrete: ``Discrete(9)`` (0, -max, +max per component).
    **Observation** ``[pos, vel]`` (+ ``pos - other's pos`` with ``observe_rel_pos``), plus
    uniform noise of half-width ``obs_noise`` on every entry.  **Reward** (per agent):
    shaping of both agents' goal distances (times ``pos_shaping_factor``, shared), plus
    ``final_reward`` while both are on their goals (within 0.08), the collision penalties (the
    other agent, a passage wall, another wall within 0.005) and ``-energy_rew_coeff`` times
    ``|u| / sqrt(2 f_range²)`` (``u``: the controller's force).  **Termination**: with
    ``done_on_completion``, both agents on their goals; otherwise only truncation at
    ``max_steps``.  **Info** (per agent, VMAS's): ``pos_rew``, ``final_rew``, ``energy_rew``,
    ``agent_collision_rew``, ``obstacle_collision_rew``; and ``reached_goals`` (per world: 1.0
    where both are on their goals, whether or not that ends the episode), the ``success`` metric.

    **Where this differs from VMAS.**  VMAS draws one spawn noise for the whole batch when it
    resets every world at once (``env.reset()``), so all its worlds start alike; each world
    here draws its own (VMAS's ``reset_at(i)``).  The wall penalties are always worked out
    (VMAS gates them with its batch-wide ``collides`` test: see ``world.py``).  VMAS makes the
    ``dt_delay`` queue once and never empties it, so after a reset the first ``dt_delay`` forces
    are the last episode's actions; here a reset empties it (zero actions), so an episode
    depends only on its own start and actions.  Observation noise is drawn from the world's own
    stream (VMAS: torch's global generator).  In float64 worlds the controller works in float64
    but its force ``u`` is float32, as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``give_way``.
    """

    env_id = "GiveWay-v0"
    vmas_scenario = "give_way"
    per_agent_metrics = ("pos_rew", "final_rew", "energy_rew", "agent_collision_rew", "obstacle_collision_rew")
    episode_metrics = (reached_goals_metric("1 if both agents were on their goals at once during the episode"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, v_range: float = 0.5, a_range: float = 1, obs_noise: float = 0, box_agents: bool = False,
                 linear_friction: float = 0.1, mirror_passage: bool = False, done_on_completion: bool = False,
                 observe_rel_pos: bool = False, pos_shaping_factor: float = 1.0, final_reward: float = 0.01,
                 energy_rew_coeff: float = 0, agent_collision_penalty: float = 0,
                 passage_collision_penalty: float = 0, obstacle_collision_penalty: float = 0,
                 use_velocity_controller: bool = True, min_input_norm: float = 0.08, dt_delay: int = 0,
                 **kwargs) -> None:
        self.v_range = check_positive("v_range", v_range)
        self.a_range = check_positive("a_range", a_range)
        self.obs_noise = v.check_float("obs_noise", obs_noise, low=0.0)
        self.box_agents = v.check_bool("box_agents", box_agents)
        self.linear_friction = v.check_float("linear_friction", linear_friction, low=0.0)
        self.mirror_passage = v.check_bool("mirror_passage", mirror_passage)
        self.done_on_completion = v.check_bool("done_on_completion", done_on_completion)
        self.observe_rel_pos = v.check_bool("observe_rel_pos", observe_rel_pos)
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.final_reward = v.check_float("final_reward", final_reward)
        self.energy_rew_coeff = v.check_float("energy_rew_coeff", energy_rew_coeff)
        self.agent_collision_penalty = v.check_float("agent_collision_penalty", agent_collision_penalty)
        self.passage_collision_penalty = v.check_float("passage_collision_penalty", passage_collision_penalty)
        self.obstacle_collision_penalty = v.check_float("obstacle_collision_penalty", obstacle_collision_penalty)
        self.use_velocity_controller = v.check_bool("use_velocity_controller", use_velocity_controller)
        self.min_input_norm = v.check_float("min_input_norm", min_input_norm, low=0.0)
        self.dt_delay = v.check_int("dt_delay", dt_delay, minimum=0)
        self.f_range = self.a_range + self.linear_friction
        self.u_range = self.v_range if self.use_velocity_controller else self.f_range
        super().__init__(**kwargs)

    # ------------------------------------------------------------------ the map
    def _walls(self) -> list[tuple[str, float, float, float, float]]:
        """(name, length, x, y, rot) of every wall in VMAS's order (``spawn_map`` / ``reset_map``)."""
        half = SCENARIO_LENGTH / 2
        ceiling_x = SMALL_CEILING_LENGTH / 2 - SCENARIO_LENGTH / 2
        up = math.pi / 2
        walls = [(f"wall {i}", CORRIDOR_WIDTH, -half if i == 0 else half, 0.0, up) for i in range(2)]
        walls += [(f"ceil 1 {i}", SMALL_CEILING_LENGTH, -ceiling_x if i == 0 else ceiling_x, PASSAGE_LENGTH / 2, 0.0)
                  for i in range(2)]
        walls += [(f"ceil 2 {i}", PASSAGE_WIDTH, -PASSAGE_LENGTH / 2 if i == 0 else PASSAGE_LENGTH / 2,
                   PASSAGE_LENGTH / 2 + PASSAGE_WIDTH / 2, up) for i in range(2)]
        walls += [("ceil 2 2", PASSAGE_LENGTH, 0.0, PASSAGE_LENGTH / 2 + PASSAGE_WIDTH, 0.0)]
        if self.mirror_passage:
            walls += [(f"ceil 12 {i}", SMALL_CEILING_LENGTH, -ceiling_x if i == 0 else ceiling_x,
                       -PASSAGE_LENGTH / 2, 0.0) for i in range(2)]
            walls += [(f"ceil 22 {i}", PASSAGE_WIDTH, -PASSAGE_LENGTH / 2 if i == 0 else PASSAGE_LENGTH / 2,
                       -PASSAGE_LENGTH / 2 - PASSAGE_WIDTH / 2, up) for i in range(2)]
            walls += [("ceil 22 2", PASSAGE_LENGTH, 0.0, -PASSAGE_LENGTH / 2 - PASSAGE_WIDTH, 0.0)]
        else:
            walls += [("floor", SCENARIO_LENGTH, 0.0, -PASSAGE_LENGTH / 2, 0.0)]
        return walls

    def _layout(self) -> Layout:
        goals = [Body(f"goal_{i}", collide=False, radius=AGENT_RADIUS / 2, color=COLORS[c])
                 for i, c in enumerate(("blue", "green"))]
        walls = [Body(name, shape="line", length=length, color=COLORS["black"])
                 for name, length, _, _, _ in self._walls()]
        shape = (dict(shape="box", length=AGENT_BOX_LENGTH, width=AGENT_BOX_WIDTH) if self.box_agents
                 else dict(radius=AGENT_RADIUS))
        agents = [Body(f"agent_{i}", agent=True, rotatable=False, linear_friction=self.linear_friction,
                       u_range=self.u_range, f_range=self.f_range, v_range=self.v_range, color=COLORS[c], **shape)
                  for i, c in enumerate(("blue", "green"))]
        return Layout(bodies=goals + walls + agents, groups=[("agents", [a.name for a in agents])], dt=0.05,
                      substeps=16 if self.box_agents else 5, drag=0.0, linear_friction=self.linear_friction,
                      collision_force=10000 if self.box_agents else 500)

    def _obs_dim(self, group: str) -> int:
        return 4 + (2 if self.observe_rel_pos else 0)

    def _fields(self) -> dict[str, Field]:
        n = 2
        walls = self._walls()
        goal_x = SCENARIO_LENGTH / 2 - GOAL_DIST_FROM_WALL
        passage = {"ceil 2 0", "ceil 2 1", "ceil 2 2"} | ({"ceil 22 0", "ceil 22 1", "ceil 22 2"}
                                                         if self.mirror_passage else set())
        gain, integral_ts, derivative_ts = CONTROLLER_PARAMS
        dt = 0.05
        # VMAS's VelocityController: the integrator's windup limit is half the smaller force limit
        windup_cutoff = 0.5 * self.f_range * integral_ts / (dt * gain)
        return {
            "landmark_x": const([goal_x, -goal_x] + [x for _, _, x, _, _ in walls]),
            "landmark_y": const([0.0, 0.0] + [y for _, _, _, y, _ in walls]),
            "landmark_rot": const([0.0, 0.0] + [r for _, _, _, _, r in walls]),
            "wall_is_passage": const([int(name in passage) for name, _, _, _, _ in walls], "int"),
            "start_x": param(SCENARIO_LENGTH / 2 - AGENT_DIST_FROM_WALL),
            "spawn_noise": param(SPAWN_POS_NOISE),
            "goal_radius": param(AGENT_RADIUS / 2),
            "max_velocity": param(self.v_range),
            "min_input_norm": param(self.min_input_norm),
            "use_velocity_controller": param(int(self.use_velocity_controller), "int"),
            "dt_delay": param(self.dt_delay, "int"),
            "ctrl_gain": param(float(gain)), "inv_integral_ts": param(1.0 / integral_ts),
            "derivative_ts": param(derivative_ts), "windup_cutoff": param(windup_cutoff),
            "obs_noise": param(self.obs_noise), "observe_rel_pos": param(int(self.observe_rel_pos), "int"),
            "pos_shaping_factor": param(self.pos_shaping_factor), "final_reward": param(self.final_reward),
            "energy_rew_coeff": param(self.energy_rew_coeff),
            "energy_norm": param(math.sqrt(2 * (self.f_range**2))),
            "agent_collision_penalty": param(self.agent_collision_penalty),
            "passage_collision_penalty": param(self.passage_collision_penalty),
            "obstacle_collision_penalty": param(self.obstacle_collision_penalty),
            "min_collision_distance": param(MIN_COLLISION_DISTANCE),
            "done_on_completion": param(int(self.done_on_completion), "int"),
            # VMAS's names: agent.shaping, agent.controller.accum_errs / prev_err, agent.input_queue
            "shaping": state("float", n),
            "accum_errs": state("float", n, 2), "prev_err": state("float", n, 2),
            "input_queue": state("float", n, self.dt_delay, 2),
            "pos_rew": info("float", n), "final_rew": info("float", n), "energy_rew": info("float", n),
            "agent_collision_rew": info("float", n), "obstacle_collision_rew": info("float", n),
            "reached_goals": info("float"),
        }
