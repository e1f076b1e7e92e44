"""TorchRL's multi-agent PPO tutorial on Spread-v0, with only the env construction changed.

TorchRL's tutorial "Multi-Agent Reinforcement Learning (PPO) with TorchRL"
(``tutorials/sphinx-tutorials/multiagent_ppo.py`` in pytorch/rl) trains MAPPO on VMAS's
*navigation*.  This script is that flow, step by step, on war-envs' continuous Spread-v0.  The
one line that differs is the env construction in ``make_env``: the tutorial's

    VmasEnv(scenario="navigation", num_envs=num_envs, continuous_actions=True,
            max_steps=max_steps, device=device, n_agents=n_agents)

becomes

    TorchRLEnv("Spread-v0", num_envs=num_envs, continuous_actions=True,
               max_cycles=max_steps, device=device, N=n_agents, seed=seed,
               group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)

(``group_map`` names the single group ``"agents"``, VMAS's name, which the tutorial writes in
its keys).  Everything else is the tutorial's: ``RewardSum`` into ``("agents",
"episode_reward")``, ``check_env_specs``; a parameter-shared ``MultiAgentMLP`` (depth 2, 256
cells, Tanh) + ``NormalParamExtractor`` inside a ``ProbabilisticActor`` with a ``TanhNormal``
bounded by the unbatched action spec; a centralised shared ``MultiAgentMLP`` critic;
``Collector`` (``SyncDataCollector``); a ``ReplayBuffer`` over ``LazyTensorStorage`` with
``SamplerWithoutReplacement``; ``ClipPPOLoss`` (no advantage normalisation) with GAE; the
loop that expands ``done``/``terminated`` to the reward's shape, computes GAE without
gradients, and runs epochs of clipped-gradient minibatch updates.  Its hyperparameters are
the defaults here (6,000 frames per batch, 30 epochs, minibatches of 400, lr 3e-4, gamma
0.99, lambda 0.9, clip 0.2, entropy 1e-4, 100-step episodes, 3 agents); the budget flags
change the number of iterations and the batch.

Spread-v0's reward is mpe2's (``-sum of landmark distances`` shared half/half with the
collision penalty), so the episode rewards are not VMAS navigation's; Spread-v0 truncates at
``max_cycles`` (a real ``truncated`` key) where VMAS reports ``terminated``, so GAE
bootstraps at the time limit.

    python examples/torchrl_mappo_tutorial.py                       # the tutorial's 5 iterations
    python examples/torchrl_mappo_tutorial.py --iterations 50 --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import platform
import sys
import time
import warnings

BANNER = ("war-envs example: torchrl_mappo_tutorial.py\n"
          "  shows: TorchRL's multi-agent PPO tutorial (MultiAgentMLP, TanhNormal, Collector, ReplayBuffer, "
          "ClipPPOLoss + GAE) on continuous Spread-v0 via TorchRLEnv")


@dataclasses.dataclass
class TutorialConfig:
    """The tutorial's hyperparameters (its defaults) plus the budget and the seed."""

    num_envs: int = 60           # the tutorial's num_vmas_envs = frames_per_batch // max_steps
    max_steps: int = 100         # episode length (Spread-v0's max_cycles)
    n_iters: int = 5             # sampling + training iterations
    n_agents: int = 3
    num_epochs: int = 30
    minibatch_size: int = 400
    lr: float = 3e-4
    max_grad_norm: float = 1.0
    clip_epsilon: float = 0.2
    gamma: float = 0.99
    lmbda: float = 0.9
    entropy_eps: float = 1e-4
    seed: int = 0
    device: str = "cpu"

    @property
    def frames_per_batch(self) -> int:
        return self.num_envs * self.max_steps

    @property
    def total_frames(self) -> int:
        return self.frames_per_batch * self.n_iters

    def check(self) -> None:
        for name in ("num_envs", "max_steps", "n_iters", "n_agents", "num_epochs", "minibatch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
        if self.minibatch_size > self.frames_per_batch:
            raise ValueError(f"minibatch_size: expected at most frames_per_batch = num_envs * max_steps = "
                             f"{self.frames_per_batch}, got {self.minibatch_size}")


def make_env(cfg: TutorialConfig):
    """The tutorial's env, built on war-envs: the only line that differs from the tutorial."""
    from torchrl.envs.utils import MarlGroupMapType

    from war_train.adapters.torchrl import TorchRLEnv

    return TorchRLEnv("Spread-v0", num_envs=cfg.num_envs, continuous_actions=True, max_cycles=cfg.max_steps,
                      device=cfg.device, N=cfg.n_agents, seed=cfg.seed, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP)


def build(cfg: TutorialConfig, env_fn=make_env):
    """Env (``env_fn(cfg)``, default ``make_env``), policy, critic, collector, replay buffer,
    loss and optimiser, as the tutorial builds them (seeded with ``cfg.seed``).  Returns them in
    a ``SimpleNamespace``."""
    import types

    import torch
    from tensordict.nn import TensorDictModule
    from tensordict.nn.distributions import NormalParamExtractor
    from torchrl.data.replay_buffers import ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.data.replay_buffers.storages import LazyTensorStorage
    from torchrl.envs import RewardSum, TransformedEnv
    from torchrl.envs.utils import check_env_specs
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor, TanhNormal
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    try:  # torchrl >= 0.12 renamed SyncDataCollector to Collector
        from torchrl.collectors import Collector
    except ImportError:  # pragma: no cover - older torchrl
        from torchrl.collectors import SyncDataCollector as Collector

    cfg.check()
    torch.manual_seed(cfg.seed)
    device = torch.device(cfg.device)

    env = env_fn(cfg)
    env = TransformedEnv(env, RewardSum(in_keys=[env.reward_key], out_keys=[("agents", "episode_reward")]))
    check_env_specs(env, seed=cfg.seed)

    # actor: per-agent observation -> loc and scale of a TanhNormal over the agent's action
    n_obs = env.observation_spec["agents", "observation"].shape[-1]
    n_act = env.full_action_spec[env.action_key].shape[-1]
    actor_net = torch.nn.Sequential(
        MultiAgentMLP(n_agent_inputs=n_obs, n_agent_outputs=2 * n_act, n_agents=env.n_agents, centralised=False,
                      share_params=True, device=device, depth=2, num_cells=256, activation_class=torch.nn.Tanh),
        NormalParamExtractor(),
    )
    actor_module = TensorDictModule(actor_net, in_keys=[("agents", "observation")],
                                    out_keys=[("agents", "loc"), ("agents", "scale")])
    action_space = env.full_action_spec_unbatched[env.action_key].space
    policy = ProbabilisticActor(
        module=actor_module, spec=env.action_spec_unbatched, in_keys=[("agents", "loc"), ("agents", "scale")],
        out_keys=[env.action_key], distribution_class=TanhNormal,
        distribution_kwargs={"low": action_space.low, "high": action_space.high}, return_log_prob=True)

    # critic (MAPPO): every agent's value from all agents' observations, parameters shared
    critic_net = MultiAgentMLP(n_agent_inputs=n_obs, n_agent_outputs=1, n_agents=env.n_agents, centralised=True,
                               share_params=True, device=device, depth=2, num_cells=256,
                               activation_class=torch.nn.Tanh)
    critic = TensorDictModule(critic_net, in_keys=[("agents", "observation")], out_keys=[("agents", "state_value")])

    collector = Collector(env, policy, device=device, storing_device=device,
                          frames_per_batch=cfg.frames_per_batch, total_frames=cfg.total_frames)
    replay_buffer = ReplayBuffer(storage=LazyTensorStorage(cfg.frames_per_batch, device=device),
                                 sampler=SamplerWithoutReplacement(), batch_size=cfg.minibatch_size)

    loss_module = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=cfg.clip_epsilon,
                              entropy_coeff=cfg.entropy_eps, normalize_advantage=False)
    loss_module.set_keys(reward=env.reward_key, action=env.action_key, value=("agents", "state_value"),
                         done=("agents", "done"), terminated=("agents", "terminated"))
    loss_module.make_value_estimator(ValueEstimators.GAE, gamma=cfg.gamma, lmbda=cfg.lmbda)
    optim = torch.optim.Adam(loss_module.parameters(), cfg.lr)
    return types.SimpleNamespace(env=env, policy=policy, critic=critic, collector=collector,
                                 replay_buffer=replay_buffer, loss_module=loss_module, optim=optim)


