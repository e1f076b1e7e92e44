"""Wheel-v0 (VMAS's ``wheel``) with BenchMARL's task settings (4 agents turn a line of length
1 and mass 30 about its centre at ``desired_velocity`` 0.05, 100-step episodes), continuous actions (a Gaussian head),
a centralized critic.

VMAS's wheel has no success flag: the progress column is the episode return (the shared reward
is minus the gap between the line's angular speed and the desired one); ``ang_vel_error`` is in
the evaluation too.  Not there yet: seed 1
(``benchmarks/results/learning_wheel_seed1.json``, 2026-12-03) ends at 1.5 M env steps with a
greedy return of -4.43 (random policy: -4.97; 0 is a line turning at exactly the desired
speed): the agents barely turn the line; a longer budget or tuning is open (issue #25).
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
