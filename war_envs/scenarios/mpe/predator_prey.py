"""PredatorPrey-v0: ``mpe2.simple_tag_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param
from war_envs.scenarios.mpe.common import boundary_penalty, catch_metrics, episode_stream, uniform_start

# mpe2 simple_tag Scenario constants
ADVERSARY_SIZE, ADVERSARY_ACCEL, ADVERSARY_MAX_SPEED = 0.075, 3.0, 1.0
PREY_SIZE, PREY_ACCEL, PREY_MAX_SPEED = 0.05, 4.0, 1.3
OBSTACLE_SIZE = 0.2
PREY_SPEED_FACTORS = [0.5, 0.75, 1.0]  # curriculum stages 0, 1, 2


# ------------------------------------------------------------------ Warp functions
@wp.func
def predator_prey_reset(w: Any, e: int):
    """Agents ~ U[-1, 1)², obstacles ~ U[-0.9, 0.9)² (mpe2's reset_world)."""
    uniform_start(w, e, episode_stream(w, e), type(w.dt)(0.9))


@wp.func
def predator_prey_reward(w: Any, e: int):
    """Adversaries: +10 per (good, adversary) contact anywhere (team reward).  Good agents:
    -10 per touching adversary - sum over axes of bound(|x|).  Terminal: every good agent
    touched."""
    num_agents = w.agent_pos.shape[1]
    na = w.num_adversaries
    zero = type(w.dt)(0.0)
    for i in range(num_agents):
        w.collisions[e, i] = 0
    contacts = int(0)
    all_caught = bool(True)
    for g in range(na, num_agents):
        caught = bool(False)
        for a in range(na):
            if W.agents_collide(w, e, g, a):
                contacts += 1
                caught = True
                w.collisions[e, a] = w.collisions[e, a] + 1
                w.collisions[e, g] = w.collisions[e, g] + 1
        if not caught:
            all_caught = False
    adversary_reward = type(zero)(10.0) * type(zero)(float(contacts))
    for i in range(num_agents):
        if i < na:
            w.reward[e, i] = adversary_reward
            w.boundary_penalty[e, i] = zero
        else:
            rew = zero - type(zero)(10.0) * type(zero)(float(w.collisions[e, i]))
            bx = boundary_penalty(wp.abs(w.agent_pos[e, i, 0]))
            by = boundary_penalty(wp.abs(w.agent_pos[e, i, 1]))
            rew = rew - bx
            rew = rew - by
            w.reward[e, i] = rew
            w.boundary_penalty[e, i] = bx + by
    return w.terminate_on_success != 0 and all_caught


@wp.func
def predator_prey_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel, self_pos, obstacle_rel (all or k nearest), other_rel (all or k nearest),
    good_agent_vel (full: every other good agent; k nearest: good ones, zeros otherwise)]."""
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = W.write_self(out, e, i, w)
    o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, w.landmark_k)
    o = W.write_relative_positions(out, e, i, o, i, px, py, w.agent_pos, w.agent_k)
    num_agents = w.agent_pos.shape[1]
    if w.agent_k < 0:
        for j in range(w.num_adversaries, num_agents):
            if j != i:
                out[e, i, o] = wp.float32(w.agent_vel[e, j, 0])
                out[e, i, o + 1] = wp.float32(w.agent_vel[e, j, 1])
                o += 2
    else:
        # velocity slots follow the k nearest in the same order (mpe2's padded_velocities)
        prev_d = type(px)(-1.0)
        prev_j = int(-1)
        for r in range(w.agent_k):
            j = W.nearest_rank_after(px, py, w.agent_pos, e, num_agents, i, prev_d, prev_j)
            out[e, i, o] = wp.float32(0.0)
            out[e, i, o + 1] = wp.float32(0.0)
            if j >= 0:
                if j >= w.num_adversaries:
                    out[e, i, o] = wp.float32(w.agent_vel[e, j, 0])
                    out[e, i, o + 1] = wp.float32(w.agent_vel[e, j, 1])
                prev_d = W.distance(w.agent_pos[e, j, 0], w.agent_pos[e, j, 1], px, py)
                prev_j = j
            o += 2


class PredatorPrey(MPEBase):
    """PredatorPrey-v0 — slower adversaries chase faster good agents among obstacles
    (``mpe2.simple_tag_v3``).

    ``war_envs.make("PredatorPrey-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order): group ``adversary`` (``adversary_0 …``, size 0.075, accel 3, max
    speed 1.0), then group ``agent`` (``agent_0 …``, size 0.05, accel 4, max speed 1.3).
    **Obstacles**: ``num_obstacles`` landmarks of size 0.2 that collide (immovable).

    **Actions**: ``Discrete(5)`` (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))``.

    **Observation** (float32): ``[self_vel, self_pos, obstacle_rel(2·num_obstacles),
    other_agent_rel(2·(A−1)), good_agent_vel]`` — the last block holds every *other* good
    agent's velocity (16 for an adversary, 14 for the good agent by default).  With
    ``num_agent_neighbors=k`` the k nearest agents' positions are observed, followed by k
    velocity slots (good agents' velocities, zeros for adversaries and padding); with
    ``num_landmark_neighbors=k`` the k nearest obstacles (zero-padded).

    **Reward**: every adversary gets +10 per (good agent, adversary) contact in the world; a
    good agent gets −10 per adversary touching it and ``−Σ_axes bound(|x|)`` with
    ``bound(x) = 0`` below 0.9, ``10·(x − 0.9)`` below 1, else ``min(e^(2x−2), 10)``.

    **Episode end**: truncated after ``max_cycles``; with ``terminate_on_success=True``
    terminated once every good agent touches an adversary.  With ``curriculum=True`` the good
    agents' max speed and acceleration are ×0.5 / ×0.75 / ×1.0 in stages 0 / 1 / 2, taking
    effect at each world's next reset (as in mpe2).  Every reset draws a fresh random start:
    agents ~ U[−1, 1)², obstacles ~ U[−0.9, 0.9)².

    **Curriculum note**: in mpe2 1.1.1 the stage API is a no-op (``BaseScenario``'s
    ``curriculum_stage`` property swallows the assignment, so every episode runs stage 0);
    here stages behave as mpe2 documents them, and out-of-range stages raise instead of being
    clamped.  Stage 0 matches mpe2 exactly; later stages are tested against mpe2 with that bug
    patched.

    **Info**: ``collisions [E, A]`` (adversary: good agents it touches; good agent:
    adversaries touching it) and ``boundary_penalty [E, A]``.  Per-episode metrics
    (``episode_metrics``, logged by war-train), from the adversaries' ``collisions`` entries:
    ``catch_rate`` (1 if any step had an adversary-prey contact; averaged over episodes, the
    catch rate), ``contact_steps`` (steps with at least one contact) and ``contacts``
    (adversary-prey contacts summed over steps).

    **Arguments**: ``num_good=1``, ``num_adversaries=3``, ``num_obstacles=2``,
    ``max_cycles=25``, ``continuous_actions=False``, ``curriculum=False``,
    ``terminate_on_success=False``, ``num_agent_neighbors=None``,
    ``num_landmark_neighbors=None``, plus ``num_envs``, ``device``, ``seed``, ``precision``,
    ``autoreset_mode``.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "PredatorPrey-v0"
    mpe2_module = "simple_tag_v3"
    reset_world = predator_prey_reset
    reward_world = predator_prey_reward
    observe_agent = predator_prey_observe
    options = {"curriculum", "terminate_on_success", "num_agent_neighbors", "num_landmark_neighbors"}
    per_agent_metrics = ("collisions", "boundary_penalty")

    def __init__(self, *, num_good: int = 1, num_adversaries: int = 3, num_obstacles: int = 2,
                 **kwargs) -> None:
        self.num_good = v.check_int("num_good", num_good, minimum=1)
        self.num_adversaries = v.check_int("num_adversaries", num_adversaries, minimum=1)
        self.num_obstacles = v.check_int("num_obstacles", num_obstacles, minimum=0)
        self.episode_metrics = catch_metrics(self.num_adversaries)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        na, ng, no = self.num_adversaries, self.num_good, self.num_obstacles
        return Layout(
            groups=[("adversary", [f"adversary_{i}" for i in range(na)]),
                    ("agent", [f"agent_{i}" for i in range(ng)])],
            agent_size=[ADVERSARY_SIZE] * na + [PREY_SIZE] * ng,
            agent_accel=[ADVERSARY_ACCEL] * na + [PREY_ACCEL] * ng,
            agent_max_speed=[ADVERSARY_MAX_SPEED] * na + [PREY_MAX_SPEED] * ng,
            agent_collide=[True] * (na + ng),
            agent_color=[(0.85, 0.35, 0.35)] * na + [(0.35, 0.85, 0.35)] * ng,
            landmark_size=[OBSTACLE_SIZE] * no,
            landmark_collide=[True] * no,
            landmark_color=[(0.25, 0.25, 0.25)] * no,
            curriculum_scaled=[False] * na + [True] * ng,
            curriculum_factors=list(PREY_SPEED_FACTORS),
            dim_c=2,
        )

    def _obs_dim(self, group: str) -> int:
        landmarks = self.num_landmark_neighbors or self.num_obstacles
        num_agents = self.num_adversaries + self.num_good
        if self.num_agent_neighbors is not None:
            return 4 + 2 * landmarks + 4 * self.num_agent_neighbors
        other_good = self.num_good - (1 if group == "agent" else 0)
        return 4 + 2 * landmarks + 2 * (num_agents - 1) + 2 * other_good

    def _fields(self) -> dict[str, Field]:
        A = self.num_adversaries + self.num_good
        return {
            "num_adversaries": param(self.num_adversaries, "int"),
            "terminate_on_success": param(int(self.terminate_on_success), "int"),
            "agent_k": param(self.agent_k, "int"), "landmark_k": param(self.landmark_k, "int"),
            "collisions": info("int", A), "boundary_penalty": info("float", A),
        }
