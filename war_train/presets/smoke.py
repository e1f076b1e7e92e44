"""A tiny configuration for tests and CI smoke runs (seconds on one core)."""

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "a tiny Spread-v0 run for tests and CI: 16 worlds, 4 updates, no TensorBoard (seconds)"

PRESET = {
    "scenario": "Spread-v0",
    "num_envs": 16,
    "rollout_length": 25,
    "total_env_steps": 16 * 25 * 4,
    "epochs": 2,
    "checkpoint_every": 2,
    "eval_episodes": 8,
    "tensorboard": False,
    "progress": False,
}
