"""Hanabi-v0 with 2 players (JaxMARL's ``hanabi``): MLP MAPPO with the legal-move masks in the
losses and the action draws (``env.action_mask()``), a shared actor for both seats, the critic on
both players' observations; the final score (``score``: 0 when the team loses its last life) is
the progress column.  Tried first (seed 1): the sampled score rises to about 3.3 by 0.5 M env
steps and stays there to 0.9 M, so 1.5 M (JaxMARL's published Hanabi baselines train for
billions of steps and reach scores above 20: this preset is a check that war-train plays
Hanabi with its masks, not a competitive agent)."""

DESCRIPTION = "Hanabi-v0, 2 players: MLP MAPPO with legal-move masks, final score per game"

PRESET = {
    "scenario": "Hanabi-v0",
    "env_kwargs": {"num_agents": 2},
    "num_envs": 128,
    "rollout_length": 64,
    "total_env_steps": 1_500_000,
    "epochs": 4,
    "num_minibatches": 4,
    "lr": 5e-4,
    "critic_lr": 5e-4,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.01,
    "hidden_size": 128,
    "checkpoint_every": 50,
    "eval_episodes": 500,
}
