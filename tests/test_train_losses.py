"""GAE (SMDP GAE with every interval 1, the advantages of every mode), PPO losses, value
normalization: pure functions against hand-computed numbers."""

import math

import pytest
import torch

from war_train.learn import losses
from war_train.learn.valuenorm import (ValueNorm, denormalize, normalize, valuenorm_init, valuenorm_stats,
                                 valuenorm_update)

torch.set_num_threads(1)


def t(*values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype)


def gae(rewards, values, next_values, term, trunc, gamma, lam):
    """``losses.smdp_gae`` with every macro-step one env step long: GAE."""
    k = torch.ones(rewards.shape[:1], dtype=torch.long).reshape(-1, *[1] * (rewards.dim() - 1))
    return losses.smdp_gae(rewards, values, next_values, k, term, trunc, gamma, lam)


# ----------------------------------------------------------------------------- GAE
def test_gae_truncation_then_termination_by_hand():
    # step 0 ordinary, step 1 truncated (bootstrap V(final) = 4), step 2 terminated.
    # gamma = lam = 0.5:
    #   t=2: delta = 3 + 0            - 1.5 = 1.5              A2 = 1.5
    #   t=1: delta = 2 + 0.5*4        - 1.0 = 3.0              A1 = 3.0 (trace cut by the truncation)
    #   t=0: delta = 1 + 0.5*1.0      - 0.5 = 1.0              A0 = 1.0 + 0.25*3.0 = 1.75
    rewards, values, next_values = t(1, 2, 3), t(0.5, 1.0, 1.5), t(1.0, 4.0, 99.0)
    term, trunc = t(0, 0, 1, dtype=torch.bool), t(0, 1, 0, dtype=torch.bool)
    adv, ret = gae(rewards, values, next_values, term, trunc, gamma=0.5, lam=0.5)
    assert adv.tolist() == [1.75, 3.0, 1.5]
    assert ret.tolist() == [2.25, 4.0, 3.0]


def test_gae_lambda_chain_and_final_bootstrap_by_hand():
    # no episode end: deltas 0 + 0.5*2 - 1 = 0, 0 + 0.5*3 - 2 = -0.5, 0 + 0.5*4 - 3 = -1
    # A2 = -1, A1 = -0.5 + 0.25*(-1) = -0.75, A0 = 0 + 0.25*(-0.75) = -0.1875
    no = t(0, 0, 0, dtype=torch.bool)
    adv, ret = gae(t(0, 0, 0), t(1, 2, 3), t(2, 3, 4), no, no, gamma=0.5, lam=0.5)
    assert adv.tolist() == [-0.1875, -0.75, -1.0]
    assert ret.tolist() == [0.8125, 1.25, 2.0]


def test_gae_termination_ignores_next_value_and_truncation_uses_it():
    one = t(1, dtype=torch.bool)
    zero = t(0, dtype=torch.bool)
    a_term, _ = gae(t(1.0), t(0.0), t(100.0), one, zero, gamma=0.9, lam=0.95)
    a_trunc, _ = gae(t(1.0), t(0.0), t(100.0), zero, one, gamma=0.9, lam=0.95)
    assert a_term.tolist() == [1.0]
    assert a_trunc.tolist() == [91.0]


def test_gae_broadcasts_world_flags_over_agents():
    rewards = torch.ones(2, 1, 3, dtype=torch.float64)  # [T, E, agents]
    values = torch.zeros_like(rewards)
    term = torch.tensor([[False], [True]])[..., None]
    trunc = torch.zeros_like(term)
    adv, _ = gae(rewards, values, torch.zeros_like(rewards), term, trunc, gamma=1.0, lam=1.0)
    assert adv[:, 0, :].tolist() == [[2.0] * 3, [1.0] * 3]


def test_gae_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="equal shapes"):
        gae(t(1, 2), t(1), t(1, 2), t(0, 0, dtype=torch.bool), t(0, 0, dtype=torch.bool), 0.9, 0.9)


# ----------------------------------------------------------------------------- PPO losses
def test_policy_loss_by_hand():
    # ratios 1.5, 0.5, 1.0; advantages 1, 1, -2; clip 0.2
    # min(surr1, surr2) = min(1.5, 1.2), min(0.5, 0.8), min(-2, -2) = 1.2, 0.5, -2 -> loss = -(-0.3/3) = 0.1
    new = torch.log(t(1.5, 0.5, 1.0))
    loss, stats = losses.policy_loss(new, torch.zeros(3, dtype=torch.float64), t(1, 1, -2), clip_coef=0.2)
    assert loss.item() == pytest.approx(0.1, abs=1e-12)
    # k3: (r - 1) - log r = 0.5 - ln 1.5, -0.5 - ln 0.5, 0
    expected_kl = ((0.5 - math.log(1.5)) + (-0.5 - math.log(0.5))) / 3
    assert stats["approx_kl"].item() == pytest.approx(expected_kl, abs=1e-12)
    assert stats["clipfrac"].item() == pytest.approx(2 / 3)


