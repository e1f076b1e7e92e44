"""Spread-v0: cooperative navigation, ``mpe2.simple_spread_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, param
from war_envs.scenarios.mpe.common import (CAPTURE_RADIUS, NAVIGATION_METRICS, episode_stream, landmark_coverage,
                                           navigation_info, uniform_start)

#: the MAPPO paper's on-policy code draws landmarks from 0.8 · U(−1, 1)² (mpe2, and Spread-v0 by
#: default: U(−1, 1)²); its "≈ −120" Spread level refers to that start distribution
ONPOLICY_LANDMARK_RANGE = 0.8


def onpolicy_step_reward(landmark_min_dist: torch.Tensor, collisions: torch.Tensor) -> torch.Tensor:
    """Per world, the on-policy code's per-step (shared) Spread reward ``[E]`` (float64):
    ``sum_i (-sum_l d_l - (collisions_i + 1))`` with ``landmark_min_dist[E, L]`` and
    ``collisions[E, N]`` (other agents touching agent i)."""
    d = landmark_min_dist.to(torch.float64).sum(-1)
    c = collisions.to(torch.float64)
    n = c.shape[-1]
    return -n * d - (c + 1.0).sum(-1)


def _onpolicy_step_reward(info: dict) -> torch.Tensor:
    return onpolicy_step_reward(info["landmark_min_dist"], info["collisions"])


#: Spread's per-episode metrics (``Spread.episode_metrics``)
SPREAD_METRICS = (
    EpisodeMetric("onpolicy_episode_reward",
                  "the MAPPO paper's on-policy 'average episode rewards': every agent gets the shared sum "
                  "over agents of -Σ_l d_l - (collisions_i + 1), summed over the episode", _onpolicy_step_reward,
                  "sum"),
    *NAVIGATION_METRICS,
)


# ------------------------------------------------------------------ Warp functions
@wp.func
def spread_reset(w: Any, e: int):
    """Agents ~ U[-1, 1)², landmarks ~ U[-r, r)² (r = ``landmark_range``)."""
    uniform_start(w, e, episode_stream(w, e), w.landmark_range)


@wp.func
def spread_reward(w: Any, e: int):
    """r_i = G * (1 - local_ratio) + L_i * local_ratio with G = -sum_l min_a |a - l| and
    L_i = -#{j != i colliding with i} (zero in curriculum stage 0)."""
    num_agents = w.agent_pos.shape[1]
    zero = type(w.local_ratio)(0.0)
    coverage = landmark_coverage(w, e)
    global_reward = coverage[0]
    occupied = int(coverage[1])
    penalty = w.curriculum == 0 or w.curriculum_stage[0] >= 1
    one = type(w.local_ratio)(1.0)
    W.count_agent_collisions(w, e)
    for i in range(num_agents):
        count = w.collisions[e, i]
        local = zero
        if penalty:
            local = -type(w.local_ratio)(float(count))
        w.reward[e, i] = global_reward * (one - w.local_ratio) + local * w.local_ratio
    w.occupied_landmarks[e] = occupied
    return w.terminate_on_success != 0 and occupied == w.landmark_pos.shape[1]


@wp.func
def spread_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel, self_pos, landmark_rel (N or k nearest, zero-padded),
    other_rel (N-1 or k nearest, zero-padded), comm (zeros: agents are silent)]."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = W.write_self(out, e, i, w)
    o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, w.landmark_k)
    o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, w.agent_k)
    # comm block: silent agents say nothing (rewritten each step so the buffer self-heals if a
    # caller edits the returned view in place)
    W.write_zeros(out, e, i, o, out.shape[2] - o)


