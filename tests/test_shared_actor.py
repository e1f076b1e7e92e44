"""``share_actor``: one actor for every group (group id in its input), whose loss combines the
groups with group-balancing weights — the weights act on the gradient, and the weighted loss of a
WAR-shaped batch equals the lock-step loss in expectation."""

import math

import pytest
import torch

import war_envs
import war_train
from war_train.learn.weights import group_balancing_weights, weighted_group_mean
from war_train.learn import distributed, losses
from war_train.learn.policy import build_policies, load_policies
from war_train.learn.ppo import GroupBatch, Learner, Member, ppo_update_shared
from war_train.config import WarConfig
from war_train.presets import ARTICLE_COSTS

torch.set_num_threads(1)


def smoke(**kw):
    base = dict(scenario="PredatorPrey-v0", num_envs=8, rollout_length=16, total_env_steps=8 * 16 * 4, epochs=2,
                share_actor=True, checkpoint_every=0, gif=False, eval_episodes=0)
    base.update(kw)
    return war_train.preset_config("smoke", **base)


def strip(rows, timing=("wall_s", "env_steps_per_s")):
    """Rows without their timing columns, NaN as None (so that equal rows compare equal)."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()
             if k not in timing and not k.startswith("decisions_per_s/")} for r in rows]


def test_one_actor_with_group_id_in_its_input():
    cfg = smoke(agent_id=True)
    with war_envs.make(cfg.scenario, num_envs=2) as env:
        learner = Learner.build(env.groups, env.state_dim, cfg, "cpu", 0)
        obs = env.reset(seed=0)
    adv, agent = learner.policies["adversary"], learner.policies["agent"]
    assert adv.actor is agent.actor and adv.critic is not agent.critic
    assert learner.actor_opt["adversary"] is learner.actor_opt["agent"]
    # widest input: adversary 16 obs + 3 agent ids; then 2 group-id entries
    x_adv, x_agent = adv.actor_input(obs["adversary"]), agent.actor_input(obs["agent"])
    assert x_adv.shape == (2, 3, 21) and x_agent.shape == (2, 1, 21)
    assert torch.equal(x_agent[..., :14], obs["agent"]) and torch.equal(x_agent[..., 14], torch.ones(2, 1))
    assert not x_agent[..., 15:19].any()
    assert torch.equal(x_adv[..., 19:], torch.tensor([1.0, 0.0]).expand(2, 3, 2))
    assert torch.equal(x_agent[..., 19:], torch.tensor([0.0, 1.0]).expand(2, 1, 2))
    # without share_actor every group has its own actor (the default)
    policies = build_policies(env.groups, env.state_dim, smoke(share_actor=False), "cpu")
    assert policies["adversary"].actor is not policies["agent"].actor


def test_refusals_name_the_field():
    with war_envs.make("Relay-v0", num_envs=2) as env, \
            pytest.raises(ValueError, match=r"share_actor: one actor needs one action space, but group 'commander' "
                                            r"has Discrete\(8\) and group 'sentry' Discrete\(5\)"):
        build_policies(env.groups, env.state_dim, smoke(scenario="Relay-v0"), "cpu")
    for field, value in (("use_gru", True), ("frame_stack", 2), ("critic_input", "local"),
                         ("group_lr_scale", {"agent": 0.5}), ("group_network", {"agent": {"hidden_size": 8}})):
        with pytest.raises(ValueError, match=rf"^{field}: share_actor trains one feed-forward actor"):
            smoke(**{field: value}).validate()


def _members(seed=0, keep_commander=None):
    """Command-v0 transitions of a shared actor: per group a GroupBatch (advantages not
    normalized later: ``norm_advantages=False``), the commander's rows optionally thinned."""
    cfg = smoke(scenario="Command-v0", norm_advantages=False, epochs=1, num_minibatches=1, max_grad_norm=0.0)
    gen = torch.Generator().manual_seed(seed)
    with war_envs.make("Command-v0", num_envs=16, seed=seed) as env:
        learner = Learner.build(env.groups, env.state_dim, cfg, "cpu", seed)
        obs, rows = env.reset(seed=seed), {g: [] for g in env.groups}
        for _ in range(12):
            acts = {}
            for g, p in learner.policies.items():
                with torch.no_grad():
                    out, _ = p.forward_actor(obs[g])
                    a, logp = p.dist.draw(out, gen)
                rows[g].append((obs[g], env.state(), a, logp))
                acts[g] = p.dist.to_env(a)
            obs, *_ = env.step(acts)
    members = {}
    for g, p in learner.policies.items():
        o, s, a, lp = (torch.cat([r[i] for r in rows[g]]) for i in range(4))
        if g == "commander" and keep_commander is not None:
            o, s, a, lp = o[keep_commander], s[keep_commander], a[keep_commander], lp[keep_commander]
        n = len(o)
        adv = torch.randn(n, p.n_agents, generator=gen) + (1.5 if g == "commander" else -0.5)
        old = lp + 0.1 * torch.randn(n, p.n_agents, generator=gen)   # behaviour != current: ratios != 1
        zeros = torch.zeros(n, p.n_agents)
        members[g] = Member(p, torch.optim.SGD(p.critic.parameters(), lr=0.0), learner.vnorm[g],
                            GroupBatch(o, s, a, old, zeros, zeros, adv, zeros))
    return cfg, learner, members


