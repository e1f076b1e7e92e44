"""CollectTreasure-v0: ``mpe2.collect_treasure_v1`` semantics in Warp kernels (collectors pick up
typed treasures and deliver them to the deposit of their type)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param, state
from war_envs.scenarios.mpe.common import draw_uniform_positions, episode_stream, write_one_hot

# mpe2 collect_treasure constants
COLLECTOR_SIZE, DEPOSIT_SIZE, TREASURE_SIZE = 0.05, 0.075, 0.025
ACCEL, MAX_SPEED = 1.5, 1.0
COLLECTOR_MASS, DEPOSIT_MASS = 1.0, 2.25
TREASURE_BOUND = 0.95  # treasures ~ U[-0.95, 0.95)² (at reset and at respawn)
OFF_SCREEN = -999.0  # where a picked-up treasure is moved until it respawns
DEAD_SORT_KEY = 1e6  # mpe2 sorts dead treasures last with this distance key
EVENT_REWARD = 5.0  # each pickup / delivery, shared by every agent
COLLISION_PENALTY = 5.0  # per other collector overlapping a collector
SHAPING = 0.1  # distance shaping factor
RESPAWN_PROB = 1.0  # mpe2's ExtendedLandmark.respawn_prob (a dead treasure respawns each step)
GREY = (0.85, 0.85, 0.85)
#: mpe2's _TYPE_COLORS: one per deposit / treasure type (at most 6 types)
TYPE_COLORS = [(0.212, 0.408, 0.776), (0.945, 0.553, 0.000), (0.169, 0.627, 0.173),
               (0.839, 0.149, 0.157), (0.580, 0.404, 0.741), (0.549, 0.337, 0.294)]


def pickups(info: dict) -> torch.Tensor:
    return info["pickups"].to(torch.float64)


def deliveries(info: dict) -> torch.Tensor:
    return info["deliveries"].to(torch.float64)


COLLECT_TREASURE_METRICS = (
    EpisodeMetric("pickups", "treasures picked up, summed over the episode's steps", pickups, "sum"),
    EpisodeMetric("deliveries", "treasures delivered to the matching deposit, summed over the episode's steps",
                  deliveries, "sum"),
)


# ------------------------------------------------------------------ Warp functions
@wp.func
def collect_treasure_reset(w: Any, e: int):
    """mpe2's reset_world: agents ~ U[-1, 1)², nobody holds anything, each treasure gets a type
    ~ U{0 … types−1} and a position ~ U[-0.95, 0.95)², alive."""
    one = type(w.dt)(1.0)
    rng = draw_uniform_positions(w.agent_pos, e, episode_stream(w, e), -one, one)
    for c in range(w.holding.shape[1]):
        w.holding[e, c] = 0
    for l in range(w.landmark_pos.shape[1]):
        w.treasure_type[e, l] = wp.randi(rng, 0, w.num_types)
        w.landmark_pos[e, l, 0] = W.uniform(wp.randf(rng), -w.treasure_bound, w.treasure_bound)
        w.landmark_pos[e, l, 1] = W.uniform(wp.randf(rng), -w.treasure_bound, w.treasure_bound)
        w.treasure_alive[e, l] = True


@wp.func
def treasure_pickups(w: Any, e: int):
    """mpe2's pickups (first free collector touching a live treasure, in agent order) and
    respawns of the treasures that were gone: ``(collecting reward, pickups)``."""
    num_collectors = w.holding.shape[1]
    five = type(w.dt)(EVENT_REWARD)
    rng = wp.rand_init(int(wp.rand_init(w.world_seed[e], w.episode[e])), w.t[e])
    collecting = type(w.dt)(0.0)
    picked = int(0)
    for l in range(w.landmark_pos.shape[1]):
        was_alive = bool(w.treasure_alive[e, l])  # (else-branch below: the flag before any pickup)
        if was_alive:
            taken = bool(False)
            for c in range(num_collectors):
                if not taken and w.holding[e, c] == 0:
                    d = W.entity_distance(w.landmark_pos, e, l, w.agent_pos, c)
                    if d < w.landmark_size[l] + w.agent_size[c]:
                        collecting = collecting + five
                        picked += 1
                        w.treasure_alive[e, l] = False
                        w.holding[e, c] = w.treasure_type[e, l] + 1
                        w.landmark_pos[e, l, 0] = type(w.dt)(OFF_SCREEN)
                        w.landmark_pos[e, l, 1] = type(w.dt)(OFF_SCREEN)
                        taken = True
        if not was_alive:
            if type(w.dt)(wp.randf(rng)) <= w.respawn_prob:
                w.landmark_pos[e, l, 0] = W.uniform(wp.randf(rng), -w.treasure_bound, w.treasure_bound)
                w.landmark_pos[e, l, 1] = W.uniform(wp.randf(rng), -w.treasure_bound, w.treasure_bound)
                w.treasure_type[e, l] = wp.randi(rng, 0, w.num_types)
                w.treasure_alive[e, l] = True
    return collecting, picked


@wp.func
def treasure_deliveries(w: Any, e: int):
    """mpe2's deliveries (a collector touching the deposit of the type it holds):
    ``(deposit reward, deliveries)``."""
    num_collectors = w.holding.shape[1]
    five = type(w.dt)(EVENT_REWARD)
    deposit_reward = type(w.dt)(0.0)
    delivered = int(0)
    for c in range(num_collectors):
        held = w.holding[e, c]
        if held > 0:
            done = bool(False)
            for k in range(w.agent_pos.shape[1] - num_collectors):
                d_agent = num_collectors + k
                if not done and k == held - 1:
                    reach = w.agent_size[c] + w.agent_size[d_agent]
                    if W.entity_distance(w.agent_pos, e, c, w.agent_pos, d_agent) < reach:
                        deposit_reward = deposit_reward + five
                        delivered += 1
                        w.holding[e, c] = 0
                        done = True
    return deposit_reward, delivered


@wp.func
def closer(found: bool, nearest: Any, d: Any):
    """A running minimum ``(found, nearest)`` after offering distance ``d``."""
    if not found or d < nearest:
        return True, d
    return True, nearest


@wp.func
def collector_reward(w: Any, e: int, i: int, shaping: Any):
    """Collector i's own reward: overlaps with other collectors, shaping toward the nearest live
    treasure (holding none) or the matching deposit."""
    num_collectors = w.holding.shape[1]
    zero = type(w.dt)(0.0)
    rew = zero
    for j in range(num_collectors):
        if j != i and W.agents_collide(w, e, i, j):
            rew = rew - type(w.dt)(COLLISION_PENALTY)
    held = w.holding[e, i]
    if held == 0:
        found = bool(False)
        nearest = zero
        for l in range(w.landmark_pos.shape[1]):
            if w.treasure_alive[e, l]:
                found, nearest = closer(found, nearest, W.entity_distance(w.landmark_pos, e, l, w.agent_pos, i))
        if found:
            rew = rew - shaping * nearest
    else:
        rew = rew - shaping * W.entity_distance(w.agent_pos, e, num_collectors + held - 1, w.agent_pos, i)
    return rew


@wp.func
def deposit_reward(w: Any, e: int, k: int, shaping: Any):
    """Deposit k's own reward: shaping toward the nearest collector carrying its type, else
    toward the collectors' centroid."""
    num_collectors = w.holding.shape[1]
    i = num_collectors + k
    zero = type(w.dt)(0.0)
    rew = zero
    found = bool(False)
    nearest = zero
    for c in range(num_collectors):
        if w.holding[e, c] == k + 1:
            found, nearest = closer(found, nearest, W.entity_distance(w.agent_pos, e, c, w.agent_pos, i))
    if found:
        rew = rew - shaping * nearest
    else:
        cx = zero
        cy = zero
        for c in range(num_collectors):
            cx = cx + w.agent_pos[e, c, 0]
            cy = cy + w.agent_pos[e, c, 1]
        cx = cx / type(w.dt)(float(num_collectors))
        cy = cy / type(w.dt)(float(num_collectors))
        rew = rew - shaping * W.distance(cx, cy, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1])
    return rew


