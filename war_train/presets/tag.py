"""Tag-v0 on a 2-core CPU: WarpDrive's rules and its training config's arena scaled down.

WarpDrive's training config (``tag_warpdrive``) plays 10 taggers and 100 runners on a 20 x 20
grid for 500 steps.  Here: 2 taggers and 10 runners on a 10 x 10 grid for 100 steps, the
other rules as in WarpDrive's config (tag distance 0.02 of the grid, ±10 tag rewards, the
k = 5 nearest agents observed, 20 acceleration and turn levels), so a run takes minutes on
one core.  Taggers and runners are trained together (their own actors and critics).
"""

PRESET = {
    "scenario": "Tag-v0",
    "env_kwargs": {"preset": "warpdrive_training", "num_taggers": 2, "num_runners": 10, "grid_length": 10.0,
                   "episode_length": 100, "num_other_agents_observed": 5},
    "num_envs": 256,
    "rollout_length": 25,
    "total_env_steps": 2_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 3e-3,
    "critic_lr": 3e-3,
    "anneal_lr": True,
    "gamma": 0.98,
    "entropy_coef": 0.01,
    "checkpoint_every": 25,
}
