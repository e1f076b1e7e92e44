"""Every bad input of the batch API gets a clear error naming the argument — and the env is
left usable and uncorrupted (it then steps exactly like an untouched twin)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import war_envs


# ----------------------------------------------------------------------------- make()
@pytest.mark.parametrize("kwargs,error,match", [
    ({"id": "Nope-v0"}, ValueError, "unknown scenario 'Nope-v0'"),
    ({"id": "Sprd-v0"}, ValueError, "did you mean"),
    ({"id": 3}, TypeError, "id: expected a str"),
    ({"num_envs": 0}, ValueError, "num_envs: expected an int >= 1, got 0"),
    ({"num_envs": -5}, ValueError, "num_envs"),
    ({"num_envs": 2.5}, TypeError, "num_envs: expected an int"),
    ({"num_envs": True}, TypeError, "num_envs"),
    ({"precision": "float16"}, ValueError, "precision: expected one of"),
    ({"device": "tpu"}, ValueError, "device: expected 'cpu'"),
    ({"device": "cuda:7"}, ValueError, "not available"),
    ({"seed": -1}, ValueError, "seed: expected an int >= 0"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"autoreset_mode": "sometimes"}, ValueError, "autoreset_mode"),
    ({"num_threads": 0}, ValueError, "num_threads"),
    ({"N": 0}, ValueError, "N: expected an int >= 1"),
    ({"local_ratio": 1.5}, ValueError, r"local_ratio: expected a float in \[0.0, 1.0\]"),
    ({"local_ratio": float("nan")}, ValueError, "local_ratio: expected a finite float"),
    ({"landmark_range": -0.1}, ValueError, r"landmark_range: expected a float in \[0.0, 1.0\]"),
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"continuous_actions": "yes"}, TypeError, "continuous_actions: expected a bool"),
    ({"num_agent_neighbors": 0}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": -2}, ValueError, "num_landmark_neighbors"),
    ({"curriculum": 1}, TypeError, "curriculum"),
    ({"terminate_on_success": None}, TypeError, "terminate_on_success"),
    ({"num_good": 1}, TypeError, r"unknown keyword argument\(s\) \['num_good'\]"),
    ({"colour": "red"}, TypeError, "unknown keyword argument"),
    ({"id": "SMAX-v0", "map_name": "3M"}, ValueError, r"map_name: unknown map '3M'.*did you mean \['3m'\]"),
    ({"id": "SMAX-v0", "map_name": "2s3z", "num_allies": 4}, ValueError, "num_allies: set by map_name='2s3z'"),
    ({"id": "SMAX-v0", "max_steps": "100"}, TypeError, "max_steps: expected an int"),
    ({"id": "SMAX-v0", "observation_type": "pixels"}, ValueError, "observation_type: expected one of"),
    ({"id": "SMAX-v0", "map": "3m"}, TypeError, r"unknown keyword argument\(s\) \['map'\]"),
])
def test_make_rejects_bad_arguments(kwargs, error, match):
    kwargs = dict(kwargs)
    env_id = kwargs.pop("id", "Spread-v0")
    with pytest.raises(error, match=match):
        war_envs.make(env_id, **kwargs)


@pytest.mark.parametrize("kwargs,match", [
    ({"num_good": 0}, "num_good"), ({"num_adversaries": 0}, "num_adversaries"),
    ({"num_obstacles": -1}, "num_obstacles"), ({"N": 3}, "unknown keyword"),
])
def test_make_predator_prey_rejects_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        war_envs.make("PredatorPrey-v0", **kwargs)


# ----------------------------------------------------------------------------- step()
def twins(env_id="PredatorPrey-v0", **kwargs):
    a = war_envs.make(env_id, num_envs=3, **kwargs)
    b = war_envs.make(env_id, num_envs=3, **kwargs)
    a.reset(seed=4)
    b.reset(seed=4)
    return a, b


def good_actions(env, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if env.continuous_actions:
        return {g: torch.rand((env.num_envs, s.n_agents, 5), generator=gen) for g, s in env.groups.items()}
    return {g: torch.randint(0, 5, (env.num_envs, s.n_agents), generator=gen) for g, s in env.groups.items()}


def assert_still_equal(bad, twin, steps=30):
    """The env that saw the bad input steps exactly like its untouched twin."""
    for k in range(steps):
        actions = good_actions(bad, seed=k)
        out_a = bad.step(actions)
        out_b = twin.step(actions)
        for part_a, part_b in zip(out_a[:4], out_b[:4]):
            for g in part_a:
                assert torch.equal(part_a[g], part_b[g])


DISCRETE_BAD = [
    (lambda a: {"adversary": a["adversary"]}, ValueError, r"actions: expected keys .* missing \['agent'\]"),
    (lambda a: {**a, "ghost": a["agent"]}, ValueError, r"unknown \['ghost'\]"),
    (lambda a: [a["adversary"], a["agent"]], TypeError, "actions: expected a dict"),
    (lambda a: {**a, "agent": a["agent"][:2]}, ValueError, r"actions\['agent'\]: expected shape \(3, 1\), got \(2, 1\)"),
    (lambda a: {**a, "agent": a["agent"][..., None]}, ValueError, r"expected shape \(3, 1\), got \(3, 1, 1\)"),
    (lambda a: {**a, "agent": a["agent"].float()}, TypeError, r"actions\['agent'\]: expected an integer dtype"),
    (lambda a: {**a, "agent": a["agent"].bool()}, TypeError, "integer dtype"),
    (lambda a: {**a, "agent": a["agent"] + 5}, ValueError, r"expected Discrete\(5\) actions in \[0, 4\], got \d"),
    (lambda a: {**a, "adversary": a["adversary"] - 5}, ValueError, r"actions\['adversary'\]: .* got -\d"),
    (lambda a: {**a, "agent": "left"}, TypeError, r"actions\['agent'\]: expected a torch.Tensor"),
    (lambda a: {**a, "agent": a["agent"].to("meta")}, ValueError, "expected a tensor on device cpu"),
]


@pytest.mark.parametrize("mutate,error,match", DISCRETE_BAD)
def test_bad_discrete_actions_are_refused_and_nothing_changes(mutate, error, match):
    env, twin = twins()
    with pytest.raises(error, match=match):
        env.step(mutate(good_actions(env)))
    assert_still_equal(env, twin)


def smax_available(env, seed=0):
    """Random actions among the available ones (SMAX-v0's action mask)."""
    gen = torch.Generator().manual_seed(seed)
    mask = env.action_mask()["ally"]
    return {"ally": torch.where(mask, torch.rand(mask.shape, generator=gen), -1.0).argmax(-1)}


#: SMAX-v0 (3m) at its start: the teams are 16 apart, so no attack is available yet
SMAX_BAD = [
    (lambda a: {"ally": torch.full_like(a["ally"], 5)}, ValueError,
     r"actions\['ally'\]: ally_0 \(world 0\) chose action 5 \(attack enemy_0\), which is unavailable now; "
     r"available: \[0, 1, 2, 3, 4\]"),
    (lambda a: {"ally": a["ally"] + 8}, ValueError, r"expected Discrete\(8\) actions in \[0, 7\]"),
]


@pytest.mark.parametrize("mutate,error,match", SMAX_BAD)
def test_unavailable_actions_are_refused_and_nothing_changes(mutate, error, match):
    env, twin = twins("SMAX-v0")
    with pytest.raises(error, match=match):
        env.step(mutate(smax_available(env)))
    for k in range(30):
        actions = smax_available(env, seed=k)
        for part_a, part_b in zip(env.step(actions)[:4], twin.step(actions)[:4]):
            assert torch.equal(part_a["ally"], part_b["ally"])


#: masks that user code builds (war_envs.core.validation.check_action_mask; GroupPolicy.act)
MASK_BAD = [
    (lambda a: a[:, :, :5], ValueError, r"mask: expected shape \(3, 3, 8\) \(\.\.\., n_actions\), got \(3, 3, 5\)"),
    (lambda a: a.int(), TypeError, r"mask: expected dtype torch.bool \(True = available\)"),
    (lambda a: a.numpy(), TypeError, "mask: expected a bool torch.Tensor"),
    (lambda a: torch.zeros_like(a), ValueError, "mask: every agent needs at least one available action"),
]


@pytest.mark.parametrize("mutate,error,match", MASK_BAD)
def test_bad_masks_get_one_clear_error(mutate, error, match):
    from war_envs.core.validation import check_action_mask

    env, _ = twins("SMAX-v0")
    mask = env.action_mask()["ally"].clone()
    with pytest.raises(error, match=match):
        check_action_mask("mask", mutate(mask), tuple(mask.shape))


CONTINUOUS_BAD = [
    (lambda a: {**a, "agent": a["agent"].clone().index_fill_(0, torch.tensor([1]), math.nan)}, ValueError, "got NaN"),
    (lambda a: {**a, "agent": a["agent"] + math.inf}, ValueError, r"Box actions in \[0.0, 1.0\], got inf"),
    (lambda a: {**a, "agent": a["agent"] + 1.5}, ValueError, r"in \[0.0, 1.0\], got 2"),
    (lambda a: {**a, "agent": a["agent"] - 1.0}, ValueError, r"in \[0.0, 1.0\], got -"),
    (lambda a: {**a, "agent": (a["agent"] * 0).long()}, TypeError, "expected a floating dtype"),
    (lambda a: {**a, "agent": a["agent"][..., :4]}, ValueError, r"expected shape \(3, 1, 5\), got \(3, 1, 4\)"),
]


@pytest.mark.parametrize("mutate,error,match", CONTINUOUS_BAD)
def test_bad_continuous_actions_are_refused_and_nothing_changes(mutate, error, match):
    env, twin = twins(continuous_actions=True)
    with pytest.raises(error, match=match):
        env.step(mutate(good_actions(env)))
    assert_still_equal(env, twin)


def test_numpy_and_any_integer_dtype_are_accepted():
    env, twin = twins()
    a = good_actions(env)
    env.step({g: x.numpy().astype(np.uint8) for g, x in a.items()})
    twin.step({g: x.int() for g, x in a.items()})
    assert_still_equal(env, twin)


@settings(max_examples=40, deadline=None)
@given(bad=st.one_of(st.integers(min_value=5, max_value=2**31 - 1), st.integers(max_value=-1, min_value=-2**31)),
       world=st.integers(0, 2), agent=st.integers(0, 2))
def test_property_out_of_range_discrete_is_refused(bad, world, agent):
    env, twin = twins()
    a = good_actions(env)
    a["adversary"][world, agent] = bad
    with pytest.raises(ValueError, match=r"actions\['adversary'\]"):
        env.step(a)
    assert_still_equal(env, twin, steps=3)


@settings(max_examples=40, deadline=None)
@given(value=st.floats(allow_nan=True, allow_infinity=True, width=32).filter(lambda x: not 0.0 <= x <= 1.0),
       world=st.integers(0, 2), k=st.integers(0, 4))
def test_property_bad_continuous_values_are_refused(value, world, k):
    env, twin = twins("Spread-v0", continuous_actions=True)
    a = good_actions(env)
    a["agent"][world, 0, k] = value
    with pytest.raises(ValueError, match=r"actions\['agent'\]"):
        env.step(a)
    assert_still_equal(env, twin, steps=3)


# ----------------------------------------------------------------------------- lifecycle
def test_step_before_reset_and_after_close():
    env = war_envs.make("Spread-v0", num_envs=2)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        env.step(good_actions(env))
    env.reset(seed=0)
    env.close()
    env.close()  # idempotent
    for call in (lambda: env.step(good_actions(env)), env.reset, env.state, env.get_state):
        with pytest.raises(RuntimeError, match="closed"):
            call()


# ----------------------------------------------------------------------------- reset / state
@pytest.mark.parametrize("mask,error,match", [
    (torch.tensor([1, 0, 1]), TypeError, "mask: expected a bool mask"),
    (torch.tensor([True, False]), ValueError, r"mask: expected shape \(3,\)"),
    ("all", TypeError, "mask"),
])
def test_reset_mask_validation(mask, error, match):
    env, twin = twins()
    with pytest.raises(error, match=match):
        env.reset(mask=mask)
    assert_still_equal(env, twin)


def test_reset_seed_validation():
    env = war_envs.make("Spread-v0")
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-3)
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed="zero")


