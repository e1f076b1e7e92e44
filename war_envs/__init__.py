"""war-envs: batched multi-agent RL environments whose reset/step are NVIDIA Warp kernels.

``war_envs.make(id, num_envs=E, device="cpu", seed=None, precision="float32",
autoreset_mode=None, **scenario_kwargs)`` builds the batched (torch) env;
``war_envs.parallel_env(id, ...)`` / ``war_envs.env(id, ...)`` give PettingZoo envs;
importing the package registers ``war_envs/<Id>`` with Gymnasium.  Only the core dependencies
are needed to import it; a feature whose optional dependency is missing raises
``war_envs.MissingExtraError`` (a ``ModuleNotFoundError``) naming the extra that installs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from war_envs._extras import MissingExtraError
from war_envs.registry import registered_ids

if TYPE_CHECKING:
    from war_envs.core.batched_env import AutoresetMode, BatchedEnv, GroupSpec

__version__ = "0.1.0"
__all__ = ["AutoresetMode", "BatchedEnv", "GroupSpec", "MissingExtraError", "make", "parallel_env", "env",
           "register", "registered_ids", "__version__"]


# torch and Warp load on first use, so `import war_envs` (and Gymnasium's registry) stay fast.
_LAZY = {"AutoresetMode": "war_envs.core.batched_env", "BatchedEnv": "war_envs.core.batched_env",
         "GroupSpec": "war_envs.core.batched_env"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'war_envs' has no attribute {name!r}")


def make(id: str, *, num_envs: int = 1, device="cpu", seed: int | None = None,
         precision: str = "float32", autoreset_mode=None, **scenario_kwargs) -> BatchedEnv:
    """Build ``num_envs`` worlds of scenario ``id`` (e.g. ``"Spread-v0"``) stepped by Warp kernels.

    ``device``: ``"cpu"`` or ``"cuda:N"``; ``precision``: world state in ``"float32"`` or
    ``"float64"`` (observations are float32 either way); ``autoreset_mode``: an
    ``AutoresetMode`` (default ``SAME_STEP``).  Scenario arguments are listed in each
    scenario's docstring; unknown ones raise ``TypeError``.
    """
    from war_envs.registry import make as make_scenario

    return make_scenario(id, num_envs=num_envs, device=device, seed=seed, precision=precision,
                         autoreset_mode=autoreset_mode, **scenario_kwargs)


def parallel_env(id: str, render_mode: str | None = None, **kwargs):
    """A PettingZoo ``ParallelEnv`` over one world of scenario ``id`` (needs ``pettingzoo``:
    ``pip install 'war-envs[pettingzoo]'``; without it a ``MissingExtraError`` says so)."""
    from war_envs.frontends.pettingzoo import ParallelEnv

    return ParallelEnv(id, render_mode=render_mode, **kwargs)


def env(id: str, render_mode: str | None = None, **kwargs):
    """A PettingZoo AEC env (``parallel_to_aec`` over ``parallel_env``; needs ``pettingzoo``:
    ``pip install 'war-envs[pettingzoo]'``)."""
    from war_envs.frontends.pettingzoo import aec_env

    return aec_env(id, render_mode=render_mode, **kwargs)


from war_envs.frontends.registration import register  # noqa: E402
from war_envs.frontends.registration import register_gymnasium as _register_gymnasium  # noqa: E402
from war_envs.frontends.registration import register_pettingzoo as _register_pettingzoo  # noqa: E402

_register_gymnasium()
_register_pettingzoo()
