"""Formation-v0: ``mpe2.simple_formation_v1`` semantics in Warp kernels (a circle around a
landmark, agents matched to its points by an exact optimal assignment)."""

from __future__ import annotations

import math
from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import (DEFAULT_SENSITIVITY, NO_SPEED_CAP, Field, Layout, MPEBase, info, param,
                                         scratch)

# mpe2 simple_formation Scenario constants
TARGET_RADIUS = 0.5
DIST_THRESHOLD = 0.05
MAX_DIST = 2.0  # the assigned distances are clipped to [0, 2] before the mean


# ------------------------------------------------------------------ exact assignment (scipy's)
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
def clear_assignment_info(w: Any, e: int):
    """NEXT_STEP's reset-only step: no assigned distances."""
    for i in range(w.assigned_dist.shape[1]):
        w.assigned_dist[e, i] = type(w.dt)(0.0)


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


# ------------------------------------------------------------------ Formation's Warp functions
@wp.func
def formation_reset(w: Any, e: int):
    """Agents ~ U[-1, 1)², the landmark ~ U[-0.5, 0.5)² (mpe2's draw order)."""
    state = wp.rand_init(w.world_seed[e], w.episode[e])
    one = type(w.dt)(1.0)
    half = type(w.dt)(0.5)
    for i in range(w.agent_pos.shape[1]):
        w.agent_pos[e, i, 0] = W.uniform(wp.randf(state), -one, one)
        w.agent_pos[e, i, 1] = W.uniform(wp.randf(state), -one, one)
    w.landmark_pos[e, 0, 0] = W.uniform(wp.randf(state), -half, half)
    w.landmark_pos[e, 0, 1] = W.uniform(wp.randf(state), -half, half)


@wp.func
def formation_reward(w: Any, e: int):
    """The circle's points anchored at the smallest agent angle (atan2 in [0, 2π)) around the
    landmark, then the assignment reward, shared by every agent (mpe2: local_ratio 0)."""
    n = w.agent_pos.shape[1]
    lx = w.landmark_pos[e, 0, 0]
    ly = w.landmark_pos[e, 0, 1]
    theta_min = type(w.dt)(0.0)
    for i in range(n):
        angle = wp.atan2(w.agent_pos[e, i, 1] - ly, w.agent_pos[e, i, 0] - lx)
        if angle < type(w.dt)(0.0):
            angle = angle + w.two_pi
        if i == 0 or angle < theta_min:
            theta_min = angle
    for k in range(n):
        theta = theta_min + type(w.dt)(float(k)) * w.ideal_sep
        w.target_pos[e, k, 0] = lx + w.target_radius * wp.cos(theta)
        w.target_pos[e, k, 1] = ly + w.target_radius * wp.sin(theta)
    result = matched_target_reward(w, e)
    for i in range(n):
        w.reward[e, i] = result[0]
    return w.terminate_on_success != 0 and result[1] > type(w.dt)(0.5)


