"""Stable-Baselines3 PPO as a centralized controller on the flat joint view, unmodified.

``gym.make("war_envs/Spread-v0", flat=True)`` is one world as a single-agent Gymnasium env with
flat spaces: the observation is every agent's observation concatenated (``Box``, float32),
the action a ``MultiDiscrete`` with one entry per agent (or, with ``--continuous``, one ``Box``
of every agent's action vector), the reward the sum over agents.  So SB3's plain
``PPO("MlpPolicy", env)`` (and CleanRL's single-agent scripts) trains one policy that picks
every agent's action — a standard centralized baseline — with no wrapper.  ``--num-envs``
copies run in SB3's ``DummyVecEnv`` (``make_vec_env``).

    python examples/sb3_flat_joint.py --total-steps 100000
    python examples/sb3_flat_joint.py --scenario SpeakerListener-v0 --total-steps 100000
    python examples/sb3_flat_joint.py --continuous
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: sb3_flat_joint.py\n"
          "  shows: Stable-Baselines3 PPO('MlpPolicy') on gym.make(id, flat=True) (flat joint view, centralized)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="device of the env and of PPO's networks (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=4, help="flat joint envs (one world each) in SB3's DummyVecEnv "
                                                                "(default: 4)")
    parser.add_argument("--total-steps", type=int, default=20_000, help="env steps summed over envs (default: 20,000)")
    parser.add_argument("--n-steps", type=int, default=256, help="PPO rollout length per env (default: 256)")
    parser.add_argument("--continuous", action="store_true", help="continuous_actions=True: one Box joint action")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import gymnasium as gym
    import numpy as np
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    import war_envs  # noqa: F401  (registers the war_envs/<Id> Gymnasium ids)

    torch.set_num_threads(1)
    kwargs = {"flat": True, "device": args.device}
    if args.continuous:
        kwargs["continuous_actions"] = True
    probe = gym.make(f"war_envs/{args.scenario}", **kwargs)
    print(f"{args.scenario} (flat joint view): {len(probe.unwrapped.agents)} agents, observation "
          f"{probe.observation_space}, action {probe.action_space}")
    probe.close()
    venv = make_vec_env(f"war_envs/{args.scenario}", n_envs=args.num_envs, seed=args.seed, env_kwargs=kwargs)
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=min(256, args.n_steps * args.num_envs),
                n_epochs=4, learning_rate=1e-3, gamma=0.95, seed=args.seed, device=args.device, verbose=0)
    t0 = time.perf_counter()
    model.learn(args.total_steps)
    wall = time.perf_counter() - t0
    returns = [ep["r"] for ep in model.ep_info_buffer]  # joint (summed over agents) returns, last 100
    print(f"PPO: {model.num_timesteps:,} env steps in {wall:.1f} s, {model.num_timesteps / wall:,.0f} env-steps/s")
    if returns:
        print(f"mean joint episode return (sum over agents) over the last {len(returns)} episodes: "
              f"{np.mean(returns):.2f}")
    else:
        print("no episode finished yet (raise --total-steps)")
    venv.close()


if __name__ == "__main__":
    main()
