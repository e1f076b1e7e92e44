"""Importance weights for WAR batches (DESIGN §5, item 7)."""

from __future__ import annotations

import numpy as np

from war_envs.core import validation as v


def group_balancing_weights(counts: dict[str, int], lockstep_share: dict[str, float], *,
                            clip: float = 10.0) -> dict[str, float]:
    """Per-transition weight of each group, ∝ 1/N_g, scaled so that each group carries the
    share of the total weight it has in lock-step MAPPO (``lockstep_share``, summing to 1)
    while the mean weight over the batch stays 1, then clipped to ``[1/clip, clip]``.

    With counts in lock-step proportions every weight is 1 (the degenerate case)."""
    v.check_float("clip", clip, low=1.0)
    if set(counts) != set(lockstep_share):
        raise ValueError("counts, lockstep_share: expected the same groups")
    total_share = sum(lockstep_share.values())
    if not np.isclose(total_share, 1.0):
        raise ValueError(f"lockstep_share: expected shares summing to 1, got {total_share}")
    total = sum(counts.values())
    out = {}
    for g, n in counts.items():
        if n < 0:
            raise ValueError(f"counts[{g!r}]: expected >= 0, got {n}")
        w = lockstep_share[g] * total / n if n > 0 else 0.0
        out[g] = float(np.clip(w, 1.0 / clip, clip)) if n > 0 else 0.0
    return out


def kish_ess(weights) -> float:
    """Kish effective sample size ``(Σw)² / Σw²`` (equals the count when all weights are equal)."""
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.size == 0:
        return 0.0
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights: expected finite non-negative weights")
    s2 = float(np.sum(w * w))
    return float(np.sum(w)) ** 2 / s2 if s2 > 0 else 0.0
