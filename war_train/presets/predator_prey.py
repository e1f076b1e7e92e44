"""PredatorPrey-v0 (3 adversaries, 1 prey, 2 obstacles): both groups trained together."""

PRESET = {
    "scenario": "PredatorPrey-v0",
    "num_envs": 128,
    "total_env_steps": 2_000_000,
}
