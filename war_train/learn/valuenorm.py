"""Running value normalization (the on-policy code's ``ValueNorm``), as pure functions.

State: ``{"mean": m, "mean_sq": q, "debias": d}`` (float64 scalars as 0-d tensors).  One
update with a batch of returns ``x`` and decay ``beta``::

    m <- beta*m + (1-beta)*mean(x);  q <- beta*q + (1-beta)*mean(x^2);  d <- beta*d + (1-beta)

Statistics: ``mu = m / max(d, eps)``, ``var = max(q / max(d, eps) - mu^2, min_var)``;
``normalize(x) = (x - mu) / sqrt(var)``, ``denormalize(y) = y*sqrt(var) + mu``.  The debiasing
term makes the first update exact (mu = mean(x)) whatever beta is.
"""

from __future__ import annotations

import torch

__all__ = ["EPS", "MIN_VAR", "valuenorm_init", "valuenorm_update", "valuenorm_update_moments", "valuenorm_stats",
           "normalize", "denormalize", "ValueNorm"]

EPS = 1e-5
MIN_VAR = 1e-2


def valuenorm_init() -> dict[str, torch.Tensor]:
    z = torch.zeros((), dtype=torch.float64)
    return {"mean": z.clone(), "mean_sq": z.clone(), "debias": z.clone()}


def valuenorm_update(state: dict[str, torch.Tensor], x: torch.Tensor, beta: float) -> dict[str, torch.Tensor]:
    """New state after observing the batch ``x`` (any shape; all elements count equally)."""
    if x.numel() == 0:
        raise ValueError("x: expected a non-empty batch of returns")
    x = x.detach().to(torch.float64)
    return {
        "mean": state["mean"] * beta + x.mean() * (1.0 - beta),
        "mean_sq": state["mean_sq"] * beta + (x * x).mean() * (1.0 - beta),
        "debias": state["debias"] * beta + (1.0 - beta),
    }


def valuenorm_update_moments(state: dict[str, torch.Tensor], mean: float, mean_sq: float,
                             beta: float) -> dict[str, torch.Tensor]:
    """``valuenorm_update`` from a batch's moments ``mean(x)`` and ``mean(x^2)`` (e.g. summed over
    data-parallel ranks) instead of the batch itself."""
    m = torch.tensor(mean, dtype=torch.float64)
    q = torch.tensor(mean_sq, dtype=torch.float64)
    return {
        "mean": state["mean"] * beta + m * (1.0 - beta),
        "mean_sq": state["mean_sq"] * beta + q * (1.0 - beta),
        "debias": state["debias"] * beta + (1.0 - beta),
    }


def valuenorm_stats(state: dict[str, torch.Tensor], eps: float = EPS,
                    min_var: float = MIN_VAR) -> tuple[torch.Tensor, torch.Tensor]:
    """Debiased ``(mean, var)``; before any update ``(0, min_var)``."""
    d = state["debias"].clamp(min=eps)
    mean = state["mean"] / d
    var = (state["mean_sq"] / d - mean * mean).clamp(min=min_var)
    return mean, var


def normalize(state: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    mean, var = valuenorm_stats(state)
    return ((x.to(torch.float64) - mean) / var.sqrt()).to(x.dtype)


def denormalize(state: dict[str, torch.Tensor], y: torch.Tensor) -> torch.Tensor:
    mean, var = valuenorm_stats(state)
    return (y.to(torch.float64) * var.sqrt() + mean).to(y.dtype)


class ValueNorm:
    """Stateful wrapper; ``enabled=False`` makes normalize/denormalize the identity."""

    def __init__(self, beta: float = 0.99999, enabled: bool = True) -> None:
        self.beta = float(beta)
        self.enabled = bool(enabled)
        self.state = valuenorm_init()

    def update(self, x: torch.Tensor) -> None:
        if self.enabled:
            self.state = valuenorm_update(self.state, x, self.beta)

    def update_moments(self, mean: float, mean_sq: float) -> None:
        """``update`` from the batch's ``mean(x)`` and ``mean(x^2)`` (all-reduced over ranks)."""
        if self.enabled:
            self.state = valuenorm_update_moments(self.state, mean, mean_sq, self.beta)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return normalize(self.state, x) if self.enabled else x

    def denormalize(self, y: torch.Tensor) -> torch.Tensor:
        return denormalize(self.state, y) if self.enabled else y

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.clone() for k, v in self.state.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        missing = {"mean", "mean_sq", "debias"} - set(state)
        if missing:
            raise ValueError(f"value normalizer state: missing keys {sorted(missing)}")
        self.state = {k: torch.as_tensor(state[k], dtype=torch.float64).clone() for k in ("mean", "mean_sq", "debias")}
