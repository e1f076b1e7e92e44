"""Gymnasium front end: gym.make (JointEnv) passes check_env; gym.make_vec (native VectorEnv)
agrees step for step with SyncVectorEnv over gym.make in every autoreset mode."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import war_envs
from war_envs.frontends.gymnasium import JointEnv, VectorEnv, register_gymnasium

register_gymnasium()  # idempotent; import war_envs is expected to have done it already

SPREAD = "war_envs/Spread-v0"
PREY = "war_envs/PredatorPrey-v0"
ALL_MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]

# Warnings that are not the front end's to fix: mpe2 declares Box(-inf, inf) observations,
# and check_env on a gym.make env always notes that it is wrapped.
_EXPECTED_WARNINGS = ("infinity", "different from the unwrapped version")


def _unexpected(records) -> list[str]:
    messages = [str(r.message) for r in records if issubclass(r.category, UserWarning)]
    return [m for m in messages if not any(s in m for s in _EXPECTED_WARNINGS)]


# ------------------------------------------------------------------------ comparison helper
def assert_same(a, b, path="value"):
    """Structural equality for Gymnasium returns: dicts (same keys), numpy arrays (dtype, shape,
    values bitwise), object arrays (element-wise), scalars."""
    if isinstance(a, dict):
        assert isinstance(b, dict), f"{path}: dict vs {type(b).__name__}"
        assert set(a) == set(b), f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a).__name__} vs {type(b).__name__}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and a.shape == b.shape, path
        for i, (x, y) in enumerate(zip(a, b)):
            if x is None or y is None:
                assert x is None and y is None, f"{path}[{i}]: {x!r} vs {y!r}"
            else:
                assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{path}: ndarray vs {type(b).__name__}"
        assert a.dtype == b.dtype, f"{path}: dtype {a.dtype} vs {b.dtype}"
        assert a.shape == b.shape, f"{path}: shape {a.shape} vs {b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        assert type(a) is type(b) and a == b, f"{path}: {a!r} vs {b!r}"


# ------------------------------------------------------------------------ registration
def test_register_gymnasium_registers_every_id_idempotently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-registering would warn "Overriding environment"
        ids = register_gymnasium()
        assert register_gymnasium() == ids
    assert ids == [f"war_envs/{i}" for i in war_envs.registered_ids()]
    for gym_id in ids:
        spec = gym.spec(gym_id)
        assert spec.max_episode_steps is None
        assert spec.vector_entry_point is not None
        assert spec.entry_point is not None


# ------------------------------------------------------------------------ gym.make / check_env
@pytest.mark.parametrize("gym_id", [SPREAD, PREY])
@pytest.mark.parametrize("continuous", [False, True])
def test_check_env(gym_id, continuous):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        env = gym.make(gym_id, continuous_actions=continuous)
        check_env(env.unwrapped)
        check_env(env)
        env.close()
    assert not _unexpected(records), _unexpected(records)
    assert isinstance(env.unwrapped, JointEnv)


def test_joint_env_returns_copies_in_spaces_and_sums_rewards():
    env = gym.make(PREY)
    obs, info = env.reset(seed=3)
    assert info == {}
    assert env.observation_space.contains(obs)
    env.action_space.seed(0)
    first = {k: o.copy() for k, o in obs.items()}
    for _ in range(30):
        obs2, reward, term, trunc, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs2)
        assert isinstance(reward, float) and type(term) is bool and type(trunc) is bool
        assert set(info["rewards"]) == set(env.unwrapped.agents)
        assert reward == sum(info["rewards"][a] for a in env.unwrapped.agents)
        assert info["collisions"].shape == (4,) and info["boundary_penalty"].shape == (4,)
        if term or trunc:
            break
    assert_same(obs, first)  # the first observation was not overwritten by later steps
    assert trunc and not term  # max_cycles=25


def test_joint_env_seeding_semantics():
    env = gym.make(SPREAD)
    a, _ = env.reset(seed=11)
    b, _ = env.reset(seed=11)
    assert_same(a, b)
    c, _ = env.reset()  # continues the stream: a new start
    assert not np.array_equal(c["agent_0"], a["agent_0"])
    other = gym.make(SPREAD)
    other.reset(seed=11)
    d, _ = other.reset()
    assert_same(c, d)  # ... deterministically


def test_gym_make_max_episode_steps_is_a_time_limit():
    env = gym.make(SPREAD, max_episode_steps=7)
    env.reset(seed=0)
    for t in range(1, 8):
        _, _, term, trunc, _ = env.step({a: 0 for a in env.unwrapped.agents})
    assert t == 7 and trunc and not term


def test_render_rgb_array():
    env = gym.make(SPREAD, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (700, 700, 3) and frame.dtype == np.uint8
    assert (frame != 255).any()
    assert env.metadata["render_fps"] > 0 and "rgb_array" in env.metadata["render_modes"]
    envs = gym.make_vec(SPREAD, num_envs=2, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 2 and frames[0].shape == (700, 700, 3)
    np.testing.assert_array_equal(frames[0], frame)  # world 0 seeded 0 == the joint env seeded 0
    with pytest.raises(ValueError, match="render_mode"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gym.make warns about the mode before we raise
        gym.make(SPREAD, render_mode="ansi")


# ------------------------------------------------------------------------ bad input
def test_unknown_and_reserved_kwargs_raise_clear_errors():
    with pytest.raises(TypeError, match="unknown keyword argument.*'foo'"):
        gym.make(SPREAD, foo=1)
    with pytest.raises(TypeError, match="make_vec"):
        gym.make(SPREAD, num_envs=4)
    with pytest.raises(TypeError, match=r"reset\(seed"):
        gym.make(SPREAD, seed=1)
    with pytest.raises(TypeError, match="unknown keyword argument.*'foo'"):
        gym.make_vec(SPREAD, num_envs=2, foo=1)
    with pytest.raises(ValueError, match="autoreset_mode"):
        gym.make_vec(SPREAD, num_envs=2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="max_episode_steps.*max_cycles"):
        gym.make_vec(SPREAD, num_envs=2, max_episode_steps=10, max_cycles=20)


def _twin_joint(**kw):
    env, twin = gym.make(SPREAD, **kw), gym.make(SPREAD, **kw)
    env.reset(seed=5)
    twin.reset(seed=5)
    return env, twin


@pytest.mark.parametrize("bad, error, pattern", [
    ({"agent_0": 0, "agent_1": 0}, ValueError, r"missing \['agent_2'\]"),
    ({"agent_0": 0, "agent_1": 0, "agent_2": 0, "agent_9": 0}, ValueError, r"unknown \['agent_9'\]"),
    ({"agent_0": 0, "agent_1": 5, "agent_2": 0}, ValueError, r"action\['agent_1'\].*Discrete\(5\).*got 5"),
    ({"agent_0": 0, "agent_1": -1, "agent_2": 0}, ValueError, r"action\['agent_1'\].*got -1"),
    ({"agent_0": 0, "agent_1": 0, "agent_2": 1.0}, TypeError, r"action\['agent_2'\].*Discrete\(5\).*float"),
    ({"agent_0": True, "agent_1": 0, "agent_2": 0}, TypeError, r"action\['agent_0'\]"),
    ({"agent_0": np.array([1, 2]), "agent_1": 0, "agent_2": 0}, ValueError,
     r"action\['agent_0'\].*expected shape \(\), got \(2,\)"),
    ([0, 0, 0], TypeError, "action: expected a dict"),
])
def test_joint_bad_discrete_actions_leave_env_unchanged(bad, error, pattern):
    env, twin = _twin_joint()
    with pytest.raises(error, match=pattern):
        env.step(bad)
    good = {"agent_0": 1, "agent_1": 2, "agent_2": np.int64(4)}
    assert_same(env.step(good), twin.step(good))


@pytest.mark.parametrize("agent_1, error, pattern", [
    (np.full(5, 0.5, np.float32)[:4], ValueError, r"action\['agent_1'\].*expected shape \(5,\), got \(4,\)"),
    (np.array([0.5, np.nan, 0, 0, 0], np.float32), ValueError, r"action\['agent_1'\].*NaN"),
    (np.array([0.5, 1.5, 0, 0, 0], np.float32), ValueError, r"action\['agent_1'\].*\[0.0, 1.0\].*got 1.5"),
    (np.array([0, 1, 0, 0, 0]), TypeError, r"action\['agent_1'\].*floating dtype.*int64"),
])
def test_joint_bad_box_actions_leave_env_unchanged(agent_1, error, pattern):
    env, twin = _twin_joint(continuous_actions=True)
    ok = np.array([0.1, 0.9, 0.0, 0.3, 1.0], np.float32)
    with pytest.raises(error, match=pattern):
        env.step({"agent_0": ok, "agent_1": agent_1, "agent_2": ok})
    good = {"agent_0": ok, "agent_1": ok, "agent_2": ok.astype(np.float64)}
    assert_same(env.step(good), twin.step(good))


def test_vector_bad_actions_leave_env_unchanged():
    envs = gym.make_vec(SPREAD, num_envs=3)
    twin = gym.make_vec(SPREAD, num_envs=3)
    envs.reset(seed=2)
    twin.reset(seed=2)
    good = {a: np.array([0, 1, 4]) for a in envs.unwrapped.agents}
    cases = [
        ({**good, "agent_2": np.array([0, 1])}, ValueError, r"actions\['agent_2'\].*expected shape \(3,\)"),
        ({**good, "agent_1": np.array([0, 7, 1])}, ValueError, r"actions\['agent_1'\].*got 7 at world 1"),
        ({**good, "agent_0": np.array([0.0, 1.0, 1.0])}, TypeError, r"actions\['agent_0'\].*integer dtype"),
        ({k: v for k, v in good.items() if k != "agent_0"}, ValueError, r"missing \['agent_0'\]"),
    ]
    for bad, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            envs.step(bad)
    assert_same(envs.step(good), twin.step(good))


def test_vector_reset_argument_errors():
    envs = gym.make_vec(SPREAD, num_envs=3)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="num_envs=3"):
        envs.reset(seed=[1, 2])
    with pytest.raises(TypeError, match="reset_mask"):
        envs.reset(options={"reset_mask": [True, False, True]})
    with pytest.raises(TypeError, match="reset_mask.*bool"):
        envs.reset(options={"reset_mask": np.array([1, 0, 1])})
    with pytest.raises(ValueError, match="reset_mask.*at least one"):
        envs.reset(options={"reset_mask": np.zeros(3, bool)})
    with pytest.raises(ValueError, match="options"):
        envs.reset(options={"foo": 1})


def test_disabled_mode_refuses_to_step_a_finished_world():
    envs = gym.make_vec(SPREAD, num_envs=2, autoreset_mode=AutoresetMode.DISABLED, max_episode_steps=2)
    envs.reset(seed=0)
    act = {a: np.zeros(2, np.int64) for a in envs.unwrapped.agents}
    envs.step(act)
    _, _, _, trunc, _ = envs.step(act)
    assert trunc.all()
    with pytest.raises(RuntimeError, match="reset_mask"):
        envs.step(act)
    envs.reset(options={"reset_mask": np.array([True, True])})
    envs.step(act)


# ------------------------------------------------------------------------ make_vec
@pytest.mark.parametrize("mode", [None, *ALL_MODES, "same_step", "Disabled"])
def test_make_vec_is_native_and_declares_autoreset_mode(mode):
    kw = {} if mode is None else {"autoreset_mode": mode}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # make_vec warns if autoreset_mode metadata is missing
        envs = gym.make_vec(SPREAD, num_envs=4, **kw)
    assert isinstance(envs, VectorEnv) and envs.num_envs == 4
    expected = {None: AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP,
                "Disabled": AutoresetMode.DISABLED}.get(mode, mode)
    assert envs.metadata["autoreset_mode"] is expected
    assert envs.batched.num_envs == 4
    assert envs.single_observation_space == gym.make(SPREAD).observation_space
    assert envs.single_action_space == gym.make(SPREAD).action_space
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs) and info == {}
    envs.action_space.seed(0)
    action = envs.action_space.sample()
    assert envs.action_space.contains(action)
    obs, rew, term, trunc, info = envs.step(action)
    assert envs.observation_space.contains(obs)
    assert rew.dtype == np.float64 and rew.shape == (4,)
    assert term.dtype == np.bool_ and trunc.shape == (4,)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_make_vec_honours_max_episode_steps(mode):
    envs = gym.make_vec(SPREAD, num_envs=2, autoreset_mode=mode, max_episode_steps=6)
    assert envs.batched.max_cycles == 6
    envs.reset(seed=0)
    act = {a: np.zeros(2, np.int64) for a in envs.unwrapped.agents}
    truncs = [envs.step(act)[3].copy() for _ in range(6)]
    assert not np.any(truncs[:5]) and truncs[5].all()


# ------------------------------------------------------------------------ step-for-step vs SyncVectorEnv
def _run_against_sync(gym_id, mode, *, num_envs=3, steps=60, seed=7, max_episode_steps=None,
                      partial_reset_at=9, **kwargs):
    """Drive make_vec and SyncVectorEnv over gym.make with the same seeds and actions and
    compare every return."""
    vec_kw = dict(kwargs)
    make_kw = dict(kwargs)
    if max_episode_steps is not None:
        vec_kw["max_episode_steps"] = max_episode_steps
        make_kw["max_episode_steps"] = max_episode_steps
    native = gym.make_vec(gym_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                          autoreset_mode=mode, **vec_kw)
    sync = SyncVectorEnv([lambda: gym.make(gym_id, **make_kw)] * num_envs, autoreset_mode=mode)
    assert native.single_observation_space == sync.single_observation_space
    assert native.single_action_space == sync.single_action_space
    assert native.action_space == sync.action_space
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]

    assert_same(native.reset(seed=seed), sync.reset(seed=seed), "reset")
    native.action_space.seed(seed)
    seen = {"done": 0, "terminated": 0, "final_obs": 0, "partial": 0}
    for t in range(steps):
        action = native.action_space.sample()
        out_native = native.step(action)
        out_sync = sync.step(action)
        assert_same(out_native, out_sync, f"step {t}")
        obs, _, term, trunc, info = out_native
        assert native.observation_space.contains(obs)
        done = term | trunc
        seen["done"] += int(done.sum())
        seen["terminated"] += int(term.sum())
        seen["final_obs"] += int("final_obs" in info)
        if mode == AutoresetMode.DISABLED and done.any():
            mask = done.copy()
            assert_same(native.reset(options={"reset_mask": mask}),
                        sync.reset(options={"reset_mask": mask.copy()}), f"reset_mask {t}")
        elif t == partial_reset_at:
            # desynchronise the worlds' episode clocks: reset world 1 only, with a seed list
            mask = np.zeros(num_envs, dtype=np.bool_)
            mask[1] = True
            seeds = [None] * num_envs
            seeds[1] = 1234
            assert_same(native.reset(seed=seeds, options={"reset_mask": mask}),
                        sync.reset(seed=list(seeds), options={"reset_mask": mask.copy()}),
                        f"partial reset {t}")
            seen["partial"] += 1
    native.close()
    sync.close()
    return seen


@pytest.mark.parametrize("mode", ALL_MODES)
def test_make_vec_matches_sync_vector_env_spread_discrete(mode):
    seen = _run_against_sync(SPREAD, mode)
    assert seen["done"] >= 5  # two episodes per world (world 1 restarted at step 9)
    if mode == AutoresetMode.SAME_STEP:
        assert seen["final_obs"] >= 2
    if mode != AutoresetMode.DISABLED:
        assert seen["partial"] == 1


@pytest.mark.parametrize("mode", ALL_MODES)
def test_make_vec_matches_sync_vector_env_predator_prey_continuous(mode):
    seen = _run_against_sync(PREY, mode, continuous_actions=True, terminate_on_success=True,
                             steps=60, seed=3)
    assert seen["done"] >= 5 and seen["terminated"] >= 1  # success terminations too


@pytest.mark.parametrize("mode", ALL_MODES)
def test_make_vec_max_episode_steps_matches_sync_time_limit(mode):
    # SyncVectorEnv gets gym.make(..., max_episode_steps=10) (a TimeLimit), make_vec sets max_cycles
    seen = _run_against_sync(SPREAD, mode, max_episode_steps=10, steps=35)
    assert seen["done"] >= 3 * 3


def test_seed_lists_match_sync_vector_env():
    native = gym.make_vec(SPREAD, num_envs=3)
    sync = SyncVectorEnv([lambda: gym.make(SPREAD)] * 3)
    for seeds in ([4, 5, 6], [9, 9, 0], [None, 2, None]):
        assert_same(native.reset(seed=seeds), sync.reset(seed=list(seeds)), f"seed={seeds}")
    # world i of make_vec seeded s == a joint env seeded s + i
    obs, _ = native.reset(seed=20)
    joint = gym.make(SPREAD)
    single, _ = joint.reset(seed=22)
    assert_same({a: o[2] for a, o in obs.items()}, single)


def test_float64_worlds_match_sync_and_pass_check_env():
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        check_env(gym.make(SPREAD, precision="float64").unwrapped)
    assert not _unexpected(records), _unexpected(records)
    _run_against_sync(SPREAD, AutoresetMode.SAME_STEP, steps=30, precision="float64")
