"""Push-v0: ``mpe2.simple_push_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, const, info, state
from war_envs.scenarios.mpe.common import (ADVERSARY_METRICS, episode_stream, uniform_start, write_color,
                                           write_velocity)

# mpe2 simple_push Scenario: 1 adversary, 1 good agent, 2 landmarks (Entity defaults: size 0.05)
NUM_LANDMARKS = 2
ENTITY_SIZE = 0.05
ADVERSARY_COLOR = (0.75, 0.25, 0.25)


def landmark_color(l: int) -> list[float]:
    """mpe2: [0.1, 0.1, 0.1] with 0.8 added to component l + 1 (in float64, as mpe2)."""
    color = [0.1, 0.1, 0.1]
    color[l + 1] += 0.8
    return color


def good_color(goal: int) -> list[float]:
    """mpe2: [0.25, 0.25, 0.25] with 0.5 added to component goal + 1."""
    color = [0.25, 0.25, 0.25]
    color[goal + 1] += 0.5
    return color


# ------------------------------------------------------------------ Warp functions
@wp.func
def push_reset(w: Any, e: int):
    """Goal landmark ~ U{0, 1}; agents and landmarks ~ U[-1, 1)² (mpe2's reset_world)."""
    rng = episode_stream(w, e)
    w.goal[e] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    uniform_start(w, e, rng, type(w.dt)(1.0))


@wp.func
def push_reward(w: Any, e: int):
    """Good agent (1): -|good - goal|.  Adversary (0): |good - goal| - |goal - adversary|.
    Never terminal."""
    g = w.goal[e]
    for i in range(w.agent_pos.shape[1]):
        w.goal_dist[e, i] = W.entity_distance(w.agent_pos, e, i, w.landmark_pos, g)
    good = w.goal_dist[e, 1]
    # mpe2 takes the adversary's distance as |goal - adversary|: the same squares, so the same value
    adv = W.distance(w.landmark_pos[e, g, 0], w.landmark_pos[e, g, 1], w.agent_pos[e, 0, 0], w.agent_pos[e, 0, 1])
    w.reward[e, 0] = good - adv
    w.reward[e, 1] = -good
    return False


@wp.func
def push_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Good agent: [self_vel, goal_rel, own colour, landmark_rel, landmark colours, other_rel];
    the adversary: [self_vel, landmark_rel, other_rel]."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = write_velocity(out, e, i, 0, w)
    if i == 0:
        o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, -1)
        o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, -1)
    else:
        g = w.goal[e]
        o = W.write_value(out, e, i, o, w.landmark_pos[e, g, 0] - px)
        o = W.write_value(out, e, i, o, w.landmark_pos[e, g, 1] - py)
        o = write_color(out, e, i, o, w.good_color, g)
        o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, -1)
        for l in range(w.landmark_pos.shape[1]):
            o = write_color(out, e, i, o, w.landmark_color, l)
        o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, -1)


class Push(MPEBase):
    """Push-v0 — an adversary must push the good agent away from the goal landmark, which only
    the good agent knows (``mpe2.simple_push_v3``).

    ``war_envs.make("Push-v0", num_envs=E, ...)``.  Every rule, constant and encoding is mpe2
    1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order): group ``adversary`` (``adversary_0``), then group ``agent``
    (``agent_0``); both of size 0.05, sensitivity 5, no speed cap, colliding, silent.
    **Landmarks**: 2 of size 0.05 that do not collide, coloured ``[0.1, 0.9, 0.1]`` and
    ``[0.1, 0.1, 0.9]``; one of them, drawn at every reset, is the goal.  The good agent's
    colour names the goal: ``[0.25, 0.75, 0.25]`` for landmark 0, ``[0.25, 0.25, 0.75]`` for
    landmark 1 (the adversary is ``[0.75, 0.25, 0.25]``).

    **Actions**: ``Discrete(5)`` (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))`` with
    force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32): the good agent sees ``[self_vel(2), goal_rel(2),
    own_colour(3), landmark_rel(4), landmark_colours(6), adversary_rel(2)]`` (19); the
    adversary ``[self_vel(2), landmark_rel(4), agent_rel(2)]`` (8).

    **Reward**: the good agent gets ``−|agent − goal|``; the adversary
    ``|agent − goal| − |adversary − goal|``.

    **Episode end**: truncated after ``max_cycles``; never terminated.  Every reset draws a
    fresh random start: the goal uniformly among the 2 landmarks, agents and landmarks
    ~ U[−1, 1)².

    **Info**: ``goal_dist [E, A]`` (each agent's distance to the goal landmark).  Per-episode
    metrics (``episode_metrics``, logged by war-train): ``adversary_goal_dist`` and
    ``good_goal_dist``, averaged over the episode's steps.

    **State** (besides positions and velocities): ``goal [E]`` (int, 0 or 1); ``set_state`` with
    another goal changes what the good agent observes (goal position and its colour) and both
    rewards.

    **Arguments**: ``max_cycles=25``, ``continuous_actions=False``, plus ``num_envs``,
    ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  mpe2's rendering
    arguments (``render_mode``, ``dynamic_rescaling``) and ``benchmark_data`` are not taken
    (``render_frame`` draws any world).  mpe2's simple_push has no curriculum, no early
    termination and no partial observability: ``curriculum`` and ``terminate_on_success`` must
    stay False, ``num_agent_neighbors`` and ``num_landmark_neighbors`` None.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Push-v0"
    mpe2_module = "simple_push_v3"
    reset_world = push_reset
    reward_world = push_reward
    observe_agent = push_observe
    landmark_index_states = ("goal",)
    per_agent_metrics = ("goal_dist",)
    episode_metrics = ADVERSARY_METRICS

    def _layout(self) -> Layout:
        return Layout(
            groups=[("adversary", ["adversary_0"]), ("agent", ["agent_0"])],
            agent_size=[ENTITY_SIZE] * 2,
            agent_collide=[True] * 2,
            agent_color=[ADVERSARY_COLOR, tuple(good_color(0))],
            landmark_size=[ENTITY_SIZE] * NUM_LANDMARKS,
            landmark_color=[tuple(landmark_color(l)) for l in range(NUM_LANDMARKS)],
            dim_c=2,
        )

    def _obs_dim(self, group: str) -> int:
        if group == "agent":
            return 2 + 2 + 3 + 2 * NUM_LANDMARKS + 3 * NUM_LANDMARKS + 2
        return 2 + 2 * NUM_LANDMARKS + 2

    def _fields(self) -> dict[str, Field]:
        return {
            "landmark_color": const([c for l in range(NUM_LANDMARKS) for c in landmark_color(l)]),
            "good_color": const([c for g in range(NUM_LANDMARKS) for c in good_color(g)]),
            "goal": state("int"),
            "goal_dist": info("float", 2),
        }

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        colors[1] = good_color(int(self._scenario_state["goal"].numpy()[world]))
        return colors
