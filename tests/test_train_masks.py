"""Action masks in war-train (issue #23): the masked categorical against hand-computed values,
and the lock-step trainer, its checkpoints and its evaluation on scenarios with
``has_action_mask`` -- unavailable actions are never sampled, never chosen greedily and never
sent to the env, whose validated step refuses them.

``WalledSpread`` below is a real masked scenario, not a stand-in: Spread-v0 whose agents may
not push further out once they are past |x| or |y| = 0.25 (the mask is computed from each
observation's own position, so it changes every step and resets with the worlds), with the
masked-scenario contract of ``war_envs.core.scenario``: ``action_mask()``, every step's
``info["action_mask"]``, a validated step that refuses an unavailable action.  ``validated``
makes a scenario class whose step always takes the validated path, whatever the caller asks:
the trainer steps the env through its trusted path, so that is how a run proves it never sent
an unavailable action.
"""

import math

import gymnasium
import pytest
import torch

import war_envs
import war_train
from war_envs.registry import scenario_class
from war_envs.scenarios.mpe.spread import Spread
from war_train.checkpoint import load_checkpoint, save_checkpoint
from war_train.learn.distributions import Categorical, DiagGaussian, MultiCategorical, masked_logits
from war_train.run.evaluate import episode_frames, evaluation_suite
from war_train.learn.policy import build_policies

torch.set_num_threads(1)


# ----------------------------------------------------------------------------- masked scenarios
class WalledSpread(Spread):
    """Spread-v0 with walls at +-0.25 for the agents' own pushes: action 1 (push -x) is
    unavailable where x < -0.25, 2 (+x) where x > 0.25, 3 (-y) where y < -0.25, 4 (+y) where
    y > 0.25 (0, no push, always available)."""

    has_action_mask = True
    WALL = 0.25

    def action_mask(self):
        self._check_open()
        if getattr(self, "_avail", None) is None:
            self._avail = torch.ones(self.num_envs, self.groups["agent"].n_agents, 5, dtype=torch.bool,
                                     device=self.torch_device)
        pos = self.observations()["agent"][..., 2:4]
        self._avail[..., 1] = pos[..., 0] >= -self.WALL
        self._avail[..., 2] = pos[..., 0] <= self.WALL
        self._avail[..., 3] = pos[..., 1] >= -self.WALL
        self._avail[..., 4] = pos[..., 1] <= self.WALL
        return {"agent": self._avail}

    def step(self, actions, *, trusted=False):
        if not trusted:
            a, avail = actions["agent"], self.action_mask()["agent"]   # (the current observations' mask)
            if int(a.min()) >= 0 and int(a.max()) < 5:   # (out of range: the base class's error)
                ok = avail.gather(-1, a.long().unsqueeze(-1)).squeeze(-1)
                if not bool(ok.all()):
                    w, i = (~ok).nonzero()[0].tolist()
                    raise ValueError(f"actions['agent']: agent_{i} of world {w} took action {int(a[w, i])}, which "
                                     f"is unavailable (available: {avail[w, i].nonzero().flatten().tolist()})")
        obs, rew, term, trunc, info = super().step(actions, trusted=trusted)
        info["action_mask"] = self.action_mask()
        return obs, rew, term, trunc, info


class AllTrueSpread(Spread):
    """Spread-v0 declaring ``has_action_mask`` with the interface's default all-True masks."""

    has_action_mask = True

    def step(self, actions, *, trusted=False):
        out = super().step(actions, trusted=trusted)
        out[4]["action_mask"] = self.action_mask()
        return out


def validated(cls):
    """``cls`` whose ``step`` always validates (and so refuses unavailable actions)."""
    return type(f"Validated{cls.__name__}", (cls,),
                {"step": lambda self, actions, *, trusted=False: cls.step(self, actions, trusted=False)})


def smoke(**overrides):
    return war_train.preset_config("smoke", **overrides)


def make(cls, cfg):
    return cls(num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs)


