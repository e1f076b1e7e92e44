"""SpeakerListener-v0: an immobile speaker guides a silent listener to a goal landmark,
``mpe2.simple_speaker_listener_v4`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, const, info, state
from war_envs.scenarios.mpe.common import (episode_stream, goal_dist_metric, uniform_start, write_color, write_comm,
                                           write_velocity)

#: mpe2's landmark colours (red, green, blue); the listener is drawn in its goal's colour + 0.45
LANDMARK_COLORS = [(0.65, 0.15, 0.15), (0.15, 0.65, 0.15), (0.15, 0.15, 0.65)]
GOAL_TINT = 0.45
NUM_LANDMARKS = 3
DIM_C = 3
SPEAKER, LISTENER = 0, 1


def _onpolicy_step_reward(info: dict) -> torch.Tensor:
    """The on-policy code's per-step reward of every agent ``[E]`` (float64): the shared sum over
    both agents of ``-|p_listener - p_goal|²``, i.e. ``-2 · goal_dist²``."""
    d = info["goal_dist"].to(torch.float64)
    return -2.0 * d * d


#: SpeakerListener's per-episode metrics (``SpeakerListener.episode_metrics``)
SPEAKER_LISTENER_METRICS = (
    EpisodeMetric("onpolicy_episode_reward",
                  "the MAPPO paper's on-policy 'average episode rewards' (its 'Comm' task): every agent gets the "
                  "shared sum over both agents of -|p_listener - p_goal|^2 (= -2 goal_dist^2), summed over the "
                  "episode", _onpolicy_step_reward, "sum"),
    goal_dist_metric("the listener's distance to the goal landmark, averaged over the episode's steps"),
)


# ------------------------------------------------------------------ Warp functions
@wp.func
def speaker_listener_reset(w: Any, e: int):
    """Goal landmark ~ U{0, 1, 2}; agents then landmarks ~ U[-1, 1)² (mpe2's reset_world)."""
    rng = episode_stream(w, e)
    w.goal[e] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    uniform_start(w, e, rng, type(w.dt)(1.0))


@wp.func
def speaker_listener_reward(w: Any, e: int):
    """Both agents: r = -|p_listener - p_goal|² (mpe2: -sum(square(...)))."""
    g = w.goal[e]
    dx = w.agent_pos[e, LISTENER, 0] - w.landmark_pos[e, g, 0]
    dy = w.agent_pos[e, LISTENER, 1] - w.landmark_pos[e, g, 1]
    dist2 = dx * dx + dy * dy
    for i in range(w.agent_pos.shape[1]):
        w.reward[e, i] = -dist2
    w.goal_dist[e] = wp.sqrt(dist2)
    return False


@wp.func
def speaker_listener_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Speaker: [goal_color(3)].  Listener: [self_vel(2), landmark_rel(6), speaker_comm(3)]."""
    if i == SPEAKER:
        write_color(out, e, i, 0, w.landmark_color, w.goal[e])
        return
    o = write_velocity(out, e, i, 0, w)
    o = W.write_relative_positions(out, e, i, o, -1, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.landmark_pos, -1)
    write_comm(out, e, i, o, w, SPEAKER)


class SpeakerListener(MPEBase):
    """SpeakerListener-v0 — a speaker who sees the goal tells a listener who cannot see it
    where to go (``mpe2.simple_speaker_listener_v4``).

    ``war_envs.make("SpeakerListener-v0", num_envs=E, ...)``.  Every rule, constant and encoding
    is mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order): group ``speaker`` (``speaker_0``: immobile, speaks on a 3-wide
    channel) then group ``listener`` (``listener_0``: moves, sensitivity 5, no speed cap,
    silent).  Both have size 0.075 and do not collide.  **Landmarks**: 3 (size 0.04, not
    colliding), coloured red (0.65, 0.15, 0.15), green (0.15, 0.65, 0.15) and blue
    (0.15, 0.15, 0.65).

    **Actions**: speaker ``Discrete(3)`` (the word said: its communication state becomes that
    one-hot) or ``Box(0, 1, (3,))`` (the communication state itself); listener ``Discrete(5)``
    (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32): speaker ``[goal_color(3)]`` (the goal landmark's colour);
    listener ``[self_vel(2), landmark_rel(6), speaker_comm(3)]`` — 11 values (the speaker's
    communication state after this step's action; zeros at reset).

    **Reward** (shared): ``r = −|p_listener − p_goal|²`` for both agents.

    **Episode end**: truncated after ``max_cycles`` steps; never terminated.  Every reset
    draws the goal landmark uniformly from the 3, then both agents' and the landmarks'
    positions ~ U[−1, 1)² (the speaker's position is drawn, as in mpe2, but plays no role).

    **Info**: ``goal_dist [E]`` (the listener's distance to the goal, ``sqrt(−r)``).
    Per-episode metrics (``episode_metrics``, logged by war-train): ``onpolicy_episode_reward`` —
    what the MAPPO paper's on-policy code logs as "average episode rewards" for this task (its
    "Comm"): its ``simple_speaker_listener`` gives each agent the same ``−|p_listener − p_goal|²``
    as mpe2, and its environment (``collaborative``, shared reward) hands every agent the *sum*
    over both agents, i.e. per step ``−2·goal_dist²``, summed over the episode (float64, from
    ``info``; the progress metric); ``goal_dist`` averaged over the episode's steps.

    **State** (``get_state``/``set_state``, besides positions, velocities and
    ``agent_comm``): ``goal [E]`` (int, the goal landmark's index 0..2; it sets the speaker's
    observation, the reward, and the listener's drawn colour).

    **Arguments**: ``max_cycles=25``, ``continuous_actions=False`` (mpe2's; its render
    arguments ``render_mode`` and ``dynamic_rescaling`` belong to the PettingZoo front end),
    plus ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``,
    ``num_threads``.  ``curriculum``, ``terminate_on_success``, ``num_agent_neighbors`` and
    ``num_landmark_neighbors`` are not mpe2 arguments of this environment: only their defaults
    (``False`` / ``None``) are accepted.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "SpeakerListener-v0"
    mpe2_module = "simple_speaker_listener_v4"
    reset_world = speaker_listener_reset
    reward_world = speaker_listener_reward
    observe_agent = speaker_listener_observe
    landmark_index_states = ("goal",)
    episode_metrics = SPEAKER_LISTENER_METRICS
    progress_metric = "onpolicy_episode_reward"

    def _layout(self) -> Layout:
        return Layout(
            groups=[("speaker", ["speaker_0"]), ("listener", ["listener_0"])],
            agent_size=[0.075, 0.075],
            agent_collide=[False, False],
            agent_color=[(0.25, 0.25, 0.25), (0.25, 0.25, 0.25)],
            landmark_size=[0.04] * NUM_LANDMARKS,
            landmark_color=list(LANDMARK_COLORS),
            agent_movable=[False, True],
            agent_silent=[False, True],
            dim_c=DIM_C,
        )

    def _obs_dim(self, group: str) -> int:
        return 3 if group == "speaker" else 2 + 2 * NUM_LANDMARKS + DIM_C

    def _fields(self) -> dict[str, Field]:
        return {
            "landmark_color": const([c for rgb in LANDMARK_COLORS for c in rgb]),
            "goal": state("int"),
            "goal_dist": info("float"),
        }

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        goal = int(self._scenario_state["goal"].numpy()[world])
        colors[LISTENER] = np.asarray(LANDMARK_COLORS[goal]) + GOAL_TINT
        return colors
