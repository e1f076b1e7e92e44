"""The small-batch path: ``step(trusted=True)`` and the validated step agree bitwise; the Python
range check of small CPU batches accepts and rejects exactly what the full check does, with
its messages; the views built once (the step's tensors, ``info["_final_obs"]``, the PettingZoo
front end's numpy views and action arrays) stay valid after reset / set_state / clone_worlds."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import war_envs
from war_envs.core import batched_env
from war_envs.core import validation as v
from war_envs.frontends.pettingzoo import ParallelEnv

# (scenario, kwargs): one group, two groups, groups with different Discrete sizes, Box actions,
# MultiDiscrete actions (Tag-v0 checks its own actions)
CASES = [("Spread-v0", {}), ("PredatorPrey-v0", {}), ("SpeakerListener-v0", {}),
         ("Spread-v0", {"continuous_actions": True}), ("Tag-v0", {})]
CASE_IDS = ["spread", "predator_prey", "speaker_listener", "spread_continuous", "tag"]


def draw(env, gen: torch.Generator, dtype=torch.int64) -> dict[str, torch.Tensor]:
    """Random actions of every group's space (Discrete, MultiDiscrete or Box)."""
    out = {}
    for g, spec in env.groups.items():
        space = spec.action_space
        shape = (env.num_envs, spec.n_agents)
        if hasattr(space, "nvec"):
            out[g] = torch.stack([torch.randint(0, int(n), shape, generator=gen, dtype=dtype)
                                  for n in space.nvec], dim=-1)
        elif hasattr(space, "n"):
            out[g] = torch.randint(0, int(space.n), shape, generator=gen, dtype=dtype)
        else:
            out[g] = torch.rand(*shape, *space.shape, generator=gen)
    return out


def outputs(result) -> list[torch.Tensor]:
    """Every tensor of a step's ``obs, rew, term, trunc, info``, cloned, in a fixed order."""
    flat = []
    for part in result:
        for key in sorted(part):
            value = part[key]
            values = [value[k] for k in sorted(value)] if isinstance(value, dict) else [value]
            flat += [x.clone() for x in values if isinstance(x, torch.Tensor)]
    return flat


def assert_same(a: list[torch.Tensor], b: list[torch.Tensor]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)


@pytest.mark.parametrize("worlds", [1, 64])  # 1: the Python range check; 64 worlds: aminmax
@pytest.mark.parametrize("env_id,kw", CASES, ids=CASE_IDS)
def test_trusted_and_validated_steps_agree_bitwise(env_id, kw, worlds):
    envs = [war_envs.make(env_id, num_envs=worlds, seed=3, autoreset_mode="same_step", **kw) for _ in range(2)]
    first = [outputs((env.reset(),)) for env in envs]
    assert_same(*first)
    gen = torch.Generator().manual_seed(0)
    for _ in range(60):  # past two episode ends (25-step MPE episodes)
        actions = draw(envs[0], gen)
        assert_same(outputs(envs[0].step(actions)), outputs(envs[1].step(actions, trusted=True)))
    for key, value in envs[0].get_state().items():
        assert torch.equal(value, envs[1].get_state()[key]), key


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_small_batches_take_every_integer_dtype(dtype):
    envs = [war_envs.make("Spread-v0", num_envs=1, seed=5) for _ in range(2)]
    for env in envs:
        env.reset()
    gen = torch.Generator().manual_seed(1)
    for _ in range(5):
        actions = draw(envs[0], gen)
        small = {g: a.to(dtype) for g, a in actions.items()}
        assert_same(outputs(envs[0].step(small)), outputs(envs[1].step(actions)))


def _error(fn):
    with pytest.raises((TypeError, ValueError)) as info:
        fn()
    return info.type, str(info.value)


@pytest.mark.parametrize("bad", [5, -1, 2**40, -(2**40)])
@pytest.mark.parametrize("worlds", [1, 64])
def test_out_of_range_discrete_actions_raise_the_full_checks_error(bad, worlds):
    env = war_envs.make("Spread-v0", num_envs=worlds, seed=0)
    env.reset()
    action = torch.zeros(worlds, 3, dtype=torch.int64)
    action[-1, 1] = bad
    expected = _error(lambda: v.check_discrete("actions['agent']", action, 5))
    assert _error(lambda: env.step({"agent": action})) == expected
    assert expected[0] is ValueError and f"got {bad}" in expected[1]


@pytest.mark.parametrize("bad", [float("nan"), 1.5, -0.25, float("inf")])
def test_bad_box_actions_raise_the_full_checks_error(bad):
    env = war_envs.make("Spread-v0", num_envs=1, seed=0, continuous_actions=True)
    env.reset()
    action = torch.full((1, 3, 5), 0.5)
    action[0, 2, 4] = bad
    expected = _error(lambda: v.check_box("actions['agent']", action, 0.0, 1.0))
    assert _error(lambda: env.step({"agent": action})) == expected


