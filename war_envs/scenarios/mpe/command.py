"""Command-v0: cooperative navigation with one all-seeing commander and short-sighted sentries —
the heterogeneous scenario of the WAR layer (a costly global policy next to cheap local ones)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, param
from war_envs.scenarios.mpe.common import (CAPTURE_RADIUS, NAVIGATION_METRICS, landmark_coverage, navigation_info,
                                           uniform_reset)


# ------------------------------------------------------------------ Warp functions
@wp.func
def command_reward(w: Any, e: int):
    """Team reward shared by every agent: r = -sum_l min_a |a - l| - #(colliding pairs)."""
    num_agents = w.agent_pos.shape[1]
    coverage = landmark_coverage(w, e)
    team = coverage[0]
    occupied = int(coverage[1])
    pairs = W.count_agent_collisions(w, e)
    team = team - type(team)(float(pairs))
    for i in range(num_agents):
        w.reward[e, i] = team
    w.occupied_landmarks[e] = occupied
    return w.terminate_on_success != 0 and occupied == w.landmark_pos.shape[1]


@wp.func
def command_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel, self_pos, landmark_rel, other_rel]: all of them (the commander, agent 0) or the
    k nearest, zero-padded (sentries)."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    agent_k = w.agent_k
    landmark_k = w.landmark_k
    if i == 0:
        agent_k = -1
        landmark_k = -1
    o = W.write_self(out, e, i, w)
    o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, landmark_k)
    o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, agent_k)


class Command(MPEBase):
    """Command-v0 — a commander and ``num_sentries`` sentries must cover the landmarks together.

    ``war_envs.make("Command-v0", num_envs=E, ...)``.  Physics, sizes and actions are Spread-v0's
    (mpe2 ``simple_spread``): agents of size 0.15, sensitivity 5, no speed cap, landmarks that do
    not collide.  What differs is who sees what and how the team is paid:

    **Agents**: group ``commander`` (``commander_0``) then group ``sentry``
    (``sentry_0 … sentry_{S-1}``).  **Landmarks**: ``num_landmarks`` (default S + 1).

    **Actions**: ``Discrete(5)`` (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))``.

    **Observation** (float32): ``[self_vel(2), self_pos(2), landmark_rel, other_agent_rel]``.
    The commander sees every landmark and every other agent (``4 + 2·L + 2·S``: 42 by default);
    a sentry sees only the ``num_landmark_neighbors`` nearest landmarks and the
    ``num_agent_neighbors`` nearest agents, nearest first, zero-padded (``4 + 2·k_l + 2·k_a``:
    16 by default).  No communication channel.

    **Reward** (shared: every agent gets the team reward):
    ``r = −Σ_landmarks min_agents distance − #(colliding agent pairs)`` (collision: distance < 0.3).

    **Episode end**: truncated after ``max_cycles``; with ``terminate_on_success=True``
    terminated once every landmark has an agent within 0.1.  Every reset draws a fresh start:
    agents and landmarks ~ U[−1, 1)².

    **Info**: ``landmark_min_dist [E, L]``, ``collisions [E, A]`` (pairs each agent is in),
    ``occupied_landmarks [E]``.  Per-episode metrics (``episode_metrics``, logged by
    war-train), the two terms of the team reward and the coverage: ``landmark_dist``
    (``Σ_l landmark_min_dist`` averaged over the episode's steps), ``collisions`` (colliding
    agent pairs summed over steps) and ``occupied_landmarks`` (at the last step).

    **Arguments**: ``num_sentries=9``, ``num_landmarks=None`` (S + 1), ``num_agent_neighbors=3``,
    ``num_landmark_neighbors=3`` (the sentries' view; ``None``: full view), ``max_cycles=25``,
    ``continuous_actions=False``, ``terminate_on_success=False``, plus ``num_envs``, ``device``,
    ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  No curriculum.

    **Version history**: v0 — initial release.
    """

    env_id = "Command-v0"
    reset_world = uniform_reset
    reward_world = command_reward
    observe_agent = command_observe
    options = {"terminate_on_success", "num_agent_neighbors", "num_landmark_neighbors"}
    per_agent_metrics = ("collisions",)
    episode_metrics = NAVIGATION_METRICS

    def __init__(self, *, num_sentries: int = 9, num_landmarks: int | None = None,
                 num_agent_neighbors: int | None = 3, num_landmark_neighbors: int | None = 3, **kwargs) -> None:
        self.num_sentries = v.check_int("num_sentries", num_sentries, minimum=1)
        landmarks = v.check_int("num_landmarks", num_landmarks, minimum=1, allow_none=True)
        self.num_landmarks_arg = self.num_sentries + 1 if landmarks is None else landmarks
        super().__init__(num_agent_neighbors=num_agent_neighbors,
                         num_landmark_neighbors=num_landmark_neighbors, **kwargs)

    def _layout(self) -> Layout:
        n, m = self.num_sentries + 1, self.num_landmarks_arg
        return Layout(
            groups=[("commander", ["commander_0"]),
                    ("sentry", [f"sentry_{i}" for i in range(self.num_sentries)])],
            agent_size=[0.15] * n,
            agent_collide=[True] * n,
            agent_color=[(0.85, 0.6, 0.2)] + [(0.35, 0.35, 0.85)] * self.num_sentries,
            landmark_size=[0.05] * m,
            landmark_color=[(0.25, 0.25, 0.25)] * m,
        )

    def _obs_dim(self, group: str) -> int:
        num_agents, num_landmarks = self.num_sentries + 1, self.num_landmarks_arg
        if group == "commander":
            return 4 + 2 * num_landmarks + 2 * (num_agents - 1)
        landmarks = self.num_landmark_neighbors or num_landmarks
        others = self.num_agent_neighbors or num_agents - 1
        return 4 + 2 * landmarks + 2 * others

    def _fields(self) -> dict[str, Field]:
        return {
            "capture_radius": param(CAPTURE_RADIUS),
            "terminate_on_success": param(int(self.terminate_on_success), "int"),
            "agent_k": param(self.agent_k, "int"), "landmark_k": param(self.landmark_k, "int"),
            **navigation_info(self.num_sentries + 1, self.num_landmarks_arg),
        }
