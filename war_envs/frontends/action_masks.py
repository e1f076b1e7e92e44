"""Action masks in the front ends and adapters (scenarios with ``has_action_mask``, e.g.
``SMAX-v0``): what every front end shares.

Each front end hands the batched env's ``action_mask()`` on in its own layout (PettingZoo:
``infos[agent]["action_mask"]`` int8 ``[n]``; Gymnasium: ``info["action_mask"][agent]`` int8;
TorchRL: ``(group, "action_mask")``; SB3: ``action_masks()``; see docs/integrations.md), and
only for such scenarios: nothing changes for the others.

**Unavailable actions.**  By default a front end takes every action of the action space and
plays an unavailable one as the scenario's trusted step does (SMAX-v0: JaxMARL's semantics,
e.g. an attack on a unit out of range does nothing, a dead unit's move does nothing) —
what JaxMARL does, and what PettingZoo's ``parallel_api_test`` / ``parallel_seed_test`` and
Gymnasium's ``check_env`` need (they sample actions without a mask).
``strict_action_mask=True`` refuses an action the mask rules out: a ``ValueError`` naming the
agent, the action and the available ones, raised before anything is stepped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import torch

from war_envs.core import validation as v

__all__ = ["check_strict", "unavailable", "check_available", "int8_rows"]


def check_strict(value) -> bool:
    """``strict_action_mask=``: a bool."""
    return v.check_bool("strict_action_mask", value)


def unavailable(label: str, action: int, row) -> ValueError:
    """The error for action ``action`` that the mask ``row`` (one agent's ``[n]``) rules out."""
    available = np.flatnonzero(np.asarray(row)).tolist()
    return ValueError(f"{label}: action {int(action)} is unavailable now (the action mask allows "
                      f"{available}); strict_action_mask=True refuses unavailable actions (False plays "
                      "them as the scenario's trusted step does)")


def check_available(actions, mask: torch.Tensor, label: Callable[[int, int], str],
                    worlds: np.ndarray | torch.Tensor | None = None) -> None:
    """Every ``actions[e, k]`` (integers in range, ``[E, n_g]``, numpy or torch) is allowed by
    ``mask[e, k]`` (bool ``[E, n_g, n]``), in the worlds of ``worlds`` (bool ``[E]``; None:
    all); else ``unavailable(label(e, k), ...)`` for the first one that is not."""
    index = torch.as_tensor(actions).to(device=mask.device, dtype=torch.int64)
    ok = mask.gather(-1, index.unsqueeze(-1)).squeeze(-1)
    if worlds is not None:
        ok = ok | ~torch.as_tensor(worlds, device=mask.device).reshape(-1, 1)
    if bool(ok.all()):
        return
    e, k = (~ok).nonzero()[0].tolist()
    raise unavailable(label(e, k), int(index[e, k]), mask[e, k].cpu().numpy())


def int8_rows(mask: Mapping[str, torch.Tensor], world: int | None = None) -> dict[str, np.ndarray]:
    """``{group: bool [E, n_g, n]}`` -> ``{group: int8 [n_g, n]}`` of one world (or ``[E, n_g,
    n]`` if ``world`` is None): new arrays, PettingZoo's and Gymnasium's mask dtype (what
    ``space.sample(mask=...)`` takes)."""
    return {g: (t if world is None else t[world]).detach().cpu().numpy().astype(np.int8)
            for g, t in mask.items()}