def _full_check(env, g, value):
    """What ``validation``'s full checks say about one group's actions: None (valid) or
    ``(error type, message)``."""
    name, space = f"actions[{g!r}]", env.groups[g].action_space
    try:
        tensor = v.as_tensor(name, value, env.torch_device)
        v.check_shape(name, tensor, (env.num_envs, env.groups[g].n_agents, *space.shape))
        v.check_in_space(name, tensor, space)
    except (TypeError, ValueError) as err:
        return type(err), str(err)
    return None


INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


@pytest.mark.parametrize("worlds", [1, 2])
def test_the_python_range_check_agrees_with_the_full_check_at_every_boundary(worlds):
    """Edge values of every dtype, in one entry of an otherwise valid small batch (Discrete:
    PredatorPrey's two groups; Box: continuous Spread): the validated step raises exactly the
    full check's error, or steps exactly like the trusted path when the full check passes."""
    cases = []  # (env kwargs and id, group, a batch)
    pp = ("PredatorPrey-v0", {})
    for value in (0, 4, 5, -1, 127, 255, 2**31, -(2**31), 2**62):
        for dtype in INT_DTYPES + FLOAT_DTYPES:
            for g, n in (("adversary", 3), ("agent", 1)):
                batch = torch.zeros(worlds, n, dtype=torch.int64)
                batch[-1, n - 1] = value
                cases.append((pp, g, batch.to(dtype)))
    spread = ("Spread-v0", {"continuous_actions": True})
    f32 = np.float32
    edges = [0.0, 1.0, float(np.nextafter(f32(1), f32(2))), float(np.nextafter(f32(0), f32(-1))), -0.0,
             1.0 + 1e-12, -1e-300, float("nan"), float("inf"), float("-inf"), 1e300]
    for value in edges:
        for dtype in FLOAT_DTYPES + [torch.int64, torch.int32]:
            batch = torch.full((worlds, 3, 5), 0.5, dtype=torch.float64)
            batch[-1, 1, 4] = value
            cases.append((spread, "agent", batch.to(dtype) if dtype.is_floating_point else batch.long().to(dtype)))
    envs = {}
    passed = refused = 0
    for (env_id, kw), g, batch in cases:
        if (env_id, worlds) not in envs:
            pair = [war_envs.make(env_id, num_envs=worlds, seed=1, **kw) for _ in range(2)]
            for env in pair:
                env.reset()
            envs[(env_id, worlds)] = pair
        env, twin = envs[(env_id, worlds)]
        actions = {h: torch.zeros(worlds, s.n_agents, *s.action_space.shape,
                                  dtype=torch.float32 if s.action_space.shape else torch.int64)
                   for h, s in env.groups.items()}
        actions[g] = batch
        expected = _full_check(env, g, batch)
        if expected is None:
            passed += 1
            assert_same(outputs(env.step(actions)), outputs(twin.step(actions, trusted=True)))
        else:
            refused += 1
            assert _error(lambda: env.step(actions)) == expected, (env_id, g, batch.dtype, batch)
    assert passed > 20 and refused > 100  # both outcomes are exercised


def test_wrong_dtypes_and_keys_keep_their_errors():
    env = war_envs.make("Spread-v0", num_envs=1, seed=0)
    env.reset()
    for action in (torch.zeros(1, 3, dtype=torch.bool), torch.zeros(1, 3)):
        expected = _error(lambda: v.check_discrete("actions['agent']", action, 5))
        assert _error(lambda: env.step({"agent": action})) == expected
        assert expected[0] is TypeError
    ok = torch.zeros(1, 3, dtype=torch.int64)
    for actions in ({}, {"agent": ok, "other": ok}, [ok]):
        expected = _error(lambda: v.check_keys("actions", actions, ["agent"]))
        assert _error(lambda: env.step(actions)) == expected
        assert _error(lambda: env.step(actions, trusted=True)) == expected


def test_a_rejected_step_changes_nothing():
    envs = [war_envs.make("PredatorPrey-v0", num_envs=1, seed=2) for _ in range(2)]
    for env in envs:
        env.reset()
    gen = torch.Generator().manual_seed(2)
    actions = draw(envs[0], gen)
    bad = dict(actions, adversary=torch.full_like(actions["adversary"], 7))
    with pytest.raises(ValueError, match=r"actions\['adversary'\]"):
        envs[0].step(bad)  # the good group comes first: its actions pass, nothing is stepped
    for _ in range(3):
        actions = draw(envs[0], gen)
        assert_same(outputs(envs[0].step(actions)), outputs(envs[1].step(actions)))


