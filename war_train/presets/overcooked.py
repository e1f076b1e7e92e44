"""Overcooked-v0 on cramped_room (JaxMARL's ``overcooked``): MLP MAPPO on the flat 26-channel
grid with JaxMARL's shaped reward added to the sparse one (``shaped_reward_coef=1``, kept, where
JaxMARL's IPPO script anneals it to 0 over 2.5 M steps: every shaped event is a step towards a
soup, so the shaped return cannot be farmed without cooking), JaxMARL's IPPO settings otherwise
(gamma 0.99, 4 epochs x 4 minibatches, lr 2.5e-4 annealed, entropy 0.01, 2 x 64 MLP); soups
served per episode (``deliveries``) is the progress column.  Tried first (seed 1, 3 M env steps):
12 soups per 400-step episode by 0.7 M env steps and no more after, so 1.5 M (JaxMARL's IPPO
trains 5 M with the shaping annealed)."""

DESCRIPTION = ("Overcooked-v0 cramped_room: MLP MAPPO with JaxMARL's shaped reward added, soups served per "
               "400-step episode")

PRESET = {
    "scenario": "Overcooked-v0",
    "env_kwargs": {"layout": "cramped_room", "shaped_reward_coef": 1.0},
    "num_envs": 64,
    "rollout_length": 128,
    "total_env_steps": 1_500_000,
    "epochs": 4,
    "num_minibatches": 4,
    "lr": 2.5e-4,
    "critic_lr": 2.5e-4,
    "anneal_lr": True,
    "gamma": 0.99,
    "entropy_coef": 0.01,
    "hidden_size": 64,
    "checkpoint_every": 50,
    "eval_episodes": 200,
}
