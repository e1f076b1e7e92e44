"""Warp kernels of ``war_envs.core.sampling``: categorical sampling by inverse CDF, one thread per
row (Categorical) or per (row, component) (MultiDiscrete), each with its own counter-based
stream ``wp.rand_init(key, stream_index)`` — so results depend on the seed, the call counter and
the row only, never on scheduling.

A row that is not a distribution (NaN or +inf logits, all logits -inf; negative, NaN or infinite
probabilities, or probabilities summing to 0) gets the action -1, which the Python side turns into
a ``ValueError``.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS

wp.set_module_options(KERNEL_MODULE_OPTIONS)

INVALID = wp.constant(-1)


@wp.func
def is_finite(x: Any):
    """x is neither NaN nor +-inf."""
    return x == x and wp.abs(x) < type(x)(3.0e38)


@wp.func
def draw_from_logits(logits: wp.array2d(dtype=Any), r: int, first: int, n: int, key: int, stream: int):
    """One draw from softmax(logits[r, first:first+n]): u ~ U[0, sum w), the first j whose
    running sum of w_j = exp(l_j - max l) exceeds u (weight-0 entries are never picked)."""
    top = logits[r, first]
    for j in range(1, n):
        top = wp.max(top, logits[r, first + j])
    total = type(top)(0.0)
    for j in range(n):
        total = total + wp.exp(logits[r, first + j] - top)
    if not (is_finite(total) and total > type(top)(0.0)):
        return INVALID
    state = wp.rand_init(key, stream)
    u = type(top)(wp.randf(state)) * total
    running = type(top)(0.0)
    last = int(INVALID)
    for j in range(n):
        w = wp.exp(logits[r, first + j] - top)
        if w > type(top)(0.0):
            running = running + w
            last = j
            if u < running:
                return j
    return last  # u rounded up to the total: the last entry with weight


@wp.func
def draw_from_probs(probs: wp.array2d(dtype=Any), r: int, first: int, n: int, key: int, stream: int):
    """One draw from probs[r, first:first+n] / their sum (need not be normalised)."""
    zero = type(probs[r, first])(0.0)
    total = zero
    for j in range(n):
        p = probs[r, first + j]
        if not (is_finite(p) and p >= zero):
            return INVALID
        total = total + p
    if not (is_finite(total) and total > zero):
        return INVALID
    state = wp.rand_init(key, stream)
    u = type(total)(wp.randf(state)) * total
    running = zero
    last = int(INVALID)
    for j in range(n):
        p = probs[r, first + j]
        if p > zero:
            running = running + p
            last = j
            if u < running:
                return j
    return last


@wp.kernel
def categorical(
    # Params
    key: int,
    from_logits: int,
    # Inputs
    weights: wp.array2d(dtype=Any),
    # Outputs
    out: wp.array(dtype=wp.int64),
):
    """Row r of weights ([rows, n] logits or probabilities) -> out[r] in [0, n) (-1: invalid row)."""
    r = wp.tid()
    n = weights.shape[1]
    if from_logits != 0:
        out[r] = wp.int64(draw_from_logits(weights, r, 0, n, key, r))
    else:
        out[r] = wp.int64(draw_from_probs(weights, r, 0, n, key, r))


@wp.kernel
def multi_discrete(
    # Params
    key: int,
    from_logits: int,
    offsets: wp.array(dtype=wp.int32),
    sizes: wp.array(dtype=wp.int32),
    # Inputs
    weights: wp.array2d(dtype=Any),
    # Outputs
    out: wp.array2d(dtype=wp.int64),
):
    """Component d of row r: a draw from weights[r, offsets[d] : offsets[d] + sizes[d]]."""
    r, d = wp.tid()
    stream = r * sizes.shape[0] + d
    if from_logits != 0:
        out[r, d] = wp.int64(draw_from_logits(weights, r, offsets[d], sizes[d], key, stream))
    else:
        out[r, d] = wp.int64(draw_from_probs(weights, r, offsets[d], sizes[d], key, stream))


# Concrete overloads: launching a generic kernel re-infers its argument types at every call
# (~50 µs); the sampler launches these instead.
CATEGORICAL = {dtype: wp.overload(categorical, {"weights": wp.array2d(dtype=dtype)})
               for dtype in (wp.float32, wp.float64)}
MULTI_DISCRETE = {dtype: wp.overload(multi_discrete, {"weights": wp.array2d(dtype=dtype)})
                  for dtype in (wp.float32, wp.float64)}