def _group_loss(cfg, p, batch):
    """The group's PPO actor loss (clipped surrogate - entropy bonus), written out here."""
    out, _ = p.actor(p.actor_input(batch.obs))
    logp, ent = p.dist.log_prob_entropy(out, batch.actions)
    ratio = (logp - batch.logp).exp()
    surrogate = torch.min(ratio * batch.advantages, ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef) * batch.advantages)
    return -surrogate.mean() - cfg.entropy_coef * ent.mean()


@pytest.mark.parametrize("thinned", [False, True], ids=["lockstep", "war"])
def test_the_weights_multiply_the_groups_losses_in_the_actor_step(thinned):
    """One SGD step (lr 1, no clipping) of the shared actor moves it by minus the gradient of
    Σ_g share_g · L_g (L_g: the group's mean loss) — lock-step batches and a WAR batch whose
    commander kept a third of its rows alike; unweighted pooling would move it otherwise."""
    keep = torch.arange(192) % 3 == 0 if thinned else None
    cfg, learner, members = _members(keep_commander=keep)
    actor = learner.policies["commander"].actor
    counts = {g: m.batch.logp.numel() for g, m in members.items()}
    share = {"commander": 0.1, "sentry": 0.9}
    weights = group_balancing_weights(counts, share, clip=1e6)
    # (lock-step counts are in the shares' proportion: every weight 1; thinned: the commander's ~2.8)
    assert (weights["commander"] == pytest.approx(1.0) and weights["sentry"] == pytest.approx(1.0)) != thinned
    for g, m in members.items():
        m.weight = weights[g]
    before = [t.detach().clone() for t in actor.parameters()]
    # the reference gradient: each group at its lock-step share
    actor.zero_grad()
    sum(share[g] * _group_loss(cfg, m.policy, m.batch) for g, m in members.items()).backward()
    expected = [t.grad.clone() for t in actor.parameters()]
    # the pooled (unweighted) mean over every agent-transition, for contrast
    actor.zero_grad()
    total = sum(counts.values())
    sum(counts[g] / total * _group_loss(cfg, m.policy, m.batch) for g, m in members.items()).backward()
    pooled = [t.grad.clone() for t in actor.parameters()]
    ppo_update_shared(members, torch.optim.SGD(actor.parameters(), lr=1.0), cfg=cfg, entropy_coef=cfg.entropy_coef,
                      generator=torch.Generator().manual_seed(0), reducer=distributed.Local())
    moved = [b - t.detach() for b, t in zip(before, actor.parameters())]
    for m_, e in zip(moved, expected):
        assert torch.allclose(m_, e, atol=1e-6, rtol=1e-4)
    differs = max(float((e - p).abs().max()) for e, p in zip(expected, pooled))
    assert (differs > 1e-3) == thinned   # (lock-step counts are the shares: pooling is the same objective)


