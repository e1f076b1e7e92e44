"""``war_envs.mpe2``: the drop-in for mpe2 1.1.1's modules.  For every module: mpe2's signatures
(no scenario needed); for every module whose war-envs scenario is registered: mpe2's agents,
spaces and metadata name, PettingZoo's API tests, and a float64 episode against mpe2 from the
same start state with the same actions."""

import importlib
import inspect
import pickle
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mpe2")

from pettingzoo.test import api_test, max_cycles_test, parallel_api_test  # noqa: E402
from pettingzoo.utils.wrappers import (AssertOutOfBoundsWrapper, ClipOutOfBoundsWrapper,  # noqa: E402
                                       OrderEnforcingWrapper)

import war_envs  # noqa: E402
import war_envs.mpe2  # noqa: E402
from mpe2_reference import copy_world_into_reference  # noqa: E402
from war_envs.mpe2._envs import make_parallel  # noqa: E402
from war_envs.mpe2._factory import MODULES  # noqa: E402

ALL = list(MODULES)
EXPECTED_IDS = {
    "simple_v3": "Simple-v0", "simple_adversary_v3": "Adversary-v0", "simple_crypto_v3": "Crypto-v0",
    "simple_push_v3": "Push-v0", "simple_reference_v3": "Reference-v0",
    "simple_speaker_listener_v4": "SpeakerListener-v0", "simple_spread_v3": "Spread-v0",
    "simple_tag_v3": "PredatorPrey-v0", "simple_world_comm_v3": "WorldComm-v0",
    "simple_formation_v1": "Formation-v0", "simple_line_v1": "Line-v0",
    "collect_treasure_v1": "CollectTreasure-v0",
}


# the scenario's own state that mpe2_reference.copy_world_into_reference does not copy (goals,
# colours, keys): "test module:function" of the scenario's reference test.  A
# scenario that draws such state needs an entry here before its episode test can pass.
COPY_EXTRA = {
    "Crypto-v0": "test_mpe2_crypto:copy_goal_and_key",
    "Adversary-v0": "test_mpe2_adversary:copy_goal",
    "Push-v0": "test_mpe2_push:copy_goal",
    "SpeakerListener-v0": "test_mpe2_speaker_listener:copy_goal",
    "Reference-v0": "test_mpe2_reference_env:copy_goals",
    "Line-v0": "test_mpe2_line:copy_targets",
    "CollectTreasure-v0": "test_mpe2_collect_treasure:copy_treasures",
}


def ours(module):
    return importlib.import_module(f"war_envs.mpe2.{module}")


def reference(module):
    return importlib.import_module(f"mpe2.{module}")


def registered(module):
    """The drop-in module (its scenario must be registered)."""
    env_id = MODULES[module][0]
    assert env_id in war_envs.registered_ids(), f"{env_id} is not registered (war_envs.mpe2.{module})"
    return ours(module)


def copy_extra(module):
    entry = COPY_EXTRA.get(MODULES[module][0])
    if entry is None:
        return None
    name, _, fn = entry.partition(":")
    return getattr(importlib.import_module(name), fn)


def param_view(sig):
    return [(p.name, p.kind, p.default, p.annotation) for p in sig.parameters.values()]


# ---------------------------------------------------------------------- every module
def test_table_covers_every_mpe2_module():
    from mpe2.all_modules import mpe_environments

    assert sorted(MODULES) == sorted(name.split("/", 1)[1] for name in mpe_environments)
    assert {m: entry[0] for m, entry in MODULES.items()} == EXPECTED_IDS
    from war_envs.mpe2.all_modules import mpe_environments as ours_all

    assert list(ours_all) == list(mpe_environments)


