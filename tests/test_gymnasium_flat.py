"""The flat joint view, ``gym.make("war_envs/<Id>", flat=True)``: flat ``MultiDiscrete`` /
``Box`` joint actions and a ``Box`` joint observation; ``check_env`` passes in both forms; the
flat env's trajectory is the ``Dict`` env's under the same seed and actions; SB3's
``PPO("MlpPolicy", ...)`` trains on it unmodified; bad ``flat`` values and bad flat actions
raise errors that say what was expected."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import war_envs  # noqa: F401  (registers the ids)
from war_envs.frontends.flat_joint import FlatJointLayout
from war_envs.frontends.gymnasium import JointEnv

# not the front end's to fix: Box(-inf, inf) observations, and check_env noting a wrapped env
_EXPECTED_WARNINGS = ("infinity", "different from the unwrapped version")

IDS = [
    ("Spread-v0", {}),
    ("Spread-v0", {"continuous_actions": True}),
    ("SpeakerListener-v0", {}),                         # groups with different Discrete sizes
    ("SpeakerListener-v0", {"continuous_actions": True}),  # Boxes of different widths
    ("Reference-v0", {}),                               # Discrete(50)
    ("Tag-v0", {"episode_length": 10}),                 # MultiDiscrete([11, 11]) per agent
    ("PredatorPrey-v0", {}),                            # groups observing different sizes
]
NAMES = ["spread", "spread-continuous", "speaker-listener", "speaker-listener-continuous", "reference",
         "tag", "predprey"]


def _unexpected(records) -> list[str]:
    messages = [str(r.message) for r in records if issubclass(r.category, UserWarning)]
    return [m for m in messages if not any(s in m for s in _EXPECTED_WARNINGS)]


@pytest.mark.parametrize("flat", [True, False], ids=["flat", "dict"])
@pytest.mark.parametrize("env_id,kw", IDS, ids=NAMES)
def test_check_env_passes_in_both_forms(env_id, kw, flat):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        env = gym.make(f"war_envs/{env_id}", flat=flat, **kw)
        check_env(env.unwrapped)
        check_env(env)
        env.close()
    assert not _unexpected(records), _unexpected(records)
    assert isinstance(env.unwrapped, JointEnv) and env.unwrapped.flat is flat
    expected = gym.spaces.Box if flat else gym.spaces.Dict
    assert isinstance(env.observation_space, expected)


def _agent_spaces(env: JointEnv):
    return [(name, env._layout.groups[g].action_space) for name, g, _ in env._layout.agents]


def test_flat_spaces_follow_agent_order():
    spread = gym.make("war_envs/Spread-v0", flat=True).unwrapped
    assert spread.action_space == gym.spaces.MultiDiscrete([5, 5, 5])
    assert spread.observation_space == gym.spaces.Box(-np.inf, np.inf, (54,), np.float32)

    sl = gym.make("war_envs/SpeakerListener-v0", flat=True).unwrapped
    assert sl.agents == ["speaker_0", "listener_0"]
    assert sl.action_space == gym.spaces.MultiDiscrete([3, 5])
    assert sl.observation_space.shape == (3 + 11,)

    ref = gym.make("war_envs/Reference-v0", flat=True).unwrapped
    assert ref.action_space == gym.spaces.MultiDiscrete([50, 50])

    tag = gym.make("war_envs/Tag-v0", flat=True, episode_length=10).unwrapped
    assert tag.action_space == gym.spaces.MultiDiscrete([11] * 2 * len(tag.agents))

    cont = gym.make("war_envs/SpeakerListener-v0", flat=True, continuous_actions=True).unwrapped
    assert cont.action_space == gym.spaces.Box(0.0, 1.0, (3 + 5,), np.float32)
    # bounds are each agent's own
    dict_view = gym.make("war_envs/SpeakerListener-v0", continuous_actions=True).unwrapped
    np.testing.assert_array_equal(cont.action_space.low, np.concatenate(
        [dict_view.action_space[a].low for a in dict_view.agents]))


def _to_dict(env: JointEnv, flat_action: np.ndarray) -> dict:
    """The test's own split of a flat action into {agent: action} (agent order)."""
    out, i = {}, 0
    for name, space in _agent_spaces(env):
        if isinstance(space, gym.spaces.Discrete):
            out[name] = int(flat_action[i])
            i += 1
        else:
            width = int(np.prod(space.shape))
            out[name] = flat_action[i:i + width].reshape(space.shape).astype(space.dtype)
            i += width
    assert i == flat_action.shape[0]
    return out


