"""TorchRL: a collector over ``TorchRLEnv`` and MAPPO updates with TorchRL's own components.

``war_train.adapters.torchrl.TorchRLEnv`` is an ``EnvBase`` in VMAS's layout (batch ``[E]``,
per-group keys ``(group, "observation" | "action" | "reward" | "done" | ...)``, a real
``truncated`` key, ``"state"``), so the pieces of TorchRL's multi-agent PPO tutorial plug in
unchanged: per group a parameter-shared ``MultiAgentMLP`` actor inside a
``ProbabilisticActor`` (categorical over the 5 discrete actions) and a centralised
``MultiAgentMLP`` critic, a ``Collector`` (``SyncDataCollector`` before torchrl 0.12) that
resets finished worlds through one masked batched reset, ``GAE`` and ``ClipPPOLoss``.  Each
collected batch gives one MAPPO update per group (``--epochs`` passes over minibatches).

    python examples/torchrl_collector.py --num-envs 64 --total-steps 200000
    python examples/torchrl_collector.py --scenario PredatorPrey-v0     # two groups, two losses

Discrete-action scenarios only (Spread-v0, PredatorPrey-v0, Command-v0); Tag-v0's
MultiDiscrete actions would need a multi-categorical head.
"""

from __future__ import annotations

import argparse
import time
import warnings

BANNER = ("war-envs example: torchrl_collector.py\n"
          "  shows: TorchRL Collector over war_train.adapters.torchrl.TorchRLEnv + MAPPO updates "
          "(MultiAgentMLP, GAE, ClipPPOLoss)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="a Discrete-action war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="device of env, networks and collector (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=32, help="worlds (default: 32)")
    parser.add_argument("--total-steps", type=int, default=32_000,
                        help="env steps summed over worlds = the collector's total_frames (default: 32,000)")
    parser.add_argument("--rollout", type=int, default=25, help="steps per world per collected batch (default: 25)")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each batch (default: 4)")
    parser.add_argument("--minibatches", type=int, default=4, help="minibatches per pass (default: 4)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # torchrl's own deprecations
    warnings.filterwarnings("ignore", category=FutureWarning)

    import gymnasium
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.envs.utils import check_env_specs
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    try:  # torchrl >= 0.12 renamed SyncDataCollector to Collector
        from torchrl.collectors import Collector
    except ImportError:  # pragma: no cover - older torchrl
        from torchrl.collectors import SyncDataCollector as Collector

    from war_train.adapters.torchrl import TorchRLEnv

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    device = torch.device(args.device)
    env = TorchRLEnv(args.scenario, num_envs=args.num_envs, seed=args.seed, device=args.device)
    check_env_specs(env, seed=args.seed)
    groups = list(env.batched.groups)
    for g, spec in env.batched.groups.items():
        if not isinstance(spec.action_space, gymnasium.spaces.Discrete):
            raise ValueError(f"--scenario {args.scenario}: group {g!r} acts in {spec.action_space}; this example "
                             "needs Discrete actions (Spread-v0, PredatorPrey-v0, Command-v0)")
    print(f"{args.scenario}: {args.num_envs} worlds, groups "
          + ", ".join(f"{g} {tuple(env.observation_spec[g, 'observation'].shape[1:])}" for g in groups)
          + "; check_env_specs passed")

    actors, losses, optimizers = {}, {}, {}
    for g in groups:
        n_agents, obs_dim = env.observation_spec[g, "observation"].shape[-2:]
        n_actions = env.full_action_spec[g, "action"].space.n
        net = MultiAgentMLP(n_agent_inputs=obs_dim, n_agent_outputs=n_actions, n_agents=n_agents,
                            centralised=False, share_params=True, device=device, depth=2, num_cells=64,
                            activation_class=nn.Tanh)
        actor = ProbabilisticActor(
            module=TensorDictModule(net, in_keys=[(g, "observation")], out_keys=[(g, "logits")]),
            spec=env.full_action_spec[g, "action"], in_keys=[(g, "logits")], out_keys=[(g, "action")],
            distribution_class=torch.distributions.Categorical, return_log_prob=True,
            log_prob_key=(g, "sample_log_prob"))
        critic_net = MultiAgentMLP(n_agent_inputs=obs_dim, n_agent_outputs=1, n_agents=n_agents,
                                   centralised=True, share_params=True, device=device, depth=2, num_cells=64,
                                   activation_class=nn.Tanh)
        critic = TensorDictModule(critic_net, in_keys=[(g, "observation")], out_keys=[(g, "state_value")])
        loss = ClipPPOLoss(actor_network=actor, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01,
                           normalize_advantage=False)
        loss.set_keys(reward=(g, "reward"), action=(g, "action"), sample_log_prob=(g, "sample_log_prob"),
                      value=(g, "state_value"), done=(g, "done"), terminated=(g, "terminated"))
        loss.make_value_estimator(ValueEstimators.GAE, gamma=0.95, lmbda=0.95)
        actors[g], losses[g] = actor, loss
        optimizers[g] = torch.optim.Adam(loss.parameters(), lr=3e-4)

    policy = TensorDictSequential(*actors.values())
    frames_per_batch = args.num_envs * args.rollout
    collector = Collector(env, policy, frames_per_batch=frames_per_batch,
                          total_frames=max(frames_per_batch, args.total_steps), device=device)
    t0 = time.perf_counter()
    frames = 0
    for i, batch in enumerate(collector):
        frames += batch.numel()
        returns = {}
        for g in groups:
            with torch.no_grad():
                losses[g].value_estimator(batch, params=losses[g].critic_network_params,
                                          target_params=losses[g].target_critic_network_params)
            flat = batch.reshape(-1)
            size = max(1, flat.numel() // args.minibatches)
            for _ in range(args.epochs):
                perm = torch.randperm(flat.numel(), device=flat.device)
                for start in range(0, flat.numel(), size):
                    out = losses[g](flat[perm[start:start + size]])
                    total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                    optimizers[g].zero_grad()
                    total.backward()
                    torch.nn.utils.clip_grad_norm_(losses[g].parameters(), 1.0)
                    optimizers[g].step()
            returns[g] = batch["next", g, "reward"].mean().item() * env.batched.max_cycles
        collector.update_policy_weights_()
        print(f"batch {i + 1:3d}: {frames:>9,} env steps, {frames / (time.perf_counter() - t0):>8,.0f} steps/s, "
              + ", ".join(f"{g} reward/step x max_cycles {r:.2f}" for g, r in returns.items()), flush=True)
    collector.shutdown()
    env.close()
    print(f"done: {frames:,} env steps, {i + 1} MAPPO updates per group in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
