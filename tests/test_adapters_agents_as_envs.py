"""Gymnasium agents-as-envs ``VectorEnv`` (E·A single-agent sub-envs) against the batch API,
in every autoreset mode."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import war_envs
from war_envs.frontends.agents_as_envs import AgentsAsEnvs

E = 3


def flat(t: torch.Tensor) -> np.ndarray:
    return t.reshape(t.shape[0] * t.shape[1], *t.shape[2:]).numpy()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kw", [{}, {"continuous_actions": True}], ids=["discrete", "continuous"])
def test_agrees_with_batch_api(mode, kw):
    envs = AgentsAsEnvs("Spread-v0", num_envs=E, autoreset_mode=mode, max_cycles=5, **kw)
    ref = war_envs.make("Spread-v0", num_envs=E, autoreset_mode=mode, max_cycles=5, **kw)
    assert envs.num_envs == E * 3 and envs.num_worlds == E and envs.metadata["autoreset_mode"] == mode
    assert envs.single_observation_space == gym.spaces.Box(-np.inf, np.inf, (18,), np.float32)
    assert envs.observation_space.shape == (E * 3, 18)
    obs, info = envs.reset(seed=4)
    assert info == {}
    np.testing.assert_array_equal(obs, flat(ref.reset(seed=4)["agent"]))
    envs.action_space.seed(0)
    for t in range(13):
        actions = envs.action_space.sample()
        obs, rew, term, trunc, info = envs.step(actions)
        a = torch.from_numpy(actions).reshape(E, 3, *actions.shape[1:])
        r_obs, r_rew, r_term, r_trunc, r_info = ref.step({"agent": a})
        assert obs.dtype == np.float32 and rew.dtype == np.float64 and term.dtype == trunc.dtype == np.bool_
        assert envs.observation_space.contains(obs)
        np.testing.assert_array_equal(obs, flat(r_obs["agent"]))
        np.testing.assert_array_equal(rew, flat(r_rew["agent"]).astype(np.float64))
        np.testing.assert_array_equal(term, flat(r_term["agent"]))
        np.testing.assert_array_equal(trunc, flat(r_trunc["agent"]))
        done = term | trunc
        if mode == AutoresetMode.SAME_STEP and done.any():
            assert (info["_final_obs"] == done).all() and (info["_final_info"] == done).all()
            final = flat(r_info["final_obs"]["agent"])
            for i in range(envs.num_envs):
                if done[i]:
                    np.testing.assert_array_equal(info["final_obs"][i], final[i])
                else:
                    assert info["final_obs"][i] is None
        else:
            assert info == {}
    envs.close()


def test_next_step_autoreset_is_gymnasiums():
    """NEXT_STEP: the step after an episode's last one returns the reset observation with zero
    reward and no flags, ignoring the action (Gymnasium's convention)."""
    envs = AgentsAsEnvs("Spread-v0", num_envs=2, max_cycles=3, seed=0)
    obs, _ = envs.reset(seed=0)
    zeros = np.zeros(6, dtype=np.int64)
    for _ in range(3):
        obs, rew, term, trunc, _ = envs.step(zeros)
    assert trunc.all() and not term.any()
    obs2, rew2, term2, trunc2, _ = envs.step(np.full(6, 4))
    assert (rew2 == 0).all() and not (term2 | trunc2).any()
    first, _ = AgentsAsEnvs("Spread-v0", num_envs=2, max_cycles=3, seed=0).reset(seed=0)
    assert not np.array_equal(obs2, first)  # a fresh start of the next episode, not the old one


def test_disabled_mode_reset_mask_per_world():
    envs = AgentsAsEnvs("Spread-v0", num_envs=2, max_cycles=2, autoreset_mode="disabled", seed=0)
    envs.reset(seed=1)
    zeros = np.zeros(6, dtype=np.int64)
    envs.step(zeros)
    envs.step(zeros)
    with pytest.raises(RuntimeError, match="DISABLED"):
        envs.step(zeros)
    with pytest.raises(ValueError, match="partly masked"):
        envs.reset(options={"reset_mask": np.array([True, False, False, False, False, False])})
    with pytest.raises(TypeError, match="numpy bool"):
        envs.reset(options={"reset_mask": [True] * 6})
    envs.reset(options={"reset_mask": np.array([True] * 3 + [False] * 3)})
    with pytest.raises(RuntimeError, match=r"worlds \[1\]"):
        envs.step(zeros)
    envs.reset(options={"reset_mask": np.array([False] * 3 + [True] * 3)})
    envs.step(zeros)


def test_padding_bad_actions_and_record_episode_statistics():
    with pytest.raises(ValueError, match="pad_observations"):
        AgentsAsEnvs("PredatorPrey-v0", num_envs=2)
    envs = AgentsAsEnvs("PredatorPrey-v0", num_envs=2, pad_observations=True, seed=0)
    assert envs.num_envs == 8 and envs.single_observation_space.shape == (16,)
    envs.reset()
    with pytest.raises(ValueError, match=r"expected shape \(8,\)"):
        envs.step(np.zeros(7, dtype=np.int64))
    with pytest.raises(TypeError, match="integer actions"):
        envs.step(np.zeros(8, dtype=np.float32))
    with pytest.raises(ValueError):
        envs.step(np.full(8, 9))
    stats = gym.wrappers.vector.RecordEpisodeStatistics(AgentsAsEnvs("Spread-v0", num_envs=2, seed=0))
    stats.reset(seed=0)
    for _ in range(25):
        _, _, _, trunc, info = stats.step(stats.action_space.sample())
    assert trunc.all() and (info["episode"]["l"] == 25).all() and info["_episode"].all()
    # a BatchedEnv can be passed directly (same autoreset mode)
    batched = war_envs.make("Spread-v0", num_envs=2, autoreset_mode="next_step")
    assert AgentsAsEnvs(batched).num_envs == 6
    with pytest.raises(ValueError, match="NEXT_STEP"):
        AgentsAsEnvs(war_envs.make("Spread-v0", num_envs=2))


def test_tag_agents_that_leave_end_with_their_world():
    envs = AgentsAsEnvs("Tag-v0", num_envs=2, episode_length=5, seed=0)
    assert envs.single_action_space.shape == (2,) and envs.num_envs == 22
    envs.reset(seed=0)
    state = envs.batched.get_state()
    state["agent_pos"][1, 3] = state["agent_pos"][1, 0]  # runner_2 of world 1 on the tagger
    envs.batched.set_state({"agent_pos": state["agent_pos"]})
    noop = np.zeros((22, 2), dtype=np.int64)
    _, rew, term, trunc, _ = envs.step(noop)
    assert rew[11 + 3] < 0 and not (term | trunc).any()
    for _ in range(4):
        _, rew, term, trunc, _ = envs.step(noop)
    assert (term | trunc).all() and not (term & trunc).any()
    assert term[11 + 3] and term.sum() == 1  # the runner that left is terminated, the rest truncated
