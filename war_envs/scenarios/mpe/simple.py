"""Simple-v0: one agent, one landmark, ``mpe2.simple_v3`` semantics in Warp kernels (a
debugging scenario)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import DEFAULT_SENSITIVITY, NO_SPEED_CAP, Field, Layout, MPEBase, info


def refuse_unsupported(env_id: str, *, curriculum: bool = False, terminate_on_success: bool = False,
                       num_agent_neighbors=None, num_landmark_neighbors=None) -> None:
    """The MPEBase arguments an mpe2 environment without them must leave at their defaults:
    a clear error naming the argument otherwise."""
    if v.check_bool("curriculum", curriculum):
        raise ValueError(f"curriculum: {env_id} has no curriculum stages; expected False")
    if v.check_bool("terminate_on_success", terminate_on_success):
        raise ValueError(f"terminate_on_success: {env_id} has no success condition; expected False")
    for name, value in (("num_agent_neighbors", num_agent_neighbors),
                        ("num_landmark_neighbors", num_landmark_neighbors)):
        if v.check_int(name, value, minimum=1, allow_none=True) is not None:
            raise ValueError(f"{name}: {env_id} has no neighbour view; expected None")


def goal_dist_metric(doc: str) -> EpisodeMetric:
    """``goal_dist`` (the info entry, summed over its non-world axes) averaged over the steps."""
    def step(info: dict) -> torch.Tensor:
        d = info["goal_dist"].to(torch.float64)
        return d.reshape(d.shape[0], -1).sum(-1)

    return EpisodeMetric("goal_dist", doc, step, "mean")


# ------------------------------------------------------------------ Warp functions
@wp.func
def simple_reset(w: Any, e: int):
    """Agent then landmark ~ U[-1, 1)² (mpe2's reset_world order)."""
    state = wp.rand_init(w.world_seed[e], w.episode[e])
    one = type(w.dt)(1.0)
    for i in range(w.agent_pos.shape[1]):
        w.agent_pos[e, i, 0] = W.uniform(wp.randf(state), -one, one)
        w.agent_pos[e, i, 1] = W.uniform(wp.randf(state), -one, one)
    for l in range(w.landmark_pos.shape[1]):
        w.landmark_pos[e, l, 0] = W.uniform(wp.randf(state), -one, one)
        w.landmark_pos[e, l, 1] = W.uniform(wp.randf(state), -one, one)


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
def simple_clear_info(w: Any, e: int):
    w.goal_dist[e] = type(w.dt)(0.0)


@wp.func
def simple_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel(2), landmark_rel(2)] (no own position)."""
    out[e, i, 0] = wp.float32(w.agent_vel[e, i, 0])
    out[e, i, 1] = wp.float32(w.agent_vel[e, i, 1])
    out[e, i, 2] = wp.float32(w.landmark_pos[e, 0, 0] - w.agent_pos[e, i, 0])
    out[e, i, 3] = wp.float32(w.landmark_pos[e, 0, 1] - w.agent_pos[e, i, 1])


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
    reset_world = simple_reset
    reward_world = simple_reward
    observe_agent = simple_observe
    clear_info = simple_clear_info
    episode_metrics = (goal_dist_metric("the agent's distance to the landmark, averaged over the episode's "
                                        "steps"),)

    def __init__(self, *, curriculum: bool = False, terminate_on_success: bool = False,
                 num_agent_neighbors: int | None = None, num_landmark_neighbors: int | None = None,
                 **kwargs) -> None:
        refuse_unsupported(self.env_id, curriculum=curriculum, terminate_on_success=terminate_on_success,
                           num_agent_neighbors=num_agent_neighbors, num_landmark_neighbors=num_landmark_neighbors)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        return Layout(
            groups=[("agent", ["agent_0"])],
            agent_size=[0.05],
            agent_accel=[DEFAULT_SENSITIVITY],
            agent_max_speed=[NO_SPEED_CAP],
            agent_collide=[False],
            agent_color=[(0.25, 0.25, 0.25)],
            landmark_size=[0.05],
            landmark_collide=[False],
            landmark_color=[(0.75, 0.25, 0.25)],
        )

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return {"goal_dist": info("float")}