def wall_mask(obs):
    """WalledSpread's mask recomputed from stored observations ``[..., d]`` (own position at 2:4)."""
    x, y = obs[..., 2], obs[..., 3]
    return torch.stack([torch.ones_like(x, dtype=torch.bool), x >= -0.25, x <= 0.25, y >= -0.25, y <= 0.25], -1)


# ----------------------------------------------------------------------------- the distribution
P = torch.tensor([0.1, 0.2, 0.3, 0.4])
MASK = torch.tensor([True, False, True, False])     # renormalized: [0.25, 0, 0.75, 0]


def test_masked_categorical_by_hand():
    head = Categorical(4)
    out = P.log().unsqueeze(0)
    m = MASK.unsqueeze(0)
    logp, ent = head.log_prob_entropy(out, torch.tensor([2]), m)
    assert logp.item() == pytest.approx(math.log(0.75))
    assert head.log_prob(out, torch.tensor([0]), m).item() == pytest.approx(math.log(0.25))
    assert ent.item() == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))
    assert head.entropy(out, m).item() == pytest.approx(ent.item())
    assert head.mode(out).item() == 3 and head.mode(out, m).item() == 2   # unmasked: 3; masked: the best available
    # an unavailable action: no probability (a finite, hugely negative log-prob)
    bad = head.log_prob(out, torch.tensor([3]), m).item()
    assert math.isfinite(bad) and bad < -1e30
    assert torch.log_softmax(masked_logits(out, m), -1).exp()[0].tolist() == pytest.approx([0.25, 0.0, 0.75, 0.0])
    # inverse CDF over the available actions: [0, 0.25) -> 0, [0.25, 1) -> 2
    u = torch.tensor([[0.0], [0.1], [0.2499], [0.2501], [0.9], [1.0 - 2 ** -24]])
    actions, lp = head.sample(out.expand(6, 4), u, m.expand(6, 4))
    assert actions.tolist() == [0, 0, 0, 2, 2, 2]
    assert lp.tolist() == pytest.approx([math.log(0.25)] * 3 + [math.log(0.75)] * 3)


def test_uniform_zero_never_picks_a_leading_unavailable_action():
    head = Categorical(4)
    m = torch.tensor([[False, False, True, True]])
    for out in (torch.zeros(1, 4), torch.tensor([[9.0, 9.0, -30.0, 1.0]])):
        a, lp = head.sample(out, torch.zeros(1, 1), m)
        assert a.item() == 2 and math.isfinite(lp.item())


def test_extreme_logits_stay_finite_and_exact():
    head = Categorical(3)
    for dtype in (torch.float32, torch.float64):
        out = torch.tensor([[80.0, -80.0, 1e4]], dtype=dtype)
        m = torch.tensor([[True, True, False]])
        logp, ent = head.log_prob_entropy(out, torch.tensor([1]), m)
        assert torch.isfinite(logp).all() and torch.isfinite(ent).all()
        assert logp.item() == pytest.approx(-160.0, rel=1e-6)
        assert 0.0 <= ent.item() < 1e-60
        assert head.mode(out, m).item() == 0   # 1e4 is unavailable
        # one available action: it is drawn whatever the noise, log-prob 0, entropy 0
        one = torch.tensor([[False, True, False]])
        a, lp = head.sample(out.expand(3, 3), torch.tensor([[0.0], [0.5], [0.999]], dtype=dtype), one.expand(3, 3))
        assert a.tolist() == [1, 1, 1] and lp.tolist() == [0.0, 0.0, 0.0]
        assert head.entropy(out, one).item() == 0.0


def test_sampling_never_picks_an_unavailable_action_and_matches_the_renormalized_probabilities():
    gen = torch.Generator().manual_seed(0)
    head = Categorical(6)
    B = 64
    logits = torch.randn(B, 6, generator=gen) * 2
    mask = torch.rand(B, 6, generator=gen) < 0.5
    mask[torch.arange(B), torch.randint(0, 6, (B,), generator=gen)] = True   # at least one each
    draws = 4000
    actions, logp = head.draw(logits.expand(draws, B, 6), gen, mask.expand(draws, B, 6))
    assert bool(mask.expand(draws, B, 6).gather(-1, actions.unsqueeze(-1)).all())
    probs = torch.where(mask, logits, -math.inf).softmax(-1)
    freq = torch.nn.functional.one_hot(actions, 6).double().mean(0)
    assert torch.allclose(freq, probs.double(), atol=0.04)   # (5 standard deviations of 4000 draws)
    assert torch.allclose(logp, head.log_prob(logits.expand(draws, B, 6), actions, mask.expand(draws, B, 6)))


