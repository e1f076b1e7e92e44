"""What several MPE scenarios share beyond the world (``world.py``) and the base class
(``base.py``): mpe2's uniform start, observation blocks, the landmark-covering task (Spread-v0,
Command-v0), mpe2's boundary penalty (PredatorPrey-v0, WorldComm-v0) and the metrics more than
one scenario logs.  A scenario imports from here, ``world``, ``base`` and ``assignment``, never
from a sibling scenario.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import warp as wp

from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, info

# ------------------------------------------------------------------ the uniform start
@wp.func
def episode_stream(w: Any, e: int):
    """World e's random stream of this episode (what its reset draws from)."""
    return wp.rand_init(w.world_seed[e], w.episode[e])


@wp.func
def draw_uniform_positions(pos: wp.array3d(dtype=Any), e: int, rng: wp.uint32, lo: Any, hi: Any):
    """``pos[e, k] ~ U[lo, hi)²`` for every entity k in order, x then y (mpe2's
    ``np_random.uniform(lo, hi, dim_p)`` per entity); returns the stream after the draws."""
    for k in range(pos.shape[1]):
        pos[e, k, 0] = W.uniform(wp.randf(rng), lo, hi)
        pos[e, k, 1] = W.uniform(wp.randf(rng), lo, hi)
    return rng


@wp.func
def uniform_start(w: Any, e: int, rng: wp.uint32, landmark_range: Any):
    """mpe2's usual reset_world positions: every agent ~ U[-1, 1)², then every landmark
    ~ U[-r, r)² (r = ``landmark_range``), from ``rng``; returns the stream after the draws."""
    one = type(landmark_range)(1.0)
    rng = draw_uniform_positions(w.agent_pos, e, rng, -one, one)
    return draw_uniform_positions(w.landmark_pos, e, rng, -landmark_range, landmark_range)


@wp.func
def uniform_reset(w: Any, e: int):
    """A ``reset_world``: agents then landmarks ~ U[-1, 1)² from world e's stream, nothing else."""
    uniform_start(w, e, episode_stream(w, e), type(w.dt)(1.0))


# ------------------------------------------------------------------ observation blocks
@wp.func
def write_velocity(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, w: Any):
    """Agent i's velocity (2 values) into its row from offset o; returns the next offset."""
    out[e, i, o] = wp.float32(w.agent_vel[e, i, 0])
    out[e, i, o + 1] = wp.float32(w.agent_vel[e, i, 1])
    return o + 2


@wp.func
def write_comm(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, w: Any, j: int):
    """Agent j's communication state (``dim_c`` values) into agent i's row from offset o;
    returns the next offset."""
    for c in range(w.dim_c):
        out[e, i, o + c] = wp.float32(w.agent_comm[e, j, c])
    return o + w.dim_c


@wp.func
def write_color(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, colors: wp.array(dtype=Any), k: int):
    """Colour k (RGB: ``colors[3k : 3k + 3]``) into agent i's row from offset o; returns o + 3."""
    for c in range(3):
        out[e, i, o + c] = wp.float32(colors[3 * k + c])
    return o + 3


@wp.func
def write_one_hot(out: wp.array3d(dtype=wp.float32), e: int, i: int, o: int, n: int, hot: int):
    """n values, 1 at index ``hot`` (none if hot is outside 0 … n−1); returns o + n."""
    for c in range(n):
        out[e, i, o + c] = wp.float32(0.0)
        if c == hot:
            out[e, i, o + c] = wp.float32(1.0)
    return o + n


# ------------------------------------------------------------------ covering landmarks (Spread, Command)
CAPTURE_RADIUS = 0.1  # mpe2 Scenario.CAPTURE_RADIUS: a landmark is occupied by an agent this close


@wp.func
def landmark_coverage(w: Any, e: int):
    """G = -sum_l min_a |a - l| (each min written to ``w.landmark_min_dist``) and the number of
    landmarks with an agent closer than ``w.capture_radius``, as (G, count as a float)."""
    total = type(w.capture_radius)(0.0)
    occupied = type(w.capture_radius)(0.0)
    for l in range(w.landmark_pos.shape[1]):
        min_sq = W.entity_distance_sq(w.agent_pos, e, 0, w.landmark_pos, l)
        for a in range(1, w.agent_pos.shape[1]):
            min_sq = wp.min(min_sq, W.entity_distance_sq(w.agent_pos, e, a, w.landmark_pos, l))
        min_dist = wp.sqrt(min_sq)
        w.landmark_min_dist[e, l] = min_dist
        total = total - min_dist
        if min_dist < w.capture_radius:
            occupied = occupied + type(w.capture_radius)(1.0)
    return wp.vector(total, occupied)


