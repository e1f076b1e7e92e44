"""skrl's MAPPO on ``SkrlMultiAgentEnv`` (the Isaac-Lab multi-agent env shape).

``war_train.adapters.skrl.SkrlMultiAgentEnv`` gives skrl what Isaac Lab's ``DirectMARLEnv``
gives it: ``possible_agents``, per-agent spaces, ``state()`` for the centralized critic, and
per-agent ``[E, ...]`` torch tensors from ``reset``/``step`` (``E = --num-envs`` worlds in one
batched step).  It is wrapped with ``wrap_env(env, wrapper="isaaclab-multi-agent")`` and
trained by ``skrl.multi_agents.torch.mappo.MAPPO`` under a ``SequentialTrainer``: per agent a
policy (categorical for Discrete actions, Gaussian with ``continuous_actions=True``,
multi-categorical for Tag-v0's MultiDiscrete) and a value model on the global state.

    python examples/skrl_mappo.py --num-envs 64 --total-steps 200000
    python examples/skrl_mappo.py --continuous

Notes: skrl 2.1's ``MultiAgentCfg`` needs its ``*_kwargs`` fields given per agent (its empty
defaults are rejected); its wrapper reseeds the env with ``skrl.config.torch.key`` (set here
with ``skrl.utils.set_seed``).  Keep ``time_limit_bootstrap`` off: as with Isaac Lab, the
observation after an episode's end is the next episode's first.
"""

from __future__ import annotations

import argparse
import time

BANNER = ("war-envs example: skrl_mappo.py\n"
          "  shows: skrl MAPPO (SequentialTrainer) on war_train.adapters.skrl.SkrlMultiAgentEnv "
          "via wrap_env(..., 'isaaclab-multi-agent')")


def build_models(env, device):
    """Per agent: a policy for its action space and a value model on the global state."""
    import gymnasium
    import torch
    from skrl.models.torch import CategoricalMixin, DeterministicMixin, GaussianMixin, Model, MultiCategoricalMixin
    from torch import nn

    def mlp(n_in, n_out):
        return nn.Sequential(nn.Linear(n_in, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, n_out))

    class CategoricalPolicy(CategoricalMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            CategoricalMixin.__init__(self, unnormalized_log_prob=True)
            self.net = mlp(self.num_observations, action_space.n)

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {}

    class MultiCategoricalPolicy(MultiCategoricalMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            MultiCategoricalMixin.__init__(self, unnormalized_log_prob=True)
            self.net = mlp(self.num_observations, int(sum(action_space.nvec)))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {}

    class GaussianPolicy(GaussianMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            GaussianMixin.__init__(self, clip_actions=True)
            self.net = nn.Sequential(mlp(self.num_observations, self.num_actions), nn.Sigmoid())  # Box(0, 1)
            self.log_std = nn.Parameter(torch.full((self.num_actions,), -1.0))

        def compute(self, inputs, role=""):
            return self.net(inputs["observations"]), {"log_std": self.log_std}

    class CentralValue(DeterministicMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = mlp(self.num_states, 1)

        def compute(self, inputs, role=""):
            return self.net(inputs["states"]), {}

    models = {}
    for a in env.possible_agents:
        space = env.action_space(a)
        policy_cls = {gymnasium.spaces.Discrete: CategoricalPolicy, gymnasium.spaces.Box: GaussianPolicy,
                      gymnasium.spaces.MultiDiscrete: MultiCategoricalPolicy}.get(type(space))
        if policy_cls is None:
            raise TypeError(f"agent {a!r}: no policy model for action space {space}")
        args = (env.observation_space(a), env.state_space(a), space, device)
        models[a] = {"policy": policy_cls(*args), "value": CentralValue(*args)}
    return models


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="device of env and models (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=32, help="worlds (default: 32)")
    parser.add_argument("--total-steps", type=int, default=32_000,
                        help="env steps summed over worlds; skrl's timesteps = this / num-envs (default: 32,000)")
    parser.add_argument("--rollouts", type=int, default=25, help="steps per world between MAPPO updates (default: 25)")
    parser.add_argument("--continuous", action="store_true", help="continuous_actions=True (Gaussian policies)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import torch
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.memories.torch import RandomMemory
    from skrl.multi_agents.torch.mappo import MAPPO, MAPPO_CFG
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils import set_seed

    from war_train.adapters.skrl import SkrlMultiAgentEnv

    class EpisodeReturns(SkrlMultiAgentEnv):
        """Records each finished world episode's return (mean over agents) as skrl steps it."""

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.running = torch.zeros(self.num_envs, device=self.device)
            self.finished: list[float] = []

        def step(self, actions):
            obs, rew, term, trunc, info = super().step(actions)
            self.running += torch.stack([r.reshape(-1) for r in rew.values()]).mean(0)
            first = self.possible_agents[0]
            done = (term[first] | trunc[first]).reshape(-1)
            self.finished += self.running[done].tolist()
            self.running[done] = 0.0
            return obs, rew, term, trunc, info

    set_seed(args.seed)  # also the seed skrl's wrapper resets the env with
    torch.set_num_threads(1)
    kwargs = {"continuous_actions": True} if args.continuous else {}
    raw = EpisodeReturns(args.scenario, num_envs=args.num_envs, seed=args.seed, device=args.device, **kwargs)
    env = wrap_env(raw, wrapper="isaaclab-multi-agent", verbose=False)
    print(f"{args.scenario}: {env.num_envs} worlds x {env.num_agents} agents; "
          + ", ".join(f"{a}: obs {env.observation_space(a).shape}, action {env.action_space(a)}"
                      for a in env.possible_agents[:2]) + (", ..." if env.num_agents > 2 else ""))
    models = build_models(env, env.device)
    memories = {a: RandomMemory(memory_size=args.rollouts, num_envs=env.num_envs, device=env.device)
                for a in env.possible_agents}
    per_agent = {a: {} for a in env.possible_agents}
    cfg = MAPPO_CFG(rollouts=args.rollouts, learning_epochs=4, mini_batches=2, discount_factor=0.95,
                    learning_rate=3e-4, learning_rate_scheduler_kwargs=dict(per_agent),
                    observation_preprocessor_kwargs=dict(per_agent), state_preprocessor_kwargs=dict(per_agent),
                    value_preprocessor_kwargs=dict(per_agent))
    cfg.experiment.write_interval = 0       # no TensorBoard files
    cfg.experiment.checkpoint_interval = 0  # no checkpoints
    agent = MAPPO(possible_agents=env.possible_agents, models=models, memories=memories,
                  observation_spaces=env.observation_spaces, state_spaces=env.state_spaces,
                  action_spaces=env.action_spaces, device=env.device, cfg=cfg)
    timesteps = max(args.rollouts, args.total_steps // args.num_envs)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True,
                                                            "disable_progressbar": True,
                                                            "close_environment_at_exit": False})
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    steps = timesteps * env.num_envs
    print(f"MAPPO: {timesteps} batched steps = {steps:,} env steps, {timesteps // args.rollouts} updates, "
          f"in {wall:.1f} s ({steps / wall:,.0f} env-steps/s)")
    done = raw.finished
    if done:
        k = max(1, min(len(done) // 2, 4 * args.num_envs))
        first, last = sum(done[:k]) / k, sum(done[-k:]) / k
        print(f"{len(done)} episodes; mean return per agent: first {k} episodes {first:.2f}, last {k} {last:.2f}")
    else:
        print("no episode finished yet (raise --total-steps)")
    env.close()
    raw.close()


if __name__ == "__main__":
    main()
