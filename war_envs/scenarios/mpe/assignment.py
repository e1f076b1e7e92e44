"""The exact optimal assignment of agents to target points (scipy's ``linear_sum_assignment``
in a Warp function) and the scenarios built on it: ``TargetAssignment``, the base of
Formation-v0 (``mpe2.simple_formation_v1``) and Line-v0 (``mpe2.simple_line_v1``), whose agents
are paid for how close the assignment puts each of them to its target point."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param, scratch

# mpe2 simple_formation / simple_line Scenario constants
DIST_THRESHOLD = 0.05  # success: every assigned distance below it
MAX_DIST = 2.0  # the assigned distances are clipped to [0, 2] before the mean


@wp.func
def linear_sum_assignment(w: Any, e: int):
    """scipy's ``linear_sum_assignment`` of ``w.lsa_cost[e]`` (n x n, rows: agents, columns:
    target points), operation for operation: Crouse's shortest augmenting path
    (scipy/optimize/rectangular_lsap.cpp), with its tie-breaking (remaining columns scanned in
    reverse order, a free column preferred among equal path costs), so the matching is scipy's
    one, ties included.  Writes the column of row i to ``w.lsa_col4row[e, i]``.  O(n³)."""
    n = w.lsa_cost.shape[1]
    zero = type(w.dt)(0.0)
    inf = type(w.dt)(wp.inf)
    for j in range(n):
        w.lsa_u[e, j] = zero
        w.lsa_v[e, j] = zero
        w.lsa_path[e, j] = -1
        w.lsa_col4row[e, j] = -1
        w.lsa_row4col[e, j] = -1
    for cur in range(n):
        # augmenting_path(): the shortest path from row `cur` to a free column
        for it in range(n):
            w.lsa_remaining[e, it] = n - it - 1
            w.lsa_sr[e, it] = 0
            w.lsa_sc[e, it] = 0
            w.lsa_spc[e, it] = inf
        num_remaining = n
        min_val = zero
        i = cur
        sink = int(-1)
        for _hop in range(n):  # every hop retires one column: at most n hops
            if sink == -1:
                index = int(-1)
                lowest = inf
                w.lsa_sr[e, i] = 1
                for it in range(num_remaining):
                    j = w.lsa_remaining[e, it]
                    r = min_val + w.lsa_cost[e, i, j] - w.lsa_u[e, i] - w.lsa_v[e, j]
                    if r < w.lsa_spc[e, j]:
                        w.lsa_path[e, j] = i
                        w.lsa_spc[e, j] = r
                    spc = w.lsa_spc[e, j]
                    if spc < lowest or (spc == lowest and w.lsa_row4col[e, j] == -1):
                        lowest = spc
                        index = it
                min_val = lowest
                j = w.lsa_remaining[e, index]
                if w.lsa_row4col[e, j] == -1:
                    sink = j
                else:
                    i = w.lsa_row4col[e, j]
                w.lsa_sc[e, j] = 1
                num_remaining -= 1
                w.lsa_remaining[e, index] = w.lsa_remaining[e, num_remaining]
        # update the dual variables
        w.lsa_u[e, cur] = w.lsa_u[e, cur] + min_val
        for r_ in range(n):
            if w.lsa_sr[e, r_] != 0 and r_ != cur:
                w.lsa_u[e, r_] = w.lsa_u[e, r_] + (min_val - w.lsa_spc[e, w.lsa_col4row[e, r_]])
        for c in range(n):
            if w.lsa_sc[e, c] != 0:
                w.lsa_v[e, c] = w.lsa_v[e, c] - (min_val - w.lsa_spc[e, c])
        # augment the previous solution along the path
        j = sink
        for _hop in range(n + 1):
            if j >= 0:
                row = w.lsa_path[e, j]
                w.lsa_row4col[e, j] = row
                previous = w.lsa_col4row[e, row]
                w.lsa_col4row[e, row] = j
                j = previous
                if row == cur:
                    j = int(-1)


@wp.func
def matched_target_reward(w: Any, e: int):
    """mpe2's ``_compute_formation`` / ``_compute_line`` after the targets are in
    ``w.target_pos[e]``: the distance matrix agent i -> target k, scipy's optimal assignment,
    each agent's assigned distance into ``w.assigned_dist[e, i]``; returns
    (joint reward −mean_i clip(d_i, 0, 2), 1 if every d_i < 0.05 else 0)."""
    n = w.agent_pos.shape[1]
    for i in range(n):
        for k in range(n):
            w.lsa_cost[e, i, k] = W.distance(w.agent_pos[e, i, 0], w.agent_pos[e, i, 1],
                                             w.target_pos[e, k, 0], w.target_pos[e, k, 1])
    linear_sum_assignment(w, e)
    total = type(w.dt)(0.0)
    success = type(w.dt)(1.0)
    for i in range(n):
        d = w.lsa_cost[e, i, w.lsa_col4row[e, i]]
        w.assigned_dist[e, i] = d
        total = total + wp.clamp(d, type(w.dt)(0.0), type(w.dt)(MAX_DIST))
        if not (d < w.dist_threshold):
            success = type(w.dt)(0.0)
    return wp.vector(-(total / type(w.dt)(float(n))), success)


@wp.func
def assignment_reward(w: Any, e: int):
    """A ``reward_world`` once the targets are in ``w.target_pos[e]``: every agent gets the
    assignment reward of ``matched_target_reward``; terminal (with ``terminate_on_success``)
    once every assigned distance is below the threshold."""
    result = matched_target_reward(w, e)
    for i in range(w.agent_pos.shape[1]):
        w.reward[e, i] = result[0]
    return w.terminate_on_success != 0 and result[1] > type(w.dt)(0.5)


def assignment_fields(n: int) -> dict[str, Field]:
    """The scratch of ``linear_sum_assignment`` for n agents and n targets, and the info."""
    return {
        "lsa_cost": scratch("float", n, n), "lsa_u": scratch("float", n), "lsa_v": scratch("float", n),
        "lsa_spc": scratch("float", n), "lsa_path": scratch("int", n), "lsa_col4row": scratch("int", n),
        "lsa_row4col": scratch("int", n), "lsa_sr": scratch("int", n), "lsa_sc": scratch("int", n),
        "lsa_remaining": scratch("int", n),
        "dist_threshold": param(DIST_THRESHOLD),
        "assigned_dist": info("float", n),
    }


def mean_assigned_dist(info: dict) -> torch.Tensor:
    """Per world, the agents' mean distance to their assigned target points (float64 ``[E]``)."""
    return info["assigned_dist"].to(torch.float64).mean(-1)


