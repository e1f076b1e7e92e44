"""BallPassage-v0: VMAS 1.5.2's ``ball_passage`` scenario (two agents push a ball through the gaps
of a wall of boxes onto a goal)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase
from war_envs.scenarios.vmas.passage import shuffle

N_AGENTS = 2
AGENT_RADIUS = 0.03333
BALL_RADIUS = AGENT_RADIUS
AGENT_SPACING = 0.5
PASSAGE_WIDTH = 0.2  # the boxes' width (y extent)
PASSAGE_LENGTH = 0.103  # the boxes' length (x extent)
COLLISION_REWARD = -0.06
X_SEMIDIM = Y_SEMIDIM = 1
#: how many boxes the wall is made of (VMAS: int((2 x_semidim + 2 r) // passage_length) = 20)
N_BOXES = int((2 * X_SEMIDIM + 2 * AGENT_RADIUS) // PASSAGE_LENGTH)
GOAL, BALL, FIRST_BOX = 0, 1, 2


def gap_boxes(n_passages: int) -> list[int]:
    """The boxes VMAS takes out of the wall (``create_passage_map``'s ``removed``): the
    ``n_passages`` consecutive indices around ``N_BOXES // 2``."""
    return [i for i in range(N_BOXES)
            if (N_BOXES // 2) - n_passages / 2 <= i < (N_BOXES // 2) + n_passages / 2]


@wp.func
def is_gap(w: Any, k: int):
    """Whether box k (0..N_BOXES-1, VMAS's ``self.passages`` order) is a gap (does not collide)."""
    return k >= w.gap_start and k < w.gap_start + w.n_passages


@wp.func(inline=True)
def box_overlaps(w: Any, e: int, box: int, sphere: int):
    """VMAS's ``World.is_overlapping`` of a wall box and a sphere (the ball or an agent)."""
    return W.is_overlapping(w, e, box, sphere)


@wp.func(inline=True)
def gap_distance(w: Any, e: int):
    """The ball's distance to the nearest gap (the minimum over the gap boxes, in box order)."""
    ball = W.position(w, e, BALL)
    best = type(w.dt)(0.0)
    for j in range(w.n_passages):
        d = W.distance(ball, W.position(w, e, FIRST_BOX + w.gap_start + j))
        if j == 0:
            best = d
        else:
            best = wp.min(best, d)
    return best


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the pair's angle ~ U(-pi/2, pi/2) (-pi/2 without
    ``random_start_angle``) and its half offset ``0.25 (cos, sin)``; the ball's x, then y, below
    the wall with room for both agents (each at the ball -+ the half offset); the goal's x, then
    y, above the wall; a random permutation of the boxes over the wall's slots (none with
    ``fixed_passage``); the two shaping distances.  Every bound and draw in VMAS's float32
    operation order (``(lo - hi) * u + hi``)."""
    rng = W.episode_stream(w, e)
    L = w.n_landmarks
    angle = W.uniform(wp.randf(rng), w.angle_lo, w.angle_hi)
    dx = w.half_spacing * wp.cos(angle)
    dy = w.half_spacing * wp.sin(angle)
    dx_abs = wp.abs(dx)
    dy_abs = wp.abs(dy)
    min_x = -w.x_semidim + (w.agent_radius + dx_abs)
    max_x = w.x_semidim - (w.agent_radius + dx_abs)
    min_y = -w.y_semidim + (w.agent_radius + dy_abs)
    max_y = w.start_y_top - dy_abs
    bx = (min_x - max_x) * type(w.dt)(wp.randf(rng)) + max_x
    by = (min_y - max_y) * type(w.dt)(wp.randf(rng)) + max_y
    w.pos[e, BALL, 0] = bx
    w.pos[e, BALL, 1] = by
    w.pos[e, L, 0] = bx - dx
    w.pos[e, L, 1] = by - dy
    w.pos[e, L + 1, 0] = bx + dx
    w.pos[e, L + 1, 1] = by + dy
    w.pos[e, GOAL, 0] = w.goal_x_span * type(w.dt)(wp.randf(rng)) + w.goal_x_hi
    w.pos[e, GOAL, 1] = w.goal_y_span * type(w.dt)(wp.randf(rng)) + w.goal_y_hi
    n_boxes = w.box_x.shape[0]
    if w.fixed_passage != 0:
        for slot in range(n_boxes):
            w.order[e, slot] = slot
    else:
        rng = shuffle(rng, w.order, e, n_boxes)
    for slot in range(n_boxes):
        b = FIRST_BOX + w.order[e, slot]
        w.pos[e, b, 0] = w.box_x[slot]
        w.pos[e, b, 1] = type(w.dt)(0.0)
    w.pos_shaping_pre[e] = gap_distance(w, e) * w.pos_shaping_factor
    w.pos_shaping_post[e] = W.distance(W.position(w, e, BALL), W.position(w, e, GOAL)) * w.pos_shaping_factor


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (worked out at the first agent, shared by both): while the ball is below
    the wall (y <= 0) the decrease of its distance to the nearest gap, above it the decrease of
    its distance to the goal (both shaping distances updated every step); plus -0.06 for each
    (agent, wall box) and (wall box, ball) overlap.  Returns VMAS's ``done()``: the ball within
    0.01 of the goal, or at the arena's edge (within its radius of a side)."""
    L = w.n_landmarks
    n = w.u.shape[1]
    zero = type(w.dt)(0.0)
    ball = W.position(w, e, BALL)
    goal = W.position(w, e, GOAL)
    passed = ball[1] > zero
    pos_rew = zero
    shaping = gap_distance(w, e) * w.pos_shaping_factor
    if not passed:
        pos_rew = pos_rew + (w.pos_shaping_pre[e] - shaping)
    w.pos_shaping_pre[e] = shaping
    to_goal = W.distance(ball, goal)
    shaping = to_goal * w.pos_shaping_factor
    if passed:
        pos_rew = pos_rew + (w.pos_shaping_post[e] - shaping)
    w.pos_shaping_post[e] = shaping
    collision_rew = zero
    n_boxes = w.box_x.shape[0]
    # (nested ifs: the overlap test is worked out for the wall boxes only)
    for i in range(n):
        for k in range(n_boxes):
            if not is_gap(w, k):
                if box_overlaps(w, e, FIRST_BOX + k, L + i):
                    collision_rew = collision_rew + w.collision_reward
    for k in range(n_boxes):
        if not is_gap(w, k):
            if box_overlaps(w, e, FIRST_BOX + k, BALL):
                collision_rew = collision_rew + w.collision_reward
    rew = pos_rew + collision_rew
    for i in range(n):
        w.reward[e, i] = rew
        w.pos_rew[e, i] = pos_rew
        w.collision_rew[e, i] = collision_rew
    on_goal = to_goal <= w.done_dist
    at_edge = (w.edge_lo >= ball[0] or ball[0] >= w.edge_hi or w.edge_lo >= ball[1] or ball[1] >= w.edge_hi)
    w.reached_goal[e] = zero
    if on_goal:
        w.reached_goal[e] = type(w.dt)(1.0)
    w.ball_passed[e] = zero
    if passed:
        w.ball_passed[e] = type(w.dt)(1.0)
    return on_goal or at_edge


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos (2), vel (2), pos - goal (2), pos - ball (2), pos - gap box (2 per gap, in box
    order)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p - W.position(w, e, GOAL))
    o = W.write_vec(out, e, i, o, p - W.position(w, e, BALL))
    for j in range(w.n_passages):
        o = W.write_vec(out, e, i, o, p - W.position(w, e, FIRST_BOX + w.gap_start + j))


