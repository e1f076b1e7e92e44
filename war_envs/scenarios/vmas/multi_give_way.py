"""MultiGiveWay-v0: VMAS 1.5.2's ``multi_give_way`` scenario (four robots cross a plus-shaped
junction of two corridors), with VMAS's velocity controller (GiveWay-v0's ``process_action``)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, scratch, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive, reached_goals_metric
from war_envs.scenarios.vmas.give_way import process_action

#: VMAS's map (``spawn_map``): metres, computed in Python floats as VMAS does
SCENARIO_LENGTH = 5
SCENARIO_WIDTH = 0.4
LONG_WALL_LENGTH = (SCENARIO_LENGTH / 2) - (SCENARIO_WIDTH / 2)
SHORT_WALL_LENGTH = SCENARIO_WIDTH
AGENT_RADIUS = 0.16  # also with box agents (the goals' size and the spawn points use it)
AGENT_BOX_LENGTH = 0.32
AGENT_BOX_WIDTH = 0.24
GOAL_DIST_FROM_WALL = AGENT_RADIUS + 0.05
AGENT_DIST_FROM_WALL = 0.5
MIN_COLLISION_DISTANCE = 0.005
N_AGENTS = 4
DT = 0.1
#: VMAS's VelocityController parameters here: standard form [gain, integral Ts, derivative Ts]
CONTROLLER_PARAMS = (2, 6, 0.002)
AGENT_COLORS = ("green", "blue", "red", "gray")


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at`` (no randomness): agent 0 at the west end (-2, 0), 1 north
    (0, 2), 2 east (2, 0), 3 south (0, -2); agent i's goal near the end of the previous agent's
    arm (agent 0: south, 1: west, 2: north, 3: east, 2.29 m out), the controllers' errors cleared,
    the walls in place (``reset_map``), the shaping distances."""
    L = w.n_landmarks
    n = w.u.shape[1]
    F0 = type(w.dt)(0.0)
    for k in range(L):
        w.pos[e, k, 0] = w.landmark_x[k]
        w.pos[e, k, 1] = w.landmark_y[k]
        w.rot[e, k] = w.landmark_rot[k]
    for i in range(n):
        w.pos[e, L + i, 0] = w.start_x[i]
        w.pos[e, L + i, 1] = w.start_y[i]
        for k in range(2):
            w.accum_errs[e, i, k] = F0
            w.prev_err[e, i, k] = F0
    for i in range(n):
        w.shaping[e, i] = W.distance(W.position(w, e, L + i), W.position(w, e, i)) * w.pos_shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent for all): each agent's decrease of the
    distance to its goal (times ``pos_shaping_factor``; ``-0.0001`` times the distance where
    that factor is 0), summed over the four agents with ``shared_rew``, plus ``final_reward``
    while all four are on their goals (closer than the goal radius 0.08), plus the agent's own
    ``agent_collision_penalty`` per other agent within 0.005 (VMAS's ``get_distance``, no
    batch-wide gate there).  VMAS's ``done()`` is never true here."""
    L = w.n_landmarks
    n = w.u.shape[1]
    F0 = type(w.dt)(0.0)
    total = F0
    all_on_goal = bool(True)
    for i in range(n):
        d = W.distance(W.position(w, e, L + i), W.position(w, e, i))
        if not (d < w.radius[i]):
            all_on_goal = False
        shaping = d * w.pos_shaping_factor
        r = w.shaping[e, i] - shaping
        if w.pos_shaping_factor == F0:
            r = -d * type(d)(0.0001)
        w.shaping[e, i] = shaping
        w.own_pos_rew[e, i] = r
        total = total + r
    final = F0
    if all_on_goal:
        final = w.final_reward
    for i in range(n):
        coll = F0
        for j in range(n):
            if j != i:
                if W.distance_at_most(w, e, L + i, L + j, w.min_collision_distance):
                    coll = coll + w.agent_collision_penalty
        pos_rew = w.own_pos_rew[e, i]
        if w.shared_rew != 0:
            pos_rew = total
        w.pos_rew[e, i] = pos_rew
        w.final_rew[e, i] = final
        w.agent_collision_rew[e, i] = coll
        w.reward[e, i] = (pos_rew + coll) + final
    W.record_reached(w, e, all_on_goal)
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), pos - goal (2), |pos - goal| (1)], each entry plus U(-obs_noise,
    obs_noise) noise where obs_noise > 0 (drawn from the world's stream of this episode step and
    agent)."""
    L = w.n_landmarks
    b = L + i
    p = W.position(w, e, b)
    rel = p - W.position(w, e, i)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, rel)
    o = W.write_value(out, e, i, o, G.vector_norm(rel))
    if w.obs_noise > type(w.dt)(0.0):
        rng = W.step_stream(w, e, i)
        for k in range(o):
            noise = W.uniform(wp.randf(rng), -w.obs_noise, w.obs_noise)
            out[e, i, k] = wp.float32(type(noise)(out[e, i, k]) + noise)


def _walls() -> list[tuple[str, float, float, float, float]]:
    """(name, length, x, y, rot) of every wall in VMAS's order (``spawn_map`` / ``reset_map``):
    eight long walls lining the two corridors, then the four short walls closing their ends."""
    half = SCENARIO_LENGTH / 2
    up = math.pi / 2
    long_pos = LONG_WALL_LENGTH / 2 - SCENARIO_LENGTH / 2
    side = SCENARIO_WIDTH / 2
    walls = []
    for i in range(8):
        if i < 4:
            walls.append((f"wall {i}", LONG_WALL_LENGTH, long_pos * (1 if i < 2 else -1),
                          side * (-1 if i % 2 == 0 else 1), 0.0))
        else:
            walls.append((f"wall {i}", LONG_WALL_LENGTH, side * (-1 if i % 2 == 0 else 1),
                           long_pos * (1 if i < 6 else -1), up))
    for i in range(4):
        end = -half if i % 2 == 0 else half
        walls.append((f"short wall {i}", SHORT_WALL_LENGTH, end if i < 2 else 0.0, 0.0 if i < 2 else end,
                      up if i < 2 else 0.0))
    return walls


def _starts() -> tuple[list[float], list[float], list[float], list[float]]:
    """The agents' start points and their goals (x, y per agent; VMAS's ``reset_world_at``):
    agent i places itself and the goal of agent i + 1 (mod 4)."""
    start = SCENARIO_LENGTH / 2 - AGENT_DIST_FROM_WALL
    goal = SCENARIO_LENGTH / 2 - GOAL_DIST_FROM_WALL
    sx, sy, gx, gy = [0.0] * 4, [0.0] * 4, [0.0] * 4, [0.0] * 4
    for i in range(N_AGENTS):
        nxt = (i + 1) % N_AGENTS
        if i in (0, 2):
            sign = -1 if i == 0 else 1
            sx[i], gx[nxt] = start * sign, goal * sign
        else:
            sign = 1 if i == 1 else -1
            sy[i], gy[nxt] = start * sign, goal * sign
    return sx, sy, gx, gy


class MultiGiveWay(VmasBase):
    """VMAS 1.5.2's ``multi_give_way``: two 5 m corridors, 0.4 m wide, cross in a plus; a robot
    starts 0.5 m from the end of each arm and must reach the end of the next arm round
    (counterclockwise: west to south, south to east, east to north, north to west), so all four
    meet at the junction, where there is room for only one at a time.

    Same keyword arguments and defaults as VMAS's scenario: ``u_range=0.5``, ``a_range=1``,
    ``obs_noise=0``, ``box_agents=False``, ``linear_friction=0.1``, ``min_input_norm=0.08``,
    ``comms_range=5`` (drawing only: VMAS draws lines between agents this close),
    ``shared_rew=True``, ``n_agents=4`` (VMAS ignores it: always four agents),
    ``pos_shaping_factor=1``, ``final_reward=0.01``, ``agent_collision_penalty=-0.1``, plus
    VMAS's environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0`` (green, west), ``agent_1`` (blue, north), ``agent_2`` (red, east),
    ``agent_3`` (gray, south), one group ``agents``: non-rotating spheres of radius 0.16
    (``box_agents``: 0.32 x 0.24 boxes, long side along x), linear friction ``linear_friction``,
    force limit ``f_range = a_range + linear_friction`` per component.  Steps of 0.1 s in 5
    substeps (16 with box agents), no drag, contact stiffness 500 (10 000 with boxes).
    **Actions**: a desired velocity in ``[-u_range, u_range]²``, clamped to norm ``u_range``,
    zeroed below norm ``min_input_norm``, tracked by VMAS's PID velocity controller (standard
    form, gain 2, integral time 6, derivative time 0.002, integrator clamped to
    ±0.5 f_range 6 / (0.1 · 2)), whose output times the mass is the force.  Discrete:
    ``Discrete(9)`` (0, -u_range, +u_range per component).  **Observation** ``[pos, vel,
    pos - goal, |pos - goal|]`` (7), plus uniform noise of half-width ``obs_noise`` on every
    entry.  **Reward** (per agent): the decrease of the agent's distance to its goal times
    ``pos_shaping_factor`` (``-0.0001`` times the distance where that is 0), summed over the
    four with ``shared_rew``; plus ``final_reward`` while all four are on their goals (within
    0.08); plus ``agent_collision_penalty`` for each other agent within 0.005 of it.
    **Termination**: none (VMAS's ``done`` is never true); truncation at ``max_steps``.
    **Info** (per agent, VMAS's): ``pos_rew``, ``final_rew``, ``agent_collision_rew``; and
    ``reached_goals`` (per world: 1.0 while all four are on their goals), whose episode maximum
    is the ``success`` metric (VMAS's ``reached_goal``).

    **Where this differs from VMAS.**  VMAS pops ``n_agents`` and ignores it (four agents
    whatever it says); here any value but 4 is refused, so a run never silently gets another
    number of agents than it asked for.  ``comms_range`` is accepted but the picture does not
    draw VMAS's communication lines.  Observation noise is drawn from the world's own stream
    (VMAS: torch's global generator).  Contacts are worked out per world (VMAS's batch-wide
    ``collides`` gate: see ``world.py``).  In float64 worlds the controller works in float64 but
    its force ``u`` is float32, as VMAS's actions are.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``multi_give_way``.
    """

    env_id = "MultiGiveWay-v0"
    vmas_scenario = "multi_give_way"
    per_agent_metrics = ("pos_rew", "final_rew", "agent_collision_rew")
    episode_metrics = (reached_goals_metric("1 if all four agents were on their goals at once during the episode"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, u_range: float = 0.5, a_range: float = 1, obs_noise: float = 0, box_agents: bool = False,
                 linear_friction: float = 0.1, min_input_norm: float = 0.08, comms_range: float = 5,
                 shared_rew: bool = True, n_agents: int = 4, pos_shaping_factor: float = 1,
                 final_reward: float = 0.01, agent_collision_penalty: float = -0.1, **kwargs) -> None:
        self.u_range = check_positive("u_range", u_range)
        self.a_range = check_positive("a_range", a_range)
        self.obs_noise = v.check_float("obs_noise", obs_noise, low=0.0)
        self.random_start = self.obs_noise > 0  # VMAS's start is fixed; only the noise is drawn
        self.box_agents = v.check_bool("box_agents", box_agents)
        self.linear_friction = v.check_float("linear_friction", linear_friction, low=0.0)
        self.min_input_norm = v.check_float("min_input_norm", min_input_norm, low=0.0)
        self.comms_range = v.check_float("comms_range", comms_range, low=0.0)
        self.shared_rew = v.check_bool("shared_rew", shared_rew)
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        if self.n_agents != N_AGENTS:
            raise ValueError(f"n_agents: VMAS's multi_give_way always has {N_AGENTS} agents (it ignores this "
                             f"argument), got {self.n_agents}")
        self.pos_shaping_factor = v.check_float("pos_shaping_factor", pos_shaping_factor)
        self.final_reward = v.check_float("final_reward", final_reward)
        self.agent_collision_penalty = v.check_float("agent_collision_penalty", agent_collision_penalty)
        self.f_range = self.a_range + self.linear_friction
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        goals = [Body(f"goal {i}", collide=False, radius=AGENT_RADIUS / 2, color=COLORS[c])
                 for i, c in enumerate(AGENT_COLORS)]
        walls = [Body(name, shape="line", length=length, color=COLORS["black"]) for name, length, _, _, _ in _walls()]
        shape = (dict(shape="box", length=AGENT_BOX_LENGTH, width=AGENT_BOX_WIDTH) if self.box_agents
                 else dict(radius=AGENT_RADIUS))
        agents = [Body(f"agent_{i}", agent=True, rotatable=False, linear_friction=self.linear_friction,
                       u_range=self.u_range, f_range=self.f_range, color=COLORS[c], **shape)
                  for i, c in enumerate(AGENT_COLORS)]
        return Layout(bodies=goals + walls + agents, groups=[("agents", [a.name for a in agents])], dt=DT,
                      substeps=16 if self.box_agents else 5, drag=0.0, linear_friction=self.linear_friction,
                      collision_force=10000 if self.box_agents else 500)

    def _obs_dim(self, group: str) -> int:
        return 7

    def _fields(self) -> dict[str, Field]:
        n = N_AGENTS
        walls = _walls()
        sx, sy, gx, gy = _starts()
        gain, integral_ts, derivative_ts = CONTROLLER_PARAMS
        # VMAS's VelocityController: the integrator's windup limit is half the force limit
        windup_cutoff = 0.5 * self.f_range * integral_ts / (DT * gain)
        return {
            "landmark_x": const(gx + [x for _, _, x, _, _ in walls]),
            "landmark_y": const(gy + [y for _, _, _, y, _ in walls]),
            "landmark_rot": const([0.0] * n + [r for _, _, _, _, r in walls]),
            "start_x": const(sx), "start_y": const(sy),
            # GiveWay-v0's process_action: always the velocity controller, no delay
            "max_velocity": param(self.u_range), "min_input_norm": param(self.min_input_norm),
            "use_velocity_controller": param(1, "int"), "dt_delay": param(0, "int"),
            "ctrl_gain": param(float(gain)), "inv_integral_ts": param(1.0 / integral_ts),
            "derivative_ts": param(derivative_ts), "windup_cutoff": param(windup_cutoff),
            "obs_noise": param(self.obs_noise), "shared_rew": param(int(self.shared_rew), "int"),
            "pos_shaping_factor": param(self.pos_shaping_factor), "final_reward": param(self.final_reward),
            "agent_collision_penalty": param(self.agent_collision_penalty),
            "min_collision_distance": param(MIN_COLLISION_DISTANCE),
            # VMAS's names: agent.shaping, agent.controller.accum_errs / prev_err
            "shaping": state("float", n),
            "accum_errs": state("float", n, 2), "prev_err": state("float", n, 2),
            "input_queue": scratch("float", n, 0, 2),  # (GiveWay-v0's delay queue: empty)
            "own_pos_rew": scratch("float", n),
            "pos_rew": info("float", n), "final_rew": info("float", n), "agent_collision_rew": info("float", n),
            "reached_goals": info("float"),
        }
