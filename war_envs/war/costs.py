"""Cost of one batched policy call per group: ``cost_g(n) = a_g + b_g·n`` seconds for n decisions.

Either measured online (``CostModel``: an EMA of observed ``(n, seconds)`` pairs) or declared
(``CostProfile``) to inject a known cost in experiments:

- ``"busy"``: burn CPU for the duration (a local model competing for cores),
- ``"sleep"``: sleep for it (a remote model: the caller waits, the CPU is free),
- ``"virtual"``: advance a ``VirtualClock`` (deterministic, instant: scheduling tests).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import time

import numpy as np

from war_envs.core import validation as v

_MODES = ("busy", "sleep", "virtual")


class WallClock:
    """Real time (``time.perf_counter``)."""

    def now(self) -> float:
        return time.perf_counter()

    def advance(self, seconds: float) -> None:
        """Wall time advances by itself; declared costs spend it (see ``CostProfile.spend``)."""


class VirtualClock:
    """A clock that moves only when told to: scheduling decisions become deterministic."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if not seconds >= 0:
            raise ValueError(f"seconds: expected a duration >= 0, got {seconds}")
        self._now += seconds

    def state_dict(self) -> dict:
        """``{"now": seconds}``: the time this clock shows."""
        return {"now": self._now}

    def load_state_dict(self, state: dict) -> None:
        self._now = v.check_float("now", state["now"])


@dataclasses.dataclass(frozen=True)
class CostProfile:
    """A declared cost: ``per_call_ms + per_decision_ms · n`` milliseconds per batched call.

    ``mode``: ``"busy"`` (burn CPU), ``"sleep"`` (wait, CPU free) or ``"virtual"`` (advance the
    given ``VirtualClock``).
    """

    per_call_ms: float = 0.0
    per_decision_ms: float = 0.0
    mode: str = "virtual"

    def __post_init__(self) -> None:
        v.check_float("per_call_ms", self.per_call_ms, low=0.0)
        v.check_float("per_decision_ms", self.per_decision_ms, low=0.0)
        v.check_choice("mode", self.mode, _MODES)

    def seconds(self, n: int) -> float:
        """Cost of one call over ``n`` decisions, in seconds."""
        return (self.per_call_ms + self.per_decision_ms * n) / 1e3

    @property
    def per_call_dominated(self) -> bool:
        """True when a call of one decision costs more in fixed than in per-decision terms."""
        return self.per_call_ms >= self.per_decision_ms

    def spend(self, n: int, clock=None) -> float:
        """Pay for one call over ``n`` decisions; returns the seconds spent."""
        seconds = self.seconds(n)
        if seconds <= 0:
            return 0.0
        if self.mode == "virtual":
            if not isinstance(clock, VirtualClock):
                raise TypeError("clock: a 'virtual' CostProfile needs a VirtualClock")
            clock.advance(seconds)
        else:
            spend_real(self.mode, seconds)
        return seconds


def spend_real(mode: str, seconds: float) -> None:
    """Spend ``seconds`` of real time: ``"sleep"`` waits (CPU free), ``"busy"`` burns CPU."""
    if seconds <= 0:
        return
    if mode == "sleep":
        time.sleep(seconds)
    else:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass


class CostModel:
    """Online estimate of ``cost(n) = a + b·n`` from observed ``(n, seconds)`` pairs.

    Exponential moving averages (weight ``beta`` on the past) of n, s, n² and n·s give the
    least-squares line; while n has not varied, the whole cost is attributed per decision
    (``a = 0, b = mean(s) / mean(n)``), which is exact at the operating point.
    """

    def __init__(self, beta: float = 0.9, prior: CostProfile | None = None) -> None:
        self.beta = v.check_float("beta", beta, low=0.0, high=1.0)
        if self.beta >= 1.0:
            raise ValueError("beta: expected < 1 so that observations count")
        self._m = None  # EMA moments [n, s, n², n·s]
        self.count = 0
        self._prior = prior

    def observe(self, n: int, seconds: float) -> None:
        n = v.check_int("n", n, minimum=1)
        seconds = v.check_float("seconds", seconds, low=0.0)
        x = (float(n), seconds, float(n) * n, float(n) * seconds)
        if self._m is None:
            self._m = list(x)
        else:
            self._m = [self.beta * m + (1 - self.beta) * xi for m, xi in zip(self._m, x)]
        self.count += 1

    @property
    def coefficients(self) -> tuple[float, float]:
        """``(a, b)`` in seconds (the prior's, or zeros, before any observation)."""
        if self._m is None:
            if self._prior is not None:
                return self._prior.per_call_ms / 1e3, self._prior.per_decision_ms / 1e3
            return 0.0, 0.0
        mn, ms, mnn, mns = self._m
        var = mnn - mn * mn
        if var <= 1e-9 * max(1.0, mn * mn):
            return 0.0, ms / mn
        b = (mns - mn * ms) / var
        a = ms - b * mn
        if a < 0:  # noise can tilt the line below zero at n = 0: keep costs non-negative
            a, b = 0.0, ms / mn
        elif b < 0:
            a, b = ms, 0.0
        return a, b

    def state_dict(self) -> dict:
        """The estimate so far: the EMA moments (None before any observation) and the count (the
        prior and ``beta`` come from the constructor)."""
        return {"moments": None if self._m is None else list(self._m), "count": self.count}

    def load_state_dict(self, state: dict) -> None:
        moments = state["moments"]
        if moments is not None and (not isinstance(moments, (list, tuple)) or len(moments) != 4):
            raise ValueError(f"moments: expected None or 4 EMA moments [n, s, n², n·s], got {moments!r}")
        self._m = None if moments is None else [float(m) for m in moments]
        self.count = v.check_int("count", state["count"], minimum=0)

    def seconds(self, n: int) -> float:
        a, b = self.coefficients
        return a + b * n

    def per_decision(self, n: int) -> float:
        """τ = cost(n) / n: what one decision costs at batch size n."""
        return self.seconds(n) / n if n > 0 else math.inf


