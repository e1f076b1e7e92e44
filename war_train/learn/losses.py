"""Advantages (SMDP GAE, V-trace) and the PPO losses as pure functions (no module state, no
randomness).  GAE is ``smdp_gae`` with every interval 1 (lock-step MAPPO's advantages, bit for bit:
``tests/test_war_losses.py``).

Shapes: time first, ``[T, ...]`` for GAE; any matching shapes for the losses.  ``mask`` (bool,
the losses' shape; None: all True) keeps agents out of the game out of every mean: a masked
function over an all-True mask equals the plain one, and with ``mask=None`` it *is* the plain
one, bit for bit.
"""

from __future__ import annotations

import torch

__all__ = ["policy_loss", "search_distill_loss", "value_loss", "huber", "explained_variance",
           "normalize_advantages", "masked_mean"]


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x.mean()``, or the mean over the elements where ``mask`` (0 if there are none)."""
    if mask is None:
        return x.mean()
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1.0)


def normalize_advantages(advantages: torch.Tensor, mask: torch.Tensor | None = None,
                         eps: float = 1e-5) -> torch.Tensor:
    """``(A - mean) / (std + eps)`` over every element (the on-policy code's full-batch form;
    ``std`` is the unbiased sample standard deviation, 0 for a single element).  With ``mask``
    the statistics are of the masked elements; the others come out as 0."""
    if mask is not None:
        out = torch.zeros_like(advantages)
        out[mask] = normalize_advantages(advantages[mask], eps=eps)
        return out
    if advantages.numel() < 2:
        return advantages - advantages.mean()
    return (advantages - advantages.mean()) / (advantages.std() + eps)


def policy_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                clip_coef: float, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """PPO clipped surrogate, to minimize: ``-mean(min(rho*A, clip(rho, 1-eps, 1+eps)*A))``.

    Also returns (detached) diagnostics: ``approx_kl`` = mean((rho - 1) - log rho) (the k3
    estimator of KL(old || new)) and ``clipfrac`` = fraction with ``|rho - 1| > eps``.
    """
    log_ratio = new_logp - old_logp
    ratio = log_ratio.exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1.0 - clip_coef, 1.0 + clip_coef) * advantages
    loss = -masked_mean(torch.min(surr1, surr2), mask)
    with torch.no_grad():
        stats = {"approx_kl": masked_mean((ratio - 1.0) - log_ratio, mask),
                 "clipfrac": masked_mean(((ratio - 1.0).abs() > clip_coef).to(ratio.dtype), mask)}
    return loss, stats


def search_distill_loss(new_logp: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """A planning group's policy target (AlphaZero / MuZero: the policy learns the search's
    improved policy): ``-mean(log pi(a))`` over the searched actions ``a``, which are samples of
    the improved policy, so its expectation is the cross-entropy ``H(pi_search, pi)``."""
    return -masked_mean(new_logp, mask)


def huber(error: torch.Tensor, delta: float) -> torch.Tensor:
    """Elementwise Huber loss: ``e^2/2`` for ``|e| <= delta``, else ``delta*(|e| - delta/2)``."""
    a = error.abs()
    return torch.where(a <= delta, 0.5 * error * error, delta * (a - 0.5 * delta))


def value_loss(values: torch.Tensor, old_values: torch.Tensor, targets: torch.Tensor,
               clip_coef: float, use_huber: bool = True, huber_delta: float = 10.0,
               clip_values: bool = True, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The on-policy code's value loss (everything in normalized units when value
    normalization is on)::

        v_clip = old + clip(v - old, -eps, eps)
        L = mean(max(l(target - v_clip), l(target - v)))   (clip_values)
        L = mean(l(target - v))                             (otherwise)

    with ``l = huber(., delta)`` or ``l(e) = e^2/2``.
    """
    def per_element(error):
        return huber(error, huber_delta) if use_huber else 0.5 * error * error

    unclipped = per_element(targets - values)
    if not clip_values:
        return masked_mean(unclipped, mask)
    clipped_values = old_values + (values - old_values).clamp(-clip_coef, clip_coef)
    return masked_mean(torch.max(per_element(targets - clipped_values), unclipped), mask)


def explained_variance(y_pred: torch.Tensor, y_true: torch.Tensor) -> float:
    """``1 - Var(y_true - y_pred) / Var(y_true)`` (NaN when ``Var(y_true) == 0``)."""
    y_pred = y_pred.detach().flatten().to(torch.float64)
    y_true = y_true.detach().flatten().to(torch.float64)
    var = y_true.var(unbiased=False)
    if var == 0:
        return float("nan")
    return float(1.0 - (y_true - y_pred).var(unbiased=False) / var)


