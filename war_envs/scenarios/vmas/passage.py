"""Passage-v0: VMAS 1.5.2's ``passage`` scenario (five agents in a cross formation go through
the gaps of a wall of boxes)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const, info, param, state
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, reached_goals_metric

N_AGENTS = 5
AGENT_RADIUS = 0.03333
AGENT_SPACING = 0.1
PASSAGE_WIDTH = 0.2  # the boxes' width (y extent)
PASSAGE_LENGTH = 0.103  # the boxes' length (x extent)
SHAPING_FACTOR = 100
X_SEMIDIM = 1
#: how many boxes the wall is made of (VMAS: int((2 x_semidim + 2 r) // passage_length) = 20)
N_BOXES = int((2 * X_SEMIDIM + 2 * AGENT_RADIUS) // PASSAGE_LENGTH)
#: the formation: slot i's offset from the centre (the last slot is the centre)
FORMATION = [(AGENT_SPACING, 0.0), (0.0, AGENT_SPACING), (-AGENT_SPACING, 0.0), (0.0, -AGENT_SPACING)]


@wp.func
def shuffle(rng: wp.uint32, order: Any, e: int, n: int):
    """A uniform random permutation of 0..n-1 into ``order[e, :n]`` (Fisher-Yates); returns the
    stream advanced."""
    for i in range(n):
        order[e, i] = i
    for i in range(n - 1, 0, -1):
        j = wp.randi(rng, 0, i + 1)
        t = order[e, i]
        order[e, i] = order[e, j]
        order[e, j] = t
    return rng


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the formation's centre for the agents (x, then y below the
    wall) and for the goals (x, then y above it), a random permutation of the agents over the
    formation's slots (each agent's goal in its own slot of the goal formation), the shaping
    distances, and a random permutation of the boxes over the wall's slots (the boxes that do
    not collide are the gaps)."""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    n = w.u.shape[1]
    ax = W.uniform(wp.randf(rng), -w.centre_x, w.centre_x)
    ay = W.uniform(wp.randf(rng), -w.centre_x, w.agent_y_hi)
    gx = W.uniform(wp.randf(rng), -w.centre_x, w.centre_x)
    gy = W.uniform(wp.randf(rng), w.goal_y_lo, w.centre_x)
    rng = shuffle(rng, w.order, e, n)
    for slot in range(n):
        k = w.order[e, slot]
        goal_x = gx
        goal_y = gy
        agent_x = ax
        agent_y = ay
        if slot < n - 1:
            goal_x = gx + w.formation_x[slot]
            goal_y = gy + w.formation_y[slot]
            agent_x = ax + w.formation_x[slot]
            agent_y = ay + w.formation_y[slot]
        w.pos[e, k, 0] = goal_x
        w.pos[e, k, 1] = goal_y
        w.pos[e, L + k, 0] = agent_x
        w.pos[e, L + k, 1] = agent_y
    for k in range(n):
        d = W.distance(W.position(w, e, L + k), W.position(w, e, k))
        w.global_shaping[e, k] = d * w.shaping_factor
    n_boxes = w.box_x.shape[0]
    rng = shuffle(rng, w.order, e, n_boxes)
    for slot in range(n_boxes):
        b = n + w.order[e, slot]
        w.pos[e, b, 0] = w.box_x[slot]
        w.pos[e, b, 1] = type(ax)(0.0)


@wp.func(inline=True)
def penalties(w: Any, e: int, i: int, rew: Any):
    """``rew`` minus 10 for every other agent overlapping agent i and every wall box (not a
    gap) overlapping it, in VMAS's order (VMAS's ``is_overlapping``)."""
    L = w.n_landmarks
    n = w.u.shape[1]
    ten = type(rew)(10.0)
    for j in range(n):
        if j != i:
            if W.is_overlapping(w, e, L + j, L + i):
                rew = rew - ten
    for k in range(w.n_passages, w.box_x.shape[0]):
        if W.is_overlapping(w, e, L + i, n + k):
            rew = rew - ten
    return rew


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: each agent's decrease of its goal distance times 100 (``shared_reward``:
    the sum over agents), minus 10 per overlap with another agent or a wall box.  With
    ``shared_reward`` VMAS subtracts each agent's overlaps from the one shared tensor as it goes,
    so agent i's reward also carries the overlaps of agents 0..i-1 (reproduced).  Returns VMAS's
    ``done()``: every agent within half its radius of its goal."""
    L = w.n_landmarks
    n = w.u.shape[1]
    F0 = type(w.dt)(0.0)
    shared = F0
    done = bool(True)
    for i in range(n):
        d = W.distance(W.position(w, e, L + i), W.position(w, e, i))
        if not (d <= w.done_dist):
            done = False
        shaping = d * w.shaping_factor
        w.agent_rew[e, i] = w.global_shaping[e, i] - shaping
        w.global_shaping[e, i] = shaping
        shared = shared + w.agent_rew[e, i]
    for i in range(n):
        rew = F0 + w.agent_rew[e, i]
        if w.shared_reward != 0:
            rew = shared
        rew = penalties(w, e, i, rew)
        if w.shared_reward != 0:
            shared = rew
        w.reward[e, i] = rew
    W.record_reached(w, e, done)
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), goal - pos (2), gap box - pos (2 per gap, in box order)]."""
    L = w.n_landmarks
    n = w.u.shape[1]
    b = L + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, W.position(w, e, i) - p)
    for k in range(w.n_passages):
        o = W.write_vec(out, e, i, o, W.position(w, e, n + k) - p)


