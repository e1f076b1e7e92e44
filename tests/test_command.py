"""Command-v0: physics replayed against mpe2's simple_spread (same world, N=10), observations and
the team reward against a numpy reference, determinism and the front ends' checkers."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import war_envs

pytest.importorskip("mpe2")


def reference_obs_and_reward(state, k_agents, k_landmarks):
    """numpy Command-v0 observations and team reward from a get_state() snapshot (world 0)."""
    pos = state["agent_pos"][0].double().numpy()
    vel = state["agent_vel"][0].double().numpy()
    lm = state["landmark_pos"][0].double().numpy()
    n = len(pos)

    def nearest(rel, k, skip=None):
        d = np.linalg.norm(rel, axis=1)
        order = [j for j in np.argsort(d, kind="stable") if j != skip][:k]
        out = [rel[j] for j in order] + [np.zeros(2)] * (k - len(order))
        return np.concatenate(out)

    obs = []
    for i in range(n):
        rel_l, rel_a = lm - pos[i], pos - pos[i]
        if i == 0:
            parts = [rel_l.ravel(), np.delete(rel_a, i, axis=0).ravel()]
        else:
            parts = [nearest(rel_l, k_landmarks), nearest(rel_a, k_agents, skip=i)]
        obs.append(np.concatenate([vel[i], pos[i], *parts]).astype(np.float32))
    dist = np.linalg.norm(lm[:, None, :] - pos[None, :, :], axis=2)
    pairs = sum(np.linalg.norm(pos[i] - pos[j]) < 0.3 for i in range(n) for j in range(i + 1, n))
    return obs, -dist.min(axis=1).sum() - pairs


@pytest.mark.parametrize("kwargs", [{}, {"num_agent_neighbors": 2, "num_landmark_neighbors": 4},
                                    {"continuous_actions": True}], ids=str)
def test_command_matches_references_for_a_full_episode(kwargs):
    from mpe2_reference import copy_world_into_reference, make_reference, reference_world

    env = war_envs.make("Command-v0", num_envs=1, seed=3, precision="float64",
                        autoreset_mode="disabled", **kwargs)
    env.reset()
    # a crowded start so contacts and the collision term matter
    rng = np.random.default_rng(0)
    env.set_state({"agent_pos": torch.from_numpy(rng.uniform(-0.5, 0.5, (1, 10, 2)).astype(np.float32)).double()})
    par, raw = make_reference("Spread-v0", N=10, continuous_actions=env.continuous_actions)
    copy_world_into_reference(env, raw)
    k_a = kwargs.get("num_agent_neighbors", 3)
    k_l = kwargs.get("num_landmark_neighbors", 3)
    for t in range(25):
        if env.continuous_actions:
            acts = rng.random((10, 5), dtype=np.float32)
        else:
            acts = rng.integers(0, 5, 10)
        obs, rew, term, trunc, info = env.step({"commander": torch.from_numpy(acts[:1][None]),
                                                "sentry": torch.from_numpy(acts[1:][None])})
        par.step({f"agent_{i}": acts[i] for i in range(10)})
        pos, vel = reference_world(raw)
        state = env.get_state()
        assert np.abs(state["agent_pos"][0].numpy() - pos).max() < 1e-8
        assert np.abs(state["agent_vel"][0].numpy() - vel).max() < 1e-8
        ref_obs, ref_rew = reference_obs_and_reward(state, k_a, k_l)
        ours = [obs["commander"][0, 0].numpy()] + [o.numpy() for o in obs["sentry"][0]]
        for a, b in zip(ours, ref_obs):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        assert torch.all(rew["commander"] == rew["sentry"][0, 0])
        assert abs(rew["sentry"][0, 0].item() - ref_rew) < 1e-9
        assert bool(trunc["sentry"][0, 0]) == (t == 24)
    assert info["collisions"].sum() % 2 == 0


def test_command_spaces_and_defaults():
    env = war_envs.make("Command-v0")
    assert list(env.groups) == ["commander", "sentry"]
    assert env.groups["commander"].obs_dim == 42 and env.groups["sentry"].obs_dim == 16
    assert env.groups["sentry"].n_agents == 9 and env.num_landmarks == 10
    assert env.agents[:2] == ["commander_0", "sentry_0"]
    with pytest.raises(ValueError, match="curriculum"):
        war_envs.make("Command-v0", curriculum=True)
    with pytest.raises(ValueError, match="num_sentries"):
        war_envs.make("Command-v0", num_sentries=0)


def test_command_is_deterministic_and_world_sliced():
    def run(num_envs, seed, world=None):
        env = war_envs.make("Command-v0", num_envs=num_envs, seed=seed)
        env.reset()
        gen = torch.Generator().manual_seed(0)
        out = []
        for _ in range(40):
            a = {g: torch.randint(0, 5, (4, s.n_agents), generator=gen) for g, s in env.groups.items()}
            if world is not None:
                a = {g: x[world:world + 1] for g, x in a.items()}
            obs = env.step(a)[0]
            out.append(torch.cat([obs["commander"].flatten(1), obs["sentry"].flatten(1)], 1).clone())
        return torch.stack(out)

    full = run(4, 10)
    assert torch.equal(full, run(4, 10))
    assert torch.equal(full[:, 2], run(1, 12, world=2)[:, 0])


def test_command_front_ends():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(war_envs.parallel_env("Command-v0"), num_cycles=30)
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make("war_envs/Command-v0").unwrapped, skip_render_check=True)
