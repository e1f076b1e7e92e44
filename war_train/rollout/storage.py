"""Preallocated rollout storage: the ``[T, E]`` buffers every training mode fills."""

from __future__ import annotations

import torch

__all__ = ["RolloutStorage"]


class RolloutStorage:
    """Time-major rollout buffers, preallocated: per group, one ``[cap, E, ...]`` buffer per field
    (``layouts[group][field] = (per-row shape, dtype)``), of which the first ``n`` rows are in
    use (rows at and after ``n`` are zeros: ``clear`` zeroes the used ones); the capacity
    doubles when a rollout outgrows it, so after the first rollouts a step allocates nothing.

    The one collector (``war_train.rollout.collector``) stores every mode's windows here, lock-step's
    (the every-step schedule: every row of every world holds a transition) and WAR's
    (decision-point transitions): ``GroupTransitions``' fields, a window's rows appended as it
    steps and copied out at its end."""

    def __init__(self, layouts: dict[str, dict[str, tuple]], device, capacity: int = 16) -> None:
        self.layouts, self.device = layouts, device   # group -> field -> (per-row shape, dtype)
        self.cap, self.n = 0, 0
        self.buffers: dict[str, dict[str, torch.Tensor]] = {g: {} for g in layouts}
        self._rows: dict[str, list] = {g: [] for g in layouts}   # row views, made once per capacity
        self._grow(capacity)

    def _grow(self, cap: int) -> None:
        for g, fields in self.layouts.items():
            for name, (shape, dtype) in fields.items():
                new = torch.zeros((cap, *shape), dtype=dtype, device=self.device)
                if self.cap:
                    new[:self.cap] = self.buffers[g][name]
                self.buffers[g][name] = new
        self.cap = cap
        self._rows = {g: [None] * cap for g in self.layouts}

    def clear(self, only=None) -> None:
        """No rows in use; the used rows zeroed (``only``: just these fields, where every row of
        the others is written again before it is read)."""
        for fields in self.buffers.values():
            for name, buf in fields.items():
                if only is None or name in only:
                    buf[:self.n].zero_()
        self.n = 0

    def append(self) -> None:
        """One more row (zeros)."""
        if self.n == self.cap:
            self._grow(2 * self.cap)
        self.n += 1

    def row(self, group: str, i: int) -> dict[str, torch.Tensor]:
        """Row ``i`` of ``group``'s buffers (views: writes go into the storage)."""
        rows = self._rows[group]
        if rows[i] is None:
            rows[i] = {name: buf[i] for name, buf in self.buffers[group].items()}
        return rows[i]

    def take(self, group: str, copy: bool = True) -> dict[str, torch.Tensor]:
        """``group``'s rows in use, field by field: copied out (the storage is reused by the next
        window), or with ``copy=False`` views, valid until the next ``clear``."""
        if not copy:
            return {name: buf[:self.n] for name, buf in self.buffers[group].items()}
        return {name: buf[:self.n].clone() for name, buf in self.buffers[group].items()}
