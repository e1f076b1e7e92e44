"""Reference-v0 against mpe2 ``simple_reference_v3``: full episodes from identical states (incl.
both goals) with identical actions and every local_ratio, the reset distribution (positions
and the goal pair), the goals as state, spaces and argument checks.  (Named ``_env`` so it does
not shadow the ``mpe2_reference`` helper module.)"""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import compare_episode, copy_world_into_reference, make_reference  # noqa: E402
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 assert_same_frequencies, our_resets, reference_resets)

ENV = "Reference-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "comm": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "comm": 1e-6, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"local_ratio": 0.0}, {"local_ratio": 1.0},
         {"local_ratio": 0.3, "continuous_actions": True}, {"max_cycles": 40}]


def copy_goals(ours, raw, world):
    """Our goal pair into mpe2's agents: agent i's goal_a is the other agent, goal_b our
    landmark; the other agent is drawn in that landmark's colour."""
    goal = ours.get_state()["goal"][world].tolist()
    agents = raw.world.agents
    for i in range(2):
        agents[i].goal_a, agents[i].goal_b = agents[1 - i], raw.world.landmarks[goal[i]]
        agents[1 - i].color = raw.world.landmarks[goal[i]].color


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1, copy_extra=copy_goals,
                                 **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


@pytest.mark.parametrize("goal", [(0, 0), (0, 2), (2, 1), (1, 1)], ids=str)
def test_goal_pairs_match_mpe2(goal):
    start = {"goal": torch.tensor([goal], dtype=torch.int32)}
    for continuous in (False, True):
        report = compare_episode(ENV, precision="float64", seed=sum(goal), start_state=start, copy_extra=copy_goals,
                                 continuous_actions=continuous, local_ratio=0.25)
        assert_matches(report, "float64")


def test_setting_the_goals_changes_what_agents_see_as_in_mpe2():
    env = war_envs.make(ENV, num_envs=2, seed=0, precision="float64")
    env.reset()
    env.step({"agent": torch.tensor([[7, 23], [49, 0]])})  # some communication to observe too
    par, raw = make_reference(ENV)
    for goal in ((0, 1), (2, 2), (1, 0)):
        obs = env.set_state({"goal": torch.tensor([goal, goal], dtype=torch.int32)})
        copy_world_into_reference(env, raw, world=1, copy_extra=copy_goals)
        for i in range(2):
            expected = raw.observe(f"agent_{i}")
            assert np.array_equal(obs["agent"][1, i].numpy(), expected)
            assert np.array_equal(expected[8:11], np.float32(raw.world.landmarks[goal[i]].color))
            assert np.allclose(env._entity_colors(1)[i], raw.world.agents[i].color)
    with pytest.raises(ValueError, match="goal"):
        env.set_state({"goal": torch.tensor([[0, 3], [0, 0]], dtype=torch.int32)})
    assert env.render_frame(1).shape == (700, 700, 3)
    env.close()
    par.close()


def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)


def test_reset_distribution_matches_mpe2():
    n = 3000
    ours = our_resets(ENV, n)
    ref = reference_resets(ENV, n, lambda raw: {
        "agent_pos": np.array([a.state.p_pos for a in raw.world.agents]),
        "landmark_pos": np.array([lm.state.p_pos for lm in raw.world.landmarks]),
        "goal": np.array([raw.world.landmarks.index(a.goal_b) for a in raw.world.agents])})
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    assert ours["goal"].shape == (n, 2)
    for i in range(2):
        assert_same_frequencies(ours["goal"][:, i], ref["goal"][:, i], [0, 1, 2], f"goal[{i}]")
    # independent draws: the 9 pairs
    assert_same_frequencies(3 * ours["goal"][:, 0] + ours["goal"][:, 1], 3 * ref["goal"][:, 0] + ref["goal"][:, 1],
                            list(range(9)), "goal pair")
    assert np.all(ours["agent_vel"] == 0) and np.all(ours["agent_comm"] == 0)


def test_reward_is_the_local_ratio_mix_of_goal_distances():
    env = war_envs.make(ENV, num_envs=5, seed=2, precision="float64", local_ratio=0.2)
    env.reset()
    _, rew, _, _, info = env.step({"agent": torch.randint(0, 50, (5, 2), generator=torch.Generator().manual_seed(0))})
    local = -info["goal_dist"]
    expected = local.mean(-1, keepdim=True) * 0.8 + local * 0.2
    assert torch.allclose(rew["agent"], expected)
    env.close()


@pytest.mark.parametrize("kwargs,error,name", [
    ({"local_ratio": 1.5}, ValueError, "local_ratio"),
    ({"local_ratio": -0.1}, ValueError, "local_ratio"),
    ({"local_ratio": "half"}, TypeError, "local_ratio"),
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"continuous_actions": None}, TypeError, "continuous_actions"),
    ({"curriculum": True}, ValueError, "curriculum"),
    ({"terminate_on_success": True}, ValueError, "terminate_on_success"),
    ({"num_agent_neighbors": 1}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 2}, ValueError, "num_landmark_neighbors"),
    ({"N": 3}, TypeError, "N"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        war_envs.make(ENV, num_envs=1, **kwargs)
