"""Action heads: the distribution a group's actor outputs, one class per action space we ship.

``action_head(space)`` picks the head; the actor's last ``Linear`` has ``head.n_outputs`` units
and its output ``out`` parameterises the distribution:

===================  =================================  ==========================================
space                head                               ``out`` and sampling
===================  =================================  ==========================================
``Discrete(n)``      ``Categorical``                    ``n`` logits; inverse CDF, one uniform
``MultiDiscrete(v)`` ``MultiCategorical``               ``sum(v)`` logits, one categorical per
                                                        component (Tag-v0: acceleration x turn);
                                                        log-prob and entropy are the sums
``Box(low, high)``   ``DiagGaussian``                   ``d`` means in normalized units; a learned,
                                                        state-independent log-std (``d``)
===================  =================================  ==========================================

**Box bounds.**  The Gaussian lives in normalized units, where ``[-1, 1]`` maps affinely onto
``[low, high]`` (so the initial mean, about 0, is the middle of the box and one initial standard
deviation is ``exp(init_log_std)`` half-widths).  The action stored for learning is the
*unclipped* sample and its log-prob is the Gaussian's; the env receives the sample mapped to
the box and *clipped* to it (``to_env``).  Why clipping rather than a squashed (tanh)
distribution: the log-prob and entropy stay exact closed forms (no Jacobian term, no sampled
entropy estimate), the PPO ratio is of the same unclipped sample under both policies, and it
is what the MAPPO and CleanRL continuous code do; the cost is a bias at the bounds (mass beyond
a bound acts as the bound), which the learned mean and log-std move away from when it matters.

**Randomness.**  Every draw is split in two: ``noise(shape, generator)`` draws the random
numbers of a batch (uniforms for categoricals, standard normals for the Gaussian), and
``sample(out, noise)`` turns them into actions.  Data-parallel ranks draw the noise of every
world from the same generator state and use their own rows, so a world's action does not
depend on which rank steps it.  ``Categorical`` draws exactly what ``sample_categorical`` drew
before the heads existed, so discrete runs are unchanged bit for bit.

**Action masks** (``Discrete`` only: scenarios with ``has_action_mask``, e.g. SMAX).  Every
method of a head takes ``mask=None``; for ``Categorical`` a bool ``mask[..., n]`` (True =
available, at least one per row) restricts the distribution to the available actions: their
logits are replaced by the dtype's lowest finite value (``masked_logits``), so they get
probability exactly 0 (their log-prob is finite and hugely negative, and their logits get no
gradient), the entropy is the entropy over the available actions only (the unavailable terms
are dropped, not ``0 * log 0``), ``mode`` is the most likely *available* action and
``random`` is uniform over the available actions.  Sampling keeps the one-uniform inverse CDF;
the CDF is held flat over unavailable actions (a running maximum of the available entries), so
no uniform, not even 0, and no rounding of the cumulative sum selects one.  With an all-True
mask log-probs, entropies and modes equal the unmasked ones bit for bit, and so do samples
wherever the cumulative sum is non-decreasing (always on the CPU).  The other heads raise
``TypeError`` for a mask.
"""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import torch
from torch import nn

__all__ = ["ActionHead", "Categorical", "MultiCategorical", "DiagGaussian", "action_head", "space_signature",
           "space_from_signature", "sample_categorical", "masked_logits"]