def test_the_small_scan_threshold_covers_one_world_of_every_scenario():
    """At one world every registered scenario's Discrete or Box group of at most SMALL_ROWS
    agents takes the Python range check (Spread's Box actions too; Passage-v0's five agents'
    Box rows take the reduction, no slower there); 64 worlds of Spread take the reduction."""
    envs = [war_envs.make(env_id, num_envs=1, seed=0) for env_id in war_envs.registered_ids()]
    envs.append(war_envs.make("Spread-v0", num_envs=1, seed=0, continuous_actions=True))
    checked = 0
    for env in envs:
        for g, (_name, shape, space, _part, bounds, _target) in env._action_plan.items():
            rows = int(np.prod(shape[:-1])) if isinstance(space, gymnasium.spaces.Box) else 0
            if isinstance(space, (gymnasium.spaces.Discrete, gymnasium.spaces.Box)) and rows <= batched_env.SMALL_ROWS:
                assert bounds is not None, (env.env_id, g, shape)
                assert int(np.prod(shape)) <= batched_env.SMALL_SCAN, (env.env_id, g)
                checked += 1
        env.close()
    assert checked >= len(envs)
    env = war_envs.make("Spread-v0", num_envs=64, seed=0)
    assert [bounds for *_, bounds, _target in env._action_plan.values()] == [None]


def test_views_and_final_mask_stay_valid_after_reset_set_state_and_clone():
    env = war_envs.make("Spread-v0", num_envs=4, seed=0, autoreset_mode="same_step")
    ref = war_envs.make("Spread-v0", num_envs=4, seed=0, autoreset_mode="same_step")
    gen = torch.Generator().manual_seed(4)
    obs = env.reset()
    ref.reset()
    result = env.step(draw(env, gen))
    info = result[4]
    mask = info["_final_obs"]
    assert mask.dtype == torch.bool and mask.shape == (4,)
    info["scribble"] = 1  # the returned dict is the caller's: the next one is a fresh dict
    gen_ref = torch.Generator().manual_seed(4)
    ref.step(draw(ref, gen_ref))

    def step_both():
        actions = draw(env, gen)
        assert draw(ref, gen_ref).keys() == actions.keys()
        got = env.step(actions)
        assert got[0] is obs and got[4]["_final_obs"] is mask and "scribble" not in got[4]
        assert_same(outputs(got), outputs(ref.step(actions)))
        return got

    for _ in range(30):  # a SAME_STEP episode end: the mask flips to True, then back
        got = step_both()
        if bool(got[4]["_final_obs"].all()):
            assert torch.equal(got[4]["_final_obs"], got[3]["agent"][:, 0])
    state = ref.get_state()
    state["agent_pos"][1] += 0.25
    assert env.set_state(state) is obs
    ref.set_state(state)
    assert_same(outputs((obs,)), outputs((ref.observations(),)))
    step_both()
    for e in (env, ref):
        e.clone_worlds([0], [3])
    step_both()
    assert env.reset(seed=9) is obs
    ref.reset(seed=9)
    step_both()
    for e in (env, ref):
        e.reset(mask=torch.tensor([True, False, True, False]))
    step_both()


def _reference_parallel_step(batched, live, actions):
    """What ``ParallelEnv.step`` returns, built the plain way from a batched env's step."""
    where = {a: (g, k) for g, s in batched.groups.items() for k, a in enumerate(s.agents)}
    batch = {}
    for g, s in batched.groups.items():
        batch[g] = torch.tensor([[actions.get(a, 0) for a in s.agents]], dtype=torch.int64)
    obs_t, rew_t, term_t, trunc_t, info_t = batched.step(batch)
    order = [a for a in batched.agents if a in live]
    obs = {a: obs_t[where[a][0]][0, where[a][1]].numpy().copy() for a in order}
    rew = {a: float(rew_t[where[a][0]][0, where[a][1]]) for a in order}
    term = {a: bool(term_t[where[a][0]][0, where[a][1]]) for a in order}
    trunc = {a: bool(trunc_t[where[a][0]][0, where[a][1]]) for a in order}
    index = {a: i for i, a in enumerate(batched.agents)}
    infos = {}
    for a in order:
        entry, own = {}, {}
        for key, value in info_t.items():
            if key.startswith("_") or key == "final_obs" or not isinstance(value, torch.Tensor):
                continue
            array = value[0].numpy()
            if key in batched.per_agent_metrics:
                own[key] = array.tolist()[index[a]]
            else:
                entry[key] = array.item() if array.ndim == 0 else array.copy()
        infos[a] = {**entry, **own}
    return obs, rew, term, trunc, infos