def test_weighted_loss_equals_the_lockstep_loss_in_expectation():
    """WAR thins the commander's decisions (here: each of its transitions kept with probability
    1/3, as a decision every ~3 steps does); the group-balancing-weighted loss of such batches
    averages to the lock-step batch's loss, the unweighted one does not."""
    cfg, learner, members = _members()
    with torch.no_grad():   # per agent-transition losses of the lock-step batch
        per = {}
        for g, m in members.items():
            p, b = m.policy, m.batch
            out, _ = p.actor(p.actor_input(b.obs))
            logp, ent = p.dist.log_prob_entropy(out, b.actions)
            ratio = (logp - b.logp).exp()
            per[g] = (-torch.min(ratio * b.advantages, ratio.clamp(0.8, 1.2) * b.advantages)
                      - cfg.entropy_coef * ent).reshape(-1).double()
    counts = {g: x.numel() for g, x in per.items()}
    share = {g: c / sum(counts.values()) for g, c in counts.items()}   # lock-step: shares = counts
    lockstep = float(weighted_group_mean({g: x.mean() for g, x in per.items()}, counts, dict.fromkeys(per, 1.0)))
    assert lockstep == pytest.approx(float(torch.cat(list(per.values())).mean()), abs=1e-12)
    gen = torch.Generator().manual_seed(1)
    weighted, unweighted = [], []
    for _ in range(4000):
        kept = per["commander"][torch.rand(counts["commander"], generator=gen) < 1 / 3]
        if kept.numel() == 0:
            continue
        batch = {"commander": kept, "sentry": per["sentry"]}
        n = {g: x.numel() for g, x in batch.items()}
        w = group_balancing_weights(n, share, clip=1e6)
        means = {g: x.mean() for g, x in batch.items()}
        weighted.append(float(weighted_group_mean(means, n, w)))
        unweighted.append(float(weighted_group_mean(means, n, dict.fromkeys(n, 1.0))))
    weighted, unweighted = torch.tensor(weighted), torch.tensor(unweighted)
    se = float(weighted.std()) / math.sqrt(len(weighted))
    assert abs(float(weighted.mean()) - lockstep) < 4 * se
    assert abs(float(unweighted.mean()) - lockstep) > 20 * se   # (thinning alone biases the pooled loss)


def test_shared_actor_trains_lockstep_reproducibly_and_resumes_exactly(tmp_path):
    cfg = smoke()
    straight = war_train.train(None, cfg)
    assert strip(war_train.train(None, cfg).history) == strip(straight.history)
    rows = straight.history[-1]
    assert rows["adversary/grad_norm_actor"] == rows["agent/grad_norm_actor"]
    assert all(math.isfinite(rows[f"{g}/policy_loss"]) for g in ("adversary", "agent"))
    first = war_train.train(None, cfg, lambda row: row["update"] < 2, run_dir=tmp_path)
    rest = war_train.train(None, cfg, run_dir=tmp_path, resume=tmp_path)
    assert first.stopped_early and strip(first.history + rest.history) == strip(straight.history)
    policies, _, _ = load_policies(tmp_path)
    assert policies["adversary"].actor is policies["agent"].actor
    for a, b in zip(policies["agent"].actor.parameters(), rest.policies["agent"].actor.parameters()):
        assert torch.equal(a, b)


def test_shared_actor_trains_in_the_war_mode_and_resumes_exactly(tmp_path):
    """Command-v0 under WAR (the article's declared costs: the commander decides every ~3 steps):
    the shared actor's update weighs the commander's fewer transitions up."""
    cfg = smoke(scenario="Command-v0", num_envs=10, rollout_length=25, total_env_steps=10 * 25 * 3)
    war = WarConfig(costs=ARTICLE_COSTS)
    straight = war_train.train(None, cfg, war=war)
    last = straight.history[-1]
    assert last["share/commander"] < 0.1 and last["commander/grad_norm_actor"] == last["sentry/grad_norm_actor"]
    first = war_train.train(None, cfg, lambda row: row["update"] < 2, run_dir=tmp_path, war=war)
    rest = war_train.train(None, cfg, run_dir=tmp_path, resume=tmp_path, war=war)
    timing = ("wall_s", "env_steps_per_s", "model_s", "collect_s", "learn_s", "batch_s", "env_s",
              "model_env_steps_per_s", "agent_transitions_per_s")
    assert strip(first.history + rest.history, timing) == strip(straight.history, timing)
    # drafts (fill="draft") see the shared actor's input too
    drafted = war_train.train(None, smoke(scenario="Command-v0", num_envs=10, rollout_length=25,
                                          total_env_steps=10 * 25 * 2),
                              war=WarConfig(costs=ARTICLE_COSTS, fill="draft"))
    assert drafted.history[-1]["draft_frac"] > 0
