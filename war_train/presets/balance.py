"""Balance-v0 (VMAS's ``balance``) with BenchMARL's task settings (4 agents, package mass 5,
random package position on the plank, 100-step episodes), continuous actions (a Gaussian head),
a centralized critic.

Success (the package reaches its goal without the plank or the package touching the floor) is
the progress column.  Not there yet: seed 1 (``benchmarks/results/learning_balance_seed1.json``,
2026-12-03) ends at 3 M env steps with a greedy return of 63.9 (random policy: -5.6) and never
drops the package (``fell`` 0.0; random 0.35), but carries it only about a third of the way: success
0.0 for both.  At 10 M env steps (``learning_balance_10M_seed1.json``) the return has plateaued (66.2) with
success still 0.0: the budget is not the problem; tuning or the reward's shaping scale is open
(issue #25).
"""

DESCRIPTION = "Balance-v0 (VMAS balance, BenchMARL's task settings): carry the package to its goal"

PRESET = {
    "scenario": "Balance-v0",
    "env_kwargs": {"n_agents": 4, "package_mass": 5, "random_package_pos_on_line": True, "max_steps": 100},
    "num_envs": 256,
    "rollout_length": 100,
    "total_env_steps": 3_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.0,
    "eval_episodes": 200,
}