class Spread(MPEBase):
    """Spread-v0 — N agents must cover N landmarks without colliding (``mpe2.simple_spread_v3``).

    ``war_envs.make("Spread-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents**: one group ``agent`` with ``agent_0 … agent_{N-1}`` (size 0.15, sensitivity 5,
    no speed cap). **Landmarks**: N, not colliding.

    **Actions**: ``Discrete(5)``: 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; or, with
    ``continuous_actions=True``, ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32), per agent: ``[self_vel(2), self_pos(2), landmark_rel(2·N),
    other_agent_rel(2·(N−1)), comm(2·(N−1), zeros)]`` — 18 for N=3.  With
    ``num_landmark_neighbors=k`` / ``num_agent_neighbors=k`` only the k nearest (nearest first,
    zero-padded to k slots) are observed; the comm block follows the agent slots.

    **Reward**: ``r_i = G·(1 − local_ratio) + L_i·local_ratio`` with the global term
    ``G = −Σ_landmarks min_agents distance`` and the local term ``L_i = −#(other agents
    colliding with i)`` (collision: distance < 0.3).  With ``curriculum=True``, stage 0 has
    no collision penalty, stage 1 restores it (``set_curriculum_stage`` / ``advance_curriculum``).

    **Curriculum note**: in mpe2 1.1.1 the stage API is a no-op (``BaseScenario``'s
    ``curriculum_stage`` property swallows the assignment, so every episode runs stage 0);
    here stages behave as mpe2 documents them, and out-of-range stages raise instead of being
    clamped.  Stage 0 matches mpe2 exactly; later stages are tested against mpe2 with that bug
    patched.

    **Episode end**: truncated after ``max_cycles`` steps; with ``terminate_on_success=True``
    terminated once every landmark has an agent within 0.1 (truncation wins on the last step).
    Every reset draws a fresh random start: agents ~ U[−1, 1)², landmarks ~ U[−r, r)² with
    ``r = landmark_range`` (1, mpe2's, by default; the MAPPO paper's on-policy code uses 0.8, and
    its "≈ −120" Spread level refers to that start distribution).

    **Info** (task metrics, so other reward conventions can be recomputed):
    ``landmark_min_dist [E, N]`` (the distance terms of G), ``collisions [E, N]`` (int),
    ``occupied_landmarks [E]``.  The MAPPO paper's per-agent reward is
    ``−Σ landmark_min_dist − (collisions_i + 1)``.  Per-episode metrics
    (``episode_metrics``, logged by war-train): ``onpolicy_episode_reward`` — what the MAPPO
    paper's on-policy code logs as "average episode rewards": every agent's reward there is the
    *shared sum* over agents of ``−Σ_l d_l − (collisions_i + 1)`` (each agent also collides with
    itself), i.e. per step ``−N·Σ_l d_l − Σ_i collisions_i − N`` (a constant −75 per 25-step
    episode for N = 3), summed over the episode (float64, from the info entries, never from the
    env's rewards; the progress metric); ``landmark_dist`` (``Σ_l d_l`` averaged over the
    episode's steps); ``collisions`` (colliding agent pairs, summed over steps);
    ``occupied_landmarks`` (at the last step).  Evaluation variants: ``onpolicy_init``
    (``landmark_range=0.8``) and ``mpe2_init`` (``landmark_range=1.0``), less the run's own.

    **Arguments**: ``N=3``, ``local_ratio=0.5``, ``landmark_range=1.0`` (in [0, 1]), ``max_cycles=25``,
    ``continuous_actions=False``, ``curriculum=False``, ``terminate_on_success=False``,
    ``num_agent_neighbors=None``, ``num_landmark_neighbors=None``, plus the batch arguments
    ``num_envs``, ``device``, ``seed``, ``precision`` and ``autoreset_mode``.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics; ``landmark_range`` added
    (default 1.0 keeps mpe2's start distribution, so v0 trajectories are unchanged).
    """

    env_id = "Spread-v0"
    mpe2_module = "simple_spread_v3"
    reset_world = spread_reset
    reward_world = spread_reward
    observe_agent = spread_observe
    options = {"curriculum", "terminate_on_success", "num_agent_neighbors", "num_landmark_neighbors"}
    per_agent_metrics = ("collisions",)
    episode_metrics = SPREAD_METRICS
    progress_metric = "onpolicy_episode_reward"

    @classmethod
    def evaluation_variants(cls, env_kwargs: dict) -> dict[str, dict]:
        """The two start distributions of the literature, less the run's own:
        ``onpolicy_init`` (landmarks in 0.8·[−1, 1]², the on-policy code's) and ``mpe2_init``
        (landmarks in [−1, 1]², mpe2's)."""
        own = float(env_kwargs.get("landmark_range", 1.0))
        variants = {"onpolicy_init": ONPOLICY_LANDMARK_RANGE, "mpe2_init": 1.0}
        return {name: {"landmark_range": r} for name, r in variants.items() if r != own}

    def __init__(self, *, N: int = 3, local_ratio: float = 0.5, landmark_range: float = 1.0, **kwargs) -> None:
        self.N = v.check_int("N", N, minimum=1)
        self.local_ratio = v.check_float("local_ratio", local_ratio, low=0.0, high=1.0)
        self.landmark_range = v.check_float("landmark_range", landmark_range, low=0.0, high=1.0)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n = self.N
        return Layout(
            groups=[("agent", [f"agent_{i}" for i in range(n)])],
            agent_size=[0.15] * n,
            agent_collide=[True] * n,
            agent_color=[(0.35, 0.35, 0.85)] * n,
            landmark_size=[0.05] * n,
            landmark_color=[(0.25, 0.25, 0.25)] * n,
            curriculum_factors=[1.0, 1.0],
            dim_c=2,
        )

    def _obs_dim(self, group: str) -> int:
        landmarks = self.num_landmark_neighbors or self.N
        others = self.num_agent_neighbors or self.N - 1
        return 4 + 2 * landmarks + 4 * others

    def _fields(self) -> dict[str, Field]:
        return {
            "local_ratio": param(self.local_ratio), "capture_radius": param(CAPTURE_RADIUS),
            "landmark_range": param(self.landmark_range),
            "terminate_on_success": param(int(self.terminate_on_success), "int"),
            "curriculum": param(int(self.curriculum), "int"),
            "agent_k": param(self.agent_k, "int"), "landmark_k": param(self.landmark_k, "int"),
            **navigation_info(self.N, self.N),
        }
