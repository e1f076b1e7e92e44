"""skrl: ``SkrlMultiAgentEnv`` has the Isaac-Lab multi-agent shape that skrl's
``isaaclab-multi-agent`` wrapper expects, agrees with the batch API, and skrl's MAPPO trains
on it for a few hundred timesteps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("skrl")

import torch.nn as nn  # noqa: E402
from skrl import config as skrl_config  # noqa: E402
from skrl.envs.wrappers.torch import wrap_env  # noqa: E402
from skrl.memories.torch import RandomMemory  # noqa: E402
from skrl.models.torch import CategoricalMixin, DeterministicMixin, GaussianMixin, Model  # noqa: E402
from skrl.multi_agents.torch.mappo import MAPPO, MAPPO_CFG  # noqa: E402
from skrl.trainers.torch import SequentialTrainer  # noqa: E402

import war_envs  # noqa: E402
from war_train.adapters.skrl import SkrlMultiAgentEnv  # noqa: E402


class CategoricalPolicy(CategoricalMixin, Model):
    def __init__(self, observation_space, state_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, state_space=state_space,
                       action_space=action_space, device=device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.Tanh(), nn.Linear(64, action_space.n))

    def compute(self, inputs, role=""):
        return self.net(inputs["observations"]), {}


class GaussianPolicy(GaussianMixin, Model):
    def __init__(self, observation_space, state_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, state_space=state_space,
                       action_space=action_space, device=device)
        GaussianMixin.__init__(self, clip_actions=True)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.Tanh(),
                                 nn.Linear(64, self.num_actions), nn.Sigmoid())
        self.log_std = nn.Parameter(torch.full((self.num_actions,), -1.0))

    def compute(self, inputs, role=""):
        return self.net(inputs["observations"]), {"log_std": self.log_std}


class CentralValue(DeterministicMixin, Model):
    def __init__(self, observation_space, state_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, state_space=state_space,
                       action_space=action_space, device=device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_states, 64), nn.Tanh(), nn.Linear(64, 1))

    def compute(self, inputs, role=""):
        return self.net(inputs["states"]), {}


def test_isaaclab_multi_agent_shape_and_batch_api_agreement():
    raw = SkrlMultiAgentEnv("PredatorPrey-v0", num_envs=3, seed=1)
    env = wrap_env(raw, wrapper="isaaclab-multi-agent", verbose=False)
    assert env.possible_agents == ["adversary_0", "adversary_1", "adversary_2", "agent_0"]
    assert env.num_envs == 3 and env.num_agents == 4 and env.device == torch.device("cpu")
    assert env.observation_space("adversary_0").shape == (16,) and env.observation_space("agent_0").shape == (14,)
    assert env.state_space("agent_0").shape == (16 * 3 + 14,)
    ref = war_envs.make("PredatorPrey-v0", num_envs=3, seed=1)
    obs, _ = env.reset()
    r_obs = ref.reset(seed=skrl_config.torch.key)  # skrl's wrapper reseeds with its global key
    torch.testing.assert_close(obs["adversary_1"], r_obs["adversary"][:, 1], rtol=0, atol=0)
    torch.testing.assert_close(env.state()["agent_0"], ref.state(), rtol=0, atol=0)
    for _ in range(26):
        actions = {a: torch.randint(0, 5, (3, 1)) for a in env.possible_agents}
        kept, kept_copy = obs["agent_0"], obs["agent_0"].clone()
        obs, rew, term, trunc, info = env.step(actions)
        assert torch.equal(kept, kept_copy)  # what was handed out is a copy: the step left it alone
        r_obs, r_rew, r_term, r_trunc, _ = ref.step({
            "adversary": torch.cat([actions[f"adversary_{i}"] for i in range(3)], dim=1),
            "agent": actions["agent_0"]})
        torch.testing.assert_close(obs["agent_0"], r_obs["agent"][:, 0], rtol=0, atol=0)
        torch.testing.assert_close(rew["adversary_2"], r_rew["adversary"][:, 2:3].float(), rtol=0, atol=0)
        assert term["agent_0"].shape == (3, 1) and term["agent_0"].dtype == torch.bool
        assert torch.equal(trunc["agent_0"], r_trunc["agent"][:, :1])
    with pytest.raises(ValueError, match="missing|actions"):
        raw.step({"agent_0": torch.zeros(3, dtype=torch.int64)})


def _mappo(env, policy_cls, timesteps: int, rollouts: int = 16):
    models, memories = {}, {}
    for a in env.possible_agents:
        args = (env.observation_space(a), env.state_space(a), env.action_space(a), env.device)
        models[a] = {"policy": policy_cls(*args), "value": CentralValue(*args)}
        memories[a] = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    per_agent = {a: {} for a in env.possible_agents}
    # skrl 2.1.1's MultiAgentCfg.expand mistakes an empty {} default for a per-agent dict with
    # missing agents: pass the *_kwargs per agent.
    cfg = MAPPO_CFG(rollouts=rollouts, learning_epochs=2, mini_batches=2,
                    learning_rate_scheduler_kwargs=dict(per_agent),
                    observation_preprocessor_kwargs=dict(per_agent),
                    state_preprocessor_kwargs=dict(per_agent), value_preprocessor_kwargs=dict(per_agent))
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    agent = MAPPO(possible_agents=env.possible_agents, models=models, memories=memories,
                  observation_spaces=env.observation_spaces, state_spaces=env.state_spaces,
                  action_spaces=env.action_spaces, device=env.device, cfg=cfg)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={
        "timesteps": timesteps, "headless": True, "disable_progressbar": True,
        "close_environment_at_exit": False})
    return agent, trainer


@pytest.mark.parametrize("kw,policy", [({}, CategoricalPolicy),
                                       ({"continuous_actions": True}, GaussianPolicy)],
                         ids=["discrete", "continuous"])
def test_skrl_mappo_trains(kw, policy):
    """320 timesteps x 16 worlds = 20 MAPPO updates (16 rollouts each): every agent's policy
    and centralized value were updated and stay finite."""
    torch.manual_seed(0)
    env = wrap_env(SkrlMultiAgentEnv("Spread-v0", num_envs=16, seed=0, **kw),
                   wrapper="isaaclab-multi-agent", verbose=False)
    agent, trainer = _mappo(env, policy, timesteps=320)
    before = {(uid, role, name): p.detach().clone() for uid in env.possible_agents
              for role, model in (("policy", agent.policies[uid]), ("value", agent.values[uid]))
              for name, p in model.named_parameters()}
    trainer.train()
    for (uid, role, name), old in before.items():
        new = dict((agent.policies if role == "policy" else agent.values)[uid].named_parameters())[name]
        assert torch.isfinite(new).all(), (uid, role, name)
    for uid in env.possible_agents:
        for role, model in (("policy", agent.policies[uid]), ("value", agent.values[uid])):
            changed = [not torch.equal(before[(uid, role, n)], p.detach()) for n, p in model.named_parameters()]
            assert any(changed), f"{uid} {role} was not trained"
    env.close()


def test_actions_as_numpy_and_flat_shapes():
    env = SkrlMultiAgentEnv("Spread-v0", num_envs=2, seed=0)
    env.reset()
    obs, rew, term, trunc, info = env.step({a: np.zeros(2, dtype=np.int64) for a in env.possible_agents})
    assert obs["agent_0"].shape == (2, 18) and rew["agent_0"].dtype == torch.float32 and info == {}
    with pytest.raises(ValueError, match="expected shape"):
        env.step({a: torch.zeros(2, 2, dtype=torch.int64) for a in env.possible_agents})