@pytest.mark.parametrize("state,worlds,error,match", [
    ({"agent_pos": torch.zeros(3, 4, 2), "bogus": torch.zeros(3)}, None, ValueError, r"state: unknown keys \['bogus'\]"),
    ({"agent_pos": torch.zeros(3, 5, 2)}, None, ValueError, r"state\['agent_pos'\]: expected shape \(3, 4, 2\)"),
    ({"agent_pos": torch.full((3, 4, 2), math.nan)}, None, ValueError, "expected finite values"),
    ({"agent_pos": torch.zeros(3, 4, 2, dtype=torch.int64)}, None, TypeError, "expected a floating dtype"),
    ({"t": torch.zeros(3)}, None, TypeError, r"state\['t'\]: expected an integer dtype"),
    ({"t": torch.full((3,), -1, dtype=torch.int32)}, None, ValueError, "out of range"),
    ({"agent_pos": torch.zeros(1, 4, 2)}, [5], ValueError, r"worlds: expected world indices in \[0, 2\]"),
    ({"agent_pos": torch.zeros(2, 4, 2)}, [1, 1], ValueError, "distinct"),
    ({"agent_pos": torch.zeros(1, 4, 2)}, [0.5], TypeError, "worlds"),
    ([1, 2], None, TypeError, "state: expected a dict"),
])
def test_set_state_validation_leaves_worlds_untouched(state, worlds, error, match):
    env, twin = twins()
    # a bad call that also carries a valid key must not have written the valid one either
    with pytest.raises(error, match=match):
        env.set_state(state, worlds=worlds)
    assert_still_equal(env, twin)


