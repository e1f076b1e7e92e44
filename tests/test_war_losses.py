"""WAR's pure functions: SMDP GAE, V-trace, the group-weighted loss, staleness summaries."""

import math

import numpy as np
import pytest
import torch

from war_train.learn.weights import group_balancing_weights, staleness_summary, weighted_group_loss
from war_train.learn import losses


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ----------------------------------------------------------------------------- SMDP GAE
def textbook_gae(rewards, values, next_values, term, trunc, gamma, lam):
    """GAE as CleanRL / the MAPPO paper's code write it (termination and truncation kept apart):
    delta_t = r_t + gamma (1 - term_t) V'_t - V_t, A_t = delta_t + gamma lam (1 - done_t) A_{t+1}."""
    term_f = torch.broadcast_to(term, rewards.shape).to(rewards.dtype)
    done = torch.broadcast_to(term | trunc, rewards.shape).to(rewards.dtype)
    adv, last = torch.empty_like(rewards), torch.zeros_like(rewards[0])
    for t in range(rewards.shape[0] - 1, -1, -1):
        delta = rewards[t] + gamma * (1.0 - term_f[t]) * next_values[t] - values[t]
        last = delta + gamma * lam * (1.0 - done[t]) * last
        adv[t] = last
    return adv, adv + values


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_smdp_gae_with_unit_steps_is_gae_bitwise(dtype, seed):
    """The one advantage function of every mode: with every interval 1 it is GAE, bit for bit
    (lock-step MAPPO's advantages), with and without a ``valid`` mask."""
    T, E, n = 9, 5, 3
    r, v, nv = (rand(T, E, n, seed=10 * seed + i).to(dtype) for i in (1, 2, 3))
    term = rand(T, E, 1, seed=10 * seed + 4) > 1.0
    trunc = (rand(T, E, 1, seed=10 * seed + 5) > 1.0) & ~term
    assert bool(term.any()) or bool(trunc.any())
    a_ref, r_ref = textbook_gae(r, v, nv, term, trunc, 0.99, 0.95)
    ones = torch.ones(T, E, 1, dtype=torch.long)
    a, ret = losses.smdp_gae(r, v, nv, ones, term, trunc, 0.99, 0.95)
    assert a.dtype == dtype and torch.equal(a, a_ref) and torch.equal(ret, r_ref)
    a, ret = losses.smdp_gae(r, v, nv, ones, term, trunc, 0.99, 0.95, valid=torch.ones(T, E, 1, dtype=torch.bool))
    assert torch.equal(a, a_ref) and torch.equal(ret, r_ref)


def test_the_textbook_reference_can_tell_a_difference():
    r, v, nv = rand(4, 2, 1, seed=1), rand(4, 2, 1, seed=2), rand(4, 2, 1, seed=3)
    no = torch.zeros(4, 2, 1, dtype=torch.bool)
    a, _ = losses.smdp_gae(r, v, nv, torch.ones(4, 2, 1, dtype=torch.long), no, no, 0.99, 0.95)
    a_ref, _ = textbook_gae(r, v, nv, no, no, 0.99, 0.9)
    assert not torch.equal(a, a_ref)


def test_smdp_gae_matches_hand_computation():
    g, lam = 0.9, 0.8
    R, V, NV, K = [1.0, 2.0, 3.0], [0.5, 1.0, 1.5], [1.0, 1.5, 2.0], [2, 3, 1]
    A = [0.0] * 3
    nxt = 0.0
    for t in (2, 1, 0):
        A[t] = R[t] + g ** K[t] * NV[t] - V[t] + (g * lam) ** K[t] * nxt
        nxt = A[t]
    col = lambda x: torch.tensor(x, dtype=torch.float64).reshape(3, 1)  # noqa: E731
    no = torch.zeros(3, 1, dtype=torch.bool)
    a, ret = losses.smdp_gae(col(R), col(V), col(NV), torch.tensor(K).reshape(3, 1), no, no, g, lam)
    assert a.flatten().tolist() == pytest.approx(A, abs=1e-12)
    assert ret.flatten().tolist() == pytest.approx([x + y for x, y in zip(A, V)], abs=1e-12)