def test_all_true_mask_equals_no_mask_bit_for_bit():
    gen = torch.Generator().manual_seed(1)
    head = Categorical(5)
    out = torch.randn(300, 3, 5, generator=gen)
    actions = torch.randint(0, 5, (300, 3), generator=gen)
    noise = head.noise((300, 3), gen, out.dtype, out.device)
    ones = torch.ones(300, 3, 5, dtype=torch.bool)
    for a, b in zip(head.log_prob_entropy(out, actions), head.log_prob_entropy(out, actions, ones)):
        assert torch.equal(a, b)
    for a, b in zip(head.sample(out, noise), head.sample(out, noise, ones)):
        assert torch.equal(a, b)
    assert torch.equal(head.mode(out), head.mode(out, ones))


def test_unavailable_logits_get_no_gradient_and_the_rest_the_renormalized_ones():
    logits = torch.tensor([[0.3, -1.2, 2.0, 0.7, -0.1]], dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, False, True, True, False]])
    action = torch.tensor([3])
    logp, ent = Categorical(5).log_prob_entropy(logits, action, mask)
    (logp + 0.37 * ent).sum().backward()
    assert logits.grad[0, 1].item() == 0.0 and logits.grad[0, 4].item() == 0.0
    # the same loss on the available logits alone, as a 3-action categorical
    sub = logits.detach()[:, [0, 2, 3]].clone().requires_grad_(True)
    lp3, ent3 = Categorical(3).log_prob_entropy(sub, torch.tensor([2]))
    (lp3 + 0.37 * ent3).sum().backward()
    assert logp.item() == pytest.approx(lp3.item(), abs=1e-14) and ent.item() == pytest.approx(ent3.item(), abs=1e-14)
    torch.testing.assert_close(logits.grad[:, [0, 2, 3]], sub.grad, rtol=0, atol=1e-14)


def test_random_actions_are_uniform_over_the_available_ones():
    head = Categorical(5)
    mask = torch.tensor([[True, False, True, False, True], [False, False, False, True, False]])
    rnd = head.random((20000, 2), torch.Generator().manual_seed(2), mask=mask.expand(20000, 2, 5))
    assert rnd.shape == (20000, 2) and rnd.dtype == torch.long
    assert torch.bincount(rnd[:, 0], minlength=5).tolist()[1::2] == [0, 0]
    assert torch.allclose(torch.bincount(rnd[:, 0], minlength=5)[[0, 2, 4]].double() / 20000,
                          torch.full((3,), 1 / 3, dtype=torch.float64), atol=0.015)
    assert bool((rnd[:, 1] == 3).all())


def test_data_parallel_rows_of_masked_noise_give_the_same_actions():
    gen = torch.Generator().manual_seed(4)
    head, E, n, lo, hi = Categorical(6), 8, 3, 4, 8
    out = torch.randn(E, n, 6, generator=gen)
    mask = torch.rand(E, n, 6, generator=gen) < 0.5
    mask[..., 0] = True
    full = head.draw(out, torch.Generator().manual_seed(5), mask)
    noise = head.noise((E, n), torch.Generator().manual_seed(5), out.dtype, out.device)[lo:hi]
    part = head.sample(out[lo:hi], noise, mask[lo:hi])
    assert torch.equal(full[0][lo:hi], part[0]) and torch.equal(full[1][lo:hi], part[1])


