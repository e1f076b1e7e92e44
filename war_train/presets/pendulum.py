"""Pendulum-v1 (Gymnasium's classic control, one agent, a Box(-2, 2) torque): PPO to about -200.

RL Zoo's Pendulum discount on war-train's trainer: gamma 0.9 and GAE lambda 0.95 (the swing-up
reward is dense, a short horizon learns it much faster than 0.99), 16 worlds x 256 steps per
update, 10 epochs x 16 minibatches, lr 1e-3 for actor and critic annealed to 0, no entropy
bonus, a 2 x 64 tanh MLP without LayerNorm, the Gaussian head of ``war_train.learn.distributions``
(the env clips the torque, as Gymnasium's Pendulum does).  Chosen with seed 1 (600 k steps:
training return -178 by 80 k steps, greedy -199.5); 400 k env steps here.  Measured over
independent seeds in ``benchmarks/results/learning_pendulum.json`` (docs/classic_control.md).
"""

DESCRIPTION = "Pendulum-v1: PPO with gamma 0.9 (RL Zoo's) to a greedy return of about -200 in 400 k env steps"

PRESET = {
    "scenario": "Pendulum-v1",
    "num_envs": 16,
    "rollout_length": 256,
    "total_env_steps": 400_000,
    "epochs": 10,
    "num_minibatches": 16,
    "lr": 1e-3,
    "critic_lr": 1e-3,
    "anneal_lr": True,
    "gamma": 0.9,
    "gae_lambda": 0.95,
    "entropy_coef": 0.0,
    "layer_norm": False,
    "eval_episodes": 100,
}
