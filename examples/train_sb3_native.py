"""Stable-Baselines3 PPO on the native ``SB3VecEnv`` (agents as environments, one batched step).

``war_train.adapters.sb3.SB3VecEnv`` is a real SB3 ``VecEnv`` over ``--num-envs`` worlds: every
agent of every world is one sub-env (``E x A`` of them, one shared policy), and each
``step_wait`` is one Warp kernel pipeline for all worlds.  It runs under ``VecMonitor`` (per
agent episode returns) and, with ``--normalize``, ``VecNormalize``.  Episodes end by time limit,
reported as ``TimeLimit.truncated`` so PPO bootstraps them.  Scenarios whose groups observe
different sizes (PredatorPrey-v0) get ``pad_observations=True``.

    python examples/train_sb3_native.py --num-envs 64 --total-steps 100000   # Spread: -20.6 per agent (random -25.5)
    python examples/train_sb3_native.py --scenario PredatorPrey-v0 --normalize
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: train_sb3_native.py\n"
          "  shows: Stable-Baselines3 PPO on war_train.adapters.sb3.SB3VecEnv (native VecEnv, agents as sub-envs)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="device of the env and of PPO's networks (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=64, help="worlds (SB3 sees worlds x agents sub-envs; default: 64)")
    parser.add_argument("--total-steps", type=int, default=50_000,
                        help="env steps summed over worlds; SB3's total_timesteps = this x agents (default: 50,000)")
    parser.add_argument("--n-steps", type=int, default=32, help="PPO rollout length per sub-env (default: 32)")
    parser.add_argument("--normalize", action="store_true", help="wrap in VecNormalize (observations and rewards)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import numpy as np
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    import war_envs
    from war_train.adapters.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    probe = war_envs.make(args.scenario, num_envs=1)
    pad = len({s.obs_dim for s in probe.groups.values()}) > 1  # groups observe different sizes
    probe.close()
    env = SB3VecEnv(args.scenario, num_envs=args.num_envs, seed=args.seed, device=args.device, pad_observations=pad)
    venv = VecMonitor(env)
    if args.normalize:
        venv = VecNormalize(venv, gamma=0.95)
    agents = env.num_agents
    total_timesteps = args.total_steps * agents
    print(f"{args.scenario}: {args.num_envs} worlds x {agents} agents = {venv.num_envs} SB3 sub-envs, "
          f"observation {venv.observation_space.shape}{' (padded)' if pad else ''}, action {venv.action_space}")
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=min(1024, args.n_steps * venv.num_envs),
                n_epochs=4, learning_rate=1e-3, gamma=0.95, seed=args.seed, device=args.device, verbose=0)
    t0 = time.perf_counter()
    model.learn(total_timesteps)
    wall = time.perf_counter() - t0
    returns = [ep["r"] for ep in model.ep_info_buffer]  # per agent (sub-env) episodes, last 100
    print(f"PPO: {model.num_timesteps:,} agent steps ({model.num_timesteps // agents:,} env steps) in {wall:.1f} s, "
          f"{model.num_timesteps / wall:,.0f} agent-steps/s")
    if returns:
        print(f"mean per-agent episode return over the last {len(returns)} episodes: {np.mean(returns):.2f}")
    else:
        print("no episode finished yet (raise --total-steps)")
    venv.close()


if __name__ == "__main__":
    main()