@pytest.mark.parametrize("head", [MultiCategorical([3, 2]), DiagGaussian([0.0], [1.0])], ids=["multi", "box"])
def test_other_heads_refuse_a_mask(head):
    out = torch.zeros(2, head.n_outputs)
    with pytest.raises(TypeError, match="mask: action masks apply to Discrete"):
        head.mode(out, torch.ones(2, head.n_outputs, dtype=torch.bool))


def test_policy_act_masks_and_checks_the_mask():
    cfg = smoke()
    with Spread(num_envs=4, seed=0) as env:
        obs = env.reset()["agent"].clone()
        state_dim = env.state_dim
        p = build_policies(dict(env.groups), state_dim, cfg, "cpu")["agent"]
    gen = torch.Generator().manual_seed(0)
    out, _ = p.forward_actor(obs)
    best = out.argmax(-1)
    mask = torch.ones(4, 3, 5, dtype=torch.bool)
    mask.scatter_(-1, best.unsqueeze(-1), False)                     # the greedy action is unavailable
    a, _ = p.act(obs, mask=mask)
    assert bool((a != best).all()) and bool(mask.gather(-1, a.unsqueeze(-1)).all())
    assert torch.equal(a, torch.where(mask, out, -math.inf).argmax(-1))
    for _ in range(20):
        s, _ = p.act(obs, greedy=False, generator=gen, mask=mask)
        assert bool(mask.gather(-1, s.unsqueeze(-1)).all())
    with pytest.raises(ValueError, match=r"mask: expected shape \(4, 3, 5\)"):
        p.act(obs, mask=mask[..., :4])
    with pytest.raises(TypeError, match="mask: expected dtype torch.bool"):
        p.act(obs, mask=mask.float())
    empty = mask.clone()
    empty[2, 1] = False
    with pytest.raises(ValueError, match=r"at least one available action.*\(2, 1\)"):
        p.act(obs, mask=empty)
    box = build_policies({"agent": type("S", (), {"n_agents": 3, "obs_dim": obs.shape[-1],
                                                  "action_space": gymnasium.spaces.Box(0.0, 1.0, (5,))})()},
                         state_dim, cfg, "cpu")["agent"]
    with pytest.raises(TypeError, match="mask: action masks apply to Discrete"):
        box.act(obs, mask=mask)


# ----------------------------------------------------------------------------- the trainer
def test_walled_spread_refuses_unavailable_actions():
    # the check the trainer tests below rely on: the validated step refuses a masked action
    with validated(WalledSpread)(num_envs=64, seed=0) as env:
        env.reset()
        mask = env.action_mask()["agent"]
        assert not bool(mask.all())                                  # the walls bind at the start
        w, i, k = (~mask).nonzero()[0].tolist()
        actions = torch.zeros(64, 3, dtype=torch.long)
        actions[w, i] = k
        with pytest.raises(ValueError, match=f"agent_{i} of world {w} took action {k}, which is unavailable"):
            env.step({"agent": actions}, trusted=True)                # (validated whatever the caller asks)
        _, _, _, _, info = env.step({"agent": torch.zeros(64, 3, dtype=torch.long)})
        assert info["action_mask"]["agent"] is env.action_mask()["agent"]


def spy_batches(monkeypatch):
    """Every ``ppo_update`` call's (policy, batch), before the update changes the policy: the
    batch's log-probs and entropies recomputed there."""
    import war_train.learn.step as learn_step
    from war_train.learn.ppo import _evaluate

    seen = []
    real = learn_step.ppo_update

    def spy(policy, *args, **kw):
        batch = args[3]   # (views of the rollout buffers, which the next rollout overwrites: copied)
        batch = type(batch)(**{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in batch.__dict__.items()})
        mb = torch.arange(batch.units)
        with torch.no_grad():
            new_logp, entropy, _, _ = _evaluate(policy, batch, mb)
            unmasked = type(batch)(**{**batch.__dict__, "action_mask": None})
            seen.append({"batch": batch, "new_logp": new_logp, "entropy": entropy,
                         "unmasked_entropy": _evaluate(policy, unmasked, mb)[1]})
        return real(policy, *args, **kw)

    monkeypatch.setattr(learn_step, "ppo_update", spy)
    return seen


