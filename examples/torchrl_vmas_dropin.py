"""TorchRL's multi-agent PPO tutorial on VMAS navigation, through war-envs' ``VmasEnv``: the
tutorial's env line with only its import changed.

TorchRL's tutorial "Multi-Agent Reinforcement Learning (PPO) with TorchRL" builds its env as

    from torchrl.envs.libs.vmas import VmasEnv
    env = VmasEnv(scenario="navigation", num_envs=num_envs, continuous_actions=True,
                  max_steps=max_steps, device=device, n_agents=n_agents)

Here the same line runs war-envs' Navigation-v0 (VMAS 1.5.2's navigation as Warp kernels):

    from war_train.adapters.torchrl import VmasEnv

``war_train.adapters.torchrl.VmasEnv`` takes ``torchrl.envs.libs.vmas.VmasEnv``'s arguments and
gives its keys, specs and batch layout exactly (``("agents", "observation" | "action" |
"reward" | "info")``, root ``done`` / ``terminated``, no ``truncated``), so the tutorial's flow
after the env line is unchanged.  That flow is ``examples/torchrl_mappo_tutorial.py``'s
(``RewardSum``, ``check_env_specs``, shared ``MultiAgentMLP`` actor with ``TanhNormal`` and
centralised critic, ``Collector``, ``ReplayBuffer``, ``ClipPPOLoss`` + GAE, the tutorial's
hyperparameters); only its env factory is swapped for the tutorial's own line.  The time limit
is ``terminated`` (VMAS's convention), so GAE does not bootstrap there, as in the tutorial.

    python examples/torchrl_vmas_dropin.py                   # the tutorial's 5 iterations
    python examples/torchrl_vmas_dropin.py --iterations 1 --num-envs 4 --max-steps 5 --epochs 1
"""

from __future__ import annotations

import argparse
import warnings

BANNER = ("war-envs example: torchrl_vmas_dropin.py\n"
          "  shows: TorchRL's multi-agent PPO tutorial on VMAS navigation with only the VmasEnv import changed "
          "(war_train.adapters.torchrl.VmasEnv: VmasEnv's keys, specs and layout)")


def make_env(cfg):
    """The tutorial's env line; only the import differs from the tutorial."""
    from war_train.adapters.torchrl import VmasEnv  # the tutorial: from torchrl.envs.libs.vmas import VmasEnv

    return VmasEnv(scenario="navigation", num_envs=cfg.num_envs, continuous_actions=True,
                   max_steps=cfg.max_steps, device=cfg.device, n_agents=cfg.n_agents)


def main(argv=None) -> None:
    from torchrl_mappo_tutorial import TutorialConfig, train  # beside this file: the tutorial's flow

    defaults = TutorialConfig()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="device of env, networks and collector (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=defaults.num_envs,
                        help=f"worlds; frames per batch = num-envs x max-steps (default: {defaults.num_envs})")
    parser.add_argument("--max-steps", type=int, default=defaults.max_steps,
                        help=f"episode length, VmasEnv's max_steps (default: {defaults.max_steps})")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=int, default=None,
                        help=f"sampling + training iterations (default: the tutorial's {defaults.n_iters})")
    budget.add_argument("--total-steps", type=int, default=None,
                        help="total frames instead of --iterations (rounded down to whole batches, at least one)")
    parser.add_argument("--epochs", type=int, default=defaults.num_epochs, help="passes over each batch (default: 30)")
    parser.add_argument("--minibatch-size", type=int, default=defaults.minibatch_size, help="(default: 400)")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="torch seed (default: 0)")
    args = parser.parse_args(argv)
    print(BANNER, flush=True)
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # torchrl's own deprecations
    warnings.filterwarnings("ignore", category=FutureWarning)

    import torch
    torch.set_num_threads(1)
    cfg = TutorialConfig(num_envs=args.num_envs, max_steps=args.max_steps, num_epochs=args.epochs,
                         minibatch_size=args.minibatch_size, seed=args.seed, device=args.device)
    if args.total_steps is not None:
        cfg.n_iters = max(1, args.total_steps // cfg.frames_per_batch)
    elif args.iterations is not None:
        cfg.n_iters = args.iterations
    print(f"VmasEnv('navigation') on war-envs, {cfg.n_agents} agents, {cfg.num_envs} worlds x {cfg.max_steps} "
          f"steps = {cfg.frames_per_batch:,} frames per batch, {cfg.n_iters} iterations, seed {cfg.seed}", flush=True)
    result = train(cfg, log=lambda line: print(line, flush=True), env_fn=make_env)
    rewards = result["episode_reward_mean"]
    print(f"done: episode_reward_mean {rewards[0]:.3f} (first iteration) -> {rewards[-1]:.3f} (last), "
          f"{result['frames']:,} frames in {result['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
