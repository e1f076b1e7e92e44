"""Line-v0: ``mpe2.simple_line_v1`` semantics in Warp kernels (agents spread evenly on the segment
between two landmarks, matched to its points by an exact optimal assignment)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.assignment import TargetAssignment, assignment_reward
from war_envs.scenarios.mpe.base import Field, param, state
from war_envs.scenarios.mpe.common import draw_uniform_positions, episode_stream

# mpe2 simple_line Scenario constants
TOTAL_SEP = 1.25  # the distance between the line's two landmarks (its end points)
LANDMARK_RANGE = 0.25  # landmark 0 ~ U[-0.25, 0.25)²
ROTATION_STEP = math.radians(5)  # np.radians(5): the direction turns by 5° until landmark 1 is inside
MAX_ROTATIONS = 72  # a full turn; a direction inside [-1, 1]² always exists well before


# ------------------------------------------------------------------ Warp functions
@wp.func
def line_reset(w: Any, e: int):
    """mpe2's reset_world: agents ~ U[-1, 1)², landmark 0 ~ U[-0.25, 0.25)², a direction
    θ ~ U[0, 2π) turned by 5° steps until landmark 1 = landmark 0 + 1.25·(cos θ, sin θ) lies in
    the open square (-1, 1)²; the target points landmark 0 + (k·1.25/(N−1))·direction."""
    one = type(w.dt)(1.0)
    rng = draw_uniform_positions(w.agent_pos, e, episode_stream(w, e), -one, one)
    lx = W.uniform(wp.randf(rng), -w.landmark_range, w.landmark_range)
    ly = W.uniform(wp.randf(rng), -w.landmark_range, w.landmark_range)
    theta = W.uniform(wp.randf(rng), type(w.dt)(0.0), w.two_pi)
    dx = wp.cos(theta)
    dy = wp.sin(theta)
    locx = lx + w.total_sep * dx
    locy = ly + w.total_sep * dy
    for _turn in range(MAX_ROTATIONS):
        if not (wp.abs(locx) < one and wp.abs(locy) < one):
            theta = theta + w.rotation_step
            dx = wp.cos(theta)
            dy = wp.sin(theta)
            locx = lx + w.total_sep * dx
            locy = ly + w.total_sep * dy
    w.landmark_pos[e, 0, 0] = lx
    w.landmark_pos[e, 0, 1] = ly
    w.landmark_pos[e, 1, 0] = locx
    w.landmark_pos[e, 1, 1] = locy
    for k in range(w.agent_pos.shape[1]):
        step = type(w.dt)(float(k)) * w.ideal_sep
        w.target_pos[e, k, 0] = lx + step * dx
        w.target_pos[e, k, 1] = ly + step * dy


class Line(TargetAssignment):
    """Line-v0 — N agents must spread evenly along the segment between two landmarks
    (``mpe2.simple_line_v1``).

    ``war_envs.make("Line-v0", num_envs=E, ...)``.  Every rule, constant and encoding is mpe2
    1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents**: one group ``agent`` with ``agent_0 … agent_{N-1}`` (size 0.03, sensitivity 5,
    no speed cap, colliding). **Landmarks**: two (``landmark_0``, ``landmark_1``, size 0.02, not
    colliding): the line's end points, 1.25 apart.

    **Actions**: ``Discrete(5)``: 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; or, with
    ``continuous_actions=True``, ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32), per agent: ``[self_vel(2), self_pos(2), landmark_rel(2·2)]`` (8).

    **Reward** (shared: every agent gets it): the N target points
    ``landmark_0 + (k·1.25/(N−1))·direction`` (k = 0 … N−1; all at landmark 0 for N = 1), fixed
    at reset, are matched to the agents by an optimal assignment of the distance matrix and
    ``r = −mean_i clip(d_i, 0, 2)`` over the assigned distances ``d_i``.  The assignment is
    scipy's ``linear_sum_assignment`` re-implemented operation for operation in the kernel
    (Formation-v0's), so it returns scipy's matching, ties included: O(N³) per world and step,
    any N.

    **Episode end**: truncated after ``max_cycles`` steps; with ``terminate_on_success=True``
    terminated once every assigned distance is below 0.05 (truncation wins on the last step).
    Every reset draws agents ~ U[−1, 1)², landmark 0 ~ U[−0.25, 0.25)², a direction
    θ ~ U[0, 2π) that turns by 5° steps until landmark 1 = landmark 0 + 1.25·(cos θ, sin θ) lies
    inside (−1, 1)² (mpe2's rule), and the target points along it.

    **Info**: ``assigned_dist [E, N]`` — each agent's (unclipped) distance to its assigned
    point (zeros on NEXT_STEP's reset-only step).  Per-episode metrics (``episode_metrics``):
    ``assigned_dist`` (their mean, averaged over the episode's steps) and
    ``final_assigned_dist`` (their mean at the last step).

    **State**: ``target_pos [E, N, 2]`` — the target points drawn at reset (mpe2's
    ``_expected_positions``; like mpe2 they stay fixed when ``landmark_pos`` is set).

    **Arguments**: ``N=4`` (>= 1), ``max_cycles=25``, ``continuous_actions=False``,
    ``terminate_on_success=False``, plus the batch arguments ``num_envs``, ``device``, ``seed``,
    ``precision``, ``autoreset_mode`` and ``num_threads``.  mpe2's ``render_mode``,
    ``dynamic_rescaling`` and ``benchmark_data`` concern its renderer and info only (rendering:
    ``render_frame``).  No curriculum, no neighbour views.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Line-v0"
    mpe2_module = "simple_line_v1"
    reset_world = line_reset
    reward_world = assignment_reward  # against the reset's target points
    agent_size = 0.03
    landmark_sizes = (0.02, 0.02)

    def _fields(self) -> dict[str, Field]:
        return {**super()._fields(), "landmark_range": param(LANDMARK_RANGE), "total_sep": param(TOTAL_SEP),
                "rotation_step": param(ROTATION_STEP),
                "ideal_sep": param(TOTAL_SEP / (self.N - 1) if self.N > 1 else 0.0),
                "target_pos": state("float", self.N, 2)}