@pytest.mark.parametrize("module", ALL)
def test_signatures_match_mpe2(module):
    mod, ref = ours(module), reference(module)
    ref_raw = inspect.signature(ref.raw_env)
    # mpe2's parameters, then war-envs' one addition (keyword-only)
    strict = ("strict_actions", inspect.Parameter.KEYWORD_ONLY, False, "bool")
    assert param_view(inspect.signature(mod.raw_env)) == [*param_view(ref_raw), strict]
    assert inspect.signature(mod.raw_env).return_annotation == ref_raw.return_annotation
    # mpe2's env / parallel_env are `(**kwargs)` forwarded to raw_env: ours spell those keywords out
    keyword_only = [(n, inspect.Parameter.KEYWORD_ONLY, d, a) for n, _, d, a in param_view(ref_raw)]
    for fn in ("env", "parallel_env"):
        ref_params = list(inspect.signature(getattr(ref, fn)).parameters.values())
        assert [p.kind for p in ref_params] == [inspect.Parameter.VAR_KEYWORD]
        assert param_view(inspect.signature(getattr(mod, fn))) == [*keyword_only, strict]
        with pytest.raises(TypeError):
            getattr(mod, fn)(0)  # keywords only, as mpe2's
    for obj in (mod.env, mod.parallel_env, mod.raw_env):
        assert obj.__module__ == f"war_envs.mpe2.{module}"
        assert module in obj.__doc__ and MODULES[module][0] in obj.__doc__
        assert "strict_actions=True" in obj.__doc__
    assert mod.__all__ == ["env", "parallel_env", "raw_env"]
    assert getattr(war_envs.mpe2, module) is mod


@pytest.mark.parametrize("module", ALL)
def test_unregistered_scenario_fails_at_call_time(module, monkeypatch):
    from war_envs import registry

    env_id = MODULES[module][0]
    monkeypatch.delitem(registry._SCENARIOS, env_id, raising=False)
    mod = ours(module)
    for fn in (mod.env, mod.parallel_env, mod.raw_env):
        with pytest.raises(NotImplementedError, match=f"{env_id}.*not registered"):
            fn()