@wp.func
def collect_treasure_reward(w: Any, e: int):
    """mpe2's post_step (pickups, respawns, deliveries, in its order), then the rewards.

    Respawn draws come from the stream ``wp.rand_init(int(wp.rand_init(world_seed, episode)),
    t)``: keyed by the world's seed, its episode counter and the step t (0-based) of the
    episode, so they replay under the same seed, across get_state / set_state and
    clone_worlds, and differ between steps and episodes."""
    num_collectors = w.holding.shape[1]
    collecting, picked = treasure_pickups(w, e)
    delivering, delivered = treasure_deliveries(w, e)
    w.pickups[e] = picked
    w.deliveries[e] = delivered
    shared = collecting + delivering
    shaping = type(w.dt)(SHAPING)
    for i in range(num_collectors):
        w.reward[e, i] = collector_reward(w, e, i, shaping) + shared
    for k in range(w.agent_pos.shape[1] - num_collectors):
        w.reward[e, num_collectors + k] = deposit_reward(w, e, k, shaping) + shared
    return False


@wp.func
def treasure_sort_key(w: Any, e: int, l: int, px: Any, py: Any):
    """mpe2's treasure order key: the distance of a live treasure, 1e6 for a dead one."""
    key = type(px)(DEAD_SORT_KEY)
    if w.treasure_alive[e, l]:
        key = W.distance(w.landmark_pos[e, l, 0], w.landmark_pos[e, l, 1], px, py)
    return key