MASKED_VARIANTS = {"mlp": {}, "gru": {"use_gru": True}, "frame_stack": {"frame_stack": 3, "critic_input": "local"},
                   "share_actor": {"share_actor": True}}


@pytest.mark.parametrize("variant", list(MASKED_VARIANTS))
def test_trainer_samples_stores_and_learns_with_the_masks(variant, monkeypatch):
    seen = spy_batches(monkeypatch) if variant != "share_actor" else []
    cfg = smoke(total_env_steps=16 * 25 * 2, **MASKED_VARIANTS[variant])
    with make(validated(WalledSpread), cfg) as env:
        result = war_train.train(env, cfg)                           # the env refuses any unavailable action
    assert len(result.history) == 2
    for row in result.history:
        assert all(math.isfinite(row[f"agent/{d}"]) for d in ("policy_loss", "entropy", "approx_kl"))
    for s in seen:
        b = s["batch"]
        # the mask stored with each observation is that observation's (newest frame first when stacked)
        assert torch.equal(b.action_mask, wall_mask(b.obs))
        assert not bool(b.action_mask.all())
        assert bool(b.action_mask.gather(-1, b.actions.unsqueeze(-1)).all())   # stored actions are available
        # the update's log-probs are of the masked distribution the actions were drawn from
        torch.testing.assert_close(s["new_logp"], b.logp, rtol=0, atol=1e-5)
        # ... and so are the entropies: at most log(available actions) (the policy is still about
        # uniform, so the unmasked entropy, about log 5, would exceed that where a wall binds)
        count = b.action_mask.sum(-1)
        held = count < 5
        assert bool((s["entropy"] <= count.double().log() + 1e-6).all())
        assert bool((s["unmasked_entropy"][held] > count[held].double().log() + 1e-3).all())
        torch.testing.assert_close(s["entropy"][~held], s["unmasked_entropy"][~held])


