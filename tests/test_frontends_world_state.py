"""The world state through the front ends (``world_state=True``; SMAX-v0, the scenario that
declares one): PettingZoo's ``state()`` / ``state_space`` and Gymnasium's ``info["world_state"]``
hand out JaxMARL's ``get_world_state`` — the batched env's ``world_state()``, which
``tests/test_smax_reference.py`` compares with JaxMARL's at every replayed step — for the
observation handed out: at reset, every step, a world reset in a step (its new episode's) and, with
SAME_STEP, the finished episode's last one in ``final_info``; the native vector env equals
``SyncVectorEnv`` over ``gym.make``; PettingZoo's and Gymnasium's checkers pass; a scenario without
a world state, or a non-bool, is refused naming the argument."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import war_envs
from test_gymnasium import assert_same

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*(minimum|maximum) (observation|state) space value is.*infinity"),
    pytest.mark.filterwarnings("ignore:Observation numpy array is all zeros"),
]

SMAX = "SMAX-v0"
GYM_ID = "war_envs/SMAX-v0"
SHORT = {"max_steps": 20}  # random play ends episodes within the test


def batched_world_state(batched, world=0) -> np.ndarray:
    return batched.world_state()[world].detach().cpu().numpy().copy()


def parallel_env_class():
    pytest.importorskip("pettingzoo")
    from war_envs.frontends.pettingzoo import ParallelEnv, aec_env

    return ParallelEnv, aec_env


# ---------------------------------------------------------------------- PettingZoo
@pytest.mark.parametrize("kw", [pytest.param({}, id="3m"), pytest.param({"map_name": "2s3z"}, id="2s3z")])
def test_pettingzoo_state_is_the_world_state(kw):
    ParallelEnv, _ = parallel_env_class()
    env = ParallelEnv(SMAX, world_state=True, **kw, **SHORT)
    plain = ParallelEnv(SMAX, **kw, **SHORT)
    units = env.batched.num_units
    assert env.state_space.shape == (12 * units,) == (env.batched.world_state_dim,)
    assert plain.state_space.shape == (plain.batched.state_dim,)   # mpe2's state(): observations
    obs, _ = env.reset(seed=3)
    plain.reset(seed=3)
    steps = 0
    while True:
        state = env.state()
        assert state.dtype == np.float32 and env.state_space.contains(state)
        np.testing.assert_array_equal(state, batched_world_state(env.batched))
        # the world state holds what no observation does (every unit's absolute position, health)
        assert state.shape != plain.state().shape
        state[:] = 7.0                                  # a copy: the world is unchanged
        np.testing.assert_array_equal(env.state(), batched_world_state(env.batched))
        if not env.agents:
            break
        actions = {a: env.action_space(a).sample() for a in env.agents}
        env.step(actions)
        plain.step(actions)
        steps += 1
    assert steps >= 1
    # the last state is the finished episode's: a dead unit's own features are zeros
    alive = np.concatenate([m[0].cpu().numpy() for m in env.batched.alive_mask.values()])
    own = env.state()[: 10 * units].reshape(units, 10)[: len(alive)]
    assert not own[~alive].any()
    env.close()
    plain.close()


def test_pettingzoo_checkers_pass_with_the_world_state():
    ParallelEnv, aec_env = parallel_env_class()
    from pettingzoo.test import api_test, parallel_api_test

    env = ParallelEnv(SMAX, world_state=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*max_cycles is fixed at construction.*")
        parallel_api_test(env, num_cycles=100)
    env.close()
    aec = aec_env(SMAX, world_state=True)
    api_test(aec, num_cycles=100)
    assert aec.state().shape == aec.unwrapped.state_space.shape
    aec.close()


def test_pettingzoo_refuses_a_world_state_a_scenario_lacks():
    ParallelEnv, _ = parallel_env_class()
    with pytest.raises(TypeError, match="world_state: Spread-v0 declares no world state"):
        ParallelEnv("Spread-v0", world_state=True)
    with pytest.raises(TypeError, match="world_state"):
        ParallelEnv(SMAX, world_state="yes")


def test_torchrl_pettingzoo_wrapper_hands_the_world_state_on_as_state():
    ParallelEnv, _ = parallel_env_class()
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # TorchRL's note on the PettingZoo version it was tested with
        env = PettingZooWrapper(ParallelEnv(SMAX, world_state=True), use_mask=True, return_state=True)
    dim = env._env.batched.world_state_dim
    td = env.reset()
    assert env.observation_spec["state"].shape == (dim,)
    for _ in range(3):
        td = env.rand_step(td)
        np.testing.assert_array_equal(td["next", "state"].numpy(), batched_world_state(env._env.batched))
        td = td["next"]
    env.close()


def test_pettingzoo_world_state_survives_pickling():
    ParallelEnv, _ = parallel_env_class()
    import pickle

    env = pickle.loads(pickle.dumps(ParallelEnv(SMAX, world_state=True)))
    env.reset(seed=0)
    assert env.world_state and env.state().shape == (env.batched.world_state_dim,)
    env.close()


# ---------------------------------------------------------------------- Gymnasium
@pytest.mark.parametrize("flat", [False, True], ids=["dict", "flat"])
def test_gym_make_info_carries_the_world_state(flat):
    env = gym.make(GYM_ID, world_state=True, flat=flat, **SHORT)
    batched = env.unwrapped.batched
    _, info = env.reset(seed=1)
    np.testing.assert_array_equal(info["world_state"], batched_world_state(batched))
    assert info["world_state"].dtype == np.float32 and info["world_state"].shape == (batched.world_state_dim,)
    env.action_space.seed(1)
    for t in range(60):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        np.testing.assert_array_equal(info["world_state"], batched_world_state(batched), err_msg=f"step {t}")
        if terminated or truncated:
            _, info = env.reset()
            np.testing.assert_array_equal(info["world_state"], batched_world_state(batched))
    env.close()
    plain = gym.make(GYM_ID)
    assert "world_state" not in plain.reset(seed=1)[1]
    assert "world_state" not in plain.step(plain.action_space.sample())[-1]
    plain.close()


def test_check_env_passes_with_the_world_state():
    env = gym.make(GYM_ID, world_state=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_make_vec_world_state_matches_sync_vector_env_and_batched(mode):
    W = 3
    native = gym.make_vec(GYM_ID, num_envs=W, vectorization_mode="vector_entry_point", autoreset_mode=mode,
                          world_state=True, **SHORT)
    sync = SyncVectorEnv([lambda: gym.make(GYM_ID, world_state=True, **SHORT)] * W, autoreset_mode=mode)
    batched = native.unwrapped.batched
    out_native, out_sync = native.reset(seed=5), sync.reset(seed=5)
    assert_same(out_native, out_sync, "reset")
    native.action_space.seed(5)
    done_seen = finals_seen = 0
    for t in range(80):
        info = out_native[-1]
        expected = np.stack([batched_world_state(batched, w) for w in range(W)])
        where = info["_world_state"]
        assert info["world_state"].dtype == np.float32
        np.testing.assert_array_equal(info["world_state"], np.where(where[:, None], expected, 0))
        action = native.action_space.sample()
        out_native, out_sync = native.step(action), sync.step(action)
        assert_same(out_native, out_sync, f"step {t}")
        assert out_native[-1]["_world_state"].all()   # every world's, for the observation handed out
        final = out_native[-1].get("final_info", {})
        if "world_state" in final:                    # SAME_STEP: the finished episodes' last ones
            finals_seen += 1
            ended = out_native[-1]["_final_info"]
            np.testing.assert_array_equal(final["_world_state"], ended)
            assert final["world_state"][ended].any(axis=1).all()
        done = out_native[2] | out_native[3]
        done_seen += int(done.sum())
        if mode == AutoresetMode.DISABLED and done.any():
            out_native = native.reset(options={"reset_mask": done.copy()})
            out_sync = sync.reset(options={"reset_mask": done.copy()})
            assert_same(out_native, out_sync, f"reset_mask {t}")
            np.testing.assert_array_equal(out_native[1]["_world_state"], done)
    assert done_seen >= 4
    assert (finals_seen >= 1) == (mode == AutoresetMode.SAME_STEP)
    native.close()
    sync.close()


def test_gymnasium_refuses_a_world_state_a_scenario_lacks():
    with pytest.raises(TypeError, match="world_state: Spread-v0 declares no world state"):
        gym.make("war_envs/Spread-v0", world_state=True)
    with pytest.raises(TypeError, match="world_state: Spread-v0 declares no world state"):
        gym.make_vec("war_envs/Spread-v0", num_envs=2, vectorization_mode="vector_entry_point", world_state=True)
    with pytest.raises(TypeError, match="world_state"):
        gym.make(GYM_ID, world_state=1)
    assert war_envs.make(SMAX, num_envs=1).world_state_dim > 0