def test_policy_loss_gradient_is_zero_where_clipped():
    new = torch.log(t(1.5, 0.9)).requires_grad_()
    loss, _ = losses.policy_loss(new, torch.zeros(2, dtype=torch.float64), t(1.0, 1.0), clip_coef=0.2)
    loss.backward()
    # ratio 1.5 with A > 0 is clipped (no gradient); ratio 0.9 is inside: d(-r*A/2)/dlogp = -0.9/2
    assert new.grad.tolist() == pytest.approx([0.0, -0.45])


def test_huber_by_hand():
    assert losses.huber(t(0.5, -2.0, 3.0), delta=1.0).tolist() == [0.125, 1.5, 2.5]


def test_value_loss_by_hand():
    values, old, targets = t(1.0, 0.0), t(0.5, 0.5), t(3.0, 0.2)
    # unclipped errors 2.0, 0.2 -> huber(delta 1): 1.5, 0.02
    # clipped values 0.7, 0.3 -> errors 2.3, -0.1 -> huber: 1.8, 0.005; max -> 1.8, 0.02
    assert losses.value_loss(values, old, targets, 0.2, True, 1.0, True).item() == pytest.approx(0.91)
    assert losses.value_loss(values, old, targets, 0.2, True, 1.0, False).item() == pytest.approx(0.76)
    # squared error /2: unclipped 2.0, 0.02; clipped 2.645, 0.005; max -> 2.645, 0.02
    assert losses.value_loss(values, old, targets, 0.2, False, 1.0, True).item() == pytest.approx(1.3325)


def test_explained_variance_by_hand():
    # residual 0, 0, 1: population variance 2/9; Var(y) = 2/3 -> 1 - 1/3
    assert losses.explained_variance(t(1, 2, 2), t(1, 2, 3)) == pytest.approx(2 / 3)
    assert math.isnan(losses.explained_variance(t(1, 2), t(5, 5)))


def test_normalize_advantages_by_hand():
    out = losses.normalize_advantages(t(1, 2, 3))
    assert out.tolist() == pytest.approx([-1 / (1 + 1e-5), 0.0, 1 / (1 + 1e-5)])


# ----------------------------------------------------------------------------- value normalizer
def test_valuenorm_updates_by_hand():
    s = valuenorm_update(valuenorm_init(), t(1, 3), beta=0.5)
    # m = 0.5*2 = 1, q = 0.5*5 = 2.5, d = 0.5 -> mu = 2, var = 5 - 4 = 1
    assert [s["mean"].item(), s["mean_sq"].item(), s["debias"].item()] == [1.0, 2.5, 0.5]
    mean, var = valuenorm_stats(s)
    assert (mean.item(), var.item()) == (2.0, 1.0)
    assert normalize(s, t(4.0)).tolist() == [2.0]
    s = valuenorm_update(s, t(5.0), beta=0.5)
    # m = 0.5 + 2.5 = 3, q = 1.25 + 12.5 = 13.75, d = 0.75 -> mu = 4, var = 18.333... - 16 = 7/3
    mean, var = valuenorm_stats(s)
    assert mean.item() == pytest.approx(4.0)
    assert var.item() == pytest.approx(7 / 3)
    assert denormalize(s, t(1.0)).item() == pytest.approx(4.0 + math.sqrt(7 / 3))


def test_valuenorm_first_update_is_exact_whatever_beta_and_variance_floor():
    s = valuenorm_update(valuenorm_init(), t(2.0, 2.0), beta=0.99999)
    mean, var = valuenorm_stats(s)
    assert mean.item() == pytest.approx(2.0)
    assert var.item() == pytest.approx(1e-2)  # floor: std 0.1
    assert normalize(s, t(2.5)).item() == pytest.approx(5.0)


def test_valuenorm_round_trip_and_identity_before_updates():
    s = valuenorm_update(valuenorm_init(), t(-3.0, 1.0, 8.0), beta=0.9)
    x = t(-1.0, 0.0, 2.5)
    assert denormalize(s, normalize(s, x)).tolist() == pytest.approx(x.tolist())
    mean, var = valuenorm_stats(valuenorm_init())
    assert (mean.item(), var.item()) == (0.0, 1e-2)


def test_valuenorm_class_state_dict_and_disabled():
    vn = ValueNorm(beta=0.5)
    vn.update(t(1, 3))
    other = ValueNorm(beta=0.5)
    other.load_state_dict(vn.state_dict())
    assert other.normalize(t(4.0)).tolist() == [2.0]
    off = ValueNorm(enabled=False)
    off.update(t(100.0))
    assert off.normalize(t(4.0)).tolist() == [4.0]
    with pytest.raises(ValueError, match="missing keys"):
        other.load_state_dict({"mean": t(0.0)})
    with pytest.raises(ValueError, match="non-empty"):
        valuenorm_update(valuenorm_init(), torch.zeros(0), 0.5)