def test_smdp_gae_with_lambda_one_is_the_discounted_return_of_the_primitive_rewards():
    # a held action over k env steps: R_j = sum_i g^i r, and the lambda=1 advantage of the first
    # decision is sum_t g^t r_t + g^K V(end) - V(start) over every primitive step
    rng = np.random.default_rng(0)
    g = 0.97
    ks = [3, 1, 4, 2]
    prim = rng.normal(size=sum(ks))
    R, pos = [], 0
    for k in ks:
        R.append(sum(g ** i * prim[pos + i] for i in range(k)))
        pos += k
    V = rng.normal(size=len(ks))
    v_end = 0.7
    NV = list(V[1:]) + [v_end]
    col = lambda x: torch.tensor(np.asarray(x), dtype=torch.float64).reshape(-1, 1)  # noqa: E731
    no = torch.zeros(len(ks), 1, dtype=torch.bool)
    a, _ = losses.smdp_gae(col(R), col(V), col(NV), torch.tensor(ks).reshape(-1, 1), no, no, g, 1.0)
    expected = sum(g ** t * x for t, x in enumerate(prim)) + g ** sum(ks) * v_end - V[0]
    assert float(a[0, 0]) == pytest.approx(expected, abs=1e-10)


def test_smdp_gae_terminal_and_truncation_and_sparse_rows():
    # column 0: three transitions in rows 0, 2, 5 (rows between hold nothing); the middle one is a
    # truncation (bootstrap kept, trace cut); the same three in consecutive rows give the same result
    g, lam = 0.95, 0.9
    R = torch.tensor([[1.0], [-2.0], [0.5]])
    V = torch.tensor([[0.2], [0.3], [-0.1]])
    NV = torch.tensor([[0.4], [0.9], [0.0]])
    K = torch.tensor([[2], [3], [1]])
    term = torch.tensor([[False], [False], [True]])
    trunc = torch.tensor([[False], [True], [False]])
    dense_a, dense_r = losses.smdp_gae(R, V, NV, K, term, trunc, g, lam)
    assert float(dense_a[2, 0]) == pytest.approx(0.5 - (-0.1))            # terminal: nothing bootstrapped
    assert float(dense_a[1, 0]) == pytest.approx(-2.0 + g ** 3 * 0.9 - 0.3)  # truncation: bootstrap, no trace
    assert float(dense_a[0, 0]) == pytest.approx(1.0 + g ** 2 * 0.4 - 0.2 + (g * lam) ** 2 * float(dense_a[1, 0]))
    rows = [0, 2, 5]
    sparse = {name: torch.zeros(6, 1, dtype=x.dtype) for name, x in
              (("R", R), ("V", V), ("NV", NV), ("K", K), ("term", term), ("trunc", trunc))}
    sparse["NV"].fill_(123.0)
    sparse["R"].fill_(-9.0)
    for i, r in enumerate(rows):
        for name, x in (("R", R), ("V", V), ("NV", NV), ("K", K), ("term", term), ("trunc", trunc)):
            sparse[name][r] = x[i]
    valid = torch.zeros(6, 1, dtype=torch.bool)
    valid[rows] = True
    a, ret = losses.smdp_gae(sparse["R"], sparse["V"], sparse["NV"], sparse["K"], sparse["term"], sparse["trunc"],
                             g, lam, valid=valid)
    assert torch.allclose(a[rows], dense_a) and torch.allclose(ret[rows], dense_r)
    assert float(a[~valid].abs().sum()) == 0.0 and float(ret[~valid].abs().sum()) == 0.0


# ----------------------------------------------------------------------------- V-trace
def test_vtrace_matches_hand_computed_values():
    # gamma 0.9, k = [1, 2, 1], rho = [2, 0.5, 1] (truncated at 1: [1, 0.5, 1]), no episode end
    col = lambda x: torch.tensor(x, dtype=torch.float64).reshape(3, 1)  # noqa: E731
    no = torch.zeros(3, 1, dtype=torch.bool)
    vs, adv = losses.vtrace(col([math.log(2.0), math.log(0.5), 0.0]), col([1.0, 2.0, 3.0]), col([0.5, 1.0, 1.5]),
                            col([1.0, 1.5, 2.0]), torch.tensor([1, 2, 1]).reshape(3, 1), no, no, 0.9)
    # by hand: delta_2 = 3 + .9*2 - 1.5 = 3.3; delta_1 = .5*(2 + .81*1.5 - 1) = 1.1075;
    # vs_1 - V_1 = 1.1075 + .81*.5*3.3 = 2.444; delta_0 = 1 + .9*1 - .5 = 1.4; vs_0 - V_0 = 1.4 + .9*2.444
    assert vs.flatten().tolist() == pytest.approx([0.5 + 1.4 + 0.9 * 2.444, 1.0 + 2.444, 1.5 + 3.3], abs=1e-12)
    # pg advantages rho_t (R_t + g^k vs_{t+1} - V_t), vs_3 = bootstrap 2.0
    assert adv.flatten().tolist() == pytest.approx(
        [1.0 + 0.9 * (1.0 + 2.444) - 0.5, 0.5 * (2.0 + 0.81 * 4.8 - 1.0), 3.0 + 0.9 * 2.0 - 1.5], abs=1e-12)


