"""One PPO update, used by every training path: the learn step of every mode
(``war_train.learn.step``: lock-step MAPPO, the WAR harness) and data-parallel training (through the
reducer).

``ppo_update(policy, opt, vnorm, batch, ...)`` takes one group's batch with GAE already done
(behaviour log-probs and values, denormalized returns and advantages) and runs, in order:

1. the value normalizer's update on the returns and the normalized value targets;
2. advantage normalization over the full batch (``norm_advantages``);
3. explained variance and the mean value (diagnostics);
4. ``epochs`` x ``num_minibatches`` gradient steps: the clipped surrogate minus the entropy bonus
   for the actor, the clipped Huber value loss for the critic, each with its own gradient clip
   (a non-finite gradient norm stops the run before the optimizer step applies it).

Agents out of the game (``batch.mask`` False: Tag-v0's tagged runners) contribute to none of
these: every mean is over the agents in the game.  With ``batch.action_mask`` (the available
actions at each observation) the log-probs of the ratio and the entropy are the masked
distribution's, the one the actions were drawn from.  With ``mask=None`` every function is the
plain mean, bit for bit.  Statistics and gradients go through ``reducer`` (``war_train
.distributed``): the identity in one process, all-reduced over ranks under torchrun.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable

import torch
from torch import nn

from war_train.learn import losses

__all__ = ["Learner", "GroupBatch", "Member", "ppo_update", "ppo_update_shared", "clip_grad", "DIAGNOSTICS"]

#: per-group diagnostics logged every update (as ``<group>/<name>``)
DIAGNOSTICS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance",
               "grad_norm_actor", "grad_norm_critic", "value_mean")


@dataclasses.dataclass
class Learner:
    """What learns, per group: the policies, their Adam optimizers and value normalizers, and the
    sampling / minibatch generator.  ``Learner.build`` is the set-up every training path uses."""

    policies: dict
    actor_opt: dict
    critic_opt: dict
    vnorm: dict
    generator: torch.Generator

    @classmethod
    def build(cls, groups: dict, state_dim: int, cfg, device, generator_seed: int) -> "Learner":
        from war_train.learn.policy import build_policies
        from war_train.learn.valuenorm import ValueNorm

        policies = build_policies(groups, state_dim, cfg, device)
        gen = torch.Generator(device=device)
        gen.manual_seed(generator_seed)
        if cfg.share_actor:   # one actor: one optimizer, every group's entry
            opt = torch.optim.Adam(next(iter(policies.values())).actor.parameters(), lr=cfg.lr, eps=cfg.adam_eps,
                                   foreach=True)
            actor_opt = dict.fromkeys(policies, opt)
        else:
            actor_opt = {g: torch.optim.Adam(p.actor.parameters(), lr=cfg.lr, eps=cfg.adam_eps, foreach=True)
                         for g, p in policies.items()}
        return cls(policies, actor_opt,
                   {g: torch.optim.Adam(p.critic.parameters(), lr=cfg.critic_lr, eps=cfg.adam_eps, foreach=True)
                    for g, p in policies.items()},
                   {g: ValueNorm(cfg.value_norm_beta, enabled=cfg.value_norm) for g in groups}, gen)

    def set_learning_rates(self, lr: float, critic_lr: float, scale: dict | None = None) -> None:
        """Both learning rates of every group, times ``scale[group]`` (default 1)."""
        for g in self.policies:
            k = (scale or {}).get(g, 1.0)
            self.actor_opt[g].param_groups[0]["lr"] = lr * k
            self.critic_opt[g].param_groups[0]["lr"] = critic_lr * k

    def networks(self) -> dict:
        """The checkpoint entries of the networks (what evaluation and rendering load)."""
        return {"actors": {g: p.actor.state_dict() for g, p in self.policies.items()},
                "critics": {g: p.critic.state_dict() for g, p in self.policies.items()}}

    def load_state_dict(self, ckpt: dict) -> None:
        """Restore what ``state_dict`` saved (networks checked with ``policy.load_networks``)."""
        from war_train.learn.policy import load_networks

        load_networks(self.policies, ckpt)
        for g in self.policies:
            self.actor_opt[g].load_state_dict(ckpt["actor_opts"][g])
            self.critic_opt[g].load_state_dict(ckpt["critic_opts"][g])
            self.vnorm[g].load_state_dict(ckpt["valuenorms"][g])
        self.generator.set_state(ckpt["generator"])

    def state_dict(self) -> dict:
        """Networks, optimizers, value normalizers and the generator (what resuming needs)."""
        return {**self.networks(),
                "actor_opts": {g: o.state_dict() for g, o in self.actor_opt.items()},
                "critic_opts": {g: o.state_dict() for g, o in self.critic_opt.items()},
                "valuenorms": {g: v.state_dict() for g, v in self.vnorm.items()},
                "generator": self.generator.get_state()}


@dataclasses.dataclass
class GroupBatch:
    """One group's learning data.

    Feed-forward policies: rows ``[N, ...]`` (lock-step MAPPO passes its ``[T, E, ...]`` buffers
    with ``T·E`` flattened, WAR its valid transitions).  Recurrent policies: time-major
    sequences ``[T, E, ...]`` with the hidden states at the rollout's start; minibatches split
    worlds.  Per-agent tensors end in ``n`` (agents of the group) before any feature axis.
    """

    obs: torch.Tensor             # [N, n, obs_dim]
    state: torch.Tensor | None    # [N, state_dim] (None: every critic of the group is local)
    actions: torch.Tensor         # [N, n, *action_shape]
    logp: torch.Tensor            # [N, n] behaviour log-probs
    values: torch.Tensor          # [N, n] behaviour values, normalized units
    returns: torch.Tensor         # [N, n] denormalized
    advantages: torch.Tensor      # [N, n]
    values_denorm: torch.Tensor   # [N, n]
    mask: torch.Tensor | None = None        # [N, n] bool, agents in the game
    starts: torch.Tensor | None = None      # recurrent: [T, E] episode starts
    actor_h0: torch.Tensor | None = None    # recurrent: [E, n, H]
    critic_h0: torch.Tensor | None = None   # recurrent: [E, H]
    action_mask: torch.Tensor | None = None  # [N, n, n_actions] bool, available actions (env.has_action_mask)
    shape: tuple[int, int] | None = None    # (T, E) of a lock-step rollout (minibatches of the global
    #                                         batch under torchrun); None: N independent rows

    @property
    def recurrent(self) -> bool:
        return self.starts is not None

    @property
    def units(self) -> int:
        """What minibatches split: rows, or worlds for sequences."""
        return self.obs.shape[1] if self.recurrent else self.obs.shape[0]


def _select(x: torch.Tensor | None, valid: torch.Tensor | None) -> torch.Tensor | None:
    return x if valid is None or x is None else x[valid]


def _take(x: torch.Tensor, mb: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """Rows ``mb`` of ``x`` along ``dim``: ``x[mb]`` (``x[:, mb]`` for ``dim=1``) as
    ``index_select``, which on the CPU copies whole rows (several times faster than advanced
    indexing's element-wise gather; the same values)."""
    return torch.index_select(x, dim, mb)


def ppo_update(policy, actor_opt, critic_opt, vnorm, batch: GroupBatch, *, cfg, entropy_coef: float,
               generator: torch.Generator, reducer, group: str = "",
               fail: Callable[[str, str], Exception] | None = None) -> dict[str, float]:
    """Train ``policy`` (a ``GroupPolicy``) on ``batch``; returns the group's diagnostics (means
    over minibatches, ``DIAGNOSTICS``).  A non-finite gradient norm raises ``fail(what, hint)``
    (the caller's exception type, e.g. one naming the update and the last checkpoint); ``group``
    names the group in that message.
    """
    return ppo_update_shared({group: Member(policy, critic_opt, vnorm, batch)}, actor_opt, cfg=cfg,
                             entropy_coef=entropy_coef, generator=generator, reducer=reducer, fail=fail)[group]


@dataclasses.dataclass
class Member:
    """One group's part of an update of an actor several groups share (``ppo_update_shared``)."""

    policy: object                          # its GroupPolicy (``policy.actor``: the shared actor)
    critic_opt: torch.optim.Optimizer       # its own critic's
    vnorm: object                           # its own value normalizer
    batch: GroupBatch
    weight: float = 1.0                     # its per-transition weight in the actor's loss


class _Part(typing.NamedTuple):
    """One member's minibatch inside ``ppo_update_shared``: its rows and what the actor's pass
    over them gave."""

    mb: torch.Tensor
    dim: int
    mask: torch.Tensor | None
    count: int
    new_values: torch.Tensor
    pg_loss: torch.Tensor
    pg_stats: dict
    entropy: torch.Tensor
    actor_loss: torch.Tensor


def ppo_update_shared(members: dict[str, Member], actor_opt, *, cfg, entropy_coef: float,
                      generator: torch.Generator, reducer,
                      fail: Callable[[str, str], Exception] | None = None) -> dict[str, dict[str, float]]:
    """The PPO update of one actor shared by ``members`` (``{group: Member}``; one member:
    ``ppo_update``).  Each member keeps its own value normalizer, advantage normalization,
    critic and minibatches (``num_minibatches`` of its own rows); minibatch j of the actor is
    every member's j-th, its loss the members' losses combined by
    ``war_train.learn.weights.weighted_group_mean`` with ``Member.weight`` per transition — with
    group-balancing weights each group weighs its lock-step share whatever its data share, and
    with weights 1 (lock-step batches) it is the plain mean over all the groups' transitions.
    Returns each group's diagnostics (``grad_norm_actor``: the shared actor's)."""
    fail = fail or (lambda what, hint: FloatingPointError(f"{what}; {hint}"))
    prep, diags = {}, {}
    for g, m in members.items():
        prep[g], diags[g] = _prepare(m, cfg, reducer)
    sums = {g: dict.fromkeys(_SUMMED, 0.0) for g in members}
    actor_params = list(next(iter(members.values())).policy.actor.parameters())
    n_mb = 0
    for epoch in range(cfg.epochs):
        for j, mbs in enumerate(zip(*_minibatch_streams(members, cfg, generator, reducer))):
            where = f"epoch {epoch + 1}, minibatch {j + 1}"
            parts = {g: _actor_part(m, mb, prep[g][1], cfg, entropy_coef, g == cfg.planner)
                     for (g, m), mb in zip(members.items(), mbs)}
            gn_a = _actor_step(parts, members, actor_opt, actor_params, cfg, reducer, fail, where)
            for g, m in members.items():
                _critic_step(g, m, parts[g], prep[g][0], gn_a, sums[g], cfg, reducer, fail, where)
            n_mb += 1
    for g in members:
        total = reducer.sum_stats(sums[g], skip=("grad_norm_actor", "grad_norm_critic"))
        diags[g].update({k: v / n_mb for k, v in total.items()})
    return diags


#: diagnostics summed over minibatches (then averaged)
_SUMMED = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm_actor", "grad_norm_critic")


@torch.no_grad()
def _prepare(m: Member, cfg, reducer) -> tuple[tuple[torch.Tensor, torch.Tensor], dict]:
    """A member's ``(value targets, advantages)`` and its batch diagnostics: the value
    normalizer's update on the returns, advantage normalization, explained variance."""
    batch, mask = m.batch, m.batch.mask
    reducer.update_valuenorm(m.vnorm, _select(batch.returns, mask))   # (statistics of every rank's returns)
    targets = m.vnorm.normalize(batch.returns)
    advantages = batch.advantages
    if cfg.norm_advantages:
        advantages = reducer.normalize_advantages(advantages, mask)
    diag = {"explained_variance": reducer.explained_variance(_select(batch.values_denorm, mask),
                                                            _select(batch.returns, mask)),
            "value_mean": reducer.mean(_select(batch.values_denorm, mask))}
    return (targets, advantages), diag


def _minibatch_streams(members: dict[str, Member], cfg, generator, reducer) -> list:
    """Each member's minibatches of one epoch (worlds for GRU sequences, else rows; under torchrun
    each rank's part of them), as many for each member."""
    streams = [reducer.minibatches(*(m.batch.shape if m.batch.shape is not None else (m.batch.units, 1)),
                                   m.batch.recurrent, cfg.num_minibatches, generator, m.batch.obs.device,
                                   rows=m.batch.shape is None and not m.batch.recurrent)
               for m in members.values()]
    if len(streams) > 1:   # every member's j-th minibatch together: as many of them for each
        streams = [list(chunks) for chunks in streams]
        k = min(len(chunks) for chunks in streams)
        if any(len(chunks) != k for chunks in streams):   # (members of different sizes: WAR batches)
            streams = [torch.cat(chunks).tensor_split(k) for chunks in streams]
    return streams


def _actor_part(m: Member, mb: torch.Tensor, advantages: torch.Tensor, cfg, entropy_coef: float,
                planning: bool = False) -> _Part:
    """The actor's pass over a member's minibatch ``mb``: its policy loss minus entropy bonus (a
    ``planning`` group's plus ``planner_distill`` times its cross-entropy to the searched actions)."""
    batch = m.batch
    new_logp, entropy, new_values, dim = _evaluate(m.policy, batch, mb)
    mb_mask = None if batch.mask is None else _take(batch.mask, mb, dim)
    count = new_logp.numel() if mb_mask is None else int(mb_mask.sum())
    pg_loss, pg_stats = losses.policy_loss(new_logp, _take(batch.logp, mb, dim), _take(advantages, mb, dim),
                                           cfg.clip_coef, mb_mask)
    ent = losses.masked_mean(entropy, mb_mask)
    loss = pg_loss - entropy_coef * ent
    if planning and cfg.planner_distill:
        loss = loss + cfg.planner_distill * losses.search_distill_loss(new_logp, mb_mask)
    return _Part(mb, dim, mb_mask, count, new_values, pg_loss, pg_stats, ent, loss)


def _actor_step(parts: dict[str, _Part], members: dict[str, Member], actor_opt, actor_params, cfg, reducer, fail,
                where: str) -> float:
    """One gradient step of the (shared) actor on the members' parts; returns its gradient norm."""
    from war_train.learn.weights import weighted_group_mean

    if len(parts) == 1:
        (g, part), = parts.items()
        actor_loss, count = part.actor_loss, part.count
    else:
        actor_loss = weighted_group_mean({g: p.actor_loss for g, p in parts.items()},
                                         {g: p.count for g, p in parts.items()},
                                         {g: m.weight for g, m in members.items()})
        count = sum(p.count for p in parts.values())
    actor_opt.zero_grad(set_to_none=True)
    actor_loss.backward()
    reducer.reduce_grads(actor_params, count)   # all-reduce before clipping
    # (norms of all-reduced gradients: every rank stops on the same minibatch)
    who = f"group {next(iter(parts))!r}" if len(parts) == 1 else f"groups {list(parts)}"
    gn_a = _finite_clip_grad(actor_params, cfg.max_grad_norm, actor_loss, fail, f"{who}, {where}: the actor's", "--lr")
    actor_opt.step()
    return gn_a


def _critic_step(g: str, m: Member, part: _Part, targets: torch.Tensor, gn_a: float, sums: dict, cfg, reducer, fail,
                 where: str) -> None:
    """One gradient step of member ``g``'s critic; adds the minibatch's diagnostics to ``sums``."""
    mb, dim, mb_mask, count, new_values, pg_loss, pg_stats, ent, _ = part
    batch = m.batch
    v_loss = losses.value_loss(new_values, _take(batch.values, mb, dim), _take(targets, mb, dim), cfg.clip_coef,
                               cfg.use_huber_loss, cfg.huber_delta, cfg.clip_value_loss, mb_mask)
    m.critic_opt.zero_grad(set_to_none=True)
    (cfg.value_coef * v_loss).backward()
    reducer.reduce_grads(m.policy.critic.parameters(), count)
    gn_c = _finite_clip_grad(m.policy.critic.parameters(), cfg.max_grad_norm, v_loss, fail,
                             f"group {g!r}, {where}: the critic's", "--critic-lr")
    m.critic_opt.step()
    sums["policy_loss"] += reducer.share(pg_loss.detach())   # (this rank's share of the minibatch)
    sums["value_loss"] += reducer.share(v_loss.detach())
    sums["entropy"] += reducer.share(ent.detach())
    sums["approx_kl"] += reducer.share(pg_stats["approx_kl"])
    sums["clipfrac"] += reducer.share(pg_stats["clipfrac"])
    sums["grad_norm_actor"] += gn_a
    sums["grad_norm_critic"] += gn_c


def _evaluate(policy, batch: GroupBatch, mb: torch.Tensor):
    """``(new log-probs, entropies, new values, dim)`` of minibatch ``mb`` under ``policy``;
    ``dim``: the axis ``mb`` indexes (0: rows, 1: the worlds of time-major sequences)."""
    if batch.recurrent:
        st = _take(batch.starts, mb, 1)
        out = policy.actor_sequence(_take(batch.obs, mb, 1), _take(batch.actor_h0, mb), st)
        new_values, _ = policy.critic(_take(batch.state, mb, 1), _take(batch.critic_h0, mb), st)
        dim = 1
    else:
        obs = _take(batch.obs, mb)
        out, _ = policy.actor(policy.actor_input(obs))
        new_values = policy.critic_forward(_take(batch.state, mb) if batch.state is not None else None, obs)
        dim = 0
    avail = None if batch.action_mask is None else _take(batch.action_mask, mb, dim)
    new_logp, entropy = policy.dist.log_prob_entropy(out, _take(batch.actions, mb, dim), avail)
    return new_logp, entropy, new_values, dim


def _finite_clip_grad(params, max_norm: float, loss: torch.Tensor, fail, who: str, lr_option: str) -> float:
    """``clip_grad``, refusing a non-finite norm before the optimizer step would apply it."""
    norm = clip_grad(params, max_norm)
    if not math.isfinite(norm):
        raise fail(f"{who} gradient norm is {norm} (loss {float(loss.detach())})",
                   f"lower {lr_option}, or check the env's rewards")
    return norm


def clip_grad(params, max_norm: float) -> float:
    """Clip the gradients' global norm to ``max_norm`` (``<= 0``: no clipping); returns the norm."""
    params = [p for p in params if p.grad is not None]
    if max_norm > 0:
        return float(nn.utils.clip_grad_norm_(params, max_norm))
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params])))