def test_all_true_masks_train_exactly_as_no_masks():
    cfg = smoke(total_env_steps=16 * 25 * 2)
    with make(Spread, cfg) as env:
        plain = war_train.train(env, cfg).history
    with make(AllTrueSpread, cfg) as env:
        masked = war_train.train(env, cfg).history
    strip = [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")} for r in plain]
    assert strip == [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")} for r in masked]


def test_unmasked_env_has_no_mask_buffers():
    from war_train.learn import distributed
    from war_train.run.lockstep import LockstepMode

    cfg = smoke()
    with make(Spread, cfg) as env:
        trainer = LockstepMode(env, cfg, distributed.Local())
        c = trainer.collector
        assert not c.masked and all(m.shape[-1] == 0 for m in c.avail.values())
        assert "action_mask" not in trainer.checkpoint_payload(0.0)


@pytest.mark.parametrize("variant", ["mlp", "gru"])
def test_checkpoint_holds_the_masks_and_resume_is_exact(tmp_path, variant):
    cfg = smoke(total_env_steps=16 * 20 * 4, rollout_length=20, checkpoint_every=2, **MASKED_VARIANTS[variant])
    env_cls = validated(WalledSpread)
    with make(env_cls, cfg) as env:
        full = war_train.train(env, cfg, run_dir=tmp_path / "full")

    def stop_at_2(row):
        return row["update"] < 2

    with make(env_cls, cfg) as env:
        war_train.train(env, cfg, stop_at_2, run_dir=tmp_path / "cut")
        ckpt = load_checkpoint(tmp_path / "cut")
        assert ckpt["update"] == 2
        # the masks of the observations the run stopped at (the env's current ones)
        assert torch.equal(ckpt["action_mask"]["agent"], env.action_mask()["agent"])
        assert torch.equal(ckpt["action_mask"]["agent"], wall_mask(ckpt["obs"]["agent"]))
    with make(env_cls, cfg) as env:
        resumed = war_train.train(env, cfg, run_dir=tmp_path / "cut", resume=tmp_path / "cut")
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")}  # noqa: E731
                          for r in rows]
    assert strip(full.history[2:]) == strip(resumed.history)

    # a checkpoint without masks (or with bad ones) is refused for a masked env
    for broken, match in ((None, "has no 'action_mask' entry"),
                          ({"agent": ckpt["action_mask"]["agent"][:, :2]}, r"action_mask\['agent'\]: expected shape")):
        bad = dict(ckpt)
        if broken is None:
            del bad["action_mask"]
        else:
            bad["action_mask"] = broken
        save_checkpoint(tmp_path / "bad" / "checkpoint.pt", bad)
        with make(env_cls, cfg) as env, pytest.raises(ValueError, match=match):
            war_train.train(env, cfg, resume=tmp_path / "bad")


def test_env_without_its_step_masks_is_a_clear_error():
    class Forgetful(Spread):
        has_action_mask = True

    cfg = smoke(total_env_steps=16 * 25)
    with make(Forgetful, cfg) as env, pytest.raises(ValueError, match="has no 'action_mask' entry"):
        war_train.train(env, cfg)


def test_war_mode_trains_masked_envs_with_held_actions(tmp_path):
    """SMAX-v0 self-play under WAR: the slow group (ally, declared 50 ms a decision) holds its
    actions between decisions; every stored decision was available under its stored mask, the
    masks reach the PPO update, and a run through ``war-train``'s entry point completes."""
    from war_train.run.training import run_training
    from war_train.config import WarConfig
    from war_train.war.mode import WarMode

    costs = {"ally": {"per_decision_ms": 50.0}, "enemy": {"per_decision_ms": 5.0}}
    cfg = smax(env_kwargs={"map_name": "3m", "enemy": "self_play"}, total_env_steps=16 * 25 * 2)
    mode = WarMode(cfg, WarConfig(arm="war", costs=costs))
    assert mode.schedule.interval["ally"] > 1 and mode.schedule.interval["enemy"] == 1
    rnd = mode.collect()
    seen = {}
    for g, b in rnd.windows[0].groups.items():
        valid = b.valid
        assert b.action_mask.shape[-1] == mode.envs[0].groups[g].action_space.n
        chosen = b.action_mask[valid].gather(-1, b.actions[valid].unsqueeze(-1)).squeeze(-1)
        assert bool(chosen.all()), f"{g}: a stored action was unavailable under its stored mask"
        seen[g] = float((b.k[valid] > 1).float().mean())
    assert seen["ally"] > 0 and seen["enemy"] == 0   # the ally's macro-steps span several steps
    batches = mode.batches(rnd)
    assert all(batches.groups[g].action_mask is not None for g in batches.groups)
    row = mode.row(rnd, batches, {}, 0.0)
    assert row["episodes"] >= 0
    mode.close()
    run = run_training(smax(env_kwargs={"map_name": "3m", "enemy": "self_play"}, total_env_steps=16 * 25 * 2),
                       tmp_path / "runs", war=WarConfig(arm="war", costs=costs), log=lambda *_: None)
    assert (run / "metrics.csv").exists() and (run / "checkpoint.pt").exists()


# ----------------------------------------------------------------------------- SMAX-v0
def smax(**overrides):
    """A smoke run on SMAX-v0 (3m): 16 worlds, 25-step rollouts (episodes of up to 101 steps)."""
    return smoke(scenario="SMAX-v0", **overrides)


def make_smax(cfg):
    return validated(scenario_class("SMAX-v0"))(num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs)


def test_smax_validated_step_refuses_unavailable_actions():
    # the check the runs below rely on: at the start every attack is out of range
    with make_smax(smax()) as env:
        env.reset()
        mask = env.action_mask()["ally"]
        assert not bool(mask[..., 5:].any())
        with pytest.raises(ValueError, match=r"ally_0 \(world 0\) chose action 5 \(attack enemy_0\), which is "
                                             r"unavailable"):
            env.step({"ally": torch.full((16, 3), 5)}, trusted=True)   # (validated whatever the caller asks)


SMAX_VARIANTS = {"mlp": {}, "gru": {"use_gru": True}, "frame_stack": {"frame_stack": 2, "critic_input": "local"},
                 "self_play": {"env_kwargs": {"enemy": "self_play"}, "share_actor": True}}


@pytest.mark.parametrize("variant", list(SMAX_VARIANTS))
def test_smax_trainer_never_sends_an_unavailable_action(variant, monkeypatch):
    seen = spy_batches(monkeypatch) if variant != "self_play" else []
    cfg = smax(total_env_steps=16 * 25 * 3, **SMAX_VARIANTS[variant])
    with make_smax(cfg) as env:
        result = war_train.train(env, cfg)     # every step validated: an unavailable action would raise
    assert len(result.history) == 3
    for row in result.history:
        for g in result.policies:
            assert all(math.isfinite(row[f"{g}/{d}"]) for d in ("policy_loss", "entropy", "approx_kl")), (g, row)
    attacks = 0
    for s in seen:
        b = s["batch"]
        assert bool(b.action_mask.gather(-1, b.actions.unsqueeze(-1)).all())
        assert not bool(b.action_mask.all()) and bool(b.action_mask[..., 4].all())   # "stop" is always there
        attacks += int((b.actions >= 5).sum())
        torch.testing.assert_close(s["new_logp"], b.logp, rtol=0, atol=1e-5)
        assert bool((s["entropy"] <= b.action_mask.sum(-1).double().log() + 1e-6).all())
    assert not seen or attacks > 0          # the units met and fought: attack masks opened and were used


@pytest.mark.parametrize("critic_input", ["state", "world"])
def test_smax_checkpoint_resume_is_exact(tmp_path, critic_input):
    cfg = smax(total_env_steps=16 * 20 * 4, rollout_length=20, checkpoint_every=2, use_gru=True,
               critic_input=critic_input)
    with make_smax(cfg) as env:
        full = war_train.train(env, cfg, run_dir=tmp_path / "full")
    with make_smax(cfg) as env:
        war_train.train(env, cfg, lambda row: row["update"] < 2, run_dir=tmp_path / "cut")
        ckpt = load_checkpoint(tmp_path / "cut")
        assert torch.equal(ckpt["action_mask"]["ally"], env.action_mask()["ally"])
    with make_smax(cfg) as env:   # a fresh env: the masks come from the checkpoint (and the restored state)
        resumed = war_train.train(env, cfg, run_dir=tmp_path / "cut", resume=tmp_path / "cut")
        assert torch.equal(env.action_mask()["ally"], load_checkpoint(tmp_path / "cut")["action_mask"]["ally"])
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")}  # noqa: E731
                          for r in rows]
    assert strip(full.history[2:]) == strip(resumed.history)


