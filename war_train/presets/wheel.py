"""Wheel-v0 (VMAS's ``wheel``) with BenchMARL's task settings (4 agents turn a line of length
1 and mass 30 about its centre at ``desired_velocity`` 0.05, 100-step episodes), continuous
actions (a Gaussian head), a centralized critic, 10 M env steps (about ten minutes on one core).

VMAS's wheel has no success flag: the progress column is the episode return (the shared reward
is minus the gap between the line's angular speed and the desired one: 0 is a line turning at
exactly 0.05 rad/s from the first step, -5 one that never turns); ``ang_vel_error`` and
``ang_speed`` are in the evaluation too.  Three seeds (``benchmarks/results/learning_wheel.json``,
200 evaluation episodes on seeds not used in training): greedy return -2.72 / -2.61 / -2.52
(mean angular speed 0.028 / 0.030 / 0.034 rad/s), a random policy -4.97 / -4.98 / -4.98
(0.0003 rad/s: it does not turn the line).  The line starts at rest and is heavy, so even a
policy that pushes at once loses part of each episode spinning it up; the returns were still
rising, slowly, at 10 M env steps (seed 1 at 1.5 M: -4.43, ``trials/learning_wheel_seed1.json``).
"""

DESCRIPTION = "Wheel-v0 (VMAS wheel, BenchMARL's task settings): turn the line at the desired speed"

PRESET = {
    "scenario": "Wheel-v0",
    "env_kwargs": {"n_agents": 4, "line_length": 1, "line_mass": 30, "desired_velocity": 0.05, "max_steps": 100},
    "num_envs": 256,
    "rollout_length": 100,
    "total_env_steps": 10_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.0,
    "eval_episodes": 200,
}
