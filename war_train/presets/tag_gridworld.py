"""TagGridWorld-v0 (WarpDrive's tag_gridworld rules and rewards) in a game that is neither won
nor lost by chance: 3 taggers and the runner on WarpDrive's default 11 x 11-cell grid
(``grid_length=10``), 50 steps, random starts (WarpDrive's reset-pool generator: taggers
inside, the runner in the corner).  Uniformly random taggers tag a random runner in about 42 %
of the episodes (WarpDrive's defaults, 10 taggers and 100 steps, tag it in 98 %: there is
little to learn for the taggers).  Taggers and the runner are trained together (their own
actors and critics) with WarpDrive's discount (0.98).

Measured (independent seeds 1-3, 1 M env steps, about 70 s each on one core; 1 000 evaluation
episodes on worlds no run trains on; ``benchmarks/results/learning_tag_gridworld.json``, table
in docs/training.md): trained taggers against a random runner tag it in 100 % of the episodes
after 7.2-7.5 steps (random taggers: 43.7-44.0 %, episodes of 38.8-39.1 steps); a trained
runner against random taggers is tagged in 10.3-11.8 % and lasts 47.2-47.7 of the 50 steps;
trained against trained, the taggers win (99.9-100 %).
"""

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "TagGridWorld-v0, 3 taggers vs 1 runner on WarpDrive's 10-cell grid, 50 steps: 1 M env steps on a CPU"

PRESET = {
    "scenario": "TagGridWorld-v0",
    "env_kwargs": {"num_taggers": 3, "grid_length": 10, "episode_length": 50},
    "num_envs": 256,
    "rollout_length": 25,
    "total_env_steps": 1_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "gamma": 0.98,
    "entropy_coef": 0.01,
    "checkpoint_every": 25,
}