def masked_logits(logits: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``logits`` with the unavailable entries (``mask`` False) set to the dtype's lowest finite
    value: after ``log_softmax`` their probability is exactly 0 and no gradient reaches them.
    ``mask=None``: ``logits`` itself."""
    if mask is None:
        return logits
    return torch.where(mask, logits, torch.finfo(logits.dtype).min)


def sample_categorical(logits: torch.Tensor, generator: torch.Generator | None,
                       u: torch.Tensor | None = None,
                       mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One action per row of ``logits[..., n]`` by inverse CDF; returns ``(actions (int64),
    log-probs)``.  ``u[..., 1]``: uniforms drawn already (else drawn from ``generator``).
    ``mask[..., n]`` (bool, True = available): only available actions are drawn."""
    logp = torch.log_softmax(masked_logits(logits, mask), dim=-1)
    cdf = logp.exp().cumsum(-1)
    if mask is not None:
        # flat over unavailable actions whatever the rounding of the sum (-inf before the first
        # available one): the first entry >= u * total is always an available action
        cdf = torch.where(mask, cdf, -math.inf).cummax(-1).values
    if u is None:
        u = torch.rand(cdf.shape[:-1] + (1,), generator=generator, dtype=cdf.dtype, device=cdf.device)
    actions = (cdf < u * cdf[..., -1:]).sum(-1).clamp(max=logits.shape[-1] - 1)
    return actions, logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def _log_prob_entropy(logits: torch.Tensor, actions: torch.Tensor | None, mask: torch.Tensor | None = None):
    """Categorical ``(log-prob of actions or None, entropy)`` of ``logits[..., n]`` (over the
    available actions of ``mask[..., n]``)."""
    logp_all = torch.log_softmax(masked_logits(logits, mask), dim=-1)
    logp = None if actions is None else logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    terms = logp_all.exp() * logp_all
    if mask is not None:
        terms = torch.where(mask, terms, 0.0)
    return logp, -terms.sum(-1)


def _no_mask(head, mask) -> None:
    if mask is not None:
        raise TypeError(f"mask: action masks apply to Discrete action spaces (war_train's Categorical head), "
                        f"not to {type(head).__name__}")


class ActionHead(nn.Module):
    """The interface every head implements (shapes for a batch ``[..., n_outputs]`` of outputs).
    ``mask``: an action mask ``bool [..., n]`` (``Categorical`` only; see the module docstring)."""

    #: units of the actor's output layer
    n_outputs: int
    #: trailing shape of one agent's action as stored for learning (``()`` for Discrete)
    action_shape: tuple[int, ...]
    #: dtype of stored actions
    action_dtype: torch.dtype
    #: categorical heads: sample, log-probs and entropy of the distribution of ``out / temperature``
    #: (``TrainConfig.final_temperature``; set by the trainer each update); ``mode`` is unchanged
    temperature: float = 1.0

    def tempered(self, out: torch.Tensor) -> torch.Tensor:
        """``out`` at the head's temperature (``out`` itself at 1)."""
        return out if self.temperature == 1.0 else out / self.temperature

    def noise(self, batch_shape, generator: torch.Generator | None, dtype, device) -> torch.Tensor:
        raise NotImplementedError

    def sample(self, out: torch.Tensor, noise: torch.Tensor, mask=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(actions, log-probs)`` from outputs and noise."""
        raise NotImplementedError

    def log_prob(self, out: torch.Tensor, actions: torch.Tensor, mask=None) -> torch.Tensor:
        return self.log_prob_entropy(out, actions, mask)[0]

    def entropy(self, out: torch.Tensor, mask=None) -> torch.Tensor:
        raise NotImplementedError

    def log_prob_entropy(self, out: torch.Tensor, actions: torch.Tensor,
                         mask=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log-probs of actions, entropies)`` (what the PPO loss needs, in one pass)."""
        raise NotImplementedError

    def mode(self, out: torch.Tensor, mask=None) -> torch.Tensor:
        """The most likely action (greedy evaluation)."""
        raise NotImplementedError

    def to_env(self, actions: torch.Tensor) -> torch.Tensor:
        """What the env receives for stored ``actions`` (the identity except for Box)."""
        return actions

    def random(self, batch_shape, generator: torch.Generator, device="cpu", mask=None) -> torch.Tensor:
        """Uniformly random env actions (the random baseline of evaluations)."""
        raise NotImplementedError

    def draw(self, out: torch.Tensor, generator: torch.Generator | None,
             mask=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``sample`` with fresh noise from ``generator``."""
        return self.sample(out, self.noise(out.shape[:-1], generator, out.dtype, out.device), mask)


class Categorical(ActionHead):
    action_shape = ()
    action_dtype = torch.long

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = self.n_outputs = int(n)

    def noise(self, batch_shape, generator, dtype, device):
        return torch.rand(tuple(batch_shape) + (1,), generator=generator, dtype=dtype, device=device)

    def sample(self, out, noise, mask=None):
        return sample_categorical(self.tempered(out), None, u=noise, mask=mask)

    def entropy(self, out, mask=None):
        return _log_prob_entropy(self.tempered(out), None, mask)[1]

    def log_prob_entropy(self, out, actions, mask=None):
        return _log_prob_entropy(self.tempered(out), actions, mask)

    def mode(self, out, mask=None):
        return masked_logits(out, mask).argmax(-1)

    def random(self, batch_shape, generator, device="cpu", mask=None):
        if mask is None:
            return torch.randint(0, self.n, tuple(batch_shape), generator=generator).to(device)
        # the k-th available action, k uniform in [0, available count): exact integer arithmetic
        u = torch.rand(tuple(batch_shape), generator=generator, dtype=torch.float64).to(mask.device)
        count = mask.sum(-1)
        k = torch.minimum((u * count).long(), count - 1)
        return (mask.cumsum(-1) <= k.unsqueeze(-1)).sum(-1).to(device)


class MultiCategorical(ActionHead):
    action_dtype = torch.long

    def __init__(self, nvec) -> None:
        super().__init__()
        self.nvec = [int(n) for n in nvec]
        self.n_outputs = sum(self.nvec)
        self.action_shape = (len(self.nvec),)

    def _split(self, out):
        return torch.split(out, self.nvec, dim=-1)

    def noise(self, batch_shape, generator, dtype, device):
        return torch.rand(tuple(batch_shape) + (len(self.nvec),), generator=generator, dtype=dtype, device=device)

    def sample(self, out, noise, mask=None):
        _no_mask(self, mask)
        parts = [sample_categorical(logits, None, u=noise[..., i:i + 1])
                 for i, logits in enumerate(self._split(self.tempered(out)))]
        return torch.stack([a for a, _ in parts], -1), sum(lp for _, lp in parts)

    def log_prob_entropy(self, out, actions, mask=None):
        _no_mask(self, mask)
        parts = [_log_prob_entropy(logits, actions[..., i])
                 for i, logits in enumerate(self._split(self.tempered(out)))]
        return sum(lp for lp, _ in parts), sum(ent for _, ent in parts)

    def entropy(self, out, mask=None):
        _no_mask(self, mask)
        return sum(_log_prob_entropy(logits, None)[1] for logits in self._split(self.tempered(out)))

    def mode(self, out, mask=None):
        _no_mask(self, mask)
        return torch.stack([logits.argmax(-1) for logits in self._split(out)], -1)

    def random(self, batch_shape, generator, device="cpu", mask=None):
        _no_mask(self, mask)
        return torch.stack([torch.randint(0, n, tuple(batch_shape), generator=generator) for n in self.nvec],
                           -1).to(device)


class DiagGaussian(ActionHead):
    """Diagonal Gaussian in normalized units with a learned state-independent ``log_std``."""

    action_dtype = torch.float32
    LOG_2PI = math.log(2 * math.pi)

    def __init__(self, low, high, init_log_std: float = 0.0, group: str = "") -> None:
        super().__init__()
        low = np.asarray(low, dtype=np.float64).reshape(-1)
        high = np.asarray(high, dtype=np.float64).reshape(-1)
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            raise ValueError(f"group {group!r}: war_train's Gaussian head needs finite Box bounds, got low={low}, "
                             f"high={high}")
        self.n_outputs = low.size
        self.action_shape = (low.size,)
        self.log_std = nn.Parameter(torch.full((low.size,), float(init_log_std)))
        self.register_buffer("low", torch.tensor(low, dtype=torch.float32), persistent=False)
        self.register_buffer("high", torch.tensor(high, dtype=torch.float32), persistent=False)

    def noise(self, batch_shape, generator, dtype, device):
        return torch.randn(tuple(batch_shape) + self.action_shape, generator=generator, dtype=dtype, device=device)

    def sample(self, out, noise, mask=None):
        _no_mask(self, mask)
        actions = out + self.log_std.exp() * noise
        return actions, self.log_prob(out, actions)

    def log_prob(self, out, actions, mask=None):
        _no_mask(self, mask)
        z = (actions - out) * torch.exp(-self.log_std)
        return (-0.5 * z * z - self.log_std - 0.5 * self.LOG_2PI).sum(-1)

    def entropy(self, out, mask=None):
        _no_mask(self, mask)
        per_dim = 0.5 + 0.5 * self.LOG_2PI + self.log_std
        return per_dim.sum().expand(out.shape[:-1])

    def log_prob_entropy(self, out, actions, mask=None):
        return self.log_prob(out, actions, mask), self.entropy(out, mask)

    def mode(self, out, mask=None):
        _no_mask(self, mask)
        return out

    def to_env(self, actions):
        x = self.low + (actions + 1.0) * 0.5 * (self.high - self.low)
        return torch.minimum(torch.maximum(x, self.low), self.high)

    def random(self, batch_shape, generator, device="cpu", mask=None):
        _no_mask(self, mask)
        u = torch.rand(tuple(batch_shape) + self.action_shape, generator=generator)
        return (self.low.cpu() + u * (self.high.cpu() - self.low.cpu())).to(device)


def action_head(space: gymnasium.spaces.Space, init_log_std: float = 0.0, group: str = "") -> ActionHead:
    """The head for ``space``; ``ValueError`` naming the group for a space war_train cannot train."""
    if isinstance(space, gymnasium.spaces.Discrete):
        if int(space.start) != 0:
            raise ValueError(f"group {group!r}: Discrete action spaces must start at 0, got start={space.start}")
        return Categorical(int(space.n))
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        if space.nvec.ndim != 1 or np.any(np.asarray(getattr(space, "start", 0)) != 0):
            raise ValueError(f"group {group!r}: MultiDiscrete action spaces must be 1-D and start at 0, got {space}")
        return MultiCategorical(space.nvec.tolist())
    if isinstance(space, gymnasium.spaces.Box):
        if len(space.shape) != 1:
            raise ValueError(f"group {group!r}: Box action spaces must be 1-D, got shape {space.shape}")
        return DiagGaussian(space.low, space.high, init_log_std, group)
    raise ValueError(f"group {group!r}: war_train trains Discrete, MultiDiscrete and Box action spaces, got {space}")


def space_signature(space: gymnasium.spaces.Space) -> dict:
    """A JSON-friendly description of an action space (checkpoints store it)."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return {"n_actions": int(space.n)}    # (the only entry checkpoints had before other spaces)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return {"action_space": {"type": "MultiDiscrete", "nvec": [int(n) for n in space.nvec]}}
    if isinstance(space, gymnasium.spaces.Box):
        return {"action_space": {"type": "Box", "low": [float(x) for x in space.low.reshape(-1)],
                                 "high": [float(x) for x in space.high.reshape(-1)]}}
    raise ValueError(f"action space: no signature for {space}")


def space_from_signature(sig: dict) -> gymnasium.spaces.Space:
    """The action space ``space_signature`` described."""
    if "n_actions" in sig:
        return gymnasium.spaces.Discrete(int(sig["n_actions"]))
    spec = sig["action_space"]
    if spec["type"] == "MultiDiscrete":
        return gymnasium.spaces.MultiDiscrete(spec["nvec"])
    if spec["type"] == "Box":
        return gymnasium.spaces.Box(np.asarray(spec["low"], np.float32), np.asarray(spec["high"], np.float32))
    raise ValueError(f"checkpoint: unknown action space {spec}")
