"""From a window of transitions to what the learn step takes: advantages and one ``GroupBatch``
per group, the same function for every mode (``group_batch``).

A window (``war_train.rollout.collector.GroupTransitions``) holds each group's transitions time-major
by the step they end at, with their macro-step length ``k`` (1 everywhere under the every-step
schedule: lock-step MAPPO).  Advantages are SMDP GAE (``losses.smdp_gae``; with every ``k = 1``
it is GAE, bit for bit) or, when some transition is more than one policy version old or the
caller asks for it, V-trace (``losses.vtrace``).  Feed-forward groups learn from their kept
transitions as rows; recurrent groups from each world's sequence of decisions
(``war_train.rollout.sequences``).
"""

from __future__ import annotations

import torch

from war_train.learn import losses
from war_train.learn.ppo import GroupBatch
from war_train.rollout.sequences import Sequences, sequence_batch, sequence_log_prob

__all__ = ["group_batch"]


def group_batch(policy, vnorm, b, keep: torch.Tensor, lag: torch.Tensor, *, gamma: float, lam: float,
                bootstrap_truncation: bool = True, vtrace: str = "auto", masked: bool = False,
                can_leave: bool = False, rollout: bool = False):
    """``(GroupBatch, importance ratios or None, V-trace used)`` of one group's transitions ``b``.

    ``keep`` (bool ``[T, E]``): the transitions to learn from (valid and young enough); ``lag``
    (``[T, E]``): versions between each transition's behaviour policy and ``policy``.  The
    importance ratios are computed where a kept transition is off-policy (stale or a draft's) or
    with ``vtrace="always"``; V-trace replaces SMDP GAE with ``"always"``, or with ``"auto"`` when
    some kept transition is more than one version old.  ``masked``: the env has action masks
    (stored per decision, applied in the ratio); ``can_leave``: agents leave the game (out of the
    losses).  ``rollout``: ``b`` is a whole lock-step window (every row valid): a feed-forward
    batch keeps its ``(T, E)`` shape, from which the reducer draws the minibatches of the global
    batch under torchrun."""
    values = vnorm.denormalize(b.values)
    next_values = vnorm.denormalize(b.next_values)
    seq = Sequences(b.valid) if policy.recurrent else None   # (a GRU learns from each world's decisions in order)
    rows = _rows(b, keep, rollout)
    obs_f, act_f, old_logp_f = rows(b.obs), rows(b.actions), rows(b.logp)
    avail_f = rows(b.action_mask) if masked else None
    off = (b.draft | (lag > 0)) & keep
    cur_logp = ratio = None
    if vtrace == "always" or bool(off.any()):
        if seq is not None:
            cur_logp = sequence_log_prob(policy, b, seq, masked)[keep]
        else:
            out, _ = policy.actor(policy.actor_input(obs_f))
            cur_logp = policy.dist.log_prob(out, act_f, avail_f)
        ratio = (cur_logp - old_logp_f).exp()
    use_vtrace = vtrace == "always" or (vtrace == "auto" and bool((lag[keep] > 1).any()))
    k, term, trunc = b.k[..., None], b.terminated, b.truncated   # (flags per agent)
    if not bootstrap_truncation:
        term = term | trunc
    if use_vtrace:
        log_rhos = torch.zeros_like(values)
        log_rhos[keep] = cur_logp - old_logp_f
        returns, advantages = losses.vtrace(log_rhos, b.rewards, values, next_values, k, term, trunc, gamma,
                                            valid=keep[..., None])
    else:
        advantages, returns = losses.smdp_gae(b.rewards, values, next_values, k, term, trunc, gamma, lam,
                                              valid=keep[..., None])
    if seq is not None:
        return (sequence_batch(b, seq, keep, returns, advantages, values, masked=masked, can_leave=can_leave),
                ratio, use_vtrace)
    state_f = rows(b.state) if not policy.local_critic else None
    alive_f = rows(b.alive) if can_leave else None   # (agents out of the game: no loss)
    batch = GroupBatch(obs_f, state_f, act_f, old_logp_f, rows(b.values), rows(returns), rows(advantages),
                       rows(values), alive_f, action_mask=avail_f,
                       shape=tuple(keep.shape) if rollout else None)
    return batch, ratio, use_vtrace


def _rows(b, keep: torch.Tensor, rollout: bool):
    """``x[keep]`` for a ``[T, E, ...]`` field: a view of the flattened window when every row is
    kept (a lock-step window), an indexed copy otherwise."""
    if rollout:
        return lambda x: x.reshape(-1, *x.shape[2:])
    return lambda x: x[keep]