def navigation_info(num_agents: int, num_landmarks: int) -> dict[str, Field]:
    """The info fields of the landmark-covering scenarios."""
    return {"landmark_min_dist": info("float", num_landmarks), "collisions": info("int", num_agents),
            "occupied_landmarks": info("int")}


def landmark_dist(info: dict) -> torch.Tensor:
    """Per world, ``Σ_landmarks`` distance to the nearest agent (float64 ``[E]``)."""
    return info["landmark_min_dist"].to(torch.float64).sum(-1)


def agent_pair_collisions(info: dict) -> torch.Tensor:
    """Per world, colliding agent pairs (float64 ``[E]``): ``Σ_i collisions_i / 2``."""
    return info["collisions"].to(torch.float64).sum(-1) / 2.0


def occupied_landmarks(info: dict) -> torch.Tensor:
    """Per world, landmarks with an agent within the capture radius (float64 ``[E]``)."""
    return info["occupied_landmarks"].to(torch.float64)


#: the navigation metrics of the landmark-covering scenarios
NAVIGATION_METRICS = (
    EpisodeMetric("landmark_dist", "Σ over landmarks of the distance to the nearest agent, "
                  "averaged over the episode's steps", landmark_dist, "mean"),
    EpisodeMetric("collisions", "colliding agent pairs, summed over the episode's steps",
                  agent_pair_collisions, "sum"),
    EpisodeMetric("occupied_landmarks", "landmarks with an agent within 0.1 at the episode's last step",
                  occupied_landmarks, "last"),
)


# ------------------------------------------------------------------ chases (PredatorPrey, WorldComm)
@wp.func
def boundary_penalty(x: Any):
    """mpe2's bound(x): 0 below 0.9, (x - 0.9) * 10 below 1, else min(exp(2x - 2), 10)."""
    if x < type(x)(0.9):
        return type(x)(0.0)
    if x < type(x)(1.0):
        return (x - type(x)(0.9)) * type(x)(10.0)
    return wp.min(wp.exp(type(x)(2.0) * x - type(x)(2.0)), type(x)(10.0))


def adversary_contacts(info: dict, num_adversaries: int) -> torch.Tensor:
    """Per world, adversary-prey contacts this step (float64 ``[E]``): the adversaries' entries
    of ``info["collisions"]`` summed."""
    return info["collisions"][:, :num_adversaries].to(torch.float64).sum(-1)


def contact_step(info: dict, num_adversaries: int) -> torch.Tensor:
    """Per world, 1.0 if any adversary touches a good agent this step (float64 ``[E]``)."""
    return (adversary_contacts(info, num_adversaries) > 0).to(torch.float64)


def catch_metrics(num_adversaries: int) -> tuple[EpisodeMetric, ...]:
    """The per-episode metrics of a chase whose adversaries are agents ``0 .. num_adversaries - 1``
    and whose ``info["collisions"]`` counts adversary-prey contacts."""
    contacts = functools.partial(adversary_contacts, num_adversaries=num_adversaries)
    return (
        EpisodeMetric("catch_rate", "1 if an adversary touched a good agent at some step (averaged over "
                      "episodes: the catch rate)", contacts, "any"),
        EpisodeMetric("contact_steps", "steps with at least one adversary-prey contact",
                      functools.partial(contact_step, num_adversaries=num_adversaries), "sum"),
        EpisodeMetric("contacts", "adversary-prey contacts, summed over the episode's steps", contacts, "sum"),
    )


# ------------------------------------------------------------------ goal distances
def goal_dist_metric(doc: str) -> EpisodeMetric:
    """``goal_dist`` (the info entry, summed over its non-world axes) averaged over the steps."""
    def step(info: dict) -> torch.Tensor:
        d = info["goal_dist"].to(torch.float64)
        return d.reshape(d.shape[0], -1).sum(-1)

    return EpisodeMetric("goal_dist", doc, step, "mean")


def adversary_goal_dist(info: dict) -> torch.Tensor:
    """Per world, the adversary's (agent 0's) distance to the goal landmark (float64 ``[E]``)."""
    return info["goal_dist"][:, 0].to(torch.float64)


def good_goal_dist(info: dict) -> torch.Tensor:
    """Per world, the nearest good agent's distance to the goal landmark (float64 ``[E]``)."""
    return info["goal_dist"][:, 1:].to(torch.float64).min(-1).values


#: the metrics of a goal that one adversary (agent 0) and good agents race to (Adversary, Push)
ADVERSARY_METRICS = (
    EpisodeMetric("adversary_goal_dist", "the adversary's distance to the goal landmark, averaged over the "
                  "episode's steps", adversary_goal_dist, "mean"),
    EpisodeMetric("good_goal_dist", "the nearest good agent's distance to the goal landmark, averaged over "
                  "the episode's steps", good_goal_dist, "mean"),
)