def test_vtrace_equals_the_closed_form_sum_and_on_policy_returns():
    rng = np.random.default_rng(3)
    T, g, lam = 9, 0.93, 1.0
    ks = rng.integers(1, 4, size=T)
    lr = rng.normal(scale=0.7, size=T)
    R, V = rng.normal(size=T), rng.normal(size=T)
    NV = np.append(V[1:], 0.3)
    term = np.zeros(T, dtype=bool)
    trunc = np.zeros(T, dtype=bool)
    trunc[4] = True  # a time limit: bootstrap with NV[4] (V of the final state), trace cut
    NV[4] = -0.8
    col = lambda x: torch.tensor(np.asarray(x), dtype=torch.float64).reshape(-1, 1)  # noqa: E731
    vs, _ = losses.vtrace(col(lr), col(R), col(V), col(NV), torch.tensor(ks).reshape(-1, 1),
                          torch.tensor(term).reshape(-1, 1), torch.tensor(trunc).reshape(-1, 1), g)
    rho, c = np.minimum(1.0, np.exp(lr)), np.minimum(1.0, np.exp(lr))
    delta = rho * (R + g ** ks * NV - V)
    for s in range(T):
        end = 5 if s <= 4 else T  # the sum stops at the episode boundary
        total, coef = 0.0, 1.0
        for t in range(s, end):
            total += coef * delta[t]
            coef *= g ** ks[t] * c[t]
        assert float(vs[s, 0]) == pytest.approx(V[s] + total, abs=1e-10)
    # on-policy with rho_bar = c_bar = 1 and lambda = 1: V-trace targets are SMDP GAE returns
    zero = col(np.zeros(T))
    vs0, adv0 = losses.vtrace(zero, col(R), col(V), col(NV), torch.tensor(ks).reshape(-1, 1),
                              torch.tensor(term).reshape(-1, 1), torch.tensor(trunc).reshape(-1, 1), g)
    a, ret = losses.smdp_gae(col(R), col(V), col(NV), torch.tensor(ks).reshape(-1, 1),
                             torch.tensor(term).reshape(-1, 1), torch.tensor(trunc).reshape(-1, 1), g, 1.0)
    assert torch.allclose(vs0, ret, atol=1e-12)


# ----------------------------------------------------------------------------- weights
def test_weighted_loss_equals_the_mean_of_per_group_losses():
    rng = np.random.default_rng(0)
    per = {"commander": torch.tensor(rng.normal(size=75)), "sentry": torch.tensor(rng.normal(size=2250)),
           "scout": torch.tensor(rng.normal(size=400))}
    counts = {g: x.numel() for g, x in per.items()}
    equal = {g: 1 / 3 for g in per}
    w = group_balancing_weights(counts, equal, clip=1e6)
    mean_of_means = sum(float(x.mean()) for x in per.values()) / 3
    assert float(weighted_group_loss(per, w)) == pytest.approx(mean_of_means, abs=1e-12)
    # with lock-step shares (agent fractions) each group carries its lock-step weight
    share = {"commander": 1 / 14, "sentry": 9 / 14, "scout": 4 / 14}
    w = group_balancing_weights(counts, share, clip=1e6)
    assert float(weighted_group_loss(per, w)) == pytest.approx(sum(share[g] * float(per[g].mean()) for g in per),
                                                               abs=1e-12)
    # and gradients flow through it like through the per-group means
    x = {g: t.clone().requires_grad_(True) for g, t in per.items()}
    weighted_group_loss(x, w).backward()
    assert torch.allclose(x["commander"].grad, torch.full((75,), share["commander"] / 75, dtype=torch.float64))


def test_staleness_summary():
    s = staleness_summary([0, 0, 1, 3], counts=[9, 9, 1, 1])
    assert s["hist"] == {0: 18, 1: 1, 3: 1}
    assert s["mean"] == pytest.approx(4 / 20) and s["max"] == 3.0 and s["p95"] == 1.0
    assert staleness_summary([])["mean"] == 0.0
    with pytest.raises(ValueError):
        staleness_summary([1, 2], counts=[1])
