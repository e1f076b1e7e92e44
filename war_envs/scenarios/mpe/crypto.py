"""Crypto-v0: Alice sends Bob a goal over a public channel using a shared key while Eve listens,
``mpe2.simple_crypto_v3`` semantics in Warp kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe.base import Field, Layout, MPEBase, const, info, state
from war_envs.scenarios.mpe.common import episode_stream, uniform_start, write_comm

NUM_LANDMARKS = 2
DIM_C = 4
EVE, BOB, ALICE = 0, 1, 2
#: mpe2's landmark "colours": one-hot vectors of the channel width (landmark l: e_l); the goal
#: and the key are landmark colours
LANDMARK_CODES = [[1.0 if c == l else 0.0 for c in range(DIM_C)] for l in range(NUM_LANDMARKS)]
EVE_COLOR = (0.75, 0.25, 0.25)
AGENT_COLOR = (0.25, 0.25, 0.25)


# ------------------------------------------------------------------ Warp functions
@wp.func
def crypto_reset(w: Any, e: int):
    """goal ~ U{0, 1}, key ~ U{0, 1}; agents then landmarks ~ U[-1, 1)² (mpe2's reset_world;
    nobody moves, so positions play no role)."""
    rng = episode_stream(w, e)
    w.goal[e] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    w.key[e] = wp.randi(rng, 0, w.landmark_pos.shape[1])
    uniform_start(w, e, rng, type(w.dt)(1.0))


@wp.func
def comm_is_zero(w: Any, e: int, i: int):
    zero = type(w.dt)(0.0)
    result = bool(True)
    for c in range(w.dim_c):
        if w.agent_comm[e, i, c] != zero:
            result = False
    return result


@wp.func
def comm_error(w: Any, e: int, i: int):
    """sum_c (c_i - goal_code)², summed in channel order (mpe2's np.sum)."""
    g = w.goal[e]
    total = type(w.dt)(0.0)
    for c in range(w.dim_c):
        d = w.agent_comm[e, i, c] - type(w.dt)(w.landmark_code[w.dim_c * g + c])
        total = total + d * d
    return total


@wp.func
def comm_decodes_goal(w: Any, e: int, i: int):
    """The agent said something and its largest channel (first on ties) is the goal's."""
    best = int(0)
    for c in range(1, w.dim_c):
        if w.agent_comm[e, i, c] > w.agent_comm[e, i, best]:
            best = c
    return not comm_is_zero(w, e, i) and best == w.goal[e]


@wp.func
def crypto_reward(w: Any, e: int):
    """Eve: -err(eve) (0 while silent).  Bob and Alice: err(eve) - err(bob) (each term 0 while
    that agent's communication state is all zeros)."""
    zero = type(w.dt)(0.0)
    eve_err = zero
    eve_said = not comm_is_zero(w, e, EVE)
    if eve_said:
        eve_err = comm_error(w, e, EVE)
    good = zero
    if not comm_is_zero(w, e, BOB):
        good = good - comm_error(w, e, BOB)
    adv = zero
    if eve_said:
        adv = adv + eve_err
    w.reward[e, EVE] = zero - eve_err
    w.reward[e, BOB] = adv + good
    w.reward[e, ALICE] = adv + good
    w.bob_decodes[e] = int(comm_decodes_goal(w, e, BOB))
    w.eve_decodes[e] = int(comm_decodes_goal(w, e, EVE))
    return False


@wp.func
def crypto_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Eve: [alice_comm(4)].  Bob: [key(4), alice_comm(4)].  Alice: [goal(4), key(4)]."""
    dim_c = w.dim_c
    if i == EVE:
        write_comm(out, e, i, 0, w, ALICE)
    elif i == BOB:
        for c in range(dim_c):
            out[e, i, c] = wp.float32(w.landmark_code[dim_c * w.key[e] + c])
        write_comm(out, e, i, dim_c, w, ALICE)
    else:
        for c in range(dim_c):
            out[e, i, c] = wp.float32(w.landmark_code[dim_c * w.goal[e] + c])
            out[e, i, dim_c + c] = wp.float32(w.landmark_code[dim_c * w.key[e] + c])


def _bob_decodes(info: dict) -> torch.Tensor:
    return info["bob_decodes"].to(torch.float64)


def _eve_decodes(info: dict) -> torch.Tensor:
    return info["eve_decodes"].to(torch.float64)


CRYPTO_METRICS = (
    EpisodeMetric("bob_decodes", "fraction of the episode's steps at which Bob's largest channel is the goal's",
                  _bob_decodes, "mean"),
    EpisodeMetric("eve_decodes", "fraction of the episode's steps at which Eve's largest channel is the goal's",
                  _eve_decodes, "mean"),
)


class Crypto(MPEBase):
    """Crypto-v0 — Alice must get a goal to Bob over a public channel that Eve overhears; Alice
    and Bob share a private key (``mpe2.simple_crypto_v3``).

    ``war_envs.make("Crypto-v0", num_envs=E, ...)``.  Every rule, constant and encoding is
    mpe2 1.1's; tests replay full episodes against mpe2 (float64 worlds to 1e-8).

    **Agents** (mpe2 order, one agent per group): ``eve`` (``eve_0``, the adversary), ``bob``
    (``bob_0``, the listener), ``alice`` (``alice_0``, the speaker).  Nobody moves; all three
    speak on a 4-wide channel (size 0.05, no collisions).  **Landmarks**: 2; their "colours" are
    the codes ``e_0 = [1, 0, 0, 0]`` and ``e_1 = [0, 1, 0, 0]``, and the goal and the key are
    such codes.

    **Actions** (each agent): ``Discrete(4)`` (the word said: the agent's communication state
    becomes that one-hot) or, with ``continuous_actions=True``, ``Box(0, 1, (4,))`` (the
    communication state itself).

    **Observation** (float32): Eve ``[alice_comm(4)]`` (4 values); Bob ``[key(4),
    alice_comm(4)]`` (8); Alice ``[goal(4), key(4)]`` (8).  ``alice_comm`` is Alice's
    communication state after this step's action (zeros at reset).

    **Reward**: with ``err(a) = Σ_c (c_a − goal)²`` counted only when agent a's communication
    state is not all zeros (0 otherwise): Eve gets ``−err(eve)``; Bob and Alice both get
    ``err(eve) − err(bob)``.

    **Episode end**: truncated after ``max_cycles`` steps; never terminated.  Every reset
    draws the goal then the key, each uniformly from the 2 codes and independently, then the
    three agents' and the landmarks' positions ~ U[−1, 1)² (as in mpe2; nothing moves and
    positions are not observed).

    **Info**: ``bob_decodes [E]`` and ``eve_decodes [E]`` (int: 1 where that agent's
    communication state is not all zeros and its largest channel, the first on ties, is the
    goal's).  Per-episode metrics (``episode_metrics``): ``bob_decodes`` and ``eve_decodes``,
    each averaged over the episode's steps.

    **State** (``get_state``/``set_state``, besides positions, velocities and
    ``agent_comm``): ``goal [E]`` and ``key [E]`` (int, landmark indices 0..1: the codes
    ``e_goal`` and ``e_key``).  The goal sets Alice's observation and every reward (and Bob's
    drawn colour); the key sets Alice's and Bob's observations.

    **Arguments**: ``max_cycles=25``, ``continuous_actions=False`` (mpe2's; its render
    arguments ``render_mode`` and ``dynamic_rescaling`` belong to the PettingZoo front end),
    plus ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``,
    ``num_threads``.  ``curriculum``, ``terminate_on_success``, ``num_agent_neighbors`` and
    ``num_landmark_neighbors`` are not mpe2 arguments of this environment: only their defaults
    (``False`` / ``None``) are accepted.

    **Version history**: v0 — initial release, mpe2 1.1.1 semantics.
    """

    env_id = "Crypto-v0"
    mpe2_module = "simple_crypto_v3"
    reset_world = crypto_reset
    reward_world = crypto_reward
    observe_agent = crypto_observe
    landmark_index_states = ("goal", "key")
    episode_metrics = CRYPTO_METRICS

    def _layout(self) -> Layout:
        n, m = 3, NUM_LANDMARKS
        return Layout(
            groups=[("eve", ["eve_0"]), ("bob", ["bob_0"]), ("alice", ["alice_0"])],
            agent_size=[0.05] * n,
            agent_collide=[False] * n,
            agent_color=[EVE_COLOR, AGENT_COLOR, AGENT_COLOR],
            landmark_size=[0.05] * m,
            landmark_color=[tuple(code[:3]) for code in LANDMARK_CODES],
            agent_movable=[False] * n,
            agent_silent=[False] * n,
            dim_c=DIM_C,
        )

    def _obs_dim(self, group: str) -> int:
        return DIM_C if group == "eve" else 2 * DIM_C

    def _fields(self) -> dict[str, Field]:
        return {
            "landmark_code": const([c for code in LANDMARK_CODES for c in code]),
            "goal": state("int"),
            "key": state("int"),
            "bob_decodes": info("int"),
            "eve_decodes": info("int"),
        }

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        goal = int(self._scenario_state["goal"].numpy()[world])
        colors[BOB] = LANDMARK_CODES[goal][:3]  # mpe2 draws Bob in the goal's code
        return colors
