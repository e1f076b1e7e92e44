"""SpeakerListener-v0 against mpe2 ``simple_speaker_listener_v4``: full episodes from identical
states (incl. the goal) with identical actions, the reset distribution (positions and goal),
the goal as state, spaces and argument checks."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import compare_episode, copy_world_into_reference, make_reference  # noqa: E402
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 assert_same_frequencies, our_resets, reference_resets)

ENV = "SpeakerListener-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "comm": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "comm": 1e-6, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"max_cycles": 40}]


def copy_goal(ours, raw, world):
    """Our goal index into mpe2's speaker (goal_a: the listener, goal_b: the landmark)."""
    g = int(ours.get_state()["goal"][world])
    speaker, listener = raw.world.agents
    speaker.goal_a, speaker.goal_b = listener, raw.world.landmarks[g]
    listener.color = raw.world.landmarks[g].color + np.array([0.45, 0.45, 0.45])


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1, copy_extra=copy_goal,
                                 **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("goal", [0, 1, 2])
def test_every_goal_matches_mpe2(goal, continuous):
    start = {"goal": torch.tensor([goal], dtype=torch.int32)}
    report = compare_episode(ENV, precision="float64", seed=goal, start_state=start, copy_extra=copy_goal,
                             continuous_actions=continuous)
    assert_matches(report, "float64")


def test_setting_the_goal_changes_what_the_speaker_sees_as_in_mpe2():
    env = war_envs.make(ENV, num_envs=3, seed=0, precision="float64")
    env.reset()
    par, raw = make_reference(ENV)
    for goal in (0, 1, 2):
        obs = env.set_state({"goal": torch.full((3,), goal, dtype=torch.int32)})
        copy_world_into_reference(env, raw, world=1, copy_extra=copy_goal)
        expected = raw.observe("speaker_0")
        assert np.array_equal(obs["speaker"][1, 0].numpy(), expected)
        assert np.array_equal(expected, np.float32(raw.world.landmarks[goal].color))
        assert np.array_equal(obs["listener"][1, 0].numpy(), raw.observe("listener_0"))
        assert np.allclose(env._entity_colors(1)[1], raw.world.agents[1].color)
    with pytest.raises(ValueError, match="goal"):
        env.set_state({"goal": torch.full((3,), 3, dtype=torch.int32)})
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
        "goal": np.array(raw.world.landmarks.index(raw.world.agents[0].goal_b))})
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    assert ours["goal"].shape == (n,)
    assert_same_frequencies(ours["goal"], ref["goal"], [0, 1, 2], "goal")
    assert np.all(ours["agent_vel"] == 0) and np.all(ours["agent_comm"] == 0)


def test_speaker_never_moves_and_listener_never_speaks():
    env = war_envs.make(ENV, num_envs=8, seed=1, precision="float64", continuous_actions=True)
    env.reset()
    start = env.get_state()["agent_pos"][:, 0].clone()
    gen = torch.Generator().manual_seed(0)
    for _ in range(10):
        _, rew, _, _, info = env.step({"speaker": torch.rand(8, 1, 3, generator=gen),
                                       "listener": torch.rand(8, 1, 5, generator=gen)})
        state = env.get_state()
        assert torch.equal(state["agent_pos"][:, 0], start)
        assert torch.all(state["agent_vel"][:, 0] == 0)
        assert torch.all(state["agent_comm"][:, 1] == 0)
        assert torch.equal(rew["speaker"], rew["listener"])
        assert torch.allclose(info["goal_dist"] ** 2, -rew["listener"][:, 0])
    env.close()


@pytest.mark.parametrize("kwargs,error,name", [
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"continuous_actions": 1}, TypeError, "continuous_actions"),
    ({"curriculum": True}, ValueError, "curriculum"),
    ({"terminate_on_success": True}, ValueError, "terminate_on_success"),
    ({"num_agent_neighbors": 1}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 2}, ValueError, "num_landmark_neighbors"),
    ({"local_ratio": 0.5}, TypeError, "local_ratio"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        war_envs.make(ENV, num_envs=1, **kwargs)


def test_a_silent_agents_communication_cannot_be_set_nonzero():
    """mpe2 zeroes a silent agent's c every step; our step leaves it at the zeros it always holds,
    so set_state refuses anything else (and writes nothing); a speaker's c may be anything."""
    with war_envs.make("SpeakerListener-v0", num_envs=2, seed=0) as env:
        env.reset(seed=0)
        silent = [i for i, s in enumerate(env.layout.agent_silent) if s]
        speaker = [i for i, s in enumerate(env.layout.agent_silent) if not s][0]
        assert silent
        before = {k: v.clone() for k, v in env.get_state().items()}
        bad = {k: v.clone() for k, v in before.items()}
        bad["agent_comm"][1, silent[0], 0] = 1.0
        with pytest.raises(ValueError, match=rf"agent_comm.*agent {silent[0]} is silent"):
            env.set_state(bad)
        after = env.get_state()
        assert all(torch.equal(before[k], after[k]) for k in before)
        ok = {k: v.clone() for k, v in before.items()}
        ok["agent_comm"][0, speaker, 0] = 1.0
        env.set_state(ok)
        assert env.get_state()["agent_comm"][0, speaker, 0] == 1.0
