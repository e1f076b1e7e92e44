"""Tag-v0 at WarpDrive's published training configuration, for a GPU.

WarpDrive's ``tag_continuous.yaml`` (v2.7.1): 100 worlds of 10 taggers and 100 runners on a
20 x 20 grid, 500-step episodes, the k = 10 nearest agents observed, ±10 tag rewards
(``make("Tag-v0", preset="warpdrive_training")``); its trainer: 25 000 env steps per batch
(here 100 worlds x 250 steps), fully connected 256 x 256 networks, gamma 0.98, entropy 0.05.
Like WarpDrive's shared actor-critic, each agent's critic sees its own observation
(``critic_input="local"``), which keeps the critic's cost per agent independent of the number
of agents.  WarpDrive trains with A2C (lr 0.001 taggers, 0.005 runners); this is MAPPO at lr
1e-3 for both groups.
"""

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "Tag-v0 at WarpDrive's training configuration (10 taggers, 100 runners), 20 M env steps on cuda:0"

PRESET = {
    "scenario": "Tag-v0",
    "env_kwargs": {"preset": "warpdrive_training"},
    "num_envs": 100,
    "rollout_length": 250,
    "total_env_steps": 20_000_000,
    "hidden_size": 256,
    "layer_norm": True,
    "critic_input": "local",
    "epochs": 4,
    "num_minibatches": 4,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "gamma": 0.98,
    "entropy_coef": 0.05,
    "checkpoint_every": 20,
    "device": "cuda:0",
}
