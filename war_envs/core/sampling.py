"""On-device action sampling: categorical and MultiDiscrete draws in a Warp kernel, straight from
torch tensors (zero-copy, same device), reproducible from a seed.

```python
from war_envs.core.sampling import Sampler

sampler = Sampler(seed=0)
actions = sampler.categorical(logits)              # logits [..., n] -> int64 [...]
actions = sampler.categorical(probs=p)             # unnormalised probabilities are fine
actions = sampler.multi_discrete(logits, [21, 21]) # logits [..., 42] -> int64 [..., 2]
```

- **Randomness**: counter-based.  Call number ``c`` of a sampler seeded ``s`` draws row ``r``
  (component ``d``) from the stream ``wp.rand_init(key(s, c), r)`` (``r · D + d``), with
  ``key`` a splitmix hash of ``(s, c)``.  So a sampler reseeded with ``s`` replays its draws
  exactly, on any device, whatever the thread schedule; ``sample_categorical(..., seed=s,
  counter=c)`` is the same draw as a pure function.
- **Method**: inverse CDF with one uniform per draw (``u ~ U[0, Σw)``, the first category whose
  running weight sum exceeds ``u``; weights ``exp(l − max l)`` for logits).  Categories of
  weight 0 (``-inf`` logits, zero probabilities) are never drawn.  Uniforms have 2^-24
  resolution (Warp's ``randf``).
- **Tensors**: float32 or float64, any leading shape, on the CPU or a CUDA device; the result
  is an int64 tensor on the same device (``out=`` reuses a buffer).  Non-contiguous inputs are
  copied once.  On CUDA the kernel runs on torch's current stream, so it is ordered with the
  torch work around it.
- **Bad input**: wrong dtype/shape/device → ``TypeError``/``ValueError`` naming the argument;
  rows that are not distributions (NaN or +inf logits, all ``-inf``; negative, NaN or infinite
  probabilities, a zero sum) → ``ValueError`` after the draw (``validate=False`` skips that
  check, which costs one reduction — and on CUDA a host sync — per call; such rows then hold
  ``-1``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import warp as wp

from war_envs.core import _sampling_kernels as K
from war_envs.core import validation as v
from war_envs.core.runtime import capture_guard, init_warp

__all__ = ["Sampler", "sample_categorical", "sample_multi_discrete", "stream_key"]

_MASK64 = (1 << 64) - 1
_WP_FLOATS = {torch.float32: wp.float32, torch.float64: wp.float64}


def stream_key(seed: int, counter: int) -> int:
    """31-bit key of call ``counter`` of a sampler seeded ``seed`` (splitmix64 finaliser)."""
    x = (seed * 0x9E3779B97F4A7C15 + counter + 0x632BE59BD9B4E019) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    x ^= x >> 31
    return int(x & 0x7FFFFFFF)


class Sampler:
    """Seeded categorical / MultiDiscrete sampler running in Warp kernels (see the module doc).

    ``Sampler(seed=0)``; ``counter`` counts calls (each call draws from fresh streams).
    """

    def __init__(self, seed: int = 0) -> None:
        init_warp()
        self._seed = 0
        self.counter = 0
        self.seed(seed)
        self._streams: dict[tuple[str, int], wp.Stream] = {}
        self._commands: dict[tuple, object] = {}
        self._nvec_cache: dict[tuple, tuple] = {}

    def seed(self, seed: int) -> None:
        """Restart the sampler's streams from ``seed`` (the call counter goes back to 0)."""
        value = v.check_seed("seed", seed)
        if value is None:
            raise TypeError("seed: expected an int, got None")
        self._seed = value
        self.counter = 0

    @property
    def current_seed(self) -> int:
        return self._seed

    # ------------------------------------------------------------------ public API
    def categorical(self, logits: torch.Tensor | None = None, *, probs: torch.Tensor | None = None,
                    out: torch.Tensor | None = None, validate: bool = True) -> torch.Tensor:
        """One draw per row of ``logits`` (or ``probs``) ``[..., n]`` → int64 ``[...]``."""
        name, weights, from_logits = _pick(logits, probs)
        flat = _as_rows(weights)
        rows = flat.shape[0]
        result = _check_out(out, weights.shape[:-1], weights.device)
        key = stream_key(self._seed, self.counter)
        self.counter += 1
        if rows:
            self._launch(K.CATEGORICAL[_WP_FLOATS[flat.dtype]], rows, [key, int(from_logits), _view(flat)], _view(result, (rows,)),
                         weights.device)
            if validate:
                _check_valid(name, result, components=False)
        return result

    def multi_discrete(self, logits: torch.Tensor | None = None, nvec: Sequence[int] | None = None, *,
                       probs: torch.Tensor | None = None, out: torch.Tensor | None = None,
                       validate: bool = True) -> torch.Tensor:
        """One draw per component: ``logits`` (or ``probs``) ``[..., sum(nvec)]`` holds the
        components' blocks back to back → int64 ``[..., len(nvec)]``."""
        name, weights, from_logits = _pick(logits, probs)
        offsets, sizes, total = self._nvec_arrays(nvec, weights.device)
        if weights.shape[-1] != total:
            raise ValueError(f"{name}: expected a last dimension of sum(nvec) = {total}, got {weights.shape[-1]}")
        flat = _as_rows(weights)
        rows, D = flat.shape[0], sizes.shape[0]
        result = _check_out(out, (*weights.shape[:-1], D), weights.device)
        key = stream_key(self._seed, self.counter)
        self.counter += 1
        if rows:
            self._launch(K.MULTI_DISCRETE[_WP_FLOATS[flat.dtype]], (rows, D), [key, int(from_logits), offsets, sizes, _view(flat)],
                         _view(result, (rows, D)), weights.device)
            if validate:
                _check_valid(name, result, components=True)
        return result

    # ------------------------------------------------------------------ internals
    def _nvec_arrays(self, nvec, device: torch.device):
        if nvec is None:
            raise TypeError("nvec: expected a sequence of category counts, got None")
        if isinstance(nvec, torch.Tensor):
            nvec = nvec.tolist()
        sizes = np.asarray(nvec).reshape(-1)
        if sizes.size == 0 or not np.issubdtype(sizes.dtype, np.integer) or (sizes < 1).any():
            raise ValueError(f"nvec: expected a non-empty sequence of ints >= 1, got {nvec!r}")
        key = (tuple(int(n) for n in sizes), str(device))
        cached = self._nvec_cache.get(key)
        if cached is None:
            wp_device = _wp_device(device)
            offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
            cached = (wp.array(offsets, dtype=wp.int32, device=wp_device),
                      wp.array(sizes.astype(np.int32), dtype=wp.int32, device=wp_device), int(sizes.sum()))
            self._nvec_cache[key] = cached
        return cached

    def _launch(self, kernel, dim, inputs, output, device: torch.device) -> None:
        """Launch through a recorded command per (kernel, device): only the parameters and the
        launch size change between calls (a full ``wp.launch`` costs tens of µs in Python)."""
        wp_device = _wp_device(device)
        args = [*inputs, output]
        with capture_guard.shared():
            key = (kernel.key, id(kernel), wp_device)
            cmd = self._commands.get(key)
            if cmd is None:
                cmd = self._commands[key] = wp.launch(kernel, dim=dim, inputs=args, device=wp_device,
                                                      record_cmd=True)
            else:
                cmd.set_dim(dim)
                for index, value in enumerate(args):
                    cmd.set_param_at_index(index, value)
            if device.type == "cuda":
                stream = torch.cuda.current_stream(device)
                skey = (wp_device, stream.cuda_stream)
                wp_stream = self._streams.get(skey)
                if wp_stream is None:
                    wp_stream = self._streams[skey] = wp.stream_from_torch(stream)
                cmd.launch(stream=wp_stream)
            else:
                cmd.launch()


