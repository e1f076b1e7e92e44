"""Simple-v0 against mpe2 ``simple_v3``: full episodes from identical states with identical
actions, the reset distribution, spaces and argument checks."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import compare_episode  # noqa: E402
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 our_resets, reference_resets)

ENV = "Simple-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"max_cycles": 40}, {"max_cycles": 7, "continuous_actions": True}]


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)


def test_reset_distribution_matches_mpe2():
    n = 3000
    ours = our_resets(ENV, n)
    ref = reference_resets(ENV, n, lambda raw: {
        "agent_pos": np.array([a.state.p_pos for a in raw.world.agents]),
        "landmark_pos": np.array([lm.state.p_pos for lm in raw.world.landmarks])})
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    assert np.all(ours["agent_vel"] == 0)


def test_info_and_reward_agree():
    env = war_envs.make(ENV, num_envs=4, seed=3, precision="float64")
    env.reset()
    _, rew, _, _, info = env.step({"agent": torch.zeros(4, 1, dtype=torch.int64)})
    assert torch.allclose(info["goal_dist"] ** 2, -rew["agent"][:, 0])
    env.close()


@pytest.mark.parametrize("kwargs,error,name", [
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"continuous_actions": "yes"}, TypeError, "continuous_actions"),
    ({"curriculum": True}, ValueError, "curriculum"),
    ({"terminate_on_success": True}, ValueError, "terminate_on_success"),
    ({"num_agent_neighbors": 1}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, ValueError, "num_landmark_neighbors"),
    ({"num_landmark_neighbors": 0}, ValueError, "num_landmark_neighbors"),
    ({"N": 2}, TypeError, "N"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        war_envs.make(ENV, num_envs=1, **kwargs)
