"""Importance weights for WAR batches (docs/war.md, "Group balancing")."""

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


def weighted_group_loss(losses: dict, weights: dict[str, float]):
    """The batch loss with per-group weights: ``Σ_g w_g Σ_i ℓ_gi / Σ_g w_g N_g`` (``losses[g]``:
    per-sample losses of group g, numpy or torch, any shape; ``weights[g]``: its per-sample
    weight).  With ``group_balancing_weights(counts, share)`` this equals ``Σ_g share_g ·
    mean_g(ℓ)`` whatever the counts, i.e. each group weighs what it weighs in lock-step; with
    equal shares it is the mean of the per-group mean losses (tested)."""
    means, counts = {}, {}
    for g, loss in losses.items():
        counts[g] = loss.numel() if hasattr(loss, "numel") else np.size(loss)
        means[g] = loss.mean() if counts[g] else 0.0
    return weighted_group_mean(means, counts, weights)


def weighted_group_mean(means: dict, counts: dict[str, int], weights: dict[str, float]):
    """``weighted_group_loss`` from each group's mean loss ``means[g]`` over its ``counts[g]``
    samples: ``Σ_g w_g N_g mean_g / Σ_g w_g N_g`` (what a shared actor's update combines: the
    losses of its groups' minibatches, each a mean; numpy, torch or floats)."""
    num = den = 0.0
    for g, mean in means.items():
        n = counts[g]
        if n == 0 or weights[g] == 0:
            continue
        num = num + (weights[g] * n) * mean
        den = den + weights[g] * n
    if den == 0:
        raise ValueError("losses: expected at least one sample with a positive weight")
    return num / den


def staleness_summary(lags, counts=None) -> dict[str, float]:
    """Policy lag of a batch (in versions): ``mean``, ``p95``, ``max`` and ``hist`` (``{lag:
    count}``); ``counts`` weights each entry (e.g. agents per world-transition)."""
    lags = np.asarray(lags, dtype=np.int64).ravel()
    if lags.size == 0:
        return {"mean": 0.0, "p95": 0.0, "max": 0.0, "hist": {}}
    c = np.ones_like(lags) if counts is None else np.asarray(counts, dtype=np.int64).ravel()
    if c.shape != lags.shape or np.any(c < 0) or np.any(lags < 0):
        raise ValueError("lags, counts: expected non-negative arrays of the same shape")
    values, inverse = np.unique(lags, return_inverse=True)
    hist = np.bincount(inverse, weights=c).astype(np.int64)
    total = hist.sum()
    if total == 0:
        return {"mean": 0.0, "p95": 0.0, "max": 0.0, "hist": {}}
    cdf = np.cumsum(hist) / total
    p95 = float(values[np.searchsorted(cdf, 0.95 - 1e-12)])
    present = values[hist > 0]
    return {"mean": float((values * hist).sum() / total), "p95": p95, "max": float(present.max()),
            "hist": {int(val): int(h) for val, h in zip(values, hist) if h > 0}}
