"""WorldComm-v0: ``mpe2.simple_world_comm_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, info, param
from war_envs.scenarios.mpe.common import boundary_penalty, catch_metrics, episode_stream, uniform_start

# mpe2 simple_world_comm Scenario constants
DIM_C = 4
ADVERSARY_SIZE, ADVERSARY_ACCEL, ADVERSARY_MAX_SPEED = 0.075, 3.0, 1.0
GOOD_SIZE, GOOD_ACCEL, GOOD_MAX_SPEED = 0.045, 4.0, 1.3
OBSTACLE_SIZE, FOOD_SIZE, FOREST_SIZE = 0.2, 0.03, 0.3
LEADER_COLOR, ADVERSARY_COLOR, GOOD_COLOR = (0.65, 0.15, 0.15), (0.95, 0.45, 0.45), (0.45, 0.95, 0.45)
OBSTACLE_COLOR, FOOD_COLOR, FOREST_COLOR = (0.25, 0.25, 0.25), (0.15, 0.15, 0.65), (0.6, 0.9, 0.6)


# ------------------------------------------------------------------ Warp functions
@wp.func
def touches_landmark(w: Any, e: int, i: int, l: int):
    """mpe2's is_collision of agent i and landmark l: |p_i - p_l| < size_i + size_l."""
    d = W.entity_distance(w.agent_pos, e, i, w.landmark_pos, l)
    return d < w.agent_size[i] + w.landmark_size[l]


@wp.func
def in_forest(w: Any, e: int, i: int, f: int):
    """Agent i is inside forest f (it overlaps the forest's disc)."""
    return touches_landmark(w, e, i, w.num_obstacles + w.num_food + f)


@wp.func
def world_comm_reset(w: Any, e: int):
    """Agents ~ U[-1, 1)²; obstacles, food and forests ~ U[-0.9, 0.9)² (mpe2's reset_world)."""
    uniform_start(w, e, episode_stream(w, e), type(w.dt)(0.9))


@wp.func
def world_comm_reward(w: Any, e: int):
    """Adversaries (the leader included): -0.1 · min_good |good - self| + 5 per (good,
    adversary) contact in the world.  Good agents: -5 per touching adversary,
    -2 · Σ_axes bound(|x|), +2 per food touched, -0.05 · distance to the nearest food.
    Never terminal."""
    num_agents = w.agent_pos.shape[1]
    na = w.num_adversaries
    zero = type(w.dt)(0.0)
    for i in range(num_agents):
        w.collisions[e, i] = 0
        w.food_eaten[e, i] = 0
        w.boundary_penalty[e, i] = zero
    contacts = int(0)
    for g in range(na, num_agents):
        for a in range(na):
            if W.agents_collide(w, e, g, a):
                contacts += 1
                w.collisions[e, a] = w.collisions[e, a] + 1
                w.collisions[e, g] = w.collisions[e, g] + 1
    for i in range(num_agents):
        rew = zero
        if i < na:
            nearest = W.entity_distance(w.agent_pos, e, na, w.agent_pos, i)
            for g in range(na + 1, num_agents):
                nearest = wp.min(nearest, W.entity_distance(w.agent_pos, e, g, w.agent_pos, i))
            rew = rew - type(zero)(0.1) * nearest
            for c in range(contacts):
                rew = rew + type(zero)(5.0)
        else:
            for c in range(w.collisions[e, i]):
                rew = rew - type(zero)(5.0)
            bx = type(zero)(2.0) * boundary_penalty(wp.abs(w.agent_pos[e, i, 0]))
            by = type(zero)(2.0) * boundary_penalty(wp.abs(w.agent_pos[e, i, 1]))
            rew = rew - bx
            rew = rew - by
            w.boundary_penalty[e, i] = bx + by
            first_food = w.num_obstacles
            nearest = W.entity_distance(w.landmark_pos, e, first_food, w.agent_pos, i)
            for k in range(w.num_food):
                if touches_landmark(w, e, i, first_food + k):
                    rew = rew + type(zero)(2.0)
                    w.food_eaten[e, i] = w.food_eaten[e, i] + 1
                if k > 0:
                    nearest = wp.min(nearest, W.entity_distance(w.landmark_pos, e, first_food + k, w.agent_pos, i))
            rew = rew - type(zero)(0.05) * nearest
        w.reward[e, i] = rew
    return False


@wp.func
def sees(w: Any, e: int, i: int, j: int, self_in_any: bool):
    """Agent i sees agent j: i is the leader, or they share a forest, or neither is in one."""
    if i == 0:
        return True
    shared = bool(False)
    other_in_any = bool(False)
    for f in range(w.num_forests):
        if in_forest(w, e, j, f):
            other_in_any = True
            if in_forest(w, e, i, f):
                shared = True
    return shared or ((not self_in_any) and (not other_in_any))


