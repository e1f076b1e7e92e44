"""war_train: the bundled MAPPO trainer for war_envs (``train(env, config)``), its CLI
(``war-train``), presets per scenario, evaluation and rendering of checkpoints.

    import war_envs, war_train
    cfg = war_train.preset_config("Spread-v0")
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs)
    result = war_train.train(env, cfg, run_dir="runs/spread")
"""

from war_train.config import TrainConfig, config_from_dict, config_to_dict
from war_train.mappo import TrainResult, load_policies, train
from war_train.presets import preset_config, preset_names

__all__ = ["TrainConfig", "TrainResult", "train", "load_policies", "config_from_dict", "config_to_dict",
           "preset_config", "preset_names"]
