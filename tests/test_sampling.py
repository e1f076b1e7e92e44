"""war_envs.core.sampling: the Warp sampler draws from the right distributions (chi-square),
reproducibly (seed + call counter, independent of batch size), and refuses bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from war_envs.core.sampling import Sampler, sample_categorical, sample_multi_discrete, stream_key

P_MIN = 1e-3  # fixed seeds: a deterministic test, failing only if the sampler is biased


def chi_square_p(draws: np.ndarray, probs: np.ndarray) -> float:
    counts = np.bincount(draws, minlength=len(probs))
    keep = probs > 0
    assert counts[~keep].sum() == 0, "a category of probability 0 was drawn"
    expected = probs[keep] / probs[keep].sum() * len(draws)
    return stats.chisquare(counts[keep], expected).pvalue


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_categorical_from_logits_chi_square(dtype):
    probs = np.array([0.05, 0.2, 0.0, 0.4, 0.1, 0.25, 0.001, 0.0])
    with np.errstate(divide="ignore"):
        logits = torch.tensor(np.log(probs) + 3.7, dtype=dtype)  # shift: softmax is invariant
    rows = 200_000
    sampler = Sampler(seed=123)
    draws = sampler.categorical(logits.expand(rows, -1))
    assert draws.dtype == torch.int64 and draws.shape == (rows,)
    assert chi_square_p(draws.numpy(), probs) > P_MIN
    # a second call draws new numbers, from the same distribution
    again = sampler.categorical(logits.expand(rows, -1))
    assert not torch.equal(again, draws) and chi_square_p(again.numpy(), probs) > P_MIN


def test_categorical_from_unnormalised_probs_and_many_distributions():
    rng = np.random.default_rng(0)
    table = rng.random((4, 5)) * (rng.random((4, 5)) > 0.2)  # some zero entries
    table[:, 0] += 0.01
    reps = 50_000
    probs = torch.tensor(np.repeat(table, reps, axis=0) * 7.0, dtype=torch.float32)
    draws = Sampler(seed=5).categorical(probs=probs).numpy().reshape(4, reps)
    for d in range(4):
        assert chi_square_p(draws[d], table[d]) > P_MIN


def test_multi_discrete_chi_square_and_independence():
    nvec = [3, 4]
    p0, p1 = np.array([0.2, 0.5, 0.3]), np.array([0.1, 0.1, 0.3, 0.5])
    logits = torch.tensor(np.log(np.concatenate([p0, p1])), dtype=torch.float32)
    rows = 120_000
    draws = Sampler(seed=9).multi_discrete(logits.expand(rows, -1), nvec).numpy()
    assert draws.shape == (rows, 2)
    assert chi_square_p(draws[:, 0], p0) > P_MIN and chi_square_p(draws[:, 1], p1) > P_MIN
    joint = draws[:, 0] * 4 + draws[:, 1]
    assert chi_square_p(joint, np.outer(p0, p1).reshape(-1)) > P_MIN  # components independent


def test_reproducible_from_seed_and_counter_and_independent_of_batch_size():
    logits = torch.randn(3, 64, 21, generator=torch.Generator().manual_seed(0))
    a, b = Sampler(seed=7), Sampler(seed=7)
    first = [a.categorical(logits) for _ in range(3)]
    assert all(torch.equal(x, b.categorical(logits)) for x in first)
    assert not torch.equal(first[0], first[1])
    assert torch.equal(sample_categorical(logits, seed=7, counter=2), first[2])
    assert not torch.equal(Sampler(seed=8).categorical(logits), first[0])
    a.seed(7)
    assert torch.equal(a.categorical(logits), first[0]) and a.counter == 1
    # row r draws from stream r: a prefix of the batch gives the same draws
    flat = logits.reshape(-1, 21)
    assert torch.equal(sample_categorical(flat[:50], seed=7), first[0].reshape(-1)[:50])
    # non-contiguous input, float64, leading shapes
    wide = torch.randn(21, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).T
    assert not wide.is_contiguous()
    assert torch.equal(sample_categorical(wide, seed=1), sample_categorical(wide.contiguous(), seed=1))
    md = sample_multi_discrete(torch.zeros(2, 5, 42), [21, 21], seed=3)
    assert md.shape == (2, 5, 2) and md.min() >= 0 and md.max() < 21
    assert torch.equal(md, sample_multi_discrete(torch.zeros(2, 5, 42), [21, 21], seed=3))
    assert sample_categorical(torch.zeros(5), seed=0).shape == ()


def test_out_buffer_is_reused():
    logits = torch.zeros(6, 4)
    out = torch.empty(6, dtype=torch.int64)
    result = Sampler(seed=0).categorical(logits, out=out)
    assert result is out and torch.equal(out, Sampler(seed=0).categorical(logits))


def test_extreme_logits():
    logits = torch.tensor([[0.0, -30.0, -math.inf], [-math.inf, 1e30, -1e30]])
    draws = Sampler(seed=0).categorical(logits.repeat(5000, 1)).reshape(5000, 2)
    assert (draws[:, 0] == 0).all() and (draws[:, 1] == 1).all()


@pytest.mark.parametrize("call,error,match", [
    (lambda s: s.categorical(torch.tensor([[0.0, float("nan")]])), ValueError, r"logits: the row at index \(0,\)"),
    (lambda s: s.categorical(torch.tensor([[1.0], [float("inf")]])), ValueError, r"index \(1,\)"),
    (lambda s: s.categorical(torch.full((2, 3), -math.inf)), ValueError, "not a distribution"),
    (lambda s: s.categorical(probs=torch.tensor([0.5, -0.1, 0.6])), ValueError, r"probs: the row at index \(\)"),
    (lambda s: s.categorical(probs=torch.zeros(2, 3)), ValueError, "zero sum"),
    (lambda s: s.categorical(torch.zeros(3, 2, dtype=torch.int64)), TypeError, "logits: expected dtype torch.float32"),
    (lambda s: s.categorical(torch.zeros(3, 0)), ValueError, "n >= 1"),
    (lambda s: s.categorical(np.zeros((3, 2))), TypeError, "logits: expected a torch.Tensor"),
    (lambda s: s.categorical(torch.zeros(2), probs=torch.ones(2)), TypeError, "exactly one"),
    (lambda s: s.categorical(), TypeError, "exactly one"),
    (lambda s: s.categorical(torch.zeros(3, 2), out=torch.empty(4, dtype=torch.int64)), ValueError, "out: expected"),
    (lambda s: s.multi_discrete(torch.zeros(3, 7), [3, 3]), ValueError, "sum\\(nvec\\) = 6"),
    (lambda s: s.multi_discrete(torch.zeros(3, 6), [3, 0, 3]), ValueError, "nvec"),
    (lambda s: s.multi_discrete(torch.zeros(3, 6)), TypeError, "nvec"),
    (lambda s: s.multi_discrete(torch.tensor([[0.0, 0, 0, 0, float("nan"), 0]]), [3, 3]), ValueError,
     r"logits: the row at index \(0,\)"),
    (lambda s: s.seed(-1), ValueError, "seed"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call(Sampler(seed=0))


def test_validate_false_marks_bad_rows():
    draws = Sampler(seed=0).categorical(torch.tensor([[0.0, 0.0], [float("nan"), 0.0]]), validate=False)
    assert draws[1].item() == -1 and draws[0].item() in (0, 1)


def test_stream_keys_are_31_bit_and_distinct():
    keys = {stream_key(s, c) for s in range(50) for c in range(50)}
    assert len(keys) == 2500 and all(0 <= k < 2**31 for k in keys)
