"""Dropout-v0: VMAS 1.5.2's ``dropout`` scenario (a team sends one agent to the goal, paying for
every agent's effort)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, scratch, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_room, reached_goals_metric

AGENT_RADIUS = 0.05
GOAL_RADIUS = 0.03
DEFAULT_ENERGY_COEFF = 0.02
SPAWN = 1.0  # VMAS's x_bounds = y_bounds = (-1, 1)
#: lanes of torch's vectorised float32 CPU sum (``Vectorized<float>`` as its sum kernel uses it)
SUM_LANES = wp.constant(8)


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the agents, then the goal, spawned at random in ``[-1, 1]²``
    at least ``min_dist`` (0.09) from everything placed before; with ``start_same_point`` the
    agents stay at the origin and the goal keeps ``min_dist`` from it.  The goal is not eaten."""
    rng = W.episode_stream(w, e)
    W.clear_placed(w, e)
    n = w.u.shape[1]
    L = w.n_landmarks
    s = w.spawn
    zero = type(w.dt)(0.0)
    for i in range(n):
        if w.start_same_point != 0:
            W.place_at(w, e, L + i, wp.vector(zero, zero))  # VMAS's one occupied position: the origin
        else:
            rng = W.place_randomly(w, e, rng, L + i, w.min_dist, -s, s, -s, s)
    rng = W.place_randomly(w, e, rng, 0, w.min_dist, -s, s, -s, s)
    w.eaten[e] = False


@wp.func(inline=True)
def lane_slot(w: Any, e: int, k: int, lane: int, rows: int):
    """Slot ``k`` of lane ``lane`` of torch's ``multi_row_sum`` over ``rows`` rows of four
    8-float vectors of ``w.energy_term[e, :]``: blocks of 16 rows summed from 0 and accumulated
    from 0 at its second level, the rows past the last block summed from 0, the two added
    (exact for ``rows < 256``: fewer than 8 192 agents)."""
    zero = type(w.dt)(0.0)
    blocks = rows // 16
    upper = zero
    for b in range(blocks):
        block = zero
        for r in range(16 * b, 16 * b + 16):
            block = block + w.energy_term[e, (4 * r + k) * SUM_LANES + lane]
        upper = upper + block
    low = zero
    for r in range(16 * blocks, rows):
        low = low + w.energy_term[e, (4 * r + k) * SUM_LANES + lane]
    return low + upper


