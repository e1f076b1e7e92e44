"""Relay-v0: an immobile commander who alone sees a goal that moves during the episode relays it
to sentries by a say action (the WAR task where the slow agent's decisions matter)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.scenario import EpisodeMetric
from war_envs.scenarios.mpe import world as W
from war_envs.scenarios.mpe.base import DEFAULT_SENSITIVITY, Field, Layout, MPEBase, info, param, state
from war_envs.scenarios.mpe.common import episode_stream, goal_dist_metric, write_comm, write_one_hot

COMMANDER = 0
TWO_PI = wp.constant(2.0 * math.pi)
RING_RADIUS = 1.0  # the landmarks' distance from the origin
SPAWN_RANGE = 0.25  # sentries start in U[-0.25, 0.25)²
SENTRY_ACCEL = 3.0  # the sentries' sensitivity (mpe2 simple_tag's adversaries')
GOAL_RADIUS = 0.1  # "on the goal" (the on_goal metric; mpe2's capture radius)
SENTRY_SIZE = 0.05
COMMANDER_SIZE = 0.075
LANDMARK_SIZE = 0.05
#: landmark colours, cycled (a goal landmark is drawn brighter by GOAL_TINT)
LANDMARK_COLORS = [(0.65, 0.15, 0.15), (0.15, 0.65, 0.15), (0.15, 0.15, 0.65), (0.65, 0.65, 0.15),
                   (0.65, 0.15, 0.65), (0.15, 0.65, 0.65), (0.65, 0.4, 0.15), (0.4, 0.4, 0.4)]
GOAL_TINT = 0.3


def _on_goal(info: dict) -> torch.Tensor:
    return info["on_goal"].to(torch.float64)


def _goal_switched(info: dict) -> torch.Tensor:
    return info["goal_switched"].to(torch.float64)


#: Relay's per-episode metrics (``Relay.episode_metrics``)
RELAY_METRICS = (
    goal_dist_metric("the sentries' mean distance to the current goal landmark (minus the step reward), "
                     "averaged over the episode's steps"),
    EpisodeMetric("on_goal", f"fraction of the sentries within {GOAL_RADIUS} of the current goal, averaged over "
                  "the episode's steps", _on_goal, "mean"),
    EpisodeMetric("goal_switches", "steps at which the goal changed, summed over the episode", _goal_switched,
                  "sum"),
)


# ------------------------------------------------------------------ Warp functions
@wp.func
def goal_at(w: Any, e: int, t: int):
    """The goal landmark in force at step t: ``goal_sequence[#{m : switch_time[m] <= t}]``."""
    j = int(0)
    for m in range(w.switch_time.shape[1]):
        if w.switch_time[e, m] <= t:
            j += 1
    return w.goal_sequence[e, j]


@wp.func
def relay_reset(w: Any, e: int):
    """From world e's stream, in order: the ring's rotation φ ~ U[0, 2π) (landmark l at angle
    φ + 2πl/L, radius 1), the sentries ~ U[-0.25, 0.25)², the first goal ~ U{0..L-1}, then for
    every scheduled switch m its hold h ~ U{min..max} (switch_time[m] = switch_time[m-1] + h,
    from 0), then the next goal: j ~ U{1..max_goal_jump} places along the ring, in a direction
    ~ U{-1, +1}."""
    rng = episode_stream(w, e)
    num_landmarks = w.landmark_pos.shape[1]
    two_pi = type(w.dt)(TWO_PI)
    phi = W.uniform(wp.randf(rng), type(w.dt)(0.0), two_pi)
    for l in range(num_landmarks):
        angle = phi + two_pi * type(w.dt)(float(l)) / type(w.dt)(float(num_landmarks))
        w.landmark_pos[e, l, 0] = w.ring_radius * wp.cos(angle)
        w.landmark_pos[e, l, 1] = w.ring_radius * wp.sin(angle)
    w.agent_pos[e, COMMANDER, 0] = type(w.dt)(0.0)
    w.agent_pos[e, COMMANDER, 1] = type(w.dt)(0.0)
    for i in range(1, w.agent_pos.shape[1]):
        w.agent_pos[e, i, 0] = W.uniform(wp.randf(rng), -w.spawn_range, w.spawn_range)
        w.agent_pos[e, i, 1] = W.uniform(wp.randf(rng), -w.spawn_range, w.spawn_range)
    goal = wp.randi(rng, 0, num_landmarks)
    w.goal_sequence[e, 0] = goal
    time = int(0)
    for m in range(w.switch_time.shape[1]):
        time += wp.randi(rng, w.min_goal_steps, w.max_goal_steps + 1)
        w.switch_time[e, m] = time
        jump = wp.randi(rng, 1, w.max_goal_jump + 1)
        if wp.randi(rng, 0, 2) == 0:
            jump = -jump
        goal = (goal + jump + num_landmarks) % num_landmarks
        w.goal_sequence[e, m + 1] = goal


@wp.func
def relay_reward(w: Any, e: int):
    """Every agent: r = -(1/S) Σ_sentries |p_s - p_goal(t)| (t: the step just taken)."""
    t = w.t[e]
    g = goal_at(w, e, t)
    total = type(w.dt)(0.0)
    on = type(w.dt)(0.0)
    num_agents = w.agent_pos.shape[1]
    for i in range(1, num_agents):
        d = W.entity_distance(w.agent_pos, e, i, w.landmark_pos, g)
        total = total + d
        if d < w.goal_radius:
            on = on + type(w.dt)(1.0)
    sentries = type(w.dt)(float(num_agents - 1))
    mean = total / sentries
    for i in range(num_agents):
        w.reward[e, i] = -mean
    w.goal[e] = g
    w.goal_dist[e] = mean
    w.on_goal[e] = on / sentries
    switched = int(0)
    if t > 0:
        if goal_at(w, e, t - 1) != g:
            switched = 1
    w.goal_switched[e] = switched
    return False


@wp.func
def relay_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """Commander: [goal_onehot(L), landmark_pos(2L)] (goal of the next step).  Sentry:
    [self_vel(2), self_pos(2), landmark_rel(2L), heard(L)] (heard: the commander's
    communication state, zeros when muted)."""
    num_landmarks = w.landmark_pos.shape[1]
    if i == COMMANDER:
        o = write_one_hot(out, e, i, 0, num_landmarks, goal_at(w, e, w.t[e]))
        for l in range(num_landmarks):
            out[e, i, o] = wp.float32(w.landmark_pos[e, l, 0])
            out[e, i, o + 1] = wp.float32(w.landmark_pos[e, l, 1])
            o += 2
        return
    o = W.write_self(out, e, i, w)
    o = W.write_relative_positions(out, e, i, o, -1, w.agent_pos[e, i, 0], w.agent_pos[e, i, 1], w.landmark_pos,
                                   -1)
    if w.mute != 0:
        W.write_zeros(out, e, i, o, w.dim_c)
    else:
        write_comm(out, e, i, o, w, COMMANDER)


class Relay(MPEBase):
    """Relay-v0 — an immobile commander, the only one who sees which landmark is the goal, must
    keep telling ``num_sentries`` sentries where to go while the goal moves from landmark to
    landmark during the episode.

    ``war_envs.make("Relay-v0", num_envs=E, ...)``.  The WAR task where the slow agent matters
    (the article's one costly planner next to nine cheap reactive agents): the sentries can only
    reach the goal through the commander's messages, and a message goes stale at the next goal
    switch, so a commander that decides rarely (WAR holds its action for k steps) costs return.
    Physics is mpe2's (``simple_speaker_listener``'s speaker/listener pattern, say/hear on a
    ``dim_c = L`` channel); the task is not an mpe2 environment.

    **Agents**: group ``commander`` (``commander_0``: immobile at the origin, speaks, size
    0.075) then group ``sentry`` (``sentry_0 … sentry_{S-1}``: move, sensitivity 3 — mpe2
    simple_tag's adversaries' — no speed cap, silent, size 0.05).  Nobody collides.
    **Landmarks**: ``num_landmarks`` = L (size 0.05, not colliding), equally spaced in index
    order on the circle of radius 1 around the origin.

    **Actions**: commander ``Discrete(L)`` (the landmark index said: its communication state
    becomes that one-hot) or ``Box(0, 1, (L,))`` (the communication state itself); sentry
    ``Discrete(5)`` (0 no-op, 1 −x, 2 +x, 3 −y, 4 +y) or ``Box(0, 1, (5,))`` with force
    ``[a2 − a1, a4 − a3]``.

    **Observation** (float32): commander ``[goal_onehot(L), landmark_pos(2L)]`` — ``3L`` (24 by
    default; the one-hot is the goal of the step about to be taken); sentry ``[self_vel(2),
    self_pos(2), landmark_rel(2L), heard(L)]`` — ``4 + 3L`` (28 by default), landmarks in index
    order, ``heard`` the commander's communication state after this step's action (zeros at
    reset, and always zeros with ``mute_commander=True``).  A sentry never sees the goal.

    **Reward** (shared: every agent gets it): ``r_t = −(1/S) Σ_sentries |p_s − p_{g(t)}|``, the
    sentries' mean distance to the goal ``g(t)`` of the step just taken (the one the commander
    observed before it; the sentries hear of it one step later, as SpeakerListener's listener).
    The goal of step t is ``goal_sequence[#{m : switch_time[m] ≤ t}]``.

    *Why the commander matters* (defaults; ``python benchmarks/relay_baselines.py``: scripted
    teams, one episode in each of 2048 worlds, ``benchmarks/results/relay_baselines.json``).
    Muted, no policy can average less than distance 1 per sentry-step: what a sentry observes
    (itself, the landmarks) is independent of which landmark is the goal, and each step's goal
    is uniform over the L landmarks, whose mean distance from any point is at least its value at
    the ring's centre, 1 (a convex function invariant under the ring's rotations) — so a muted
    team's return is at most −max_cycles = −50.  Sitting on a landmark instead costs
    (1/L) Σ_k 2 sin(πk/L) = 1.26 per step.  Measured returns:

    | team | return | per step | recovered |
    |---|---:|---:|---:|
    | random actions | −53.66 | −1.073 | 0 |
    | muted, hedging at the centre | −50.06 | −1.001 | 0.18 |
    | muted, sitting at landmark 0 | −59.69 | −1.194 | −0.31 |
    | told the goal at every step | −33.90 | −0.678 | 1 |
    | message held 2 steps | −34.74 | −0.695 | 0.96 |
    | message held 4 steps | −36.32 | −0.726 | 0.88 |
    | message held 8 steps | −39.14 | −0.783 | 0.74 |
    | message held for the whole episode | −47.75 | −0.955 | 0.30 |

    ("recovered": the share of the gap from random to the informed team.)  So a muted team
    falls more than halfway from its trained level towards random whenever the trained team
    scores above −46.3 (2 · (−50) − (−53.66)), i.e. recovers more than 37 % of that gap.
    Travel is what the informed team still pays (each switch moves the goal 0.77 or 1.41 away);
    a message held for k steps (updated at t = 0, k, 2k, …: WAR's hold of a slow agent) sends
    the sentries to the old goal for about k/2 steps after each switch — cheap at k = 2–4 (the
    article's commander decides every 3.69 steps), costly at k = 8, and held for the whole
    episode the team waits at the first goal.

    **Episode end**: truncated after ``max_cycles`` steps; never terminated.  Every reset draws,
    from the world's stream in this order: the ring's rotation φ ~ U[0, 2π) (landmark l at angle
    φ + 2πl/L), the sentries' positions ~ U[−0.25, 0.25)², the first goal ~ U{0 … L−1}, then for
    each of the ``M = max_cycles // min_goal_steps`` scheduled switches its hold
    h ~ U{min_goal_steps … max_goal_steps} (``switch_time[m] = switch_time[m−1] + h``, from 0)
    and the next goal, j ~ U{1 … max_goal_jump} places along the ring from the current one in a
    direction ~ U{−1, +1} (switches after the episode's end are never reached).

    **Info**: ``goal [E]`` (int: the goal of the step just taken), ``goal_dist [E]`` (the
    sentries' mean distance to it: ``−r``), ``on_goal [E]`` (fraction of the sentries within 0.1
    of it), ``goal_switched [E]`` (int: 1 if the goal of this step differs from the previous
    step's).  Per-episode metrics (``episode_metrics``, logged by war-train): ``goal_dist``
    (averaged over the episode's steps; the progress metric), ``on_goal`` (averaged),
    ``goal_switches`` (summed).  ``evaluation_variants``: ``muted`` (``mute_commander=True``) —
    war-train's evaluation also plays the trained team with the commander muted (and, as for
    every scenario with several groups, ``sentry_greedy_vs_random``: the commander saying random
    words).

    **State** (``get_state``/``set_state``, besides positions, velocities and ``agent_comm``):
    ``switch_time [E, M]`` (int: the steps at which the goal switches) and ``goal_sequence
    [E, M + 1]`` (int: the goal of each stretch, landmark indices 0 … L−1).  Every random choice
    of a reset, the goal schedule included, is in the state: ``set_state`` of a saved state
    replays the episode exactly.  ``current_goal()``: the goal of the step about to be taken,
    per world.  The schedule after the present step is **private future** (``private_future =
    ("switch_time", "goal_sequence")``): no agent has seen it, and ``redraw_private_future``
    re-draws it (the goals said so far and the one in force stay; the next switch is drawn
    uniformly over the holds that end after the present step, every later one as at a reset),
    which a planner's copies of a world do so as not to peek.

    **Arguments**: ``num_sentries=9``, ``num_landmarks=8`` (≥ 3), ``min_goal_steps=10``,
    ``max_goal_steps=20`` (the goal's hold range, ``1 ≤ min ≤ max``), ``max_goal_jump=2``
    (``1 ≤ j < L/2``), ``mute_commander=False`` (the sentries hear zeros — the ablation; the
    commander's actions and communication state are unchanged, so the same policies run),
    ``max_cycles=50``, ``continuous_actions=False``, plus ``num_envs``, ``device``, ``seed``,
    ``precision``, ``autoreset_mode``, ``num_threads``.  ``curriculum``,
    ``terminate_on_success``, ``num_agent_neighbors`` and ``num_landmark_neighbors`` are not
    arguments of this task: only their defaults (``False`` / ``None``) are accepted.  Holding
    the commander's message for k steps is the trainer's business (WAR's hold);
    ``benchmarks/relay_baselines.py`` does it with scripted policies.

    **Version history**: v0 — initial release.
    """

    env_id = "Relay-v0"
    reset_world = relay_reset
    reward_world = relay_reward
    observe_agent = relay_observe
    landmark_index_states = ("goal_sequence",)
    private_future = ("switch_time", "goal_sequence")
    episode_metrics = RELAY_METRICS
    progress_metric = "goal_dist"

    @classmethod
    def evaluation_variants(cls, env_kwargs: dict) -> dict[str, dict]:
        """``muted``: the commander's messages zeroed (left out when the run's own env is muted)."""
        return {} if env_kwargs.get("mute_commander", False) else {"muted": {"mute_commander": True}}

    def __init__(self, *, num_sentries: int = 9, num_landmarks: int = 8, min_goal_steps: int = 10,
                 max_goal_steps: int = 20, max_goal_jump: int = 2, mute_commander: bool = False,
                 max_cycles: int = 50, **kwargs) -> None:
        self.num_sentries = v.check_int("num_sentries", num_sentries, minimum=1)
        self.num_landmarks_arg = v.check_int("num_landmarks", num_landmarks, minimum=3)
        self.min_goal_steps = v.check_int("min_goal_steps", min_goal_steps, minimum=1)
        self.max_goal_steps = v.check_int("max_goal_steps", max_goal_steps, minimum=1)
        if self.max_goal_steps < self.min_goal_steps:
            raise ValueError(f"max_goal_steps: expected an int >= min_goal_steps ({self.min_goal_steps}), "
                             f"got {self.max_goal_steps}")
        self.max_goal_jump = v.check_int("max_goal_jump", max_goal_jump, minimum=1)
        if 2 * self.max_goal_jump >= self.num_landmarks_arg:
            raise ValueError(f"max_goal_jump: expected an int < num_landmarks / 2 ({self.num_landmarks_arg} / 2), "
                             f"got {self.max_goal_jump}")
        self.mute_commander = v.check_bool("mute_commander", mute_commander)
        super().__init__(max_cycles=max_cycles, **kwargs)

    @property
    def num_switches(self) -> int:
        """M: the goal switches scheduled at every reset (every one at or before ``max_cycles``)."""
        return self.max_cycles // self.min_goal_steps

    def _layout(self) -> Layout:
        s, m = self.num_sentries, self.num_landmarks_arg
        return Layout(
            groups=[("commander", ["commander_0"]), ("sentry", [f"sentry_{i}" for i in range(s)])],
            agent_size=[COMMANDER_SIZE] + [SENTRY_SIZE] * s,
            agent_accel=[DEFAULT_SENSITIVITY] + [SENTRY_ACCEL] * s,
            agent_collide=[False] * (s + 1),
            agent_color=[(0.85, 0.6, 0.2)] + [(0.35, 0.35, 0.85)] * s,
            landmark_size=[LANDMARK_SIZE] * m,
            landmark_color=[LANDMARK_COLORS[l % len(LANDMARK_COLORS)] for l in range(m)],
            agent_movable=[False] + [True] * s,
            agent_silent=[False] + [True] * s,
            dim_c=m,
        )

    def _obs_dim(self, group: str) -> int:
        m = self.num_landmarks_arg
        return 3 * m if group == "commander" else 4 + 3 * m

    def _fields(self) -> dict[str, Field]:
        return {
            "ring_radius": param(RING_RADIUS), "spawn_range": param(SPAWN_RANGE),
            "goal_radius": param(GOAL_RADIUS),
            "min_goal_steps": param(self.min_goal_steps, "int"), "max_goal_steps": param(self.max_goal_steps, "int"),
            "max_goal_jump": param(self.max_goal_jump, "int"), "mute": param(int(self.mute_commander), "int"),
            "switch_time": state("int", self.num_switches),
            "goal_sequence": state("int", self.num_switches + 1),
            "goal": info("int"), "goal_dist": info("float"), "on_goal": info("float"),
            "goal_switched": info("int"),
        }

    def _redraw_private_future(self, worlds: torch.Tensor, generator: torch.Generator) -> None:
        """The goal schedule after the present step, re-drawn as the reset draws it: the goals
        said so far and the one in force stay; the next switch comes after ``h`` steps of the
        stretch in force, h ~ U{min…max} given that it has not come yet (uniform over the holds
        that end after the present step), every later one as at a reset."""
        arrays = self._state_arrays()
        switch, goals = wp.to_torch(arrays["switch_time"]), wp.to_torch(arrays["goal_sequence"])
        s, g = switch[worlds].long(), goals[worlds].long()
        t = wp.to_torch(arrays["t"])[worlds].long()
        n, dev = worlds.numel(), worlds.device
        lo, hi, L, J = self.min_goal_steps, self.max_goal_steps, self.num_landmarks_arg, self.max_goal_jump
        begun = (s <= t.unsqueeze(1)).sum(1)   # switches already made: goal g[begun] is in force
        prev = torch.where(begun > 0, s.gather(1, (begun - 1).clamp_min(0).unsqueeze(1))[:, 0], torch.zeros_like(t))

        def uniform_int(low: torch.Tensor, high: int) -> torch.Tensor:   # U{low … high}, per row
            u = torch.rand(n, generator=generator, device=dev, dtype=torch.float64)
            return low + (u * (high - low + 1)).long().clamp_max(high - low)

        for m in range(s.shape[1]):
            future = m >= begun
            low = torch.where(m == begun, (t - prev + 1).clamp_min(lo), torch.full_like(t, lo))
            time = prev + uniform_int(low, hi)
            s[:, m] = torch.where(future, time, s[:, m])
            prev = s[:, m]
            jump = uniform_int(torch.ones_like(t), J)
            sign = torch.randint(0, 2, (n,), generator=generator, device=dev) * 2 - 1
            g[:, m + 1] = torch.where(future, (g[:, m] + sign * jump) % L, g[:, m + 1])
        switch[worlds] = s.to(switch.dtype)
        goals[worlds] = g.to(goals.dtype)

    def current_goal(self) -> np.ndarray:
        """Per world, the goal landmark of the step about to be taken (what the commander sees)."""
        st = self.get_state()
        t = st["t"].cpu().numpy()
        count = (st["switch_time"].cpu().numpy() <= t[:, None]).sum(1)
        return np.take_along_axis(st["goal_sequence"].cpu().numpy(), count[:, None], 1)[:, 0]

    def _entity_colors(self, world: int) -> np.ndarray:
        colors = super()._entity_colors(world)
        goal = int(self.current_goal()[world])
        colors[len(self.layout.agent_size) + goal] += GOAL_TINT
        return np.minimum(colors, 1.0)