def test_clone_worlds_validation():
    env, twin = twins()
    with pytest.raises(ValueError, match="same length"):
        env.clone_worlds([0, 1], [2])
    with pytest.raises(ValueError, match=r"dst: expected world indices"):
        env.clone_worlds([0], [3])
    assert_still_equal(env, twin)


def test_curriculum_api_errors():
    env = war_envs.make("Spread-v0")
    with pytest.raises(RuntimeError, match="curriculum=True"):
        env.set_curriculum_stage(1)
    env = war_envs.make("PredatorPrey-v0", curriculum=True)
    with pytest.raises(ValueError, match=r"stage: expected 0..2, got 3"):
        env.set_curriculum_stage(3)
    with pytest.raises(ValueError, match="stage"):
        env.set_curriculum_stage(-1)


# ----------------------------------------------------------------------------- trusted actions
TRUSTED_BAD = [
    (lambda a: {"adversary": a["adversary"]}, ValueError, r"actions: expected keys .* missing \['agent'\]"),
    (lambda a: {**a, "agent": a["agent"][:2]}, ValueError, r"actions\['agent'\]: expected shape \(3, 1\), got \(2, 1\)"),
    (lambda a: {**a, "agent": a["agent"].float()}, TypeError, r"actions\['agent'\]: expected an integer dtype"),
    (lambda a: {**a, "agent": a["agent"].bool()}, TypeError, "integer dtype"),
    (lambda a: {**a, "agent": a["agent"].numpy()}, TypeError, "the trusted path takes torch tensors"),
    (lambda a: {**a, "agent": a["agent"].to("meta")}, ValueError, "expected a tensor on device cpu"),
]


@pytest.mark.parametrize("mutate, error, match", TRUSTED_BAD)
def test_trusted_step_still_checks_keys_shapes_and_dtypes(mutate, error, match):
    bad, twin = twins()
    with pytest.raises(error, match=match):
        bad.step(mutate(good_actions(bad)), trusted=True)
    assert_still_equal(bad, twin)


@pytest.mark.parametrize("env_id, kwargs", [("PredatorPrey-v0", {}), ("Spread-v0", {"continuous_actions": True}),
                                            ("Tag-v0", {"num_runners": 4})])
def test_trusted_step_equals_the_validated_step(env_id, kwargs):
    a, b = (war_envs.make(env_id, num_envs=3, seed=1, **kwargs) for _ in range(2))
    a.reset(), b.reset()
    for g, s in a.groups.items():
        s.action_space.seed(0)
    for _ in range(30):
        actions = {g: torch.as_tensor(np.stack([[s.action_space.sample() for _ in range(s.n_agents)]
                                                for _ in range(3)])) for g, s in a.groups.items()}
        out_a, out_b = a.step(actions), b.step(actions, trusted=True)
        for part_a, part_b in zip(out_a[:4], out_b[:4]):
            assert all(torch.equal(part_a[g], part_b[g]) for g in part_a)
