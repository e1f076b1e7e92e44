"""Simple-v0: one agent, one landmark, ``mpe2.simple_v3`` semantics in Warp kernels (a
debugging scenario)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info
from war_envs.scenarios.mpe.common import goal_dist_metric, uniform_reset, write_velocity


# ------------------------------------------------------------------ Warp functions
@wp.func
def simple_reward(w: Any, e: int):
    """r = -|p - landmark|² (mpe2: -sum(square(p - l)))."""
    dx = w.agent_pos[e, 0, 0] - w.landmark_pos[e, 0, 0]
    dy = w.agent_pos[e, 0, 1] - w.landmark_pos[e, 0, 1]
    dist2 = dx * dx + dy * dy
    w.reward[e, 0] = -dist2
    w.goal_dist[e] = wp.sqrt(dist2)
    return False


@wp.func
def simple_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel(2), landmark_rel(2)] (no own position)."""
    o = write_velocity(out, e, i, 0, w)
    W.write_relative_positions(out, e, i, o, -1, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.landmark_pos, -1)


class Simple(MPEBase):
    """Simple-v0 — one agent must get close to one landmark (``mpe2.simple_v3``).

    ``war_envs.make("Simple-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).  Not a
    multi-agent task: mpe2 keeps it for debugging, and so does this port.

    **Agents**: one group ``agent`` with ``agent_0`` (size 0.05, sensitivity 5, no speed cap,
    does not collide, silent). **Landmarks**: one (``landmark 0``), not colliding.

    **Actions**: ``Discrete(5)``: 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; or, with
    ``continuous_actions=True``, ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32): ``[self_vel(2), landmark_rel(2)]`` — 4 values (the agent's own
    position is not observed).

    **Reward**: ``r = −|p_agent − p_landmark|²`` (the squared distance).

    **Episode end**: truncated after ``max_cycles`` steps; never terminated.  Every reset draws
    a fresh random start: the agent, then the landmark, ~ U[−1, 1)².

    **Info**: ``goal_dist [E]`` (the agent's distance to the landmark, ``sqrt(−r)``).
    Per-episode metric (``episode_metrics``): ``goal_dist`` averaged over the episode's steps.

    **State**: no scenario-specific fields (positions and velocities only).

    **Arguments**: ``max_cycles=25``, ``continuous_actions=False`` (mpe2's; its render
    arguments ``render_mode`` and ``dynamic_rescaling`` belong to the PettingZoo front end),
    plus ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``,
    ``num_threads``.  ``curriculum``, ``terminate_on_success``, ``num_agent_neighbors`` and
    ``num_landmark_neighbors`` are not mpe2 arguments of this environment: only their defaults
    (``False`` / ``None``) are accepted.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Simple-v0"
    mpe2_module = "simple_v3"
    reset_world = uniform_reset
    reward_world = simple_reward
    observe_agent = simple_observe
    episode_metrics = (goal_dist_metric("the agent's distance to the landmark, averaged over the episode's "
                                        "steps"),)

    def _layout(self) -> Layout:
        return Layout(
            groups=[("agent", ["agent_0"])],
            agent_size=[0.05],
            agent_collide=[False],
            agent_color=[(0.25, 0.25, 0.25)],
            landmark_size=[0.05],
            landmark_color=[(0.75, 0.25, 0.25)],
        )

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return {"goal_dist": info("float")}
