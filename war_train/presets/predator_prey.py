"""PredatorPrey-v0 (3 adversaries, 1 prey, 2 obstacles): the adversaries' policy and the
prey's policy (each with its own centralized critic) trained together on the same rollouts.
Same changes from the on-policy defaults as the Spread preset (see spread.py), with 512
worlds: two groups cost twice the compute per env step."""

PRESET = {
    "scenario": "PredatorPrey-v0",
    "num_envs": 512,
    "total_env_steps": 2_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 3e-3,
    "critic_lr": 3e-3,
    "anneal_lr": True,
    "gamma": 0.95,
    "entropy_coef": 0.005,
    "checkpoint_every": 25,
}
