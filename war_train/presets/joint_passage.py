"""JointPassage-v0 (VMAS's ``joint_passage``) with VMAS's default scenario (two agents joined by
a rod that carries a mass of 5 at three quarters of its half length, one gap in the wall, random
start and goal angles) and 200-step episodes, continuous actions (a Gaussian head), a
centralized critic.

Success (the rod on its goal pose to 0.01 in position and angle: VMAS's done) is the progress
column, but it stays 0.0 for these runs; the return (the rod's shaped progress toward the gap,
then the goal, in position and angle) shows the learning.  2 M env steps, about a minute and a
half on one core.  Three seeds (``benchmarks/results/learning_joint_passage.json``, ``python
benchmarks/learning.py --preset joint_passage --seeds 1,2,3 --metric episode_return``, 200
evaluation episodes on seeds not used in training): greedy return 1.89 / 1.93 / 1.55 against the
random policy's -0.07 / -0.03 / 0.01; both agents above the wall in 84.5 / 89 / 70.5 % of the
greedy episodes (random: 0 %).  See docs/vmas.md.
"""

DESCRIPTION = "JointPassage-v0 (VMAS joint_passage, its defaults): carry the rod through the gap onto its goal pose"

PRESET = {
    "scenario": "JointPassage-v0",
    "env_kwargs": {"max_steps": 200},
    "num_envs": 256,
    "rollout_length": 100,
    "total_env_steps": 2_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.0,
    "eval_episodes": 200,
}