def test_smax_evaluation_plays_available_actions_only(tmp_path):
    cfg = smax(total_env_steps=16 * 25 * 2, eval_episodes=16)
    with make_smax(cfg) as env:
        policies = war_train.train(env, cfg).policies
    # evaluation steps its env through the validated path: an unavailable action would raise
    report = evaluation_suite(policies, "SMAX-v0", {}, episodes=16, seed=3)
    for mode in ("greedy", "sample", "random"):
        assert 0.0 <= report[mode]["won"] <= 1.0 and report[mode]["episode_length"] > 1
    assert report["greedy"]["damage_dealt"] > 0            # attacks were chosen where available
    frames = list(episode_frames(policies, "SMAX-v0", {}, seed=3, max_steps=30))
    assert len(frames) > 1 and frames[0].shape == (700, 700, 3)
    # the control: the same greedy policy without its masks picks unavailable attacks at once
    p = policies["ally"]
    with war_envs.make("SMAX-v0", num_envs=16, seed=3) as env:
        obs = env.reset()["ally"].clone()
        out, _ = p.forward_actor(obs)
        assert bool((~env.action_mask()["ally"].gather(-1, out.argmax(-1, keepdim=True))).any())
        with pytest.raises(ValueError, match="which is unavailable now"):
            env.step({"ally": p.act(obs)[0]})
        masked, _ = p.act(obs, mask=env.action_mask()["ally"])
        env.step({"ally": masked})
