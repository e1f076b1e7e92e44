"""The MAPPO paper's on-policy reward conventions (``onpolicy_episode_reward``) of
SpeakerListener-v0 ("Comm") and Reference-v0, recomputed here from positions the way the
on-policy code's scenarios and shared-reward environment compute them."""

import torch

import war_envs
from war_train.rollout.metrics import EpisodeStats


def _random_actions(env, gen):
    return {g: torch.randint(0, int(spec.action_space.n), (env.num_envs, spec.n_agents), generator=gen)
            for g, spec in env.groups.items()}


def _onpolicy_reward(env_id, state):
    """Per world, the reward every agent gets in the on-policy code (the sum over agents)."""
    p, lm, goal = state["agent_pos"].double(), state["landmark_pos"].double(), state["goal"].long()
    rows = torch.arange(p.shape[0])
    if env_id == "SpeakerListener-v0":    # each agent: -|p_listener - p_goal|^2
        d2 = ((p[:, 1] - lm[rows, goal]) ** 2).sum(-1)
        return -2.0 * d2
    # agent i: -|p_{other} - landmark_{goal_i}|^2
    return -sum(((p[:, 1 - i] - lm[rows, goal[:, i]]) ** 2).sum(-1) for i in range(2))


def test_onpolicy_episode_reward_is_the_onpolicy_codes_shared_squared_distance_reward():
    for env_id in ("SpeakerListener-v0", "Reference-v0"):
        with war_envs.make(env_id, num_envs=6, seed=3, precision="float64") as env:
            assert env.progress_metric == "onpolicy_episode_reward"
            metric = next(m for m in env.episode_metrics if m.name == "onpolicy_episode_reward")
            stats = EpisodeStats(env)
            gen = torch.Generator().manual_seed(0)
            env.reset()
            expected = torch.zeros(6, dtype=torch.float64)
            for t in range(env.max_cycles):
                rew, info = env.step(_random_actions(env, gen))[1::3]
                if t < env.max_cycles - 1:   # the last step's state is already the next episode's
                    state = env.get_state()
                    assert torch.allclose(metric.step(info), _onpolicy_reward(env_id, state), atol=1e-10)
                expected += metric.step(info)
                term, trunc = env.world_flags()
                stats.step(rew, info, term | trunc)
            episode = stats.pop()
            assert torch.allclose(episode["onpolicy_episode_reward"].double(), expected, atol=1e-8), env_id
            assert bool((expected < 0).all())
