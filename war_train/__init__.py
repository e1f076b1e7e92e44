"""war_train: the bundled MAPPO trainer for war_envs (``train(env, config)``), its CLI
(``war-train``), presets per scenario, evaluation and rendering of checkpoints.

    import war_envs, war_train
    cfg = war_train.preset_config("Spread-v0")
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs)
    result = war_train.train(env, cfg, run_dir="runs/spread")

The top-level names are imported on first use (a module ``__getattr__``), so ``import war_train``,
``war_train.config``, ``war_train.presets`` and the CLI's parser need neither torch nor Warp
(``war-train train --help`` stays fast); ``war_train.train`` imports the trainer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the same names, for static readers (type checkers, the docs' mkdocstrings)
    from war_train.config import TrainConfig, config_from_dict, config_to_dict
    from war_train.run.loop import TrainResult, train
    from war_train.learn.policy import load_policies
    from war_train.presets import preset_config, preset_names

#: public name -> the module that defines it
_EXPORTS = {"TrainConfig": "war_train.config", "config_from_dict": "war_train.config",
            "config_to_dict": "war_train.config", "TrainResult": "war_train.run.loop", "train": "war_train.run.loop",
            "load_policies": "war_train.learn.policy", "preset_config": "war_train.presets",
            "preset_names": "war_train.presets"}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'war_train' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value   # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