@wp.func
def collect_treasure_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_pos(2), self_vel(2), (collectors) holding one-hot(n), per other agent nearest
    first: rel_pos(2), vel(2), [deposit type one-hot(n), holding one-hot(n)], per treasure
    (live ones nearest first, then dead ones, in index order): rel_pos(2), type one-hot(n)
    (zeros for dead ones)]."""
    num_collectors = w.holding.shape[1]
    num_agents = w.agent_pos.shape[1]
    n = w.num_types
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = W.write_value(out, e, i, 0, px)
    o = W.write_value(out, e, i, o, py)
    o = W.write_value(out, e, i, o, w.agent_vel[e, i, 0])
    o = W.write_value(out, e, i, o, w.agent_vel[e, i, 1])
    if i < num_collectors:
        o = write_one_hot(out, e, i, o, n, w.holding[e, i] - 1)
    prev_d = type(px)(-1.0)
    prev_j = int(-1)
    for r in range(num_agents - 1):
        j = W.nearest_rank_after(px, py, w.agent_pos, e, num_agents, i, prev_d, prev_j)
        prev_d = W.distance(w.agent_pos[e, j, 0], w.agent_pos[e, j, 1], px, py)
        prev_j = j
        o = W.write_value(out, e, i, o, w.agent_pos[e, j, 0] - px)
        o = W.write_value(out, e, i, o, w.agent_pos[e, j, 1] - py)
        o = W.write_value(out, e, i, o, w.agent_vel[e, j, 0])
        o = W.write_value(out, e, i, o, w.agent_vel[e, j, 1])
        if j < num_collectors:
            o = W.write_zeros(out, e, i, o, n)
            o = write_one_hot(out, e, i, o, n, w.holding[e, j] - 1)
        else:
            o = write_one_hot(out, e, i, o, n, j - num_collectors)
            o = W.write_zeros(out, e, i, o, n)
    num_treasures = w.landmark_pos.shape[1]
    prev_key = type(px)(-1.0)
    prev_l = int(-1)
    for r in range(num_treasures):
        # the next treasure in (key, index) order: Python's stable sort by key
        best = int(-1)
        best_key = prev_key
        for l in range(num_treasures):
            key = treasure_sort_key(w, e, l, px, py)
            if key > prev_key or (key == prev_key and l > prev_l):
                if best < 0 or key < best_key:
                    best = l
                    best_key = key
        prev_key = best_key
        prev_l = best
        if w.treasure_alive[e, best]:
            o = W.write_value(out, e, i, o, w.landmark_pos[e, best, 0] - px)
            o = W.write_value(out, e, i, o, w.landmark_pos[e, best, 1] - py)
            o = write_one_hot(out, e, i, o, n, w.treasure_type[e, best])
        else:
            o = W.write_zeros(out, e, i, o, 2 + n)
    W.write_zeros(out, e, i, o, out.shape[2] - o)


class CollectTreasure(MPEBase):
    """CollectTreasure-v0 — collectors pick up typed treasures and deliver them to the deposit
    of their type (``mpe2.collect_treasure_v1``).

    ``war_envs.make("CollectTreasure-v0", num_envs=E, ...)``.  Every rule, constant and
    encoding is mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8),
    with mpe2's in-episode respawn draws set to ours.

    **Agents**: group ``collector`` (``collector_0 … collector_{C-1}``: size 0.05, mass 1) then
    group ``deposit`` (``deposit_0 … deposit_{D-1}``: size 0.075, mass 2.25; deposit k accepts
    treasure type k).  All: acceleration 1.5, max speed 1, no contact forces ("ghosts").
    **Landmarks**: ``num_treasures`` treasures (``treasure_i``, size 0.025) of D types.

    **Actions**: ``Discrete(5)``: 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; or, with
    ``continuous_actions=True``, ``Box(0, 1, (5,))`` with force ``[a2 − a1, a4 − a3]``.

    **Observation** (float32): ``[self_pos(2), self_vel(2)]``, then for collectors the one-hot
    of the held type (``D``, zeros when empty-handed); then every other agent, nearest first
    (ties in agent order): ``rel_pos(2), vel(2), [deposit type one-hot(D), held type
    one-hot(D)]``; then every treasure, live ones nearest first and dead ones last (mpe2's
    sort key 1e6; ties in index order): ``rel_pos(2), type one-hot(D)``, zeros for a dead one.
    Collectors: ``4 + D + (A−1)·(4 + 2D) + T·(2 + D)`` (86 by default), deposits ``D`` less (84).

    **Dynamics of the treasures** (mpe2's ``post_step``, between the physics and the rewards,
    in its order): for each treasure in order, a live one is picked up by the first
    empty-handed collector (agent order) within ``0.05 + 0.025`` (+5 to the shared reward; the
    treasure dies and moves to (−999, −999)); a dead one respawns (probability 1): a position
    ~ U[−0.95, 0.95)² and a type ~ U{0 … D−1}.  Then each collector holding type k within
    ``0.05 + 0.075`` of deposit k delivers it (+5 to the shared reward, empty-handed again).
    A treasure picked up respawns at the next step.  The respawn draws are Warp's, from the
    stream ``wp.rand_init(int(wp.rand_init(world_seed, episode)), t)`` keyed by the world's
    seed, episode counter and the step ``t`` (0-based): mpe2's distribution, not numpy's numbers.

    **Reward**: every agent gets the shared ``5·(pickups + deliveries)`` of the step plus its
    own terms.  Collector: −5 per other collector within 0.1, and −0.1·(distance to the
    nearest live treasure) when empty-handed (nothing if none is alive) or −0.1·(distance to
    the deposit of the held type).  Deposit k: −0.1·(distance to the nearest collector holding
    type k), or, if none does, −0.1·(distance to the collectors' centroid).

    **Episode end**: truncated after ``max_cycles`` steps (mpe2 has no success condition).
    Every reset draws agents ~ U[−1, 1)² and treasures (type ~ U{0 … D−1}, position
    ~ U[−0.95, 0.95)²), all alive, nobody holding anything.

    **Info**: ``pickups [E]`` and ``deliveries [E]`` (int) of the step.  Per-episode metrics
    (``episode_metrics``): ``pickups`` and ``deliveries``, summed over the episode.

    **State**: ``treasure_type [E, T]`` (int, 0 … D−1), ``treasure_alive [E, T]`` (bool),
    ``holding [E, C]`` (int: 0 empty-handed, k + 1 holding type k).

    **Arguments**: ``num_collectors=6`` (>= 1), ``num_deposits=2`` (1 … 6: the number of
    treasure types), ``num_treasures=6`` (>= 1), ``max_cycles=25``, ``continuous_actions=False``,
    plus the batch arguments ``num_envs``, ``device``, ``seed``, ``precision``,
    ``autoreset_mode`` and ``num_threads``.  mpe2's ``render_mode``, ``dynamic_rescaling`` and
    ``benchmark_data`` concern its renderer and info only (rendering: ``render_frame``, which
    like mpe2 leaves dead treasures out).  No curriculum, no neighbour views, no
    ``terminate_on_success`` (mpe2's environment takes none of them).

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "CollectTreasure-v0"
    mpe2_module = "collect_treasure_v1"
    reset_world = collect_treasure_reset
    reward_world = collect_treasure_reward
    observe_agent = collect_treasure_observe
    episode_metrics = COLLECT_TREASURE_METRICS

    def __init__(self, *, num_collectors: int = 6, num_deposits: int = 2, num_treasures: int = 6,
                 **kwargs) -> None:
        self.num_collectors = v.check_int("num_collectors", num_collectors, minimum=1)
        self.num_deposits = v.check_int("num_deposits", num_deposits, minimum=1)
        if self.num_deposits > len(TYPE_COLORS):
            raise ValueError(f"num_deposits: at most {len(TYPE_COLORS)} deposit (treasure) types are supported, "
                             f"got {self.num_deposits}")
        self.num_treasures = v.check_int("num_treasures", num_treasures, minimum=1)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        c, d, t = self.num_collectors, self.num_deposits, self.num_treasures
        return Layout(
            groups=[("collector", [f"collector_{i}" for i in range(c)]),
                    ("deposit", [f"deposit_{k}" for k in range(d)])],
            agent_size=[COLLECTOR_SIZE] * c + [DEPOSIT_SIZE] * d,
            agent_accel=[ACCEL] * (c + d),
            agent_max_speed=[MAX_SPEED] * (c + d),
            agent_collide=[False] * (c + d),
            agent_color=[GREY] * c + [tuple(0.35 * x for x in TYPE_COLORS[k]) for k in range(d)],
            landmark_size=[TREASURE_SIZE] * t,
            landmark_color=[TYPE_COLORS[0]] * t,
            agent_mass=[COLLECTOR_MASS] * c + [DEPOSIT_MASS] * d,
        )

    def _obs_dim(self, group: str) -> int:
        n, a = self.num_deposits, self.num_collectors + self.num_deposits
        dim = 4 + (a - 1) * (4 + 2 * n) + self.num_treasures * (2 + n)
        return dim + n if group == "collector" else dim

    def _fields(self) -> dict[str, Field]:
        return {
            "num_types": param(self.num_deposits, "int"),
            "treasure_bound": param(TREASURE_BOUND),
            "respawn_prob": param(RESPAWN_PROB),
            "treasure_type": state("int", self.num_treasures),
            "treasure_alive": state("bool", self.num_treasures),
            "holding": state("int", self.num_collectors),
            "pickups": info("int"),
            "deliveries": info("int"),
        }

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        super()._check_state_value(key, tensor)
        n = self.num_deposits
        if key == "treasure_type" and tensor.numel() and int(tensor.max()) >= n:
            raise ValueError(f"state['treasure_type']: expected types 0 .. {n - 1}")
        if key == "holding" and tensor.numel() and int(tensor.max()) > n:
            raise ValueError(f"state['holding']: expected 0 (nothing) or 1 .. {n} (type + 1)")

    # ------------------------------------------------------------------ rendering
    def _entity_colors(self, world: int) -> np.ndarray:
        """mpe2's colours: a collector takes 0.85 × its treasure's colour while holding it."""
        colors = super()._entity_colors(world)
        s = self.get_state()
        holding = s["holding"][world].cpu().numpy()
        types = s["treasure_type"][world].cpu().numpy()
        palette = np.asarray(TYPE_COLORS, dtype=np.float64)
        for c, held in enumerate(holding):
            if held > 0:
                colors[c] = 0.85 * palette[held - 1]
        a = self.num_collectors + self.num_deposits
        colors[a:] = palette[types]
        return colors

    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world; dead treasures are left out (mpe2)."""
        from war_envs.render import render_circles

        world = self._checked_world(world)
        lay = self.layout
        alive = self.get_state()["treasure_alive"][world].cpu().numpy()
        positions = np.concatenate([self.agent_pos.numpy()[world],
                                    self.landmark_pos.numpy()[world][alive]]).astype(np.float64)
        radii = np.asarray(lay.agent_size + [s for s, a in zip(lay.landmark_size, alive) if a], dtype=np.float64)
        a = len(lay.agent_size)
        colors = self._entity_colors(world)
        colors = np.concatenate([colors[:a], colors[a:][alive]])
        return render_circles(positions, radii, colors, width=width, height=height,
                              original_cam_range=original_cam_range)