@wp.func(inline=True)
def torch_sum(w: Any, e: int):
    """``w.energy_term[e, :]`` summed in the order of torch's float32 CPU ``sum(-1)`` over a
    contiguous row (VMAS's ``torch.stack(terms, dim=1).sum(-1)``, ``SumKernel.cpp``'s
    ``row_sum``): fewer than 8 values go into four accumulators (whole groups of four, the rest
    into the first), added in order; from 8 on, the same over 8-float vectors, then the values
    past the last whole vector and the 8 lanes added in order to 0."""
    n = w.energy_term.shape[1]
    zero = type(w.dt)(0.0)
    if n < SUM_LANES:
        acc0 = zero
        acc1 = zero
        acc2 = zero
        acc3 = zero
        whole = (n // 4) * 4
        if whole > 0:
            acc0 = acc0 + w.energy_term[e, 0]
            acc1 = acc1 + w.energy_term[e, 1]
            acc2 = acc2 + w.energy_term[e, 2]
            acc3 = acc3 + w.energy_term[e, 3]
        for j in range(whole, n):
            acc0 = acc0 + w.energy_term[e, j]
        return ((acc0 + acc1) + acc2) + acc3
    vectors = n // SUM_LANES
    rows = vectors // 4
    total = zero
    for j in range(vectors * SUM_LANES, n):
        total = total + w.energy_term[e, j]
    for lane in range(SUM_LANES):
        acc0 = lane_slot(w, e, 0, lane, rows)
        for r in range(rows * 4, vectors):
            acc0 = acc0 + w.energy_term[e, r * SUM_LANES + lane]
        acc0 = acc0 + lane_slot(w, e, 1, lane, rows)
        acc0 = acc0 + lane_slot(w, e, 2, lane, rows)
        acc0 = acc0 + lane_slot(w, e, 3, lane, rows)
        total = total + acc0
    return total


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, the same for all): ``pos_rew`` 1 the
    step an agent first reaches the uneaten goal (centres nearer than the two radii), then the
    goal is eaten; ``energy_rew = energy_coeff * -(sum over agents of |u| / |u_max|)``; each
    agent's reward ``pos_rew + energy_rew``.  Returns VMAS's ``done()``: some agent on the goal
    now."""
    n = w.u.shape[1]
    L = w.n_landmarks
    zero = type(w.dt)(0.0)
    goal = W.position(w, e, 0)
    any_on = bool(False)  # noqa: UP018  (a Warp variable the loop below may set)
    for i in range(n):
        if W.distance(W.position(w, e, L + i), goal) < w.eat_dist:
            any_on = True
    pos_rew = zero
    if any_on and not w.eaten[e]:
        pos_rew = type(zero)(1.0)
    if any_on:
        w.eaten[e] = True
    for i in range(n):
        u = wp.vector(type(zero)(w.u[e, i, 0]), type(zero)(w.u[e, i, 1]))
        w.energy_term[e, i] = G.vector_norm(u) / w.energy_norm
    energy_rew = w.energy_coeff * -torch_sum(w, e)
    rew = pos_rew + energy_rew
    for i in range(n):
        w.reward[e, i] = rew
        w.pos_rew[e, i] = pos_rew
        w.energy_rew[e, i] = energy_rew
    W.record_reached(w, e, any_on)
    return any_on


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), goal - pos (2), eaten (1)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, W.position(w, e, 0) - p)
    o = W.write_flag(out, e, i, o, w.eaten[e])


class Dropout(VmasBase):
    """VMAS 1.5.2's ``dropout``: ``n_agents`` spheres share one goal; the team is paid 1 once,
    the first time any agent reaches it, and pays for the effort of every agent, so the best
    team sends one agent and keeps the others still.

    Same keyword arguments and defaults as VMAS's scenario, plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``, VMAS's and TorchRL's ``VmasEnv`` name):
    holonomic spheres of radius 0.05 that collide with nothing, force ``u ∈ [-1, 1]²``
    (continuous) or ``Discrete(9)``; one 0.1 s step, drag 0.25, no bounds.  The **goal** (the
    landmark ``goal``, the first body) is a sphere of radius 0.03.  At the start the agents,
    then the goal, are placed at random in ``[-1, 1]²`` at least 0.09 from every body placed
    before them (with ``start_same_point``: every agent at the origin, the goal at least 0.09
    from it).

    **Observation** (7) ``[pos, vel, goal - pos, eaten]`` (``eaten``: 1.0 once the goal has been
    reached this episode).

    **Rewards** (the same for every agent): ``pos_rew`` is 1 on the step some agent first
    reaches the goal (its centre nearer the goal's than 0.05 + 0.03; the goal is then eaten and
    no longer drawn), else 0; ``energy_rew = -energy_coeff · Σ_agents |u| / √2`` (every agent's
    force over the largest force's norm).  The reward is ``pos_rew + energy_rew``.

    **Termination**: some agent on the goal (VMAS's ``done``, whether or not it was eaten
    before); truncation at ``max_steps``.  **Info**: VMAS's ``pos_rew`` and ``energy_rew`` (per
    agent, the same for all), and ``reached_goals`` (per world: 1.0 where VMAS's done holds), the
    ``success`` metric.

    **Arguments** (VMAS's names and defaults): ``n_agents=4`` (≥ 1; as many as fit 0.09 apart in
    ``[-1, 1]²``: VMAS's spawning would never end otherwise), ``energy_coeff=0.02`` (the weight
    of the team's energy penalty, any finite float) and ``start_same_point=False``.

    **Where this differs from VMAS.**  Nothing in a world's dynamics, rewards or observations
    (the energy terms are summed in torch's CPU order).  VMAS's spawning redraws every world of
    the batch until all of them are free (each world keeps its first acceptable draw); each world
    here redraws from its own stream: the same distribution, compared in the tests.  VMAS warns
    about unknown keyword arguments; they are refused here.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``dropout``.
    """

    env_id = "Dropout-v0"
    vmas_scenario = "dropout"
    per_agent_metrics = ("pos_rew", "energy_rew")
    episode_metrics = (reached_goals_metric("1 if an agent reached the goal (VMAS's done) during the episode"),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, energy_coeff: float = DEFAULT_ENERGY_COEFF,
                 start_same_point: bool = False, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.energy_coeff = v.check_float("energy_coeff", energy_coeff)
        self.start_same_point = v.check_bool("start_same_point", start_same_point)
        self.min_dist = GOAL_RADIUS + AGENT_RADIUS + 0.01
        if not self.start_same_point:
            check_room("n_agents", self.min_dist, self.n_agents + 1, SPAWN, SPAWN)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        goal = Body("goal", collide=False, radius=GOAL_RADIUS, color=COLORS["green"])
        agents = [Body(f"agent_{i}", agent=True, collide=False, radius=AGENT_RADIUS, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        return Layout(bodies=[goal] + agents, groups=[("agents", [a.name for a in agents])])

    def _obs_dim(self, group: str) -> int:
        return 7

    def _fields(self) -> dict[str, Field]:
        agent = self.layout.agents[0]
        return {
            "spawn": param(SPAWN),
            "min_dist": param(self.min_dist),
            "start_same_point": param(int(self.start_same_point), "int"),
            # VMAS compares the float32 norm with the Python sum of the radii, rounded to float32
            "eat_dist": param(AGENT_RADIUS + GOAL_RADIUS),
            "energy_coeff": param(self.energy_coeff),
            # VMAS's math.sqrt(dim_p * (u_range * u_multiplier) ** 2) (the same for every agent)
            "energy_norm": param(math.sqrt(2 * ((agent.u_range * agent.u_multiplier) ** 2))),
            "eaten": state("bool"),
            "energy_term": scratch("float", self.n_agents),
            "pos_rew": info("float", self.n_agents), "energy_rew": info("float", self.n_agents),
            "reached_goals": info("float"),
        }

    def bodies_drawn(self, world: int) -> list[bool]:
        """The goal once eaten is not drawn (VMAS's ``is_rendering`` turned off)."""
        eaten = bool(self._scenario_state["eaten"].numpy()[world])
        return [b.visible and not (k == 0 and eaten) for k, b in enumerate(self.layout.bodies)]
