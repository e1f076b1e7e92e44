"""``war_envs.mpe2``'s continuous actions out of range: clipped with PettingZoo's warning, as
mpe2's ``parallel_env`` / ``env`` do (their ``ClipOutOfBoundsWrapper``), checked against mpe2 from
the same injected state with the same actions; refused with ``strict_actions=True``."""

import numpy as np
import pytest

pytest.importorskip("mpe2")

from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402
from pettingzoo.utils.wrappers import ClipOutOfBoundsWrapper  # noqa: E402

import war_envs  # noqa: E402
from mpe2_reference import copy_world_into_reference  # noqa: E402
from test_mpe2_dropin import copy_extra, reference, registered  # noqa: E402
from war_envs.frontends.pettingzoo import CheckedActionWrapper  # noqa: E402
from war_envs.mpe2._envs import make_parallel  # noqa: E402
from war_envs.mpe2._factory import MODULES  # noqa: E402

ALL = list(MODULES)
IN_RANGE = 1  # the agent (index) whose actions are in the box


def out_of_range_actions(env, rng, step):
    """Per live agent a float32 action: the second agent's in the box, every other one's drawn
    up to 1.5 beyond both bounds, with a +inf / -inf component at the first step."""
    actions = {}
    for i, agent in enumerate(env.agents):
        space = env.action_space(agent)
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        if i == IN_RANGE:
            x = low + (high - low) * rng.random(space.shape)
        else:
            x = rng.uniform(low - 1.5, high + 1.5)
            if step == 0:
                x[i % x.size] = np.inf if i % 2 else -np.inf
        actions[agent] = x.astype(np.float32)
    return actions


def warnings_of(fn):
    """``fn()``'s result and the PettingZoo warnings it emitted."""
    EnvLogger.flush()
    out = fn()
    messages = list(EnvLogger.mqueue)
    EnvLogger.flush()
    return out, messages


@pytest.mark.parametrize("module", ALL)
def test_parallel_env_clips_out_of_range_actions_as_mpe2(module):
    """Our drop-in ``parallel_env(continuous_actions=True)`` (float64 world) and mpe2's, from the
    same state, stepped with out-of-range actions: the same warnings, agent by agent, and the
    same observations, rewards and flags for a whole episode."""
    registered(module)
    par = make_parallel(module, {"precision": "float64"}, continuous_actions=True)
    assert par.clip_box_actions and not par.strict_actions
    ref = reference(module).parallel_env(continuous_actions=True)
    par.reset(seed=5)
    ref.reset(seed=0)
    copy_world_into_reference(par.batched, ref.aec_env.unwrapped, copy_extra=copy_extra(module))
    rng = np.random.default_rng(6)
    clipped_seen = 0
    for step in range(25):
        assert ref.agents == par.agents
        actions = out_of_range_actions(par, rng, step)
        (obs, rew, term, trunc, _), ours_warned = warnings_of(
            lambda: par.step({a: x.copy() for a, x in actions.items()}))
        (r_obs, r_rew, r_term, r_trunc, _), ref_warned = warnings_of(
            lambda: ref.step({a: x.copy() for a, x in actions.items()}))
        assert ours_warned == ref_warned
        # one warning per agent out of range: every agent but the second, at least at the first step
        if step == 0:
            assert len(ours_warned) == len(actions) - (len(actions) > IN_RANGE)
        assert all("outside action space" in m and "clipping to space" in m for m in ours_warned)
        clipped_seen += len(ours_warned)
        assert list(obs) == list(r_obs)
        for agent in obs:
            np.testing.assert_allclose(obs[agent], r_obs[agent], rtol=1e-6, atol=1e-6, err_msg=agent)
            assert rew[agent] == pytest.approx(float(r_rew[agent]), rel=1e-6, abs=1e-6), agent
            assert (term[agent], trunc[agent]) == (bool(r_term[agent]), bool(r_trunc[agent])), agent
    assert not par.agents and not ref.agents and clipped_seen > 0
    par.close()
    ref.close()


@pytest.mark.parametrize("module", ALL)
def test_aec_env_clips_through_the_parallel_envs_code(module):
    """``env(continuous_actions=True)`` clips at the call that passes the action (mpe2's wrapper
    class, war-envs' clip): the same warnings as mpe2's ``env()`` on the same actions, and the
    same episode as our parallel env given the same actions."""
    mod = registered(module)
    aec, par = mod.env(continuous_actions=True), mod.parallel_env(continuous_actions=True)
    ref = reference(module).env(continuous_actions=True)
    assert isinstance(aec.env, ClipOutOfBoundsWrapper)
    aec.reset(seed=2)
    par.reset(seed=2)
    ref.reset(seed=0)
    rng = np.random.default_rng(3)
    for step in range(3):
        actions = out_of_range_actions(par, rng, step)
        p_obs, p_rew, _, _, _ = par.step({a: x.copy() for a, x in actions.items()})
        for i, agent in enumerate(par.possible_agents):
            assert aec.agent_selection == ref.agent_selection == agent
            _, ours_warned = warnings_of(lambda: aec.step(actions[agent].copy()))
            _, ref_warned = warnings_of(lambda: ref.step(actions[agent].copy()))
            assert ours_warned == ref_warned
            if step == 0:
                assert len(ours_warned) == (i != IN_RANGE)
        for agent in par.possible_agents:
            np.testing.assert_array_equal(aec.observe(agent), p_obs[agent])
            assert aec.rewards[agent] == p_rew[agent]
    for env in (aec, par, ref):
        env.close()