# ---------------------------------------------------------------------- functional forms
def sample_categorical(logits: torch.Tensor | None = None, *, probs: torch.Tensor | None = None,
                       seed: int = 0, counter: int = 0, validate: bool = True) -> torch.Tensor:
    """The draw ``Sampler(seed)`` makes at call number ``counter`` (a pure function)."""
    sampler = Sampler(seed)
    sampler.counter = v.check_int("counter", counter, minimum=0)
    return sampler.categorical(logits, probs=probs, validate=validate)


def sample_multi_discrete(logits: torch.Tensor | None = None, nvec: Sequence[int] | None = None, *,
                          probs: torch.Tensor | None = None, seed: int = 0, counter: int = 0,
                          validate: bool = True) -> torch.Tensor:
    """The MultiDiscrete draw ``Sampler(seed)`` makes at call number ``counter``."""
    sampler = Sampler(seed)
    sampler.counter = v.check_int("counter", counter, minimum=0)
    return sampler.multi_discrete(logits, nvec, probs=probs, validate=validate)


# ---------------------------------------------------------------------- checks
def _pick(logits, probs):
    if (logits is None) == (probs is None):
        raise TypeError("logits, probs: expected exactly one of them")
    name, weights = ("logits", logits) if logits is not None else ("probs", probs)
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(weights).__name__}")
    if weights.dtype not in _WP_FLOATS:
        raise TypeError(f"{name}: expected dtype torch.float32 or torch.float64, got {weights.dtype}")
    if weights.dim() < 1 or weights.shape[-1] < 1:
        raise ValueError(f"{name}: expected shape [..., n] with n >= 1, got {tuple(weights.shape)}")
    if weights.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{name}: expected a CPU or CUDA tensor, got device {weights.device}")
    return name, weights.detach(), logits is not None