#: the per-episode metrics of the assignment scenarios (Formation-v0, Line-v0)
ASSIGNMENT_METRICS = (
    EpisodeMetric("assigned_dist", "the agents' mean distance to their assigned target points (unclipped), "
                  "averaged over the episode's steps", mean_assigned_dist, "mean"),
    EpisodeMetric("final_assigned_dist", "the agents' mean distance to their assigned target points at the "
                  "episode's last step", mean_assigned_dist, "last"),
)


@wp.func
def observe_self_and_landmarks(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel(2), self_pos(2), landmark_rel(2 per landmark)]."""
    o = W.write_self(out, e, i, w)
    W.write_relative_positions(out, e, i, o, -1, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.landmark_pos, -1)


class TargetAssignment(MPEBase):
    """The base of the assignment scenarios: one group ``agent`` of ``N`` colliding agents
    (sensitivity 5, no speed cap) and the landmarks of ``landmark_sizes``, none colliding; every
    agent observes ``[self_vel(2), self_pos(2), landmark_rel(2 per landmark)]``; the subclass's
    ``reward_world`` puts the N target points in ``target_pos`` and returns
    ``assignment_reward``; ``terminate_on_success`` is the one MPE option."""

    options = {"terminate_on_success"}
    observe_agent = observe_self_and_landmarks
    per_agent_metrics = ("assigned_dist",)
    episode_metrics = ASSIGNMENT_METRICS
    #: mpe2's agent size and landmark sizes
    agent_size = 0.05
    landmark_sizes: tuple[float, ...] = ()

    def __init__(self, *, N: int = 4, **kwargs) -> None:
        self.N = v.check_int("N", N, minimum=1)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n, m = self.N, len(self.landmark_sizes)
        return Layout(
            groups=[("agent", [f"agent_{i}" for i in range(n)])],
            agent_size=[self.agent_size] * n,
            agent_collide=[True] * n,
            agent_color=[(0.35, 0.35, 0.85)] * n,
            landmark_size=list(self.landmark_sizes),
            landmark_color=[(0.25, 0.25, 0.25)] * m,
        )

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * len(self.landmark_sizes)

    def _fields(self) -> dict[str, Field]:
        return {"terminate_on_success": param(int(self.terminate_on_success), "int"), "two_pi": param(2 * math.pi),
                **assignment_fields(self.N)}