@wp.func
def world_comm_good_velocities(w: Any, e: int, i: int, o: int, self_in_any: bool,
                               out: wp.array3d(dtype=wp.float32)):
    """Every other good agent's velocity (zeros if agent i does not see it)."""
    for j in range(w.num_adversaries, w.agent_pos.shape[1]):
        if j != i:
            if sees(w, e, i, j, self_in_any):
                o = W.write_value(out, e, i, o, w.agent_vel[e, j, 0])
                o = W.write_value(out, e, i, o, w.agent_vel[e, j, 1])
            else:
                o = W.write_zeros(out, e, i, o, 2)
    return o


@wp.func
def world_comm_forest_flags(w: Any, e: int, i: int, o: int, out: wp.array3d(dtype=wp.float32)):
    """+1 for each forest agent i is in, -1 otherwise."""
    for f in range(w.num_forests):
        flag = wp.float32(-1.0)
        if in_forest(w, e, i, f):
            flag = wp.float32(1.0)
        o = W.write_value(out, e, i, o, flag)
    return o


@wp.func
def world_comm_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[self_vel, self_pos, landmark_rel (obstacles, food, forests), other_rel (zeros if not
    seen), then for adversaries good_vel (zeros if not seen), in_forest (±1), leader_comm;
    for good agents in_forest, other_good_vel]."""
    num_agents = w.agent_pos.shape[1]
    px = w.agent_pos[e, i, 0]
    py = w.agent_pos[e, i, 1]
    o = W.write_self(out, e, i, w)
    o = W.write_relative_positions(out, e, i, o, -1, px, py, w.landmark_pos, -1)
    self_in_any = bool(False)
    for f in range(w.num_forests):
        if in_forest(w, e, i, f):
            self_in_any = True
    for j in range(num_agents):
        if j != i:
            if sees(w, e, i, j, self_in_any):
                o = W.write_value(out, e, i, o, w.agent_pos[e, j, 0] - px)
                o = W.write_value(out, e, i, o, w.agent_pos[e, j, 1] - py)
            else:
                o = W.write_zeros(out, e, i, o, 2)
    if i < w.num_adversaries:
        o = world_comm_good_velocities(w, e, i, o, self_in_any, out)
        o = world_comm_forest_flags(w, e, i, o, out)
        for c in range(w.dim_c):
            o = W.write_value(out, e, i, o, w.agent_comm[e, 0, c])
    else:
        o = world_comm_forest_flags(w, e, i, o, out)
        o = world_comm_good_velocities(w, e, i, o, self_in_any, out)



class WorldComm(MPEBase):
    """WorldComm-v0 — adversaries led by a speaking leader hunt good agents that forage for
    food and can hide in forests (``mpe2.simple_world_comm_v3``).

    ``war_envs.make("WorldComm-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order): group ``leadadversary`` (``leadadversary_0``), group ``adversary``
    (``adversary_0 … adversary_{num_adversaries−2}``; absent when ``num_adversaries=1``), then
    group ``agent`` (``agent_0 … agent_{num_good−1}``).  Adversaries (the leader included): size
    0.075, accel 3, max speed 1.0; good agents: size 0.045, accel 4, max speed 1.3; all collide.
    Only the leader speaks (a 4-symbol channel).  **Landmarks**, in this order:
    ``num_obstacles`` obstacles (size 0.2, collide), ``num_food`` food (size 0.03) and
    ``num_forests`` forests (size 0.3); food and forests do not collide.

    **Actions**: the leader moves and speaks: ``Discrete(20)`` with index ``move + 5·say``
    (move 0 no-op, 1 −x, 2 +x, 3 −y, 4 +y; say 0..3, one-hot into its communication state),
    or ``Box(0, 1, (9,))`` = ``[move(5), say(4)]`` (the say values become its communication
    state as they are).  Everyone else: ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    **Observation** (float32).  An agent is "in" a forest when it overlaps the forest's disc
    (distance < size sum).  Agent i *sees* agent j if i is the leader, or i and j are in a
    common forest, or neither is in any forest; unseen agents' positions (and velocities) are
    zeros.  With ``L = num_obstacles + num_food + num_forests`` and ``A`` agents:

    - adversaries and the leader: ``[self_vel(2), self_pos(2), landmark_rel(2·L),
      other_agent_rel(2·(A−1)), good_agent_vel(2·num_good), in_forest(num_forests),
      leader_comm(4)]`` (34 by default);
    - good agents: ``[self_vel(2), self_pos(2), landmark_rel(2·L), other_agent_rel(2·(A−1)),
      in_forest(num_forests), other_good_vel(2·(num_good−1))]`` (28 by default);

    ``in_forest`` is +1 per forest the agent is in, −1 otherwise; ``leader_comm`` is the
    leader's communication state (what it said this step).

    **Reward**: every adversary (the leader included) gets ``−0.1 · min_good |good − self|``
    plus 5 per (good agent, adversary) contact anywhere in the world.  A good agent gets −5 per
    adversary touching it, ``−2 · Σ_axes bound(|x|)`` with ``bound(x) = 0`` below 0.9,
    ``10·(x − 0.9)`` below 1, else ``min(e^(2x−2), 10)``, +2 per food it touches and
    ``−0.05 ·`` its distance to the nearest food.

    **Episode end**: truncated after ``max_cycles``; never terminated.  Every reset draws a
    fresh random start: agents ~ U[−1, 1)², obstacles, food and forests ~ U[−0.9, 0.9)².  The
    start has no other random choices (colours are fixed), so positions and velocities are
    the whole state.

    **Info**: ``collisions [E, A]`` (adversary: good agents it touches; good agent:
    adversaries touching it), ``food_eaten [E, A]`` (food a good agent touches; 0 for
    adversaries) and ``boundary_penalty [E, A]`` (the ``2 · Σ bound`` term; 0 for adversaries).
    Per-episode metrics (``episode_metrics``, logged by war-train), from the adversaries'
    ``collisions`` entries as in PredatorPrey-v0: ``catch_rate``, ``contact_steps`` and
    ``contacts``.

    **Arguments**: ``num_good=2``, ``num_adversaries=4``, ``num_obstacles=1``, ``num_food=2``,
    ``max_cycles=25``, ``num_forests=2``, ``continuous_actions=False``, plus ``num_envs``,
    ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  mpe2's rendering
    arguments (``render_mode``, ``dynamic_rescaling``) and ``benchmark_data`` are not taken
    (``render_frame`` draws any world).  ``num_good``, ``num_adversaries`` and ``num_food``
    must be at least 1 (mpe2's rewards take a minimum over them).  mpe2's simple_world_comm has
    no curriculum, no early termination and no partial observability: ``curriculum`` and
    ``terminate_on_success`` must stay False, ``num_agent_neighbors`` and
    ``num_landmark_neighbors`` None.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "WorldComm-v0"
    mpe2_module = "simple_world_comm_v3"
    reset_world = world_comm_reset
    reward_world = world_comm_reward
    observe_agent = world_comm_observe
    per_agent_metrics = ("collisions", "food_eaten", "boundary_penalty")

    def __init__(self, *, num_good: int = 2, num_adversaries: int = 4, num_obstacles: int = 1,
                 num_food: int = 2, num_forests: int = 2, **kwargs) -> None:
        self.num_good = v.check_int("num_good", num_good, minimum=1)
        self.num_adversaries = v.check_int("num_adversaries", num_adversaries, minimum=1)
        self.num_obstacles = v.check_int("num_obstacles", num_obstacles, minimum=0)
        self.num_food = v.check_int("num_food", num_food, minimum=1)
        self.num_forests = v.check_int("num_forests", num_forests, minimum=0)
        self.episode_metrics = catch_metrics(self.num_adversaries)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        na, ng = self.num_adversaries, self.num_good
        groups = [("leadadversary", ["leadadversary_0"])]
        if na > 1:
            groups.append(("adversary", [f"adversary_{i}" for i in range(na - 1)]))
        groups.append(("agent", [f"agent_{i}" for i in range(ng)]))
        no, nf, nt = self.num_obstacles, self.num_food, self.num_forests
        return Layout(
            groups=groups,
            agent_size=[ADVERSARY_SIZE] * na + [GOOD_SIZE] * ng,
            agent_accel=[ADVERSARY_ACCEL] * na + [GOOD_ACCEL] * ng,
            agent_max_speed=[ADVERSARY_MAX_SPEED] * na + [GOOD_MAX_SPEED] * ng,
            agent_collide=[True] * (na + ng),
            agent_color=[LEADER_COLOR] + [ADVERSARY_COLOR] * (na - 1) + [GOOD_COLOR] * ng,
            agent_silent=[False] + [True] * (na + ng - 1),
            landmark_size=[OBSTACLE_SIZE] * no + [FOOD_SIZE] * nf + [FOREST_SIZE] * nt,
            landmark_collide=[True] * no + [False] * (nf + nt),
            landmark_color=[OBSTACLE_COLOR] * no + [FOOD_COLOR] * nf + [FOREST_COLOR] * nt,
            dim_c=DIM_C,
        )

    def _obs_dim(self, group: str) -> int:
        num_agents = self.num_adversaries + self.num_good
        landmarks = self.num_obstacles + self.num_food + self.num_forests
        common = 4 + 2 * landmarks + 2 * (num_agents - 1) + self.num_forests
        if group == "agent":
            return common + 2 * (self.num_good - 1)
        return common + 2 * self.num_good + DIM_C

    def _fields(self) -> dict[str, Field]:
        A = self.num_adversaries + self.num_good
        return {
            "num_adversaries": param(self.num_adversaries, "int"),
            "num_obstacles": param(self.num_obstacles, "int"),
            "num_food": param(self.num_food, "int"),
            "num_forests": param(self.num_forests, "int"),
            "collisions": info("int", A), "food_eaten": info("int", A), "boundary_penalty": info("float", A),
        }
