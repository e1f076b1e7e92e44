"""Stable-Baselines3 PPO, unmodified, on war-envs' CartPole-v1 (or any classic-control id).

``war_train.adapters.sb3.SB3VecEnv("CartPole-v1", num_envs=8)`` is a real SB3 ``VecEnv``: the 8
worlds are one batched env (one Warp kernel pipeline per ``step_wait``), and each world is one
SB3 sub-env with Gymnasium's own spaces (``Box(4,)`` observations, ``Discrete(2)`` actions).
PPO uses RL Zoo's CartPole-v1 hyperparameters; the trained policy is then played greedily on
fresh worlds seeded apart from training (``evaluate_policy``).

    python examples/sb3_classic_control.py                          # CartPole-v1, 100 k steps
    python examples/sb3_classic_control.py --scenario Acrobot-v1 --total-steps 200000
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: sb3_classic_control.py\n"
          "  shows: Stable-Baselines3 PPO (unmodified) on war_train.adapters.sb3.SB3VecEnv over a classic-control env")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="CartPole-v1", help="a classic-control id (default: CartPole-v1)")
    parser.add_argument("--device", default="cpu", help="device of the env and of PPO's networks (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=8, help="worlds, one SB3 sub-env each (default: 8)")
    parser.add_argument("--total-steps", type=int, default=100_000, help="env steps summed over worlds (default: 100,000)")
    parser.add_argument("--n-steps", type=int, default=32, help="PPO rollout length per sub-env (default: 32, RL Zoo's)")
    parser.add_argument("--eval-episodes", type=int, default=20, help="greedy evaluation episodes (default: 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecMonitor

    from war_train.adapters.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    venv = VecMonitor(SB3VecEnv(args.scenario, num_envs=args.num_envs, seed=args.seed, device=args.device))
    print(f"{args.scenario}: {venv.num_envs} worlds, observation {venv.observation_space}, action {venv.action_space}")
    # RL Zoo's CartPole-v1 PPO: n_envs 8, n_steps 32, batch 256, 20 epochs, gamma 0.98, lambda 0.8,
    # lr 1e-3 linearly annealed, clip 0.2 annealed, entropy 0
    schedule = lambda start: (lambda progress: progress * start)  # noqa: E731
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=min(256, args.n_steps * venv.num_envs),
                n_epochs=20, gamma=0.98, gae_lambda=0.8, learning_rate=schedule(1e-3), clip_range=schedule(0.2),
                ent_coef=0.0, seed=args.seed, device=args.device, verbose=0)
    t0 = time.perf_counter()
    model.learn(args.total_steps)
    wall = time.perf_counter() - t0
    print(f"PPO: {model.num_timesteps:,} env steps in {wall:.1f} s ({model.num_timesteps / wall:,.0f} steps/s)")
    venv.close()
    evaluation = VecMonitor(SB3VecEnv(args.scenario, num_envs=1, seed=args.seed + 10_000, device=args.device))
    mean, std = evaluate_policy(model, evaluation, n_eval_episodes=args.eval_episodes, deterministic=True)
    print(f"greedy return over {args.eval_episodes} episodes (worlds seeded apart from training): {mean:.1f} +- {std:.1f}")
    evaluation.close()


if __name__ == "__main__":
    main()
