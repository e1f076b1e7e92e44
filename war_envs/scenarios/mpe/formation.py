"""Formation-v0: ``mpe2.simple_formation_v1`` semantics in Warp kernels (a circle around a
landmark, agents matched to its points by an exact optimal assignment)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.scenarios.mpe.assignment import TargetAssignment, assignment_reward
from war_envs.scenarios.mpe.base import Field, param, scratch
from war_envs.scenarios.mpe.common import episode_stream, uniform_start

TARGET_RADIUS = 0.5  # mpe2 simple_formation: the circle's radius


# ------------------------------------------------------------------ Warp functions
@wp.func
def formation_reset(w: Any, e: int):
    """Agents ~ U[-1, 1)², the landmark ~ U[-0.5, 0.5)² (mpe2's draw order)."""
    uniform_start(w, e, episode_stream(w, e), type(w.dt)(0.5))


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
    return assignment_reward(w, e)


class Formation(TargetAssignment):
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
    agent_size = 0.05
    landmark_sizes = (0.03,)

    def _fields(self) -> dict[str, Field]:
        return {**super()._fields(), "target_radius": param(TARGET_RADIUS), "ideal_sep": param((2 * math.pi) / self.N),
                "target_pos": scratch("float", self.N, 2)}