class Passage(VmasBase):
    """VMAS 1.5.2's ``passage``: five agents in a cross formation (spacing 0.1) start below a
    wall of 20 boxes across the 2 x 2 arena and must reach the same formation above it, going
    through the ``n_passages`` gaps (boxes taken out of the wall, at random places each episode).

    Same keyword arguments and defaults as VMAS's scenario: ``n_passages=1`` (1..20, as VMAS
    asserts) and ``shared_reward=False``, plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 … agent_4`` (one group ``agents``): spheres of radius 0.03333, force
    ``0.7 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one step of 0.1 s, drag 0.25,
    positions kept in ``[-1, 1]²``.  Each agent's goal takes its slot of the formation (which
    agent takes which slot is random).  The wall boxes (0.103 x 0.2) collide with agents, not
    with each other.  **Observation** ``[pos, vel, goal - pos, gap - pos for each gap]``
    (``6 + 2 n_passages``).  **Reward**: 100 times the decrease of the agent's goal distance
    (``shared_reward``: of every agent's, summed), minus 10 for each other agent and each wall
    box it overlaps (with ``shared_reward`` VMAS's running subtraction: agent i also loses the
    overlaps of the agents before it).  **Termination**: every agent within half its radius of
    its goal (VMAS's ``done``); truncation at ``max_steps``.  **Info**: VMAS's scenario has none;
    ``reached_goals`` (per world: 1.0 where VMAS's done holds) is the ``success`` metric.

    **Where this differs from VMAS.**  When VMAS resets every world at once (``env.reset()``) it
    draws one permutation of agents over slots and one of boxes over the wall for the whole
    batch; each world here draws its own (VMAS's ``reset_at(i)``).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``passage``.
    """

    env_id = "Passage-v0"
    vmas_scenario = "passage"
    episode_metrics = (reached_goals_metric(),)
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_passages: int = 1, shared_reward: bool = False, **kwargs) -> None:
        self.n_passages = v.check_int("n_passages", n_passages, minimum=1)
        if self.n_passages > N_BOXES:
            raise ValueError(f"n_passages: expected 1..{N_BOXES} (VMAS), got {self.n_passages}")
        self.shared_reward = v.check_bool("shared_reward", shared_reward)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.7, color=COLORS["blue"])
                  for i in range(N_AGENTS)]
        goals = [Body(f"goal {i}", collide=False, radius=AGENT_RADIUS, color=COLORS["light_green"])
                 for i in range(N_AGENTS)]
        boxes = [f"passage {i}" for i in range(N_BOXES)]
        # the first n_passages boxes are the gaps: no collisions, not drawn (VMAS's is_rendering)
        walls = [Body(name, shape="box", length=PASSAGE_LENGTH, width=PASSAGE_WIDTH, collide=i >= self.n_passages,
                      visible=i >= self.n_passages, color=COLORS["red"], ignores=frozenset(boxes))
                 for i, name in enumerate(boxes)]
        return Layout(bodies=goals + walls + agents, groups=[("agents", [a.name for a in agents])],
                      x_semidim=X_SEMIDIM, y_semidim=X_SEMIDIM)

    def _obs_dim(self, group: str) -> int:
        return 6 + 2 * self.n_passages

    def _fields(self) -> dict[str, Field]:
        n = N_AGENTS
        margin = 3 * AGENT_RADIUS + AGENT_SPACING
        return {
            "centre_x": param(1 - margin),  # the centres' x range is +-(1 - margin), and so on
            "agent_y_hi": param(-margin - PASSAGE_WIDTH / 2),
            "goal_y_lo": param(margin + PASSAGE_WIDTH / 2),
            "formation_x": const([dx for dx, _ in FORMATION]), "formation_y": const([dy for _, dy in FORMATION]),
            "box_x": const([-1 - AGENT_RADIUS + PASSAGE_LENGTH / 2 + PASSAGE_LENGTH * i for i in range(N_BOXES)]),
            "n_passages": param(self.n_passages, "int"),
            "shared_reward": param(int(self.shared_reward), "int"),
            "shaping_factor": param(float(SHAPING_FACTOR)),
            "done_dist": param(AGENT_RADIUS / 2),
            "global_shaping": state("float", n),
            "order": Field("scratch", "int", (N_BOXES,)),
            "agent_rew": Field("scratch", "float", (n,)),
            "reached_goals": info("float"),
        }
