"""Reference-v0: two agents that move and speak, each knowing the other's goal landmark,
``mpe2.simple_reference_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, const, info, param, state
from war_envs.scenarios.mpe.common import (episode_stream, goal_dist_metric, uniform_start, write_color, write_comm,
                                           write_velocity)

#: mpe2's landmark colours (red, green, blue); agent j is drawn in the colour of the landmark
#: the other agent knows (j's target)
LANDMARK_COLORS = [(0.75, 0.25, 0.25), (0.25, 0.75, 0.25), (0.25, 0.25, 0.75)]
NUM_AGENTS = 2
NUM_LANDMARKS = 3
DIM_C = 10


def _onpolicy_step_reward(info: dict) -> torch.Tensor:
    """The on-policy code's per-step reward of every agent ``[E]`` (float64): the shared sum over
    both agents of ``-goal_dist_i²`` (squared distances, no local_ratio mix)."""
    d = info["goal_dist"].to(torch.float64)
    return -(d * d).sum(-1)


#: Reference's per-episode metrics (``Reference.episode_metrics``)
REFERENCE_METRICS = (
    EpisodeMetric("onpolicy_episode_reward",
                  "the MAPPO paper's on-policy 'average episode rewards' (its 'Reference' task): every agent gets "
                  "the shared sum over both agents of -goal_dist_i^2 (squared distances, no local_ratio mix), "
                  "summed over the episode", _onpolicy_step_reward, "sum"),
    goal_dist_metric("Σ over both agents of the partner's distance to the landmark the agent knows, averaged over "
                     "the episode's steps"),
)


# ------------------------------------------------------------------ Warp functions
@wp.func
def reference_reset(w: Any, e: int):
    """goal[0], goal[1] ~ U{0, 1, 2} independently; agents then landmarks ~ U[-1, 1)²
    (mpe2's reset_world)."""
    rng = episode_stream(w, e)
    for i in range(w.agent_pos.shape[1]):
        w.goal[e, i] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    uniform_start(w, e, rng, type(w.dt)(1.0))


@wp.func
def reference_reward(w: Any, e: int):
    """L_i = -|p_{other} - p_{goal_i}|, G = (L_0 + L_1) / 2, r_i = G·(1 - local_ratio) + L_i·local_ratio."""
    num_agents = w.agent_pos.shape[1]
    one = type(w.local_ratio)(1.0)
    total = type(w.local_ratio)(0.0)
    for i in range(num_agents):
        d = W.entity_distance(w.agent_pos, e, 1 - i, w.landmark_pos, w.goal[e, i])
        w.goal_dist[e, i] = d
        total = total - d
    global_reward = total / type(total)(float(num_agents))
    for i in range(num_agents):
        w.reward[e, i] = global_reward * (one - w.local_ratio) + (-w.goal_dist[e, i]) * w.local_ratio
    return False


@wp.func
def reference_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel(2), landmark_rel(6), goal_color(3), other_comm(10)]."""
    o = write_velocity(out, e, i, 0, w)
    o = W.write_relative_positions(out, e, i, o, -1, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.landmark_pos, -1)
    o = write_color(out, e, i, o, w.landmark_color, w.goal[e, i])
    for j in range(w.agent_pos.shape[1]):
        if j != i:
            o = write_comm(out, e, i, o, w, j)


class Reference(MPEBase):
    """Reference-v0 — each of two agents knows where the *other* must go and tells it
    (``mpe2.simple_reference_v3``).

    ``war_envs.make("Reference-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents**: one group ``agent`` with ``agent_0``, ``agent_1`` (size 0.05, sensitivity 5,
    no speed cap, do not collide); both move and speak on a 10-wide channel.
    **Landmarks**: 3 (size 0.05, not colliding), coloured red (0.75, 0.25, 0.25), green
    (0.25, 0.75, 0.25) and blue (0.25, 0.25, 0.75).

    **Actions**: ``Discrete(50)``: index ``move + 5·say`` with move 0 no-op, 1 −x, 2 +x, 3 −y,
    4 +y and say 0..9 (the word: the agent's communication state becomes that one-hot); or,
    with ``continuous_actions=True``, ``Box(0, 1, (15,))`` = ``[move(5), say(10)]`` (force
    ``[a2 − a1, a4 − a3]``; the 10 say values are the communication state itself).

    **Observation** (float32), per agent: ``[self_vel(2), landmark_rel(6), goal_color(3),
    other_comm(10)]`` — 21 values.  ``goal_color`` is the colour of the landmark this agent
    knows (its *partner's* target); ``other_comm`` the other agent's communication state after
    this step's action (zeros at reset).

    **Reward**: with ``L_i = −|p_{other agent} − p_{goal_i}|`` (how far the partner is from the
    landmark agent i knows) and the global term ``G = (L_0 + L_1) / 2``:
    ``r_i = G·(1 − local_ratio) + L_i·local_ratio``.

    **Episode end**: truncated after ``max_cycles`` steps; never terminated.  Every reset
    draws ``goal_0`` then ``goal_1`` uniformly and independently from the 3 landmarks, then the
    agents' and the landmarks' positions ~ U[−1, 1)².

    **Info**: ``goal_dist [E, 2]`` (per agent: ``−L_i``, the partner's distance to the landmark
    agent i knows).  Per-episode metrics (``episode_metrics``, logged by war-train):
    ``onpolicy_episode_reward`` — what the MAPPO paper's on-policy code logs as "average episode
    rewards" for this task: its ``simple_reference`` rewards agent i with the *squared* distance
    ``−goal_dist_i²`` (no ``local_ratio`` mix) and its environment (``collaborative``, shared
    reward) hands every agent the sum over both agents, i.e. per step
    ``−(goal_dist_0² + goal_dist_1²)``, summed over the episode (float64, from ``info``; the
    progress metric; its landmarks are drawn from ``0.8·U(−1, 1)²``, mpe2's — and so
    Reference-v0's — from ``U(−1, 1)²``); ``goal_dist`` (summed over both agents) averaged over
    the episode's steps.

    **State** (``get_state``/``set_state``, besides positions, velocities and
    ``agent_comm``): ``goal [E, 2]`` (int, landmark indices 0..2: the landmark agent i knows,
    which is the other agent's target; it sets agent i's ``goal_color``, the rewards and the
    other agent's drawn colour).

    **Arguments**: ``local_ratio=0.5`` (in [0, 1]), ``max_cycles=25``,
    ``continuous_actions=False`` (mpe2's; its render arguments ``render_mode`` and
    ``dynamic_rescaling`` belong to the PettingZoo front end), plus ``num_envs``, ``device``,
    ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  ``curriculum``,
    ``terminate_on_success``, ``num_agent_neighbors`` and ``num_landmark_neighbors`` are not
    mpe2 arguments of this environment: only their defaults (``False`` / ``None``) are accepted.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Reference-v0"
    mpe2_module = "simple_reference_v3"
    reset_world = reference_reset
    reward_world = reference_reward
    observe_agent = reference_observe
    landmark_index_states = ("goal",)
    per_agent_metrics = ("goal_dist",)
    episode_metrics = REFERENCE_METRICS
    progress_metric = "onpolicy_episode_reward"

    def __init__(self, *, local_ratio: float = 0.5, **kwargs) -> None:
        self.local_ratio = v.check_float("local_ratio", local_ratio, low=0.0, high=1.0)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n, m = NUM_AGENTS, NUM_LANDMARKS
        return Layout(
            groups=[("agent", [f"agent_{i}" for i in range(n)])],
            agent_size=[0.05] * n,
            agent_collide=[False] * n,
            agent_color=[(0.25, 0.25, 0.25)] * n,
            landmark_size=[0.05] * m,
            landmark_color=list(LANDMARK_COLORS),
            agent_silent=[False] * n,
            dim_c=DIM_C,
        )

    def _obs_dim(self, group: str) -> int:
        return 2 + 2 * NUM_LANDMARKS + 3 + DIM_C * (NUM_AGENTS - 1)

    def _fields(self) -> dict[str, Field]:
        return {
            "local_ratio": param(self.local_ratio),
            "landmark_color": const([c for rgb in LANDMARK_COLORS for c in rgb]),
            "goal": state("int", NUM_AGENTS),
            "goal_dist": info("float", NUM_AGENTS),
        }

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        goal = self._scenario_state["goal"].numpy()[world]
        for i in range(NUM_AGENTS):
            colors[1 - i] = LANDMARK_COLORS[int(goal[i])]
        return colors
