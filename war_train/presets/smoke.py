"""A tiny configuration for tests and CI smoke runs (seconds on one core)."""

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
