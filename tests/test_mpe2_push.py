"""Push-v0 against mpe2's simple_push_v3: full episodes from identical states with identical
actions, the reset distribution, the goal as world state, the checks of ``war_envs.testing``
and argument validation."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
import war_envs.testing as wt  # noqa: E402
from mpe2_reference import compare_episode, copy_world_into_reference, make_reference  # noqa: E402

ENV_ID = "Push-v0"

CASES = [{}, {"continuous_actions": True}, {"max_cycles": 40}]

TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}


def copy_goal(ours, raw, world):
    """Our goal landmark (a state field) into mpe2's agents (``goal_a``) and the good agent's
    colour (which names the goal, as mpe2's reset_world sets it)."""
    g = int(ours.get_state()["goal"][world])
    for agent in raw.world.agents:
        agent.goal_a = raw.world.landmarks[g]
        if not agent.adversary:
            agent.color = np.array([0.25, 0.25, 0.25])
            agent.color[g + 1] += 0.5


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 11, 12):
        report = compare_episode(ENV_ID, precision=precision, seed=seed, action_seed=seed + 1,
                                 copy_extra=copy_goal, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("continuous", [False, True])
def test_pushing_episodes_match_mpe2(precision, continuous):
    """Agents start touching, next to the goal: contact forces from the first step; both goals."""
    dtype = torch.float64 if precision == "float64" else torch.float32
    for goal in (0, 1):
        start = {"agent_pos": torch.tensor([[[0.1, 0.0], [0.16, 0.02]]], dtype=dtype),
                 "landmark_pos": torch.tensor([[[0.2, 0.0], [-0.5, 0.5]]] if goal == 0 else
                                              [[[-0.5, 0.5], [0.2, 0.0]]], dtype=dtype),
                 "goal": torch.tensor([goal], dtype=torch.int32)}
        report = compare_episode(ENV_ID, precision=precision, start_state=start, copy_extra=copy_goal,
                                 continuous_actions=continuous, action_seed=goal)
        assert_matches(report, precision)


def test_spaces_and_agents_match_mpe2():
    for kwargs in ({}, {"continuous_actions": True}):
        env = war_envs.make(ENV_ID, num_envs=1, **kwargs)
        par, _ = make_reference(ENV_ID, **kwargs)
        assert list(env.agents) == par.possible_agents == ["adversary_0", "agent_0"]
        assert list(env.groups) == ["adversary", "agent"]
        for spec in env.groups.values():
            for name in spec.agents:
                assert spec.action_space == par.action_space(name)
                assert spec.obs_dim == par.observation_space(name).shape[0]
        env.close()
        par.close()


def test_reset_distribution_matches_mpe2():
    draws = 3000
    env = war_envs.make(ENV_ID, num_envs=draws, seed=5, precision="float64")
    env.reset()
    s = env.get_state()
    ours_goal = s["goal"].numpy()
    ours_agents = s["agent_pos"].numpy().reshape(-1)
    ours_landmarks = s["landmark_pos"].numpy().reshape(-1)
    env.close()
    par, raw = make_reference(ENV_ID)
    ref_goal, ref_agents, ref_landmarks, ref_colors = [], [], [], set()
    for k in range(draws):
        par.reset(seed=k)
        ref_goal.append(raw.world.agents[0].goal_a.index)
        ref_colors.add((ref_goal[-1], tuple(raw.world.agents[1].color)))
        ref_agents.extend(a.state.p_pos for a in raw.world.agents)
        ref_landmarks.extend(lm.state.p_pos for lm in raw.world.landmarks)
    par.close()
    ref_goal = np.asarray(ref_goal)
    ref_agents, ref_landmarks = np.asarray(ref_agents).reshape(-1), np.asarray(ref_landmarks).reshape(-1)
    # goal: uniform over the 2 landmarks in both (standard error ≈ 0.009 per frequency)
    ours_f, ref_f = np.mean(ours_goal == 0), np.mean(ref_goal == 0)
    assert abs(ours_f - 0.5) < 0.04 and abs(ours_f - ref_f) < 0.05, (ours_f, ref_f)
    assert set(np.unique(ours_goal)) == {0, 1}
    # the good agent's colour is a function of the goal, the one our observation writes
    assert ref_colors == {(0, (0.25, 0.75, 0.25)), (1, (0.25, 0.25, 0.75))}
    # positions: U[-1, 1) in both (mean 0, std 1/sqrt(3), range [-1, 1))
    for ours, ref in ((ours_agents, ref_agents), (ours_landmarks, ref_landmarks)):
        assert abs(ours.mean() - ref.mean()) < 0.04 and abs(ours.mean()) < 0.03
        assert abs(ours.std() - ref.std()) < 0.02 and abs(ours.std() - 1 / np.sqrt(3)) < 0.015
        assert -1.0 <= ours.min() < -0.99 and 0.99 < ours.max() < 1.0
        assert -1.0 <= ref.min() < -0.99 and 0.99 < ref.max() < 1.0
    # a second reset draws fresh goals
    env = war_envs.make(ENV_ID, num_envs=64, seed=1)
    env.reset()
    first = env.get_state()["goal"].clone()
    env.reset()
    assert not torch.equal(first, env.get_state()["goal"])
    env.close()


def test_set_state_goal_changes_what_the_good_agent_observes_as_mpe2():
    env = war_envs.make(ENV_ID, num_envs=1, seed=2, precision="float64")
    env.reset()
    par, raw = make_reference(ENV_ID)
    for goal in (0, 1, 0):
        obs = env.set_state({"goal": torch.tensor([goal], dtype=torch.int32)})
        copy_world_into_reference(env, raw, copy_extra=copy_goal)
        s = env.get_state()
        np.testing.assert_array_equal(obs["agent"][0, 0].numpy(), raw.observe("agent_0"))
        rel = (s["landmark_pos"][0, goal] - s["agent_pos"][0, 1]).float().numpy()
        np.testing.assert_array_equal(obs["agent"][0, 0, 2:4].numpy(), rel)
        colour = np.float32([0.25, 0.75, 0.25] if goal == 0 else [0.25, 0.25, 0.75])
        np.testing.assert_array_equal(obs["agent"][0, 0, 4:7].numpy(), colour)
        np.testing.assert_array_equal(obs["agent"][0, 0, 11:17].numpy(),
                                      np.float32([0.1, 0.9, 0.1, 0.1, 0.1, 0.9]))
        # the adversary's view does not depend on the goal
        np.testing.assert_array_equal(obs["adversary"][0, 0].numpy(), raw.observe("adversary_0"))
        assert np.allclose(env._entity_colors(0)[1], colour)
    with pytest.raises(ValueError, match="goal"):
        env.set_state({"goal": torch.tensor([2], dtype=torch.int32)})
    env.close()
    par.close()


def test_rewards_follow_the_goal():
    env = war_envs.make(ENV_ID, num_envs=1, precision="float64")
    env.reset(seed=0)
    pos = torch.tensor([[[0.0, 0.0], [0.5, 0.0]]], dtype=torch.float64)
    lpos = torch.tensor([[[1.0, 0.0], [-1.0, 0.0]]], dtype=torch.float64)
    zero = {"adversary": torch.zeros(1, 1, dtype=torch.int64), "agent": torch.zeros(1, 1, dtype=torch.int64)}
    for goal, good_dist in ((0, 0.5), (1, 1.5)):
        env.set_state({"agent_pos": pos, "landmark_pos": lpos, "agent_vel": torch.zeros(1, 2, 2, dtype=torch.float64),
                       "goal": torch.tensor([goal], dtype=torch.int32)})
        _, rew, *_, info = env.step(zero)
        assert rew["agent"][0, 0].item() == pytest.approx(-good_dist)
        assert rew["adversary"][0, 0].item() == pytest.approx(good_dist - 1.0)
        assert info["goal_dist"][0].tolist() == pytest.approx([1.0, good_dist])
    env.close()


def test_check_all():
    wt.check_all(ENV_ID, max_cycles=8)


@pytest.mark.parametrize("kwargs,name", [
    ({"max_cycles": 0}, "max_cycles"), ({"curriculum": True}, "curriculum"),
    ({"terminate_on_success": True}, "terminate_on_success"), ({"num_agent_neighbors": 1}, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, "num_landmark_neighbors"), ({"continuous_actions": "yes"}, "continuous_actions"),
    ({"N": 2}, "N"),
], ids=str)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV_ID, num_envs=1, **kwargs)