def test_import_is_lazy():
    """Importing every module loads neither torch nor Warp nor any scenario class."""
    code = ("import sys, war_envs.mpe2.all_modules; "
            "print(sorted(m for m in sys.modules if m in ('torch', 'warp') or m.startswith('war_envs.scenarios')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_unknown_and_unsupported_arguments():
    mod = registered("simple_spread_v3")
    with pytest.raises(TypeError, match="simple_spread_v3.*unexpected keyword argument 'foo'"):
        mod.parallel_env(foo=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'landmark_range'"):
        mod.env(landmark_range=0.5)  # a war-envs argument mpe2 does not have
    with pytest.raises(ValueError, match="benchmark_data=True is not supported"):
        mod.raw_env(benchmark_data=True)
    mod.raw_env(3, 0.5, 10, False, None, True, False).close()  # raw_env takes positionals, as mpe2's


# ---------------------------------------------------------------------- registered modules
CASES = [{}, {"continuous_actions": True}]


@pytest.mark.parametrize("kwargs", CASES, ids=str)
@pytest.mark.parametrize("module", ALL)
def test_agents_spaces_and_metadata_match_mpe2(module, kwargs):
    mod, ref = registered(module), reference(module)
    for build in ("parallel_env", "env", "raw_env"):
        env, ref_env = getattr(mod, build)(**kwargs), getattr(ref, build)(**kwargs)
        assert env.possible_agents == ref_env.possible_agents
        for agent in ref_env.possible_agents:
            assert env.action_space(agent) == ref_env.action_space(agent), (build, agent)
            assert env.observation_space(agent) == ref_env.observation_space(agent), (build, agent)
        assert env.metadata["name"] == ref_env.metadata["name"] == module
        assert env.metadata["render_modes"] == ref_env.metadata["render_modes"]
        assert env.metadata["is_parallelizable"] is True
        env.close()
        ref_env.close()


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("module", ALL)
def test_wrappers_as_mpe2(module, continuous):
    mod = registered(module)
    env = mod.env(continuous_actions=continuous)
    assert isinstance(env, OrderEnforcingWrapper)
    assert isinstance(env.env, ClipOutOfBoundsWrapper if continuous else AssertOutOfBoundsWrapper)
    assert isinstance(env.unwrapped, mod.raw_env)
    assert env.unwrapped.continuous_actions is continuous
    env.close()
    raw = mod.raw_env(continuous_actions=continuous)
    assert raw.unwrapped is raw and raw.max_cycles == 25
    raw.close()


@pytest.mark.parametrize("module", ALL)
def test_render_and_unwrapped_attributes(module):
    mod = registered(module)
    par = mod.parallel_env(render_mode="rgb_array", dynamic_rescaling=False, max_cycles=5)
    assert par.render_mode == "rgb_array" and par.dynamic_rescaling is False
    par.reset(seed=0)
    frame = par.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape[2] == 3
    par.close()
    env = mod.env(render_mode="rgb_array", max_cycles=5)
    env.reset(seed=0)
    assert env.render().shape == frame.shape
    raw = env.unwrapped  # the parallel env's attributes through the raw env, as mpe2's raw_env
    assert raw.max_cycles == 5 and raw.batched.env_id == MODULES[module][0]
    assert raw.curriculum_stage == 0 and callable(raw.advance_curriculum)
    with pytest.raises(AttributeError):
        raw.no_such_attribute
    env.close()
    if "curriculum" in inspect.signature(mod.raw_env).parameters:  # mpe2's curriculum API
        raw = mod.raw_env(curriculum=True)
        raw.advance_curriculum()
        assert raw.curriculum_stage == 1
        raw.set_curriculum_stage(0)
        assert raw.curriculum_stage == 0
        raw.close()


@pytest.mark.parametrize("module", ALL)
def test_pettingzoo_api_tests(module):
    mod = registered(module)
    parallel_api_test(mod.parallel_env(max_cycles=30), num_cycles=30)
    api_test(mod.env(max_cycles=30), num_cycles=40)
    api_test(mod.env(max_cycles=30, continuous_actions=True), num_cycles=40)
    max_cycles_test(mod)


@pytest.mark.parametrize("module", ALL)
def test_pickle_keeps_module_and_arguments(module):
    mod = registered(module)
    par = mod.parallel_env(max_cycles=7, continuous_actions=True)
    clone = pickle.loads(pickle.dumps(par))
    assert type(clone) is type(par) and clone.metadata["name"] == module and clone.max_cycles == 7
    assert clone.possible_agents == par.possible_agents
    assert clone.action_space(clone.possible_agents[0]) == par.action_space(par.possible_agents[0])
    raw = pickle.loads(pickle.dumps(mod.raw_env(max_cycles=9)))
    assert type(raw) is mod.raw_env and raw.max_cycles == 9 and raw.metadata["name"] == module
    for env in (par, clone, raw):
        env.close()


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("module", ALL)
def test_float64_episode_matches_mpe2(module, continuous):
    """Our drop-in parallel env (float64 world) and mpe2's, from our start state, stepped with
    the same random actions: observations (float32 rounding), rewards and flags agree."""
    mod = registered(module)  # noqa: F841 - skips while unregistered
    par = make_parallel(module, {"precision": "float64"}, continuous_actions=continuous)
    assert par.batched.precision == "float64"
    ref = reference(module).parallel_env(continuous_actions=continuous)
    raw = ref.aec_env.unwrapped
    par.reset(seed=3)
    ref.reset(seed=0)
    copy_world_into_reference(par.batched, raw, copy_extra=copy_extra(module))
    rng = np.random.default_rng(4)
    steps = 0
    while par.agents:
        assert ref.agents == par.agents
        actions = {}
        for agent in par.agents:
            space = par.action_space(agent)
            if continuous:
                actions[agent] = rng.random(space.shape, dtype=np.float32)
            else:
                actions[agent] = int(rng.integers(space.n))
        obs, rew, term, trunc, _ = par.step(actions)
        r_obs, r_rew, r_term, r_trunc, _ = ref.step({a: (x.copy() if continuous else x) for a, x in actions.items()})
        assert list(obs) == list(r_obs)
        for agent in obs:
            np.testing.assert_allclose(obs[agent], r_obs[agent], rtol=1e-6, atol=1e-6, err_msg=agent)
            assert rew[agent] == pytest.approx(float(r_rew[agent]), rel=1e-6, abs=1e-6), agent
            assert (term[agent], trunc[agent]) == (bool(r_term[agent]), bool(r_trunc[agent])), agent
        steps += 1
    assert steps == 25 and not ref.agents
    par.close()
    ref.close()