# ----------------------------------------------------------------------------- inference time
RESOURCES = ("parallel", "shared")


class InferenceCost:
    """Seconds of one step's policy calls under a resource model, spent on a clock.

    ``profiles[lane]``: a ``CostProfile`` (declared) or ``None`` (measured: the real call time
    is the cost).  ``lanes[lane]``: agents per world of that lane (a group, or its draft).
    ``jitter`` j multiplies every declared call by U(1-j, 1+j) (seeded ``seed``); ``scale``
    multiplies every declared cost (quotas are scale-invariant, so benchmarks may shrink sleeps).
    """

    def __init__(self, profiles: dict, lanes: dict[str, int], *, resource: str = "parallel", clock=None,
                 jitter: float = 0.0, seed: int = 0, scale: float = 1.0) -> None:
        self.resource = v.check_choice("resource", resource, RESOURCES)
        self.jitter = v.check_float("jitter", jitter, low=0.0, high=0.99)
        self.scale = v.check_float("scale", scale, low=0.0)
        self.profiles = dict(profiles)
        self.lanes = dict(lanes)
        missing = set(self.lanes) - set(self.profiles)
        if missing:
            raise ValueError(f"profiles: no entry for lanes {sorted(missing)} (use None for measured costs)")
        modes = {p.mode for p in self.profiles.values() if p is not None}
        if len(modes) > 1:
            raise ValueError(f"profiles: expected one mode for every declared cost, got {sorted(modes)}")
        self.mode = modes.pop() if modes else "measured"
        if clock is None:
            clock = VirtualClock() if self.mode in ("virtual", "measured") else WallClock()
        if self.mode == "virtual" and not isinstance(clock, VirtualClock):
            raise TypeError("clock: 'virtual' cost profiles need a VirtualClock")
        if self.mode in ("busy", "sleep") and not isinstance(clock, WallClock):
            raise TypeError(f"clock: '{self.mode}' cost profiles spend real time; use a WallClock")
        if self.mode == "busy" and self.resource == "parallel":
            raise ValueError("resource: 'busy' costs cannot run in parallel here (Python threads burning CPU "
                             "hold the GIL); use 'sleep' costs for the parallel model, or resource='shared'")
        self.clock = clock
        self._rng = np.random.default_rng(seed)
        self._pool = None  # sleep costs: background threads, made on first use

    @property
    def virtual(self) -> bool:
        return isinstance(self.clock, VirtualClock)

    def _factor(self) -> float:
        return float(self._rng.uniform(1 - self.jitter, 1 + self.jitter)) if self.jitter else 1.0

    def call_seconds(self, lane: str, worlds: int, measured: float = 0.0) -> tuple[float, float]:
        """``(per-lane seconds, all-lanes seconds)`` of one call over ``worlds`` worlds (a
        declared call draws its jitter here)."""
        profile = self.profiles[lane]
        if worlds <= 0:
            return 0.0, 0.0
        if profile is None:
            return measured, measured
        f = self._factor() * self.scale
        return profile.seconds(worlds) * f, profile.seconds(worlds * self.lanes[lane]) * f

    def begin(self, calls: dict[str, int]) -> dict:
        """Start paying for one step's calls (``calls[lane]``: deciding worlds).  ``sleep`` costs
        start sleeping now, on background threads (the caller's own work — e.g. the real policy
        forward this cost stands for — overlaps them, as a client of remote inference would);
        ``end`` waits for them."""
        token = {"calls": {lane: n for lane, n in calls.items() if n > 0}, "costs": {}, "futures": []}
        for lane, n in token["calls"].items():
            if self.profiles[lane] is not None:
                token["costs"][lane] = self.call_seconds(lane, n)
        if self.mode == "sleep" and token["costs"]:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(self.lanes)),
                                                                   thread_name_prefix="war-lane")
            if self.resource == "parallel":
                token["futures"] = [self._pool.submit(spend_real, "sleep", c[0]) for c in token["costs"].values()]
            else:
                total = sum(c[1] for c in token["costs"].values())
                token["futures"] = [self._pool.submit(spend_real, "sleep", total)]
        return token

    def end(self, token: dict, measured: dict[str, float] | None = None) -> tuple[float, dict]:
        """Finish paying (``measured[lane]``: real call seconds, the cost of undeclared lanes).
        Returns the step's seconds under the resource model and each lane's call cost (all its
        lanes together)."""
        measured = measured or {}
        costs = dict(token["costs"])
        for lane in token["calls"]:
            if lane not in costs:
                m = measured.get(lane, 0.0)
                costs[lane] = (m, m)
        if not costs:
            return 0.0, {}
        if self.resource == "parallel":
            seconds = max(c[0] for c in costs.values())
        else:
            seconds = sum(c[1] for c in costs.values())
        if self.virtual:
            self.clock.advance(seconds)
        elif self.mode == "sleep":
            for fut in token["futures"]:
                fut.result()
        elif self.mode == "busy":  # one device: the declared calls run in turn (shared only)
            spend_real("busy", sum(c[1] for c in token["costs"].values()))
        return seconds, {lane: c[1] for lane, c in costs.items()}

    def spend(self, calls: dict[str, int], measured: dict[str, float] | None = None) -> tuple[float, dict]:
        """``begin`` then ``end``: pay for one step's calls at once."""
        return self.end(self.begin(calls), measured)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
