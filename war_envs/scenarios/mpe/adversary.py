"""Adversary-v0: ``mpe2.simple_adversary_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param, state
from war_envs.scenarios.mpe.common import ADVERSARY_METRICS, episode_stream, uniform_start

# mpe2 simple_adversary Scenario constants
AGENT_SIZE, LANDMARK_SIZE = 0.15, 0.08
ADVERSARY_COLOR, GOOD_COLOR = (0.85, 0.35, 0.35), (0.35, 0.35, 0.85)
LANDMARK_COLOR, GOAL_COLOR = (0.15, 0.15, 0.15), (0.15, 0.65, 0.15)


# ------------------------------------------------------------------ Warp functions
@wp.func
def adversary_reset(w: Any, e: int):
    """Goal landmark ~ U{0 … N-1}; agents and landmarks ~ U[-1, 1)² (mpe2's reset_world)."""
    rng = episode_stream(w, e)
    w.goal[e] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    uniform_start(w, e, rng, type(w.dt)(1.0))


@wp.func
def adversary_reward(w: Any, e: int):
    """Adversary (agent 0): -|adversary - goal|.  Good agents (shared):
    -min_good |good - goal| + |adversary - goal|.  Never terminal."""
    num_agents = w.agent_pos.shape[1]
    g = w.goal[e]
    for i in range(num_agents):
        w.goal_dist[e, i] = W.entity_distance(w.agent_pos, e, i, w.landmark_pos, g)
    adv = w.goal_dist[e, 0]
    nearest = w.goal_dist[e, 1]
    for i in range(2, num_agents):
        nearest = wp.min(nearest, w.goal_dist[e, i])
    w.reward[e, 0] = -adv
    for i in range(1, num_agents):
        w.reward[e, i] = -nearest + adv
    return False


@wp.func
def adversary_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Good agents: [goal_rel, landmark_rel, other_rel]; the adversary: [landmark_rel, other_rel]
    (all in index order, or the k nearest, nearest first, zero-padded)."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = int(0)
    if i > 0:
        g = w.goal[e]
        o = W.write_value(out, e, i, o, w.landmark_pos[e, g, 0] - px)
        o = W.write_value(out, e, i, o, w.landmark_pos[e, g, 1] - py)
    o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, w.landmark_k)
    o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, w.agent_k)


class Adversary(MPEBase):
    """Adversary-v0 — N good agents must hide which of N landmarks is the goal from one
    adversary that wants to reach it (``mpe2.simple_adversary_v3``).

    ``war_envs.make("Adversary-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order): group ``adversary`` (``adversary_0``), then group ``agent``
    (``agent_0 … agent_{N-1}``); all of size 0.15, sensitivity 5, no speed cap, no collisions,
    silent.  **Landmarks**: N of size 0.08 that do not collide; one of them, drawn at every
    reset, is the goal (coloured green).

    **Actions**: ``Discrete(5)`` (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))`` with
    force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32; no own velocity or position): a good agent sees
    ``[goal_rel(2), landmark_rel(2·N), other_agent_rel(2·N)]`` (4N + 2: 10 for N = 2); the
    adversary, who does not know the goal, ``[landmark_rel(2·N), other_agent_rel(2·N)]``
    (4N: 8).  With ``num_landmark_neighbors=k`` / ``num_agent_neighbors=k`` only the k nearest
    landmarks / other agents are observed (nearest first, zero-padded to k slots); the goal's
    relative position stays in the good agents' observation.

    **Reward**: the adversary gets ``−|adversary − goal|``; every good agent gets
    ``−min_good |good − goal| + |adversary − goal|``.

    **Episode end**: truncated after ``max_cycles``; never terminated.  Every reset draws a
    fresh random start: the goal landmark uniformly among the N, agents and landmarks
    ~ U[−1, 1)².

    **Info**: ``goal_dist [E, A]`` (each agent's distance to the goal landmark).  Per-episode
    metrics (``episode_metrics``, logged by war-train): ``adversary_goal_dist`` and
    ``good_goal_dist`` (the nearest good agent's), averaged over the episode's steps.

    **State** (besides positions and velocities): ``goal [E]`` (int, the goal landmark's index);
    ``set_state`` with another goal changes what the good agents observe and are paid for.

    **Arguments**: ``N=2``, ``max_cycles=25``, ``continuous_actions=False``,
    ``num_agent_neighbors=None``, ``num_landmark_neighbors=None``, plus ``num_envs``,
    ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  mpe2's
    rendering arguments (``render_mode``, ``dynamic_rescaling``) and ``benchmark_data`` are
    not taken (``render_frame`` draws any world).  No curriculum and no early termination:
    ``curriculum`` and ``terminate_on_success`` must stay False.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Adversary-v0"
    mpe2_module = "simple_adversary_v3"
    reset_world = adversary_reset
    reward_world = adversary_reward
    observe_agent = adversary_observe
    options = {"num_agent_neighbors", "num_landmark_neighbors"}
    landmark_index_states = ("goal",)
    per_agent_metrics = ("goal_dist",)
    episode_metrics = ADVERSARY_METRICS

    def __init__(self, *, N: int = 2, **kwargs) -> None:
        self.N = v.check_int("N", N, minimum=1)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n = self.N + 1
        return Layout(
            groups=[("adversary", ["adversary_0"]), ("agent", [f"agent_{i}" for i in range(self.N)])],
            agent_size=[AGENT_SIZE] * n,
            agent_collide=[False] * n,
            agent_color=[ADVERSARY_COLOR] + [GOOD_COLOR] * self.N,
            landmark_size=[LANDMARK_SIZE] * self.N,
            landmark_color=[LANDMARK_COLOR] * self.N,
            dim_c=2,
        )

    def _obs_dim(self, group: str) -> int:
        landmarks = self.num_landmark_neighbors or self.N
        others = self.num_agent_neighbors or self.N
        return (2 if group == "agent" else 0) + 2 * landmarks + 2 * others

    def _fields(self) -> dict[str, Field]:
        return {
            "agent_k": param(self.agent_k, "int"), "landmark_k": param(self.landmark_k, "int"),
            "goal": state("int"),
            "goal_dist": info("float", self.N + 1),
        }

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        goal = int(self._scenario_state["goal"].numpy()[world])
        colors[self.N + 1 + goal] = GOAL_COLOR
        return colors
