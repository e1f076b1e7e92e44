"""CartPole-v1 (Gymnasium's classic control, one agent): PPO to the maximum return of 500.

CleanRL's CartPole settings on war-train's trainer: 8 worlds x 128 steps per update, 4 epochs x
4 minibatches, lr 2.5e-4 for actor and critic annealed to 0, entropy 0.01, a 2 x 64 tanh MLP
without LayerNorm, 300 k env steps (about a minute on one core).  Tried first (seed 1): the
trainer's defaults with 32 worlds x 64 steps, 10 epochs, lr 1e-3 and LayerNorm plateaued at a
greedy return of 177 after 400 k steps.  Measured over independent seeds in
``benchmarks/results/learning_cartpole.json`` (docs/classic_control.md).
"""

DESCRIPTION = "CartPole-v1: PPO (CleanRL's settings) to the greedy return of 500 in 300 k env steps"

PRESET = {
    "scenario": "CartPole-v1",
    "num_envs": 8,
    "rollout_length": 128,
    "total_env_steps": 300_000,
    "epochs": 4,
    "num_minibatches": 4,
    "lr": 2.5e-4,
    "critic_lr": 2.5e-4,
    "anneal_lr": True,
    "entropy_coef": 0.01,
    "layer_norm": False,
    "eval_episodes": 100,
}
