"""Wheel-v0 (VMAS's ``wheel``) with BenchMARL's task settings (4 agents turn a line of length
1 and mass 30 about its centre at ``desired_velocity`` 0.05, 100-step episodes), continuous actions (a Gaussian head),
a centralized critic.

VMAS's wheel has no success flag: the progress column is the episode return (the shared reward
is minus the gap between the line's angular speed and the desired one); ``ang_vel_error`` is in
the evaluation too.  Measured over independent seeds in
``benchmarks/results/learning_wheel.json`` (docs/vmas.md).
"""

DESCRIPTION = "Wheel-v0 (VMAS wheel, BenchMARL's task settings): turn the line at the desired speed"

PRESET = {
    "scenario": "Wheel-v0",
    "env_kwargs": {"n_agents": 4, "line_length": 1, "line_mass": 30, "desired_velocity": 0.05, "max_steps": 100},
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