@pytest.mark.parametrize("env_id", ["Spread-v0", "PredatorPrey-v0", "SpeakerListener-v0"])
def test_parallel_env_matches_its_batched_env_step_for_step(env_id):
    from gymnasium.utils.env_checker import data_equivalence

    env = ParallelEnv(env_id, seed=0)
    ref = war_envs.make(env_id, num_envs=1, seed=0, autoreset_mode="disabled")
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, _ = env.reset(seed=episode if episode != 1 else None)
        ref_obs = ref.reset(seed=episode if episode != 1 else None)
        assert all(np.array_equal(obs[a], ref_obs[g][0, k].numpy())
                   for g, s in ref.groups.items() for k, a in enumerate(s.agents))
        if episode == 2:  # the cached numpy views follow set_state
            state = ref.get_state()
            state["agent_pos"][0] *= 0.5
            env.batched.set_state(state)
            ref.set_state(state)
        while env.agents:
            actions = {a: int(rng.integers(0, env.action_space(a).n)) for a in env.agents}
            if rng.random() < 0.3:  # numpy integers take check_action's path
                actions = {a: np.int64(x) for a, x in actions.items()}
            expected = _reference_parallel_step(ref, env.agents, {a: int(x) for a, x in actions.items()})
            got = env.step(actions)
            assert data_equivalence(got, expected, exact=True)
            for x in got[0].values():
                assert x.flags.owndata


def test_parallel_env_rejects_bad_actions_before_stepping():
    env, twin = ParallelEnv("Spread-v0", seed=0), ParallelEnv("Spread-v0", seed=0)
    env.reset(seed=1)
    twin.reset(seed=1)
    good = {a: 1 for a in env.agents}
    for bad, err in ((5, ValueError), (-1, ValueError), (True, TypeError), (1.0, TypeError)):
        with pytest.raises(err, match=r"actions\['agent_2'\]"):
            env.step({**good, "agent_2": bad})
    with pytest.raises(ValueError, match="missing"):
        env.step({"agent_0": 1})
    from gymnasium.utils.env_checker import data_equivalence

    assert data_equivalence(env.step(good), twin.step(good), exact=True)


# ----------------------------------------------------------------- the joint form step(tensor)
JOINT_CASES = [("Spread-v0", {}), ("PredatorPrey-v0", {}), ("PredatorPrey-v0", {"continuous_actions": True}),
               ("Tag-v0", {})]


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("env_id,kw", JOINT_CASES, ids=["spread", "predator_prey", "pp_continuous", "tag"])
def test_one_tensor_of_all_agents_steps_like_the_group_dict(env_id, kw, trusted):
    envs = [war_envs.make(env_id, num_envs=2, seed=4, **kw) for _ in range(2)]
    for env in envs:
        env.reset()
    assert envs[0].joint_action_space == next(iter(envs[0].groups.values())).action_space
    gen = torch.Generator().manual_seed(3)
    for _ in range(30):
        actions = draw(envs[0], gen)
        joint = torch.cat([actions[g] for g in envs[0].groups], dim=1)
        assert joint.shape[:2] == (2, envs[0].num_agents)
        assert_same(outputs(envs[0].step(actions)), outputs(envs[1].step(joint, trusted=trusted)))
    numpy_joint = torch.cat([a for a in draw(envs[0], gen).values()], dim=1)
    assert_same(outputs(envs[0].step(numpy_joint)), outputs(envs[1].step(numpy_joint.numpy())))


def test_the_joint_form_is_refused_where_groups_differ():
    env = war_envs.make("SpeakerListener-v0", num_envs=1, seed=0)
    env.reset()
    assert env.joint_action_space is None
    with pytest.raises(TypeError, match=r"actions: a single tensor .* same action space"):
        env.step(torch.zeros(1, 2, dtype=torch.int64))


def test_bad_joint_actions_name_the_argument_and_change_nothing():
    envs = [war_envs.make("PredatorPrey-v0", num_envs=1, seed=2) for _ in range(2)]
    for env in envs:
        env.reset()
    with pytest.raises(ValueError, match=r"actions: expected shape \(1, 4\)"):
        envs[0].step(torch.zeros(1, 3, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"actions: expected shape \(1, 4\)"):
        envs[0].step(torch.zeros(1, 3, dtype=torch.int32), trusted=True)
    with pytest.raises(TypeError, match=r"actions: expected an integer dtype"):
        envs[0].step(torch.zeros(1, 4), trusted=True)
    bad = torch.zeros(1, 4, dtype=torch.int64)
    bad[0, 3] = 5  # the prey's action (group "agent", after the three adversaries)
    with pytest.raises(ValueError, match=r"actions\['agent'\]"):
        envs[0].step(bad)
    gen = torch.Generator().manual_seed(2)
    for _ in range(3):  # the refused steps stepped nothing
        actions = draw(envs[0], gen)
        assert_same(outputs(envs[0].step(actions)), outputs(envs[1].step(actions)))
