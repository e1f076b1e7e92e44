"""Transport-v0 (VMAS's ``transport``) with BenchMARL's task settings (4 agents push one 0.15 x
0.15 package of mass 50, 100-step episodes), continuous actions (a Gaussian head),
a centralized critic.

Success (every package on the goal: VMAS's done) is the progress column.  Not there yet: seed 1
(``benchmarks/results/learning_transport_seed1.json``, 2026-12-03) ends at 3 M env steps with a
greedy success of 0.01 (random policy: 0.0); at 10 M (``learning_transport_10M_seed1.json``) the
return is up from 0.2 to 6.2 but success still 0.01: the 50-mass package needs tuning (issue #25).
"""

DESCRIPTION = "Transport-v0 (VMAS transport, BenchMARL's task settings): push the package onto the goal"

PRESET = {
    "scenario": "Transport-v0",
    "env_kwargs": {"n_agents": 4, "n_packages": 1, "package_width": 0.15, "package_length": 0.15, "package_mass": 50,
                   "max_steps": 500},
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
