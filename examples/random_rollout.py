"""Random rollout: throughput of a batched scenario stepped with uniformly random actions.

Builds ``--num-envs`` worlds of ``--scenario`` with ``war_envs.make`` (one Warp kernel pipeline
steps every world), draws random actions as torch tensors on the env's device (Discrete,
MultiDiscrete or Box, whatever each group's action space is), and reports env-steps/s and
agent-steps/s, plus the mean reward and the number of finished episodes.  The first steps
(kernel compilation and warm-up) are not timed.

    python examples/random_rollout.py --scenario Spread-v0 --num-envs 4096 --total-steps 2000000
    python examples/random_rollout.py --scenario Tag-v0 --num-envs 64 --device cuda:0
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: random_rollout.py\n"
          "  shows: env throughput of a batched scenario with random actions (batch API, torch tensors)")


def random_actions(env, generator):
    """One random action per agent of every world, as the batch API takes them."""
    import gymnasium
    import torch

    out = {}
    for g, spec in env.groups.items():
        shape = (env.num_envs, spec.n_agents)
        space = spec.action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            out[g] = torch.randint(int(space.start), int(space.start + space.n), shape, generator=generator)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            nvec = torch.as_tensor(space.nvec, dtype=torch.float64)
            u = torch.rand(shape + nvec.shape, generator=generator, dtype=torch.float64)
            out[g] = (u * nvec).long()
        elif isinstance(space, gymnasium.spaces.Box):
            low = torch.as_tensor(space.low, dtype=torch.float32)
            high = torch.as_tensor(space.high, dtype=torch.float32)
            out[g] = low + (high - low) * torch.rand(shape + tuple(space.shape), generator=generator)
        else:
            raise TypeError(f"group {g!r}: no random sampler for action space {space}")
    return {g: a.to(env.torch_device) for g, a in out.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda:N (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=1024, help="worlds stepped together (default: 1024)")
    parser.add_argument("--total-steps", type=int, default=1_000_000,
                        help="env steps to time, summed over worlds (default: 1,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import torch

    import war_envs

    env = war_envs.make(args.scenario, num_envs=args.num_envs, device=args.device, seed=args.seed)
    agents = sum(s.n_agents for s in env.groups.values())
    print(f"{args.scenario}: {args.num_envs} worlds x {agents} agents on {env.torch_device}; groups "
          + ", ".join(f"{g}: {s.n_agents} x obs {s.obs_dim}, actions {s.action_space}" for g, s in env.groups.items()))
    gen = torch.Generator().manual_seed(args.seed)
    env.reset()
    for _ in range(3):  # compile and warm up, untimed
        env.step(random_actions(env, gen))
    steps = max(1, args.total_steps // args.num_envs)
    # draw the actions up front so the timed loop measures the env, not torch's RNG
    pool = [random_actions(env, gen) for _ in range(min(steps, 16))]
    reward_sum = torch.zeros((), dtype=torch.float64, device=env.torch_device)
    episodes = torch.zeros((), dtype=torch.int64, device=env.torch_device)
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)
    t0 = time.perf_counter()
    for i in range(steps):
        _, rew, term, trunc, _ = env.step(pool[i % len(pool)])
        reward_sum += sum(r.sum(dtype=torch.float64) for r in rew.values())
        first = next(iter(term))
        episodes += (term[first][:, 0] | trunc[first][:, 0]).sum()
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)
    wall = time.perf_counter() - t0
    env_steps = steps * args.num_envs
    print(f"{env_steps:,} env steps ({steps} batched steps) in {wall:.3f} s: "
          f"{env_steps / wall:,.0f} env-steps/s, {env_steps * agents / wall:,.0f} agent-steps/s")
    print(f"mean reward per agent-step {reward_sum.item() / (env_steps * agents):.4f}, "
          f"{int(episodes.item())} episodes finished")
    env.close()


if __name__ == "__main__":
    main()
