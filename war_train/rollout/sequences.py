"""WAR transitions as each world's sequence of decisions: what recurrent PPO learns from in the
WAR mode (docs/war.md, "Recurrent policies").

A recurrent group's GRUs step only at the group's decisions (``war_train.rollout.collector``): their
inputs are the observations (and critic states) at the decision points, the hidden states are
held between decisions and start from zero at an episode's first step.  A window's transitions
of the group sit in the rows where they end (``valid [T, E]``), so world e's decisions, in
order, are its valid rows from top to bottom.  ``Sequences(valid)`` lays them out left-aligned,
time-major ``[L, E]`` (L: the most any world has; the rows after a world's last are padding, in
no loss): the layout of lock-step's recurrent ``GroupBatch`` (``war_train.learn.ppo``), so the learner
re-runs the GRUs over them exactly as lock-step's does, from the states the collector stored
before each world's first transition, reset where the rollout reset them (``episode_start``).
With every group deciding at every step (``arm="sync"``) every row is valid and the layout is
the window's own: the batch is lock-step's, bit for bit.
"""

from __future__ import annotations

import torch

from war_train.learn.ppo import GroupBatch

__all__ = ["Sequences", "sequence_batch", "sequence_log_prob"]


class Sequences:
    """The per-world decision sequences of a ``[T, E]`` batch's ``valid`` rows."""

    def __init__(self, valid: torch.Tensor) -> None:
        self.valid = valid
        self.full = bool(valid.all())
        self.t, self.e = valid.nonzero(as_tuple=True)
        self.pos = (valid.long().cumsum(0) - 1)[self.t, self.e]   # each transition's place in its world's sequence
        self.length = max(int(valid.sum(0).max()), 1) if valid.numel() else 1

    def pack(self, x: torch.Tensor, fill=0) -> torch.Tensor:
        """``x[T, E, ...]`` -> ``[L, E, ...]``: each world's valid rows in order, then ``fill``."""
        if self.full:
            return x
        out = torch.full((self.length, *x.shape[1:]), fill, dtype=x.dtype, device=x.device)
        out[self.pos, self.e] = x[self.t, self.e]
        return out

    def unpack(self, y: torch.Tensor) -> torch.Tensor:
        """``pack``'s inverse: ``y[L, E, ...]`` back at the valid rows of ``[T, E, ...]`` (0 elsewhere)."""
        if self.full:
            return y
        out = y.new_zeros(*self.valid.shape, *y.shape[2:])
        out[self.t, self.e] = y[self.pos, self.e]
        return out


def sequence_log_prob(policy, b, seq: Sequences, masked: bool) -> torch.Tensor:
    """Log-probs ``[T, E, n]`` of the stored actions of transitions ``b`` (``GroupTransitions``)
    under ``policy``'s current actor, its GRU re-run over every world's decisions."""
    out = policy.actor_sequence(seq.pack(b.obs), seq.pack(b.actor_h)[0], seq.pack(b.episode_start))
    avail = seq.pack(b.action_mask, fill=True) if masked else None
    return seq.unpack(policy.dist.log_prob(out, seq.pack(b.actions), avail))


def sequence_batch(b, seq: Sequences, keep: torch.Tensor, returns, advantages, values, *, masked: bool,
                   can_leave: bool) -> GroupBatch:
    """The recurrent ``GroupBatch`` of transitions ``b``: sequences ``[L, E, ...]``, the GRU states
    before each world's first transition, its episode starts; ``keep`` (``[T, E]``, transitions
    young enough to learn from) and, where agents leave, ``b.alive`` mask the losses (as do
    padding rows).  ``returns``, ``advantages``, ``values`` (denormalized) are ``[T, E, n]``."""
    n = b.obs.shape[2]
    mask = seq.pack(keep)[..., None].expand(-1, -1, n)
    if can_leave:
        mask = mask & seq.pack(b.alive)
    elif seq.full and bool(keep.all()):
        mask = None   # (every transition in every loss: the plain means, as lock-step's)
    ok = keep[..., None]
    return GroupBatch(seq.pack(b.obs), seq.pack(b.state), seq.pack(b.actions), seq.pack(b.logp), seq.pack(b.values),
                      seq.pack(torch.where(ok, returns, 0.0)), seq.pack(torch.where(ok, advantages, 0.0)),
                      seq.pack(values), mask, seq.pack(b.episode_start), seq.pack(b.actor_h)[0],
                      seq.pack(b.critic_h)[0], action_mask=seq.pack(b.action_mask, fill=True) if masked else None,
                      shape=(seq.length, keep.shape[1]))
