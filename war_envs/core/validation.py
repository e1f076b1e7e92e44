"""Argument checks shared by every front end: each error names the argument, what was
expected and what was given.  Nothing here clamps or converts silently."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np
import torch


class Default:
    """The default of a scenario argument the caller did not pass, so a map or preset can
    replace it (``Default(v).value``); it shows as its value in signatures and help()."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def check_int(name: str, value, *, minimum: int | None = None, allow_none: bool = False):
    """An integral number (not bool) >= minimum."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        expected = "an int" + (" or None" if allow_none else "")
        raise TypeError(f"{name}: expected {expected}, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value}")
    return value


def check_float(name: str, value, *, low: float | None = None, high: float | None = None):
    """A finite real number in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a float, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite float, got {value}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name}: expected a float in [{low}, {high}], got {value}")
    return value


def check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def check_choice(name: str, value, choices):
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value


def check_seed(name: str, value):
    """None or an int in [0, 2**63)."""
    if value is None:
        return None
    value = check_int(name, value, minimum=0)
    if value >= 2**63:
        raise ValueError(f"{name}: expected an int < 2**63, got {value}")
    return value


def as_tensor(name: str, value, device: torch.device) -> torch.Tensor:
    """A torch tensor (numpy arrays and numpy/Python scalars are wrapped without copying where
    possible) that lives on ``device``; a tensor on another device is an error, not a copy."""
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError(f"{name}: expected a numeric array, got dtype=object")
        tensor = torch.from_numpy(np.ascontiguousarray(value))
        if device.type != "cpu":
            tensor = tensor.to(device)
        return tensor
    elif isinstance(value, (numbers.Number, np.generic, list, tuple)):
        try:
            tensor = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name}: expected a tensor or array, got {type(value).__name__}") from err
        return tensor.to(device)
    else:
        raise TypeError(
            f"{name}: expected a torch.Tensor or numpy array, got {type(value).__name__}"
        )
    if tensor.device != device:
        raise ValueError(
            f"{name}: expected a tensor on device {device}, got one on {tensor.device}"
        )
    return tensor


def check_shape(name: str, tensor: torch.Tensor, shape: tuple[int, ...]) -> None:
    if tuple(tensor.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {tuple(tensor.shape)}")


def check_discrete(name: str, tensor: torch.Tensor, n: int) -> None:
    """Integer dtype (not bool) and every value in [0, n)."""
    if tensor.dtype == torch.bool or tensor.is_floating_point() or tensor.is_complex():
        raise TypeError(f"{name}: expected an integer dtype for Discrete({n}) actions, got {tensor.dtype}")
    if tensor.numel() == 0:
        return
    lo, hi = torch.aminmax(tensor)
    lo, hi = int(lo), int(hi)
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name}: expected Discrete({n}) actions in [0, {n - 1}], got {bad}")


#: the largest finite float32 (Box actions are float32: a larger value would become inf)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_box(name: str, tensor: torch.Tensor, low: float, high: float, *, clipped: bool = False) -> None:
    """Floating dtype, finite, every value in [low, high].  ``clipped``: the scenario clips
    values into [low, high] as its reference does, so any finite float32 value is accepted."""
    if not tensor.is_floating_point():
        raise TypeError(f"{name}: expected a floating dtype for Box actions, got {tensor.dtype}")
    if tensor.numel() == 0:
        return
    lo, hi = torch.aminmax(tensor)
    lo, hi = float(lo), float(hi)
    accept = (-FLOAT32_MAX, FLOAT32_MAX) if clipped else (low, high)
    # NaN makes both comparisons false, so it lands here too
    if not (lo >= accept[0] and hi <= accept[1]):
        if math.isnan(lo) or math.isnan(hi) or torch.isnan(tensor).any():
            raise ValueError(f"{name}: expected finite Box actions in [{low}, {high}], got NaN")
        bad = lo if not lo >= accept[0] else hi
        if clipped:
            raise ValueError(f"{name}: expected finite float32 Box actions (values outside [{low}, {high}] "
                             f"are clipped into it), got {bad}")
        raise ValueError(f"{name}: expected Box actions in [{low}, {high}], got {bad}")


def check_in_space(name: str, tensor: torch.Tensor, space, *, clipped: bool = False) -> None:
    """Values of a batch of ``space`` actions (components last): Discrete and MultiDiscrete in
    range (a MultiDiscrete component's errors name ``name[:, d]``), Box finite and in bounds
    (``clipped``: any finite float32 value, see ``check_box``)."""
    if hasattr(space, "nvec"):          # MultiDiscrete (has no ``n``)
        for d, n in enumerate(space.nvec.reshape(-1)):
            check_discrete(f"{name}[:, {d}]", tensor[..., d], int(n))
    elif hasattr(space, "n"):           # Discrete
        check_discrete(name, tensor, int(space.n))
    else:                               # Box
        check_box(name, tensor, float(space.low.min()), float(space.high.max()), clipped=clipped)


def check_like(name: str, value, like: torch.Tensor) -> torch.Tensor:
    """``value`` as a tensor of ``like``'s shape and dtype on ``like``'s device (a restored
    checkpoint entry); ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(like.shape) or value.dtype != like.dtype:
        got = f"{value.dtype} {tuple(value.shape)}" if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"{name}: expected a {like.dtype} tensor of shape {tuple(like.shape)}, got {got}")
    return value.to(like.device)


def check_keys(name: str, mapping, expected) -> None:
    """A mapping whose keys are exactly ``expected``."""
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{name}: expected a dict keyed by {list(expected)}, got {type(mapping).__name__}")
    missing = [k for k in expected if k not in mapping]
    extra = [k for k in mapping if k not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {missing}")
        if extra:
            parts.append(f"unknown {extra}")
        raise ValueError(f"{name}: expected keys {list(expected)}; " + ", ".join(parts))


def check_action_mask(name: str, mask, shape: tuple[int, ...], device: torch.device | None = None) -> torch.Tensor:
    """An action mask: a bool tensor of exactly ``shape`` (``[..., n_actions]``) in which every
    agent has at least one available action (an all-False row leaves nothing to sample).
    ``device`` (when given) is where it must live.  Returns the tensor."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name}: expected a bool torch.Tensor of shape {tuple(shape)}, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"{name}: expected dtype torch.bool (True = available), got {mask.dtype}")
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)} (..., n_actions), got {tuple(mask.shape)}")
    if device is not None and mask.device != torch.device(device):
        raise ValueError(f"{name}: expected a tensor on device {device}, got one on {mask.device}")
    if mask.numel() and not bool(mask.any(-1).all()):
        where = (~mask.any(-1)).nonzero()[0].tolist()
        raise ValueError(f"{name}: every agent needs at least one available action; the row at index "
                         f"{tuple(where)} is all False")
    return mask


def reset_mask_option(options) -> tuple[bool, object]:
    """A front end's ``reset(options=...)``: None or a dict whose only key is ``"reset_mask"``;
    ``(given, options["reset_mask"])``."""
    if options is None:
        return False, None
    if not isinstance(options, Mapping):
        raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
    extra = [k for k in options if k != "reset_mask"]
    if extra:
        raise ValueError(f"options: only 'reset_mask' is accepted, got keys {extra}")
    return "reset_mask" in options, options.get("reset_mask")