def train(cfg: TutorialConfig, log=print, env_fn=make_env) -> dict:
    """Run the tutorial's training loop on ``env_fn(cfg)`` (default ``make_env``); returns the per-iteration mean episode reward and
    losses, the trained ``policy`` / ``critic`` and the ``last_batch`` collected."""
    import torch
    from tensordict.nn import set_composite_lp_aggregate

    # per-agent log-probs (the tutorial sets this globally; scoped here)
    with set_composite_lp_aggregate(False):
        parts = build(cfg, env_fn)
        env, collector, loss_module, optim = parts.env, parts.collector, parts.loss_module, parts.optim
        GAE = loss_module.value_estimator
        rewards, losses, frames = [], [], 0
        t0 = time.perf_counter()
        for i, data in enumerate(collector):
            # GAE expects done / terminated with the reward's shape [..., n_agents, 1]
            shape = data.get_item_shape(("next", env.reward_key))
            data.set(("next", "agents", "done"), data.get(("next", "done")).unsqueeze(-1).expand(shape))
            data.set(("next", "agents", "terminated"), data.get(("next", "terminated")).unsqueeze(-1).expand(shape))
            with torch.no_grad():
                GAE(data, params=loss_module.critic_network_params,
                    target_params=loss_module.target_critic_network_params)
            parts.replay_buffer.extend(data.reshape(-1))
            sums = {"loss_objective": 0.0, "loss_critic": 0.0, "loss_entropy": 0.0}
            updates = 0
            for _ in range(cfg.num_epochs):
                for _ in range(cfg.frames_per_batch // cfg.minibatch_size):
                    out = loss_module(parts.replay_buffer.sample())
                    loss = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(loss_module.parameters(), cfg.max_grad_norm)
                    optim.step()
                    optim.zero_grad()
                    for k in sums:
                        sums[k] += out[k].item()
                    updates += 1
            collector.update_policy_weights_()

            done = data.get(("next", "agents", "done"))
            finished = data.get(("next", "agents", "episode_reward"))[done]
            reward = finished.mean().item() if finished.numel() else float("nan")
            frames += data.numel()
            rewards.append(reward)
            losses.append({k: s / updates for k, s in sums.items()})
            log(f"iteration {i + 1:3d}/{cfg.n_iters}: {frames:>9,} frames, episode_reward_mean {reward:9.3f}, "
                f"loss_objective {losses[-1]['loss_objective']:+.4f}, loss_critic {losses[-1]['loss_critic']:.4f} "
                f"({time.perf_counter() - t0:.0f} s)")
        collector.shutdown()
        env.close()
    return {"episode_reward_mean": rewards, "losses": losses, "frames": frames, "wall_s": time.perf_counter() - t0,
            "policy": parts.policy, "critic": parts.critic, "last_batch": data}


def _versions() -> dict:
    import tensordict
    import torch
    import torchrl
    import warp

    import war_envs
    return {"python": platform.python_version(), "war_envs": war_envs.__version__, "warp": warp.config.version,
            "torch": torch.__version__, "torchrl": torchrl.__version__, "tensordict": tensordict.__version__}


def main(argv=None) -> None:
    defaults = TutorialConfig()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="device of env, networks and collector (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=defaults.num_envs,
                        help=f"worlds; frames per batch = num-envs x max-steps (default: {defaults.num_envs})")
    parser.add_argument("--max-steps", type=int, default=defaults.max_steps,
                        help=f"episode length, Spread-v0's max_cycles (default: {defaults.max_steps})")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=int, default=None,
                        help=f"sampling + training iterations (default: the tutorial's {defaults.n_iters})")
    budget.add_argument("--total-steps", type=int, default=None,
                        help="total frames instead of --iterations (rounded down to whole batches, at least one)")
    parser.add_argument("--epochs", type=int, default=defaults.num_epochs, help="passes over each batch (default: 30)")
    parser.add_argument("--minibatch-size", type=int, default=defaults.minibatch_size, help="(default: 400)")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="torch and env seed (default: 0)")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the run's results to PATH")
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
    print(f"Spread-v0 (continuous), {cfg.num_envs} worlds x {cfg.max_steps} steps = {cfg.frames_per_batch:,} "
          f"frames per batch, {cfg.n_iters} iterations, seed {cfg.seed}", flush=True)
    result = train(cfg, log=lambda line: print(line, flush=True))
    rewards = result["episode_reward_mean"]
    print(f"done: episode_reward_mean {rewards[0]:.3f} (first iteration) -> {rewards[-1]:.3f} (last), "
          f"{result['frames']:,} frames in {result['wall_s']:.0f} s")
    if args.json:
        argv = sys.argv[1:] if argv is None else argv
        record = {"command": " ".join(["python", "examples/torchrl_mappo_tutorial.py", *argv]),
                  "date": datetime.datetime.now().isoformat(timespec="seconds"), "versions": _versions(),
                  "scenario": "Spread-v0", "continuous_actions": True,
                  "config": dataclasses.asdict(cfg) | {"frames_per_batch": cfg.frames_per_batch,
                                                       "total_frames": cfg.total_frames},
                  "frames": result["frames"], "wall_s": round(result["wall_s"], 1),
                  "torch_threads": torch.get_num_threads(),
                  "episode_reward_mean": rewards, "losses": result["losses"]}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