# ----------------------------------------------------------------------------- advantages (macro-steps)
def _discount_pow(base: float, k: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``base ** k`` computed in float64, cast to ``like``'s dtype (so that k = 1 gives exactly
    the scalar ``base`` rounded once, as the plain functions above use it)."""
    return torch.pow(torch.tensor(base, dtype=torch.float64, device=like.device),
                     k.to(torch.float64)).to(like.dtype)


def smdp_gae(rewards: torch.Tensor, values: torch.Tensor, next_values: torch.Tensor, k: torch.Tensor,
             terminated: torch.Tensor, truncated: torch.Tensor, gamma: float, lam: float,
             valid: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE over macro-steps (SMDP): transition t held its action for ``k[t]`` env steps.

    ``rewards[t]`` is the reward accumulated over the held steps (``Σ_{i<k} γ^i r``);
    ``next_values[t]`` is V at the state where the next decision is taken (V(final state) after a
    truncation; anything after a termination).  Time-major ``[T, ...]``; ``valid[t]`` (bool,
    broadcastable) marks the rows that hold a transition — a world's transitions need not be in
    consecutive rows (a slow group's rows are sparse): the λ-trace links each valid row to the
    next valid row of the same column::

        delta_t = R_t + γ^k_t (1 - term_t) next_V_t - V_t
        A_t     = delta_t + (γλ)^k_t (1 - done_t) A_next,     A_next = 0 after a column's last row

    (λ decays per env step, so the trace spans the same env time as lock-step GAE.)  A
    termination bootstraps nothing; a truncation bootstraps with V(final state) but stops the
    λ-trace (the next row belongs to another episode).  With every ``k = 1`` and every row valid
    this is GAE, ``A_t = r_t + γ(1 - term_t) V'_t - V_t + γλ(1 - done_t) A_{t+1}``.  Returns ``(advantages, returns)``, zero where
    not valid.
    """
    if not (rewards.shape == values.shape == next_values.shape):
        raise ValueError(f"rewards, values, next_values: expected equal shapes, got "
                         f"{tuple(rewards.shape)}, {tuple(values.shape)}, {tuple(next_values.shape)}")
    disc = torch.broadcast_to(_discount_pow(gamma, k, rewards), rewards.shape)
    trace = torch.broadcast_to(_discount_pow(gamma * lam, k, rewards), rewards.shape)
    term = torch.broadcast_to(terminated, rewards.shape).to(rewards.dtype)
    done = torch.broadcast_to(terminated | truncated, rewards.shape).to(rewards.dtype)
    ok = None if valid is None else torch.broadcast_to(valid, rewards.shape)
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in range(rewards.shape[0] - 1, -1, -1):
        delta = rewards[t] + disc[t] * (1.0 - term[t]) * next_values[t] - values[t]
        a = delta + trace[t] * (1.0 - done[t]) * last
        if ok is None:
            last = a
            advantages[t] = a
        else:
            last = torch.where(ok[t], a, last)
            advantages[t] = torch.where(ok[t], a, torch.zeros_like(a))
    returns = advantages + values
    if ok is not None:
        returns = torch.where(ok, returns, torch.zeros_like(returns))
    return advantages, returns


def vtrace(log_rhos: torch.Tensor, rewards: torch.Tensor, values: torch.Tensor, next_values: torch.Tensor,
           k: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor, gamma: float,
           rho_bar: float = 1.0, c_bar: float = 1.0, lam: float = 1.0,
           valid: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """V-trace targets (IMPALA, Espeholt et al. 2018) over macro-steps, in ``smdp_gae``'s layout.

    ``log_rhos = log π(a|s) - log μ(a|s)`` (target vs behaviour policy);
    ``ρ_t = min(ρ̄, e^log_rho)``, ``c_t = λ min(c̄, e^log_rho)``, discount ``γ^k_t``::

        δ_t         = ρ_t (R_t + γ^k_t (1 - term_t) next_V_t - V_t)
        vs_t - V_t  = δ_t + γ^k_t (1 - done_t) c_t (vs_next - V_next)      (0 after a column's last row)
        pg_adv_t    = ρ_t (R_t + γ^k_t (1 - term_t) vs_{t+1} - V_t),   vs_{t+1} = next_V_t + (1 - done_t)(vs_next - V_next)

    Returns ``(vs, pg_advantages)``, zero where not valid.  On-policy (``log_rhos = 0``,
    ρ̄ = c̄ = 1) ``vs`` equals ``smdp_gae``'s returns when λ = 1 or every k = 1 (V-trace's trace
    decays by λ per transition, ``smdp_gae``'s by λ per env step).
    """
    if not (rewards.shape == values.shape == next_values.shape == log_rhos.shape):
        raise ValueError("log_rhos, rewards, values, next_values: expected equal shapes")
    rhos = log_rhos.exp()
    rho = rhos.clamp(max=rho_bar)
    c = lam * rhos.clamp(max=c_bar)
    disc = torch.broadcast_to(_discount_pow(gamma, k, rewards), rewards.shape)
    term = torch.broadcast_to(terminated, rewards.shape).to(rewards.dtype)
    done = torch.broadcast_to(terminated | truncated, rewards.shape).to(rewards.dtype)
    ok = None if valid is None else torch.broadcast_to(valid, rewards.shape)
    vs = torch.zeros_like(rewards)
    pg = torch.zeros_like(rewards)
    carry = torch.zeros_like(rewards[0])  # vs_next - V_next of the next valid row in the column
    for t in range(rewards.shape[0] - 1, -1, -1):
        delta = rho[t] * (rewards[t] + disc[t] * (1.0 - term[t]) * next_values[t] - values[t])
        vs_minus_v = delta + disc[t] * (1.0 - done[t]) * c[t] * carry
        vs_next = next_values[t] + (1.0 - done[t]) * carry
        adv = rho[t] * (rewards[t] + disc[t] * (1.0 - term[t]) * vs_next - values[t])
        if ok is None:
            carry = vs_minus_v
            vs[t], pg[t] = values[t] + vs_minus_v, adv
        else:
            carry = torch.where(ok[t], vs_minus_v, carry)
            vs[t] = torch.where(ok[t], values[t] + vs_minus_v, torch.zeros_like(adv))
            pg[t] = torch.where(ok[t], adv, torch.zeros_like(adv))
    return vs, pg


__all__ += ["smdp_gae", "vtrace"]
