"""Classic control through Gymnasium's front ends: ``gym.make_vec("war_envs/<id>")`` agrees with
``SyncVectorEnv`` over Gymnasium's *own* env (``gym.make("<id>")``) in every autoreset mode,
given the same states and actions, and both front ends hand out Gymnasium's own spaces.

States are Gymnasium's: after each reset (Gymnasium's draws and ours differ: they are compared
statistically in the scenario tests) Gymnasium's new start state is copied into our world with
``set_state``, so whole runs through terminations, truncations and resets are compared step for
step: observations and rewards to 1e-10 in float64 worlds (float32 observations: the same
float32 number), flags and the infos' layout exactly.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import war_envs  # noqa: F401  (registers war_envs/<id>)
from war_envs.frontends.single_agent import SingleAgentEnv, SingleAgentVectorEnv

CLASSIC = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
# short episodes so a run sees truncations; CartPole/Acrobot also terminate under random actions
LENGTH = {"CartPole-v1": 40, "Acrobot-v1": 30, "MountainCar-v0": 25, "MountainCarContinuous-v0": 25,
          "Pendulum-v1": 25}
# Gymnasium's checker warns about Gymnasium's own spaces (infinite bounds, Pendulum's [-2, 2] torque)
pytestmark = [pytest.mark.filterwarnings("ignore:.*Box observation space m:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*symmetric and normalized space:UserWarning")]
MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
W = 5


def _reference_states(ref: SyncVectorEnv) -> np.ndarray:
    return np.stack([np.asarray(env.unwrapped.state, dtype=np.float64) for env in ref.envs])


def _copy_states(ours, ref: SyncVectorEnv, worlds: np.ndarray) -> np.ndarray:
    """Gymnasium's state of ``worlds`` into our worlds (clock at 0, as after a reset); returns
    our observations for them as Gymnasium would hand them out."""
    idx = np.flatnonzero(worlds)
    if idx.size:
        states = _reference_states(ref)[idx]
        ours.batched.set_state({"state": states, "t": np.zeros(idx.size, dtype=np.int32)}, worlds=idx)
    return ours.batched.observations()["agent"].numpy()[:, 0].astype(np.float32)


def _actions(space: gym.spaces.Space, rng: np.random.Generator, steps: int) -> list[np.ndarray]:
    """Random actions; Box tasks also get values outside the bounds (both clip them)."""
    if isinstance(space, gym.spaces.MultiDiscrete):
        return [rng.integers(0, space.nvec) for _ in range(steps)]
    low, high = space.low, space.high
    return [rng.uniform(low * 1.5, high * 1.5).astype(np.float32) for _ in range(steps)]


def _close(a, b, path: str) -> None:
    assert type(a) is type(b), f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        assert set(a) == set(b), f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            _close(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert a.shape == b.shape, path
        for i, (x, y) in enumerate(zip(a, b)):
            assert (x is None) == (y is None), f"{path}[{i}]"
            if x is not None:
                _close(x, y, f"{path}[{i}]")
    else:
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 if a.dtype == np.float64 else 1e-7, err_msg=path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("env_id", CLASSIC)
def test_make_vec_is_sync_vector_env_of_gymnasiums_env(env_id, mode):
    length = LENGTH[env_id]
    ours = gym.make_vec(f"war_envs/{env_id}", num_envs=W, autoreset_mode=mode, precision="float64",
                        max_episode_steps=length)
    ref = SyncVectorEnv([lambda: gym.make(env_id, max_episode_steps=length) for _ in range(W)],
                        autoreset_mode=mode)
    assert isinstance(ours, SingleAgentVectorEnv)
    for name in ("single_observation_space", "single_action_space", "observation_space", "action_space"):
        assert getattr(ours, name) == getattr(ref, name), name
    ref_obs, ref_info = ref.reset(seed=3)
    _, our_info = ours.reset(seed=3)
    assert our_info == ref_info == {}
    _close(_copy_states(ours, ref, np.ones(W, dtype=bool)), ref_obs, "reset obs")
    rng = np.random.default_rng(0)
    ends = resets = 0
    restarting = np.zeros(W, dtype=bool)
    for t, action in enumerate(_actions(ours.action_space, rng, 4 * length)):
        obs, rew, term, trunc, info = ours.step(action)
        r_obs, r_rew, r_term, r_trunc, r_info = ref.step(action)
        done = r_term | r_trunc
        np.testing.assert_array_equal(term, r_term, err_msg=f"step {t} terminated")
        np.testing.assert_array_equal(trunc, r_trunc, err_msg=f"step {t} truncated")
        _close(rew, r_rew, f"step {t} reward")
        _close(info, r_info, f"step {t} info")  # SAME_STEP: final_obs / final_info where done
        # worlds whose returned observation is a fresh start: Gymnasium's start, copied into ours
        fresh = done if mode == AutoresetMode.SAME_STEP else restarting
        kept = ~fresh
        _close(obs[kept], r_obs[kept], f"step {t} obs")
        obs = _copy_states(ours, ref, fresh)
        _close(obs, r_obs, f"step {t} obs after copying the starts")
        resets += int(fresh.sum())
        ends += int(done.sum())
        restarting = done if mode == AutoresetMode.NEXT_STEP else np.zeros(W, dtype=bool)
        if mode == AutoresetMode.DISABLED and done.any():
            r_obs, _ = ref.reset(options={"reset_mask": done.copy()})
            ours.reset(options={"reset_mask": done.copy()})
            _close(_copy_states(ours, ref, done), r_obs, f"step {t} reset_mask obs")
            resets += int(done.sum())
    assert ends > 0 and resets > 0, "the run must end and restart episodes"
    ours.close()
    ref.close()


@pytest.mark.parametrize("env_id", CLASSIC)
def test_gym_make_has_gymnasiums_spaces_and_passes_check_env(env_id):
    env = gym.make(f"war_envs/{env_id}")
    reference = gym.make(env_id)
    assert isinstance(env.unwrapped, SingleAgentEnv)
    assert env.observation_space == reference.observation_space
    assert env.action_space == reference.action_space
    check_env(env.unwrapped)
    obs, info = env.reset(seed=1)
    assert info == {} and obs.dtype == np.float32 and env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool and info == {}
    env.close()
    reference.close()


@pytest.mark.parametrize("env_id", CLASSIC)
def test_gym_make_replays_gymnasiums_env(env_id):
    """One world, float64: Gymnasium's start state copied in, the same actions, a whole episode."""
    env = gym.make(f"war_envs/{env_id}", precision="float64")
    reference = gym.make(env_id)
    reference.reset(seed=5)
    env.reset(seed=5)
    batched = env.unwrapped.batched
    batched.set_state({"state": np.asarray(reference.unwrapped.state, dtype=np.float64)[None]})
    reference.action_space.seed(2)
    for t in range(1000):
        action = reference.action_space.sample()
        out = env.step(action)
        ref = reference.step(action)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), out, ref):
            if name == "obs":
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=f"step {t} obs")
                assert a.dtype == b.dtype
            elif name == "reward":
                assert a == pytest.approx(float(b), rel=1e-10, abs=1e-10), f"step {t} reward"
            else:
                assert a == b, f"step {t} {name}"
        if out[2] or out[3]:
            break
    assert out[2] or out[3], "the episode must end within 1000 steps"