class Formation(MPEBase):
    """Formation-v0 — N agents must stand on a circle of radius 0.5 around a landmark
    (``mpe2.simple_formation_v1``).

    ``war_envs.make("Formation-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents**: one group ``agent`` with ``agent_0 … agent_{N-1}`` (size 0.05, sensitivity 5,
    no speed cap, colliding). **Landmarks**: one (``landmark_0``, size 0.03, not colliding).

    **Actions**: ``Discrete(5)``: 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; or, with
    ``continuous_actions=True``, ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32), per agent: ``[self_vel(2), self_pos(2), landmark_rel(2)]`` (6).

    **Reward** (shared: every agent gets it): after each step the N target points
    ``landmark + 0.5·(cos(θ_min + 2πk/N), sin(θ_min + 2πk/N))`` are anchored at the smallest
    angle ``θ_min`` (in [0, 2π)) of an agent around the landmark; agents are matched to points by
    an optimal assignment of the distance matrix and ``r = −mean_i clip(d_i, 0, 2)`` over the
    assigned distances ``d_i``.  The assignment is scipy's ``linear_sum_assignment`` (the
    Hungarian-type shortest augmenting path of ``rectangular_lsap.cpp``) re-implemented
    operation for operation in the kernel, so it returns scipy's matching, ties included: O(N³)
    per world and step, any N (cheap up to a few dozen agents).

    **Episode end**: truncated after ``max_cycles`` steps; with ``terminate_on_success=True``
    terminated once every assigned distance is below 0.05 (truncation wins on the last step).
    Every reset draws agents ~ U[−1, 1)² and the landmark ~ U[−0.5, 0.5)².

    **Info**: ``assigned_dist [E, N]`` — each agent's (unclipped) distance to its assigned
    point (zeros on NEXT_STEP's reset-only step).  Per-episode metrics (``episode_metrics``):
    ``assigned_dist`` (their mean, averaged over the episode's steps) and
    ``final_assigned_dist`` (their mean at the last step).

    **State**: no scenario fields (the targets follow from the positions at every step).

    **Arguments**: ``N=4`` (>= 1), ``max_cycles=25``, ``continuous_actions=False``,
    ``terminate_on_success=False``, plus the batch arguments ``num_envs``, ``device``, ``seed``,
    ``precision``, ``autoreset_mode`` and ``num_threads``.  mpe2's ``render_mode``,
    ``dynamic_rescaling`` and ``benchmark_data`` concern its renderer and info only (rendering:
    ``render_frame``).  No curriculum, no neighbour views.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Formation-v0"
    mpe2_module = "simple_formation_v1"
    reset_world = formation_reset
    reward_world = formation_reward
    observe_agent = observe_self_and_landmarks
    clear_info = clear_assignment_info
    per_agent_metrics = ("assigned_dist",)
    episode_metrics = ASSIGNMENT_METRICS

    def __init__(self, *, N: int = 4, curriculum: bool = False, num_agent_neighbors: int | None = None,
                 num_landmark_neighbors: int | None = None, **kwargs) -> None:
        self.N = v.check_int("N", N, minimum=1)
        refuse_unsupported(self.env_id, curriculum=curriculum, num_agent_neighbors=num_agent_neighbors,
                           num_landmark_neighbors=num_landmark_neighbors)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n = self.N
        return Layout(
            groups=[("agent", [f"agent_{i}" for i in range(n)])],
            agent_size=[0.05] * n,
            agent_accel=[DEFAULT_SENSITIVITY] * n,
            agent_max_speed=[NO_SPEED_CAP] * n,
            agent_collide=[True] * n,
            agent_color=[(0.35, 0.35, 0.85)] * n,
            landmark_size=[0.03],
            landmark_collide=[False],
            landmark_color=[(0.25, 0.25, 0.25)],
        )

    def _obs_dim(self, group: str) -> int:
        return 6

    def _fields(self) -> dict[str, Field]:
        return {
            "terminate_on_success": param(int(self.terminate_on_success), "int"),
            "target_radius": param(TARGET_RADIUS),
            "two_pi": param(2 * math.pi),
            "ideal_sep": param((2 * math.pi) / self.N),
            "target_pos": scratch("float", self.N, 2),
            **assignment_fields(self.N),
        }


def refuse_unsupported(env_id: str, *, curriculum: bool, num_agent_neighbors, num_landmark_neighbors) -> None:
    """mpe2's environment takes no curriculum and no neighbour views: refuse them clearly."""
    if v.check_bool("curriculum", curriculum):
        raise ValueError(f"curriculum: {env_id} has no curriculum stages (mpe2 takes no curriculum); expected False")
    for name, value in (("num_agent_neighbors", num_agent_neighbors),
                        ("num_landmark_neighbors", num_landmark_neighbors)):
        if value is not None:
            raise ValueError(f"{name}: {env_id} has no neighbour views (mpe2 takes no {name}); expected None, "
                             f"got {value!r}")
