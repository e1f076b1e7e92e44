"""Adversary-v0 against mpe2's simple_adversary_v3: full episodes from identical states with
identical actions, the reset distribution, the goal as world state, the checks of
``war_envs.testing`` and argument validation."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
import war_envs.testing as wt  # noqa: E402
from mpe2_reference import compare_episode, copy_world_into_reference, make_reference  # noqa: E402

ENV_ID = "Adversary-v0"

CASES = [
    {},
    {"continuous_actions": True},
    {"N": 1},
    {"N": 4},
    {"N": 3, "continuous_actions": True},
    {"num_agent_neighbors": 1},
    {"num_landmark_neighbors": 1},
    {"N": 4, "num_agent_neighbors": 2, "num_landmark_neighbors": 3},
    {"N": 2, "num_agent_neighbors": 4, "num_landmark_neighbors": 5},  # more slots than entities: padding
    {"max_cycles": 40},
]

TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}


def copy_goal(ours, raw, world):
    """Our goal landmark (a state field) into mpe2's agents (``goal_a``) and colours."""
    g = int(ours.get_state()["goal"][world])
    for l, landmark in enumerate(raw.world.landmarks):
        landmark.color = np.array([0.15, 0.65, 0.15]) if l == g else np.array([0.15, 0.15, 0.15])
    for agent in raw.world.agents:
        agent.goal_a = raw.world.landmarks[g]


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 11):
        report = compare_episode(ENV_ID, precision=precision, seed=seed, action_seed=seed + 1,
                                 copy_extra=copy_goal, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert_matches(report, precision)


def test_every_goal_matches_mpe2():
    """Each landmark as the goal in turn (set_state), float64."""
    for goal in range(3):
        report = compare_episode(ENV_ID, precision="float64", N=3, copy_extra=copy_goal,
                                 start_state={"goal": torch.tensor([goal], dtype=torch.int32)})
        assert_matches(report, "float64")


def test_spaces_and_agents_match_mpe2():
    for kwargs in ({}, {"N": 3, "continuous_actions": True}, {"num_agent_neighbors": 1, "num_landmark_neighbors": 1}):
        env = war_envs.make(ENV_ID, num_envs=1, **kwargs)
        par, _ = make_reference(ENV_ID, **kwargs)
        assert list(env.agents) == par.possible_agents
        assert list(env.groups) == ["adversary", "agent"]
        for spec in env.groups.values():
            for name in spec.agents:
                assert spec.action_space == par.action_space(name)
                assert spec.obs_dim == par.observation_space(name).shape[0]
        env.close()
        par.close()


def test_reset_distribution_matches_mpe2():
    n, draws = 3, 3000
    env = war_envs.make(ENV_ID, num_envs=draws, N=n, seed=5, precision="float64")
    env.reset()
    s = env.get_state()
    ours_goal = s["goal"].numpy()
    ours_agents = s["agent_pos"].numpy().reshape(-1)
    ours_landmarks = s["landmark_pos"].numpy().reshape(-1)
    env.close()
    par, raw = make_reference(ENV_ID, N=n)
    ref_goal, ref_agents, ref_landmarks = [], [], []
    for k in range(draws):
        par.reset(seed=k)
        goal = raw.world.agents[0].goal_a
        ref_goal.append(next(l for l, lm in enumerate(raw.world.landmarks) if lm is goal))
        ref_agents.extend(a.state.p_pos for a in raw.world.agents)
        ref_landmarks.extend(lm.state.p_pos for lm in raw.world.landmarks)
    par.close()
    ref_goal = np.asarray(ref_goal)
    ref_agents, ref_landmarks = np.asarray(ref_agents).reshape(-1), np.asarray(ref_landmarks).reshape(-1)
    # goal: uniform over the N landmarks in both (standard error ≈ 0.009 per frequency)
    for l in range(n):
        ours_f, ref_f = np.mean(ours_goal == l), np.mean(ref_goal == l)
        assert abs(ours_f - 1 / n) < 0.04 and abs(ours_f - ref_f) < 0.05, (l, ours_f, ref_f)
    assert set(np.unique(ours_goal)) == set(range(n))
    # positions: U[-1, 1) in both (mean 0, std 1/sqrt(3), range [-1, 1))
    for ours, ref in ((ours_agents, ref_agents), (ours_landmarks, ref_landmarks)):
        assert abs(ours.mean() - ref.mean()) < 0.04 and abs(ours.mean()) < 0.03
        assert abs(ours.std() - ref.std()) < 0.02 and abs(ours.std() - 1 / np.sqrt(3)) < 0.015
        assert -1.0 <= ours.min() < -0.99 and 0.99 < ours.max() < 1.0
        assert -1.0 <= ref.min() < -0.99 and 0.99 < ref.max() < 1.0
    # a second reset draws fresh goals
    env = war_envs.make(ENV_ID, num_envs=64, N=n, seed=1)
    env.reset()
    first = env.get_state()["goal"].clone()
    env.reset()
    assert not torch.equal(first, env.get_state()["goal"])
    env.close()


def test_set_state_goal_changes_what_good_agents_observe_as_mpe2():
    n = 3
    env = war_envs.make(ENV_ID, num_envs=1, N=n, seed=2, precision="float64")
    env.reset()
    par, raw = make_reference(ENV_ID, N=n)
    for goal in range(n):
        obs = env.set_state({"goal": torch.tensor([goal], dtype=torch.int32)})
        copy_world_into_reference(env, raw, copy_extra=copy_goal)
        s = env.get_state()
        for k, name in enumerate(env.groups["agent"].agents):
            expected = raw.observe(name)
            np.testing.assert_array_equal(obs["agent"][0, k].numpy(), expected)
            rel = (s["landmark_pos"][0, goal] - s["agent_pos"][0, 1 + k]).float().numpy()
            np.testing.assert_array_equal(obs["agent"][0, k, :2].numpy(), rel)
        # the adversary's view does not depend on the goal
        np.testing.assert_array_equal(obs["adversary"][0, 0].numpy(), raw.observe("adversary_0"))
        colors = env._entity_colors(0)
        assert np.allclose(colors[n + 1 + goal], [0.15, 0.65, 0.15])
        assert sum(np.allclose(c, [0.15, 0.65, 0.15]) for c in colors) == 1
    with pytest.raises(ValueError, match="goal"):
        env.set_state({"goal": torch.tensor([n], dtype=torch.int32)})
    env.close()
    par.close()


def test_rewards_follow_the_goal():
    env = war_envs.make(ENV_ID, num_envs=1, N=2, precision="float64")
    env.reset(seed=0)
    pos = torch.tensor([[[0.0, 0.0], [0.5, 0.0], [-0.2, 0.0]]], dtype=torch.float64)
    lpos = torch.tensor([[[1.0, 0.0], [-1.0, 0.0]]], dtype=torch.float64)
    zero = {"adversary": torch.zeros(1, 1, dtype=torch.int64), "agent": torch.zeros(1, 2, dtype=torch.int64)}
    for goal, adv, good in ((0, -1.0, -0.5 + 1.0), (1, -1.0, -0.8 + 1.0)):
        env.set_state({"agent_pos": pos, "landmark_pos": lpos, "agent_vel": torch.zeros(1, 3, 2, dtype=torch.float64),
                       "goal": torch.tensor([goal], dtype=torch.int32)})
        _, rew, *_, info = env.step(zero)
        assert rew["adversary"][0, 0].item() == pytest.approx(adv)
        assert rew["agent"][0].tolist() == pytest.approx([good, good])
        assert info["goal_dist"][0].tolist() == pytest.approx([1.0, 0.5, 1.2] if goal == 0 else [1.0, 1.5, 0.8])
    env.close()


def test_check_all():
    wt.check_all(ENV_ID, max_cycles=8)


@pytest.mark.parametrize("kwargs,name", [
    ({"N": 0}, "N"), ({"N": 1.5}, "N"), ({"num_agent_neighbors": 0}, "num_agent_neighbors"),
    ({"num_landmark_neighbors": -1}, "num_landmark_neighbors"), ({"max_cycles": 0}, "max_cycles"),
    ({"curriculum": True}, "curriculum"), ({"terminate_on_success": True}, "terminate_on_success"),
    ({"continuous_actions": "yes"}, "continuous_actions"),
], ids=str)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV_ID, num_envs=1, **kwargs)
