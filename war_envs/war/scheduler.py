"""Workload-aware quotas and decision intervals (docs/war.md, "Quotas, intervals, phases").

Per-decision cost ``τ_g = cost_g(n)/n``.  A group that can produce decisions faster gets a
larger share of the batch:

    share_g = (n_g / τ_g) / Σ_j (n_j / τ_j)          (n_g: agents in the group)
    N_g     = max(K, round(α · share_g · B / L))      (fragments of length L per window)

Both are unchanged when every cost is scaled by the same constant.  (Weighting by ``n_g``
makes the formula reproduce its own worked example — 1 agent at 50 ms beside 9 at 5 ms gets
its floor of K = 3 fragments of 25 = 75 decisions of a 250-step window — which a per-group
1/τ_g share does not.)  The decision rate of group g follows: its agents decide
``N_g·L / (E·n_g)`` times in a window of S steps per world (at most every step), and hold their
last action in between.  Phases are *staggered* across worlds when cost is per decision (every
step only a 1/k_g fraction of the worlds calls the slow policy: constant load) and *aligned*
when cost is per call (one call every k_g steps).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from war_envs.core import validation as v


def quotas(per_decision_cost: dict[str, float], n_agents: dict[str, int], *, batch_size: int,
           fragment_length: int, floor: int = 1, alpha: float = 1.0) -> dict[str, int]:
    """Fragments per window for each group: ``max(K, round(α·share_g·B/L))``."""
    v.check_int("batch_size", batch_size, minimum=1)
    v.check_int("fragment_length", fragment_length, minimum=1)
    v.check_int("floor", floor, minimum=1)
    v.check_float("alpha", alpha, low=0.0)
    if set(per_decision_cost) != set(n_agents):
        raise ValueError(f"per_decision_cost, n_agents: expected the same groups, got "
                         f"{sorted(per_decision_cost)} and {sorted(n_agents)}")
    for g, tau in per_decision_cost.items():
        if not (tau > 0 and math.isfinite(tau)):
            raise ValueError(f"per_decision_cost[{g!r}]: expected a finite cost > 0, got {tau}")
    rate = {g: n_agents[g] / per_decision_cost[g] for g in per_decision_cost}
    total = sum(rate.values())
    return {g: max(floor, round(alpha * rate[g] / total * batch_size / fragment_length)) for g in rate}


def decision_intervals(quota: dict[str, int], n_agents: dict[str, int], *, num_envs: int,
                       window_steps: int, fragment_length: int) -> dict[str, float]:
    """Average steps between two decisions of one agent: ``S·E·n_g / (N_g·L)``, at least 1."""
    return {g: max(1.0, window_steps * num_envs * n_agents[g] / (quota[g] * fragment_length))
            for g in quota}


@dataclasses.dataclass(frozen=True)
class Schedule:
    """When each group decides.  ``interval[g]`` steps between decisions (fractional intervals
    alternate ⌊k⌋ and ⌈k⌉ so that exactly S/k decisions fall in S steps); ``staggered[g]``
    spreads the worlds' phases over the interval."""

    interval: dict[str, float]
    staggered: dict[str, bool]
    quota: dict[str, int]

    def decides(self, group: str, step: int, num_envs: int) -> np.ndarray:
        """Bool ``[num_envs]``: which worlds' agents of ``group`` decide at ``step`` (0-based
        within the episode or window).  Step 0 always decides (a group needs a first action)."""
        k = self.interval[group]
        if k <= 1.0:
            return np.ones(num_envs, dtype=bool)
        phase = (np.arange(num_envs) * (k / num_envs)) if self.staggered[group] else np.zeros(num_envs)
        x = step + phase
        # a decision whenever floor(x / k) increases (x = 0 counts as one)
        return (np.floor(x / k) != np.floor((x - 1) / k)) | (step == 0)

    def decides_at(self, group: str, steps, num_envs: int | None = None) -> np.ndarray:
        """Bool ``[E]``: which worlds' agents of ``group`` decide now, given each world's own step
        counter ``steps[E]`` (steps since its episode began: 0 always decides).  World ``w`` of
        ``E`` has phase ``w·k/E`` when staggered, 0 when aligned (``decides`` with one step per
        world).  An infinite interval decides only at step 0."""
        steps = np.asarray(steps, dtype=np.int64)
        E = len(steps) if num_envs is None else num_envs
        k = self.interval[group]
        if k <= 1.0:
            return np.ones(len(steps), dtype=bool)
        if not math.isfinite(k):
            return steps == 0
        phase = (np.arange(len(steps)) * (k / E)) if self.staggered[group] else np.zeros(len(steps))
        x = steps + phase
        return (np.floor(x / k) != np.floor((x - 1) / k)) | (steps == 0)

    @property
    def rates(self) -> dict[str, float]:
        return {g: 1.0 / k for g, k in self.interval.items()}


def with_episode_starts(schedule: Schedule, episode_length: int | None) -> Schedule:
    """The same average decision rate when every episode also starts with a decision.

    A world must decide at the first step of each episode (its agents need a first action), so
    an episode of ``L`` steps holds 1 forced decision plus ``(L-1)/k'`` periodic ones; keeping
    ``L/k`` decisions per episode (the quota) needs ``k' = (L-1) / (L/k - 1)`` (infinite, i.e.
    only the forced decision, when ``L/k <= 1``).  ``episode_length=None`` (unknown or
    unbounded) leaves the schedule unchanged."""
    if episode_length is None:
        return schedule
    L = v.check_int("episode_length", episode_length, minimum=1)
    interval = {}
    for g, k in schedule.interval.items():
        if k <= 1.0:
            interval[g] = 1.0
        elif L / k <= 1.0 or L == 1:
            interval[g] = math.inf
        else:
            interval[g] = max(1.0, (L - 1) / (L / k - 1))
    return dataclasses.replace(schedule, interval=interval)


def plan(costs: dict, n_agents: dict[str, int], *, num_envs: int, window_steps: int,
         fragment_length: int, floor: int = 1, alpha: float = 1.0,
         per_call: dict[str, bool] | None = None) -> Schedule:
    """A ``Schedule`` from per-group costs (``CostModel`` or ``CostProfile``, or per-decision
    seconds).  ``per_call[g]`` (default: from a ``CostProfile``'s dominant term, else False)
    chooses aligned phases."""
    tau, aligned = {}, {}
    for g, cost in costs.items():
        n = n_agents[g] * num_envs
        if hasattr(cost, "per_decision"):
            tau[g] = cost.per_decision(n)
        elif hasattr(cost, "seconds"):
            tau[g] = cost.seconds(n) / n
        else:
            tau[g] = float(cost)
        aligned[g] = bool(per_call[g]) if per_call and g in per_call else bool(
            getattr(cost, "per_call_dominated", False))
    quota = quotas(tau, n_agents, batch_size=window_steps * num_envs * sum(n_agents.values()),
                   fragment_length=fragment_length, floor=floor, alpha=alpha)
    interval = decision_intervals(quota, n_agents, num_envs=num_envs, window_steps=window_steps,
                                  fragment_length=fragment_length)
    return Schedule(interval=interval, staggered={g: not aligned[g] for g in interval}, quota=quota)
