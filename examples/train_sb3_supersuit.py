"""Stable-Baselines3 PPO through SuperSuit on the PettingZoo ``war_envs.parallel_env``.

The usual way PettingZoo environments are trained with SB3, unchanged:
``supersuit.pettingzoo_env_to_vec_env_v1`` turns one ``ParallelEnv`` (one world) into a vector
env over its agents, and ``concat_vec_envs_v1(..., num_cpus=0, base_class="stable_baselines3")``
copies it ``--num-envs`` times.  Scenarios whose groups observe different sizes get
``pad_observations_v0``.

SuperSuit's known limits, handled here: its vec env has no ``seed()`` (so no
``PPO(seed=...)``; torch is seeded directly), and its copies are pickled clones that would all
replay the stream of one ``seed=`` given to ``parallel_env`` — so the worlds are seeded once
through the ``ConcatVecEnv`` (copy ``i`` gets ``seed + i``).  It never sets
``TimeLimit.truncated``, so PPO treats time limits as terminations (no bootstrap), and every
step is a Python loop over worlds: this is the slow path (``train_sb3_native.py`` is the fast
one; see docs/integrations.md for the measured speeds).

    python examples/train_sb3_supersuit.py --num-envs 8 --total-steps 20000
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: train_sb3_supersuit.py\n"
          "  shows: Stable-Baselines3 PPO through SuperSuit (pettingzoo_env_to_vec_env_v1 + concat_vec_envs_v1) "
          "on war_envs.parallel_env")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="device of each one-world env and of PPO (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=8, help="worlds: copies of the ParallelEnv (default: 8)")
    parser.add_argument("--total-steps", type=int, default=20_000,
                        help="env steps summed over worlds; SB3's total_timesteps = this x agents (default: 20,000)")
    parser.add_argument("--n-steps", type=int, default=32, help="PPO rollout length per sub-env (default: 32)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import warnings

    import numpy as np
    import supersuit as ss
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    import war_envs

    # SB3 warns that SuperSuit's vec env defines no render_mode (SuperSuit's, harmless)
    warnings.filterwarnings("ignore", message="The `render_mode` attribute is not defined")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = war_envs.parallel_env(args.scenario, device=args.device)
    agents = len(env.possible_agents)
    if len({env.observation_space(a).shape for a in env.possible_agents}) > 1:
        env = ss.pad_observations_v0(env)
    vec = ss.pettingzoo_env_to_vec_env_v1(env)
    venv = ss.concat_vec_envs_v1(vec, args.num_envs, num_cpus=0, base_class="stable_baselines3")
    venv.venv.reset(seed=args.seed)  # the ConcatVecEnv: copy i (one world) gets seed + i
    venv = VecMonitor(venv)
    print(f"{args.scenario}: {args.num_envs} worlds (one ParallelEnv each) x {agents} agents = "
          f"{venv.num_envs} SB3 sub-envs, observation {venv.observation_space.shape}, action {venv.action_space}")
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=min(1024, args.n_steps * venv.num_envs),
                n_epochs=4, learning_rate=1e-3, gamma=0.95, device=args.device, verbose=0)  # no seed=: see above
    t0 = time.perf_counter()
    model.learn(args.total_steps * agents)
    wall = time.perf_counter() - t0
    returns = [ep["r"] for ep in model.ep_info_buffer]
    print(f"PPO: {model.num_timesteps:,} agent steps ({model.num_timesteps // agents:,} env steps) in {wall:.1f} s, "
          f"{model.num_timesteps / wall:,.0f} agent-steps/s")
    if returns:
        print(f"mean per-agent episode return over the last {len(returns)} episodes: {np.mean(returns):.2f}")
    else:
        print("no episode finished yet (raise --total-steps)")
    venv.close()


if __name__ == "__main__":
    main()
