"""The learn step of every training mode: ``learn(learner, batches, coefs, reducer, ...)``.

A mode (``war_train.run.loop.Mode``: lock-step MAPPO, the WAR harness) hands it ``Batches``: one
``GroupBatch`` per group, advantages done; the step

1. sets the learning rates of update's ``Coefficients`` (times each group's
   ``group_lr_scale``);
2. runs the PPO update (``war_train.learn.ppo``): one per group, or with ``share_actor`` one update of
   the shared actor over every group's batch (each group's transitions weighted by
   ``weights[group]``: 1 for lock-step batches, the group-balancing weights for WAR's);
3. refuses parameters that became non-finite (``fail``: the run's exception naming the update
   and the last checkpoint);

and returns the row's per-group diagnostics (``<group>/<name>``, ``ppo.DIAGNOSTICS``).  A group
without a batch (WAR: no transition survived) is not updated; its diagnostics stay unset.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from war_train.config import Coefficients
from war_train.learn.ppo import GroupBatch, Learner, Member, ppo_update, ppo_update_shared

__all__ = ["Batches", "learn"]


@dataclasses.dataclass
class Batches:
    """What a mode's ``batches`` hands the learn step: one ``GroupBatch`` per group to update
    (advantages done), the per-transition weight of each group in a shared actor's loss (None:
    1 each), and the mode's own row entries about the batch (WAR: data shares, ESS, staleness)."""

    groups: dict[str, GroupBatch]
    weights: dict[str, float] | None = None
    stats: dict = dataclasses.field(default_factory=dict)


def learn(learner: Learner, batches: Batches, coefs: Coefficients, reducer, *, cfg,
          fail: Callable[[str, str], Exception], generator: torch.Generator | None = None) -> dict[str, float]:
    """One update of ``learner`` on ``batches`` (see the module docstring).  ``generator``: the
    minibatch stream (default: the learner's)."""
    learner.set_learning_rates(coefs.lr, coefs.critic_lr, cfg.group_lr_scale)
    weights = batches.weights
    gen = learner.generator if generator is None else generator
    row: dict[str, float] = {}
    if cfg.share_actor:
        if batches.groups:
            members = {g: Member(learner.policies[g], learner.critic_opt[g], learner.vnorm[g], b,
                                 1.0 if weights is None else weights[g]) for g, b in batches.groups.items()}
            diags = ppo_update_shared(members, learner.actor_opt[next(iter(members))], cfg=cfg,
                                      entropy_coef=coefs.entropy_coef, generator=gen, reducer=reducer, fail=fail)
            row.update({f"{g}/{k}": v for g, d in diags.items() for k, v in d.items()})
    else:
        for g, b in batches.groups.items():
            diag = ppo_update(learner.policies[g], learner.actor_opt[g], learner.critic_opt[g], learner.vnorm[g], b,
                              cfg=cfg, entropy_coef=coefs.entropy_coef, generator=gen, reducer=reducer, group=g,
                              fail=fail)
            row.update({f"{g}/{k}": v for k, v in diag.items()})
    bad = [name for g, p in learner.policies.items() for name, t in p.named_parameters(prefix=g)
           if not bool(torch.isfinite(t).all())]
    if bad:   # (parameters are equal on every rank)
        raise fail(f"parameter {bad[0]} became non-finite after the optimizer step", "lower the learning rates")
    return row