def _reached(info: dict) -> torch.Tensor:
    return info["reached_goal"]


def _passed(info: dict) -> torch.Tensor:
    return info["ball_passed"]


class BallPassage(VmasBase):
    """VMAS 1.5.2's ``ball_passage``: two agents start on either side of a ball below a wall of
    20 boxes across the 2 x 2 arena and must push the ball through one of the ``n_passages``
    gaps (boxes taken out of the middle of the wall, placed at random slots each episode) onto a
    goal above the wall.

    Same keyword arguments and defaults as VMAS's scenario: ``n_passages=1`` (1..20, as VMAS
    asserts), ``fixed_passage=False`` (``True``: the boxes keep their order, the gaps in the
    middle of the wall) and ``random_start_angle=True`` (``False``: the agents always start
    vertically aligned with the ball, agent 0 above it), plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): ``goal`` (a disc of radius 0.03333, no collisions),
    ``ball`` (a movable sphere of radius 0.03333, mass 1, friction 0.02, no drag),
    ``passage 0 … passage 19`` (the wall's 0.103 x 0.2 boxes on y = 0; the gaps are the boxes
    that do not collide and are not drawn; boxes collide with spheres, not with each other),
    then the agents.  Positions are kept in ``[-1, 1]²``; the world has no drag and no friction.

    **Agents** ``agent_0``, ``agent_1`` (one group ``agents``): spheres of radius 0.03333, mass 2,
    drag 0.25, force ``0.7 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one step of
    0.1 s.  They start at the ball ∓ ``0.25 (cos a, sin a)``, ``a ~ U(-π/2, π/2)``; the ball
    uniformly below the wall (with room for both agents), the goal uniformly above it.
    **Observation** (``8 + 2 n_passages``) ``[pos, vel, pos - goal, pos - ball, pos - gap for each
    gap]``.  **Reward** (shared): the decrease of the ball's distance to the nearest gap while it
    is below the wall (y <= 0), of its distance to the goal once above; plus -0.06 for every
    (agent, wall box) and every (ball, wall box) overlap.  **Termination**: the ball within 0.01
    of the goal or within its radius of the arena's edge (VMAS's ``done``); truncation at
    ``max_steps``.  **Info** (per agent, VMAS's): ``pos_rew`` and ``collision_rew``; per world:
    ``reached_goal`` (1.0 while the ball is within 0.01 of the goal) and ``ball_passed`` (1.0
    while it is past the wall's centre line, y > 0).  Episode metrics: ``success`` (the ball
    reached the goal) and ``passed`` (the ball went through the wall).

    **Where this differs from VMAS.**  Nothing in a world's dynamics, rewards or observations
    (the overlap penalty uses VMAS's own threshold, ``radius + LINE_MIN_DIST`` summed as Python
    floats).  When VMAS resets every world at once (``env.reset()``) it
    draws one permutation of the boxes over the wall for the whole batch; each world here draws
    its own (VMAS's ``reset_at(i)``).  VMAS draws a batch's starts from torch's generator; each
    world here draws its own from its stream (the same distribution, compared in the tests).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``ball_passage``.
    """

    env_id = "BallPassage-v0"
    vmas_scenario = "ball_passage"
    per_agent_metrics = ("pos_rew", "collision_rew")
    episode_metrics = (
        EpisodeMetric("success", "1 if the ball reached its goal (within 0.01) during the episode", _reached, "any"),
        EpisodeMetric("passed", "1 if the ball went through the wall during the episode", _passed, "any"),
    )
    progress_metric = "success"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_passages: int = 1, fixed_passage: bool = False, random_start_angle: bool = True,
                 **kwargs) -> None:
        self.n_passages = v.check_int("n_passages", n_passages, minimum=1)
        if self.n_passages > N_BOXES:
            raise ValueError(f"n_passages: expected 1..{N_BOXES} (VMAS), got {self.n_passages}")
        self.fixed_passage = v.check_bool("fixed_passage", fixed_passage)
        self.random_start_angle = v.check_bool("random_start_angle", random_start_angle)
        self.gaps = gap_boxes(self.n_passages)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, radius=AGENT_RADIUS, u_multiplier=0.7, mass=2, drag=0.25,
                       color=COLORS["blue"]) for i in range(N_AGENTS)]
        goal = Body("goal", collide=False, radius=BALL_RADIUS, color=COLORS["green"])
        ball = Body("ball", movable=True, radius=BALL_RADIUS, mass=1, linear_friction=0.02, color=COLORS["black"])
        boxes = [f"passage {i}" for i in range(N_BOXES)]
        walls = [Body(name, shape="box", length=PASSAGE_LENGTH, width=PASSAGE_WIDTH, collide=i not in self.gaps,
                      visible=i not in self.gaps, color=COLORS["red"], ignores=frozenset(boxes))
                 for i, name in enumerate(boxes)]
        return Layout(bodies=[goal, ball] + walls + agents, groups=[("agents", [a.name for a in agents])],
                      drag=0.0, linear_friction=0.0, x_semidim=X_SEMIDIM, y_semidim=Y_SEMIDIM)

    def _obs_dim(self, group: str) -> int:
        return 8 + 2 * self.n_passages

    def _fields(self) -> dict[str, Field]:
        n = N_AGENTS
        angle_lo = -math.pi / 2
        angle_hi = math.pi / 2 if self.random_start_angle else -math.pi / 2
        min_x_goal, max_x_goal = -X_SEMIDIM + AGENT_RADIUS, X_SEMIDIM - AGENT_RADIUS
        min_y_goal, max_y_goal = 2 * AGENT_RADIUS + PASSAGE_WIDTH / 2, Y_SEMIDIM - AGENT_RADIUS
        return {
            "angle_lo": param(angle_lo), "angle_hi": param(angle_hi),
            "half_spacing": param(AGENT_SPACING / 2),
            "agent_radius": param(AGENT_RADIUS),
            "start_y_top": param(-2 * AGENT_RADIUS - PASSAGE_WIDTH / 2),
            # VMAS's (min - max) * rand + max, the difference of Python floats
            "goal_x_span": param(min_x_goal - max_x_goal), "goal_x_hi": param(max_x_goal),
            "goal_y_span": param(min_y_goal - max_y_goal), "goal_y_hi": param(max_y_goal),
            "box_x": Field("const", "float", (N_BOXES,), [-1 - AGENT_RADIUS + PASSAGE_LENGTH / 2 + PASSAGE_LENGTH * i
                                                          for i in range(N_BOXES)]),
            "n_passages": param(self.n_passages, "int"),
            "gap_start": param(self.gaps[0], "int"),
            "fixed_passage": param(int(self.fixed_passage), "int"),
            "pos_shaping_factor": param(1.0),
            "collision_reward": param(COLLISION_REWARD),
            "done_dist": param(0.01),
            "edge_lo": param(-X_SEMIDIM + BALL_RADIUS), "edge_hi": param(X_SEMIDIM - BALL_RADIUS),
            "pos_shaping_pre": state("float"), "pos_shaping_post": state("float"),
            "order": Field("scratch", "int", (N_BOXES,)),
            "pos_rew": info("float", n), "collision_rew": info("float", n),
            "reached_goal": info("float"), "ball_passed": info("float"),
        }