def _as_rows(weights: torch.Tensor) -> torch.Tensor:
    n = weights.shape[-1]
    flat = weights.reshape(math.prod(weights.shape[:-1]), n)
    return flat if flat.is_contiguous() else flat.contiguous()


_VIEWS: dict[tuple, wp.array] = {}


def _view(tensor: torch.Tensor, shape: tuple | None = None) -> wp.array:
    """A Warp view of a contiguous tensor (no copy).  Views are plain descriptors (pointer,
    shape, dtype; they own nothing), so one is reused for any tensor at the same address."""
    dtype = wp.int64 if tensor.dtype == torch.int64 else _WP_FLOATS[tensor.dtype]
    shape = tuple(tensor.shape) if shape is None else shape
    key = (tensor.data_ptr(), shape, dtype, tensor.device)
    view = _VIEWS.get(key)
    if view is None:
        if len(_VIEWS) > 256:
            _VIEWS.clear()
        view = _VIEWS[key] = wp.array(ptr=tensor.data_ptr(), shape=shape, dtype=dtype,
                                      device=_wp_device(tensor.device))
    return view


def _check_out(out, shape, device) -> torch.Tensor:
    shape = tuple(shape)
    if out is None:
        return torch.empty(shape, dtype=torch.int64, device=device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"out: expected a torch.Tensor, got {type(out).__name__}")
    if out.dtype != torch.int64 or tuple(out.shape) != shape or out.device != device or not out.is_contiguous():
        raise ValueError(f"out: expected a contiguous int64 tensor of shape {shape} on {device}, got "
                         f"{out.dtype} {tuple(out.shape)} on {out.device}")
    return out


def _check_valid(name: str, result: torch.Tensor, components: bool) -> None:
    bad = result < 0
    if bool(bad.any()):
        where = bad.nonzero()[0].tolist()
        row = where[:-1] if components else where
        raise ValueError(f"{name}: the row at index {tuple(row)} is not a distribution (NaN or +inf "
                         "logits, or all -inf; negative, NaN or infinite probabilities, or a zero sum)")


def _wp_device(device: torch.device) -> str:
    return "cpu" if device.type == "cpu" else f"cuda:{device.index if device.index is not None else torch.cuda.current_device()}"