BUILDS = ("parallel_env", "env", "raw_env")


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("module", ["simple_spread_v3", "simple_speaker_listener_v4", "simple_world_comm_v3"])
def test_strict_actions_refuse_out_of_range(module, build):
    """``strict_actions=True``: an out-of-range continuous action is a ``ValueError`` naming the
    agent and the bounds, nothing is warned, and the env is unchanged (its twin agrees)."""
    mod = registered(module)
    env, twin = (getattr(mod, build)(continuous_actions=True, strict_actions=True) for _ in range(2))
    assert env.unwrapped.strict_actions is True and env.unwrapped.clip_box_actions is False
    if build == "env":
        assert isinstance(env.env, CheckedActionWrapper) and not isinstance(env.env, ClipOutOfBoundsWrapper)
    env.reset(seed=1)
    twin.reset(seed=1)
    agents = list(env.possible_agents)
    space = env.action_space(agents[-1])
    bad = np.clip(np.full(space.shape, 0.5), space.low, space.high).astype(np.float32)
    bad[0] = space.high[0] + 0.75
    pattern = rf"actions\['{agents[-1]}'\]: expected Box actions in \[{float(space.low.min())}, " \
              rf"{float(space.high.max())}\], got {float(bad[0])}"
    good = {a: np.clip(np.full(env.action_space(a).shape, 0.5), env.action_space(a).low,
                       env.action_space(a).high).astype(np.float32) for a in agents}
    EnvLogger.flush()
    if build == "parallel_env":
        with pytest.raises(ValueError, match=pattern):
            env.step({**good, agents[-1]: bad})
        env.step(good)
        twin.step(good)
        np.testing.assert_array_equal(env.state(), twin.state())
    else:
        for agent in agents[:-1]:
            env.step(good[agent])
            twin.step(good[agent])
        with pytest.raises(ValueError, match=pattern):
            env.step(bad)
        assert env.agent_selection == agents[-1]  # not stored: the same agent is still to act
        env.step(good[agents[-1]])
        twin.step(good[agents[-1]])
        for agent in agents:
            np.testing.assert_array_equal(env.observe(agent), twin.observe(agent))
    assert EnvLogger.mqueue == []
    env.close()
    twin.close()


@pytest.mark.parametrize("build", BUILDS)
def test_clipping_only_covers_out_of_range_values(build):
    """In clip mode NaN, a wrong shape or an integer array are still refused, naming the agent
    (clipping is mpe2's policy for values out of the box, nothing else), and nothing is warned.
    (The raw env checks the cycle's actions when its last agent acts, so the last agent's is bad.)"""
    mod = registered("simple_spread_v3")
    env = getattr(mod, build)(continuous_actions=True)
    env.reset(seed=0)
    good = np.zeros(5, np.float32)
    cases = [(np.array([0.1, np.nan, 5.0, 0, 0], np.float32), ValueError, r"actions\['agent_2'\].*NaN"),
             (np.zeros(4, np.float32), ValueError, r"actions\['agent_2'\].*shape"),
             (np.array([0, 3, 0, 0, 0]), TypeError, r"actions\['agent_2'\].*floating")]
    if build != "parallel_env":
        env.step(good)
        env.step(good)
    for action, error, pattern in cases:
        EnvLogger.flush()
        with pytest.raises(error, match=pattern):
            if build == "parallel_env":
                env.step({"agent_0": good, "agent_1": good, "agent_2": action})
            else:
                env.step(action)
        assert EnvLogger.mqueue == []
    env.close()


def test_strict_actions_argument():
    mod = registered("simple_v3")
    for build in BUILDS:
        with pytest.raises(TypeError, match="strict_actions: expected a bool"):
            getattr(mod, build)(continuous_actions=True, strict_actions="yes")
    # discrete actions out of range are refused in either mode
    for strict in (False, True):
        par = mod.parallel_env(strict_actions=strict)
        par.reset(seed=0)
        with pytest.raises(ValueError, match=r"actions\['agent_0'\].*\[0, 4\].*5"):
            par.step({"agent_0": 5})
        par.close()
    # war-envs' own front end is strict: it does not clip
    own = war_envs.parallel_env("Simple-v0", continuous_actions=True)
    assert own.clip_box_actions is False
    own.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions\['agent_0'\].*\[0.0, 1.0\].*1.5"):
        own.step({"agent_0": np.array([0, 1.5, 0, 0, 0], np.float32)})
    own.close()
