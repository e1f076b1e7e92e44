"""Sampling-v0 (VMAS's ``sampling``) with BenchMARL's task settings (3 agents, own rewards:
``shared_rew=False``, 100-step episodes, 3 Gaussians of variance 0.05, lidar range 0.2,
collisions), continuous actions (a Gaussian head), the hyperparameters of the ``navigation``
preset.

``collected`` (the field value the agents sampled over an episode, in units of the field's
largest grid value) is the progress column; ``coverage`` (the share of cells sampled) is logged
beside it.  Not yet measured over seeds.
"""

DESCRIPTION = "Sampling-v0 (VMAS sampling, BenchMARL's task settings): collect the field's value in 1.5 M env steps"

PRESET = {
    "scenario": "Sampling-v0",
    "env_kwargs": {"n_agents": 3, "shared_rew": False, "max_steps": 100},
    "num_envs": 256,
    "rollout_length": 100,
    "total_env_steps": 1_500_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.0,
    "eval_episodes": 200,
}
