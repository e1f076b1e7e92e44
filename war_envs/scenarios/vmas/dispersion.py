"""Dispersion-v0: VMAS 1.5.2's ``dispersion`` scenario (agents starting together at the origin
spread out to eat the food; food once eaten is gone)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, scratch, state
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive

AGENT_RADIUS = 0.035


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: every agent at the origin, every food uniform in
    [-pos_range, pos_range]² (x, then y), none eaten."""
    rng = W.episode_stream(w, e)
    r = w.pos_range
    for k in range(w.n_landmarks):
        x = W.uniform(wp.randf(rng), -r, r)
        y = W.uniform(wp.randf(rng), -r, r)
        W.set_position(w, e, k, wp.vector(x, y))
        w.eaten[e, k] = False


@wp.func(inline=True)
def on_food(w: Any, e: int, i: int, k: int):
    """Agent i's centre nearer food k's than the two radii (VMAS's ``vector_norm < a.radius +
    food.radius``, the sum rounded to the world's float once)."""
    return W.distance(W.position(w, e, w.n_landmarks + i), W.position(w, e, k)) < w.eat_dist


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: for each food not yet eaten, the agents on it (shared reward: every
    agent gets 1 per such food with anyone on it; otherwise each agent on it gets 1 / the number
    of agents on it), summed over the food in order; with ``penalise_by_time`` a reward of 0 is
    -0.01.  Then the food with anyone on it is eaten.  Returns VMAS's ``done()``: all eaten."""
    n = w.u.shape[1]
    L = w.n_landmarks
    zero = type(w.dt)(0.0)
    one = type(w.dt)(1.0)
    for k in range(L):
        count = int(0)
        for i in range(n):
            if on_food(w, e, i, k):
                count = count + 1
        w.how_many_on_food[e, k] = count
    for i in range(n):
        r = zero
        for k in range(L):
            if not w.eaten[e, k]:
                count = w.how_many_on_food[e, k]
                if w.share_reward != 0:
                    if count > 0:
                        r = r + one
                elif on_food(w, e, i, k):
                    r = r + one / type(zero)(count)
        if w.penalise_by_time != 0 and r == zero:
            r = w.time_penalty
        w.reward[e, i] = r
    eaten = int(0)
    for k in range(L):
        if w.how_many_on_food[e, k] > 0:
            w.eaten[e, k] = True
        if w.eaten[e, k]:
            eaten = eaten + 1
    w.food_eaten[e] = type(zero)(eaten) / type(zero)(L)
    done = eaten == L
    w.all_eaten[e] = zero
    if done:
        w.all_eaten[e] = one
    return done


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos(2), vel(2), then per food: food pos - pos(2), eaten (1)]."""
    b = w.n_landmarks + i
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    for k in range(w.n_landmarks):
        o = W.write_vec(out, e, i, o, W.position(w, e, k) - p)
        o = W.write_flag(out, e, i, o, w.eaten[e, k])


def _fraction(info: dict) -> torch.Tensor:
    return info["food_eaten"]


def _all_eaten(info: dict) -> torch.Tensor:
    return info["all_eaten"]


class Dispersion(VmasBase):
    """VMAS 1.5.2's ``dispersion``: ``n_agents`` spheres start together at the origin and must
    spread out to eat ``n_food`` pieces of food; a piece is eaten the first step any agent is on
    it, and is then gone (no more reward, no longer drawn).

    Same keyword arguments and defaults as VMAS's scenario (``n_agents=4``,
    ``share_reward=False``, ``penalise_by_time=False``, ``food_radius=0.05``,
    ``pos_range=1.0``, ``n_food=None``: as many as agents) plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0 …`` (one group ``agents``): holonomic spheres of radius 0.035 that
    collide with nothing, force ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``; one 0.1 s
    step, drag 0.25, positions kept within ``±pos_range``.  The food (landmarks ``food_0 …``)
    is spread uniformly over ``[-pos_range, pos_range]²``.  **Observation** (``4 + 3 n_food``)
    ``[pos, vel, then per food: food pos - pos, eaten]``.  **Reward** (per agent): for every
    uneaten piece with agents on it (centres nearer than ``0.035 + food_radius``) 1 shared by
    the agents on it (``1 / their number`` to each), or with ``share_reward`` 1 to every agent;
    with ``penalise_by_time`` a reward of 0 becomes -0.01.  **Termination**: all the food eaten
    (VMAS's ``done``); truncation at ``max_steps``.  **Info** (per world, ours: VMAS's info is
    empty): ``food_eaten`` (the fraction eaten so far) and ``all_eaten`` (1.0 where VMAS's done
    holds).  **Episode metrics**: ``food_eaten`` (the fraction eaten by the end) and ``success``
    (all eaten).

    **Version history**

    * v0: initial version (VMAS 1.5.2's dispersion)
    """

    env_id = "Dispersion-v0"
    vmas_scenario = "dispersion"
    episode_metrics = (
        EpisodeMetric("food_eaten", "the fraction of the food eaten by the end of the episode", _fraction, "last"),
        EpisodeMetric("success", "1 if all the food was eaten (VMAS's done) during the episode", _all_eaten, "any"),
    )
    progress_metric = "food_eaten"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 4, share_reward: bool = False, penalise_by_time: bool = False,
                 food_radius: float = 0.05, pos_range: float = 1.0, n_food: int | None = None, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.share_reward = v.check_bool("share_reward", share_reward)
        self.penalise_by_time = v.check_bool("penalise_by_time", penalise_by_time)
        self.food_radius = check_positive("food_radius", food_radius)
        self.pos_range = check_positive("pos_range", pos_range)
        n_food = v.check_int("n_food", n_food, minimum=1, allow_none=True)
        self.n_food = self.n_agents if n_food is None else n_food
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        food = [Body(f"food_{k}", collide=False, radius=self.food_radius, color=COLORS["green"])
                for k in range(self.n_food)]
        agents = [Body(f"agent_{i}", agent=True, collide=False, radius=AGENT_RADIUS, color=COLORS["blue"])
                  for i in range(self.n_agents)]
        return Layout(bodies=food + agents, groups=[("agents", [a.name for a in agents])],
                      x_semidim=self.pos_range, y_semidim=self.pos_range)

    def _obs_dim(self, group: str) -> int:
        return 4 + 3 * self.n_food

    def _fields(self) -> dict[str, Field]:
        L = self.n_food
        return {
            "pos_range": param(self.pos_range),
            # VMAS compares the float32 norm with the Python sum of the radii, rounded to float32
            "eat_dist": param(AGENT_RADIUS + self.food_radius),
            "share_reward": param(int(self.share_reward), "int"),
            "penalise_by_time": param(int(self.penalise_by_time), "int"),
            "time_penalty": param(-0.01),
            "eaten": state("bool", L),
            "how_many_on_food": scratch("int", L),
            "food_eaten": info("float"), "all_eaten": info("float"),
        }

    def bodies_drawn(self, world: int) -> list[bool]:
        """The food eaten is not drawn (VMAS's ``is_rendering`` turned off once eaten)."""
        eaten = np.zeros(len(self.layout.bodies), dtype=bool)
        eaten[:self.n_food] = self._scenario_state["eaten"].numpy()[world]
        return [b.visible and not gone for b, gone in zip(self.layout.bodies, eaten)]