@pytest.mark.parametrize("env_id,kw", [
    ("Spread-v0", {"max_cycles": 6}),
    ("Spread-v0", {"continuous_actions": True, "max_cycles": 6}),
    ("SpeakerListener-v0", {"max_cycles": 6}),
    ("Tag-v0", {"episode_length": 6}),
], ids=["spread", "spread-continuous", "speaker-listener", "tag"])
def test_flat_trajectory_equals_the_dict_trajectory(env_id, kw):
    flat = gym.make(f"war_envs/{env_id}", flat=True, **kw).unwrapped
    dict_env = gym.make(f"war_envs/{env_id}", **kw).unwrapped
    flat.action_space.seed(3)
    seeds = [11, None]  # a seeded episode, then one that continues the stream
    for seed in seeds:
        obs_f, info_f = flat.reset(seed=seed)
        obs_d, info_d = dict_env.reset(seed=seed)
        assert info_f == info_d == {}
        assert obs_f.dtype == np.float32 and obs_f in flat.observation_space
        np.testing.assert_array_equal(obs_f, np.concatenate([obs_d[a] for a in dict_env.agents]))
        done = False
        while not done:
            action = flat.action_space.sample()
            obs_f, rew_f, term_f, trunc_f, info_f = flat.step(action)
            obs_d, rew_d, term_d, trunc_d, info_d = dict_env.step(_to_dict(dict_env, action))
            np.testing.assert_array_equal(obs_f, np.concatenate([obs_d[a] for a in dict_env.agents]))
            assert rew_f == rew_d and isinstance(rew_f, float)
            assert rew_f == pytest.approx(sum(info_f["rewards"].values()))
            assert (term_f, trunc_f) == (term_d, trunc_d)
            assert info_f.keys() == info_d.keys()
            for key in info_f:
                if isinstance(info_f[key], dict):
                    assert info_f[key] == info_d[key]
                else:
                    np.testing.assert_array_equal(info_f[key], info_d[key])
            done = term_f or trunc_f
        assert trunc_f  # the episode ran to its time limit


def test_mixed_box_and_discrete_agents_are_refused():
    obs = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
    agents = [("speaker_0", "speaker", gym.spaces.Discrete(3), obs),
              ("listener_0", "listener", gym.spaces.Box(0.0, 1.0, (5,), np.float32), obs)]
    with pytest.raises(ValueError, match=r"Mixed-v0: flat=True .* mixes them \(speaker_0: Discrete\(3\), "
                                         r"listener_0: Box\(0\.0, 1\.0, \(5,\), float32\)\); use flat=False"):
        FlatJointLayout(agents, "Mixed-v0")
    with pytest.raises(ValueError, match=r"supports Discrete, MultiDiscrete and Box .* use flat=False"):
        FlatJointLayout([("a", "g", gym.spaces.MultiBinary(3), obs)], "Odd-v0")


@pytest.mark.parametrize("bad", ["yes", 1, None, 0.0])
def test_bad_flat_values_raise_a_type_error(bad):
    with pytest.raises(TypeError, match=r"flat: expected a bool .*got"):
        gym.make("war_envs/Spread-v0", flat=bad)
    with pytest.raises(TypeError, match=r"flat: expected a bool"):
        JointEnv("Spread-v0", flat=bad)


def test_numpy_bools_are_accepted():
    assert JointEnv("Spread-v0", flat=np.True_).flat is True


def test_bad_flat_actions_name_the_entry_and_its_agent():
    env = gym.make("war_envs/SpeakerListener-v0", flat=True).unwrapped
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"one flat array; a \{agent: action\} dict is the flat=False form"):
        env.step({"speaker_0": 0, "listener_0": 0})
    with pytest.raises(ValueError, match=r"expected a MultiDiscrete\(\[3, 5\]\) joint action, got shape \(3,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError, match=r"integer dtype, got dtype float64"):
        env.step(np.zeros(2))
    with pytest.raises(ValueError, match=r"action\[1\] \(agent 'listener_0', entry 0 of its action\): "
                                         r"expected an integer in \[0, 4\], got 5"):
        env.step(np.array([0, 5]))
    with pytest.raises(TypeError, match=r"got int"):
        env.step(3)
    env.step([2, 4])  # lists are fine

    box = gym.make("war_envs/Spread-v0", flat=True, continuous_actions=True).unwrapped
    box.reset(seed=0)
    action = np.full(15, 0.5, dtype=np.float32)
    action[7] = 1.5
    with pytest.raises(ValueError, match=r"action\[7\] \(agent 'agent_1', entry 2 of its action\): "
                                         r"expected a value in \[0.0, 1.0\], got 1.5"):
        box.step(action)
    action[7] = np.nan
    with pytest.raises(ValueError, match=r"action\[7\] .* expected a finite value"):
        box.step(action)
    with pytest.raises(TypeError, match=r"floating dtype"):
        box.step(np.zeros(15, dtype=np.int64))


def test_make_vec_points_to_the_sync_vectorization():
    with pytest.raises(TypeError, match=r"vectorization_mode='sync', flat=True"):
        gym.make_vec("war_envs/Spread-v0", num_envs=2, flat=True)
    envs = gym.make_vec("war_envs/Spread-v0", num_envs=2, vectorization_mode="sync", flat=True)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 54)
    envs.step(envs.action_space.sample())
    envs.close()


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("continuous", [False, True], ids=["multidiscrete", "box"])
def test_sb3_ppo_mlp_policy_trains_on_the_flat_view(continuous):
    """SB3 unmodified: its own env checker, then PPO("MlpPolicy", env) for a couple of
    thousand steps (no learning claim)."""
    sb3 = pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    torch.set_num_threads(1)
    env = gym.make("war_envs/Spread-v0", flat=True, continuous_actions=continuous)
    sb3_check_env(env)
    model = sb3.PPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu", verbose=0)
    model.learn(2048 if not continuous else 1024)
    assert model.num_timesteps >= (2048 if not continuous else 1024)
    action, _ = model.predict(env.reset(seed=0)[0], deterministic=True)
    assert action in env.action_space
    env.close()