def test_bad_actions_are_refused_with_clear_errors():
    envs = gym.make_vec("war_envs/CartPole-v1", num_envs=3)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: expected Discrete\(2\).*got 2 at world 1"):
        envs.step(np.array([0, 2, 1]))
    with pytest.raises(ValueError, match=r"actions: expected shape \(3,\)"):
        envs.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(TypeError, match="integer dtype"):
        envs.step(np.zeros(3))
    envs.close()
    pend = gym.make_vec("war_envs/Pendulum-v1", num_envs=2)
    pend.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        pend.step(np.array([[np.nan], [0.0]], dtype=np.float32))
    with pytest.raises(ValueError, match=r"expected shape \(2, 1\)"):
        pend.step(np.zeros(2, dtype=np.float32))
    pend.step(np.array([[5.0], [-7.0]], dtype=np.float32))  # clipped, as Gymnasium's Pendulum does
    pend.close()
    strict = gym.make_vec("war_envs/Pendulum-v1", num_envs=2, strict_actions=True)
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        strict.step(np.array([[5.0], [0.0]], dtype=np.float32))
    strict.close()
    single = gym.make("war_envs/CartPole-v1")
    single.reset(seed=0)
    with pytest.raises(ValueError, match=r"action: expected Discrete\(2\)"):
        single.step(3)
    with pytest.raises(TypeError, match="does not take 'flat'"):
        gym.make("war_envs/CartPole-v1", flat=True)
    single.close()


def test_registration_declares_single_agent_ids():
    for env_id in CLASSIC:
        spec = gym.spec(f"war_envs/{env_id}")
        assert spec.entry_point.endswith("SingleAgentEnv"), spec.entry_point
        assert spec.vector_entry_point.endswith("SingleAgentVectorEnv"), spec.vector_entry_point
        assert war_envs.registry.is_single_agent(env_id)
    assert not war_envs.registry.is_single_agent("Spread-v0")
    with pytest.raises(TypeError, match="single_agent: expected a bool"):
        war_envs.registry.add("X-v0", "x:y", single_agent="yes")
