"""Every bad input of the SB3, TorchRL and skrl adapters and of the Gymnasium agents-as-envs
vector env (``AgentsAsEnvs``) gets a clear error naming the argument and what was expected -- and the adapter is left usable and uncorrupted: it then steps exactly
like an untouched twin built with the same seed and stepped the same way.

The case lists below (``CASES``) also generate the adapters' part of ``docs/errors.md``
(``scripts/error_table.py``), so the table cannot drift from the code.

Stages: ``"ready"`` (the bad call comes after ``reset()``; then both twins step on),
``"before_reset"`` (the bad call comes first; then both twins reset and step on),
``"episode_end"`` (the bad call comes right after the step that ended the first episode, i.e. on
the autoreset step of NEXT_STEP; then both twins step on) and ``"closed"`` (the bad call comes after ``close()``; it keeps failing, and ``close()`` stays
idempotent).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pytest
import torch

import war_envs

E = 2          # worlds: small and fast
SEED = 4
STEPS = 30     # past the first episode end (max_cycles 25, Tag's episode_length 10)
EPISODE = 25   # PredatorPrey's max_cycles: the "episode_end" stage steps this many times first

with warnings.catch_warnings():  # torchrl warns about its own deprecations on import
    warnings.simplefilter("ignore")
    try:
        import stable_baselines3  # noqa: F401
        import tensordict  # noqa: F401
        import torchrl  # noqa: F401
        import skrl  # noqa: F401
    except ImportError:  # pragma: no cover - the [dev] extra installs all three
        pytest.skip("needs stable-baselines3, torchrl and skrl (the [dev] extra)", allow_module_level=True)

from gymnasium.vector import AutoresetMode  # noqa: E402
from tensordict import TensorDict, TensorDictBase  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


# ----------------------------------------------------------------------------- harnesses
@dataclass(frozen=True)
class Harness:
    """One adapter configuration: how to build and reset it, a valid action for step ``k`` (a
    function of ``k`` and the spaces only, so twins get the same), and how to step it."""

    name: str                                  # the table's "front end" column
    make: Callable[[], Any]
    reset: Callable[[Any], Any]
    good: Callable[[Any, int], Any]
    step: Callable[[Any, Any], Any]            # one valid step; returns what to compare
    close: Callable[[Any], None]
    submit: Callable[[Any, Any], Any]          # how a bad action is passed (the adapter's step)

    def __repr__(self) -> str:
        return self.name


def _gen(k: int) -> torch.Generator:
    return torch.Generator().manual_seed(1000 + k)


# -- SB3: flat numpy actions [E * A(, ...)] (agents as environments)
def _sb3_make(env_id, **kw):
    def make():
        from war_train.adapters.sb3 import SB3VecEnv
        return SB3VecEnv(env_id, num_envs=E, seed=SEED, pad_observations=True, **kw)
    return make


def _flat_actions(space, num_envs: int, k: int) -> np.ndarray:
    """Valid random actions for ``num_envs`` agents-as-environments of one ``space``."""
    rng = np.random.default_rng(k)
    if hasattr(space, "nvec"):
        return rng.integers(0, space.nvec, (num_envs, len(space.nvec)))
    if hasattr(space, "n"):
        return rng.integers(0, space.n, num_envs)
    return rng.random((num_envs, *space.shape), dtype=np.float32)


def _sb3_good(venv, k):
    return _flat_actions(venv.action_space, venv.num_envs, k)


def _sb3(name, env_id, **kw):
    step = lambda venv, a: venv.step(a)  # noqa: E731
    return Harness(name, _sb3_make(env_id, **kw), lambda venv: venv.reset(), _sb3_good, step,
                   lambda venv: venv.close(), step)


SB3_DISCRETE = _sb3("SB3VecEnv (Discrete)", "PredatorPrey-v0")
SB3_BOX = _sb3("SB3VecEnv (Box)", "PredatorPrey-v0", continuous_actions=True)
SB3_MULTI = _sb3("SB3VecEnv (MultiDiscrete)", "Tag-v0", episode_length=10)


# -- TorchRL: a TensorDict with (group, "action") entries, batch_size [E]
def _trl_make(env_id, **kw):
    def make():
        from war_train.adapters.torchrl import TorchRLEnv
        return TorchRLEnv(env_id, num_envs=E, seed=SEED, **kw)
    return make


def _trl_good(env, k):
    gen, out = _gen(k), {}
    for g, spec in env.batched.groups.items():
        space, n = spec.action_space, spec.n_agents
        if hasattr(space, "nvec"):
            idx = [torch.randint(0, int(m), (E, n), generator=gen) for m in space.nvec]
            if env.categorical_actions:
                a = torch.stack(idx, dim=-1)
            else:
                a = torch.cat([torch.nn.functional.one_hot(i, int(m)) for i, m in zip(idx, space.nvec)], -1)
        elif hasattr(space, "n"):
            a = torch.randint(0, int(space.n), (E, n), generator=gen)
            if not env.categorical_actions:
                a = torch.nn.functional.one_hot(a, int(space.n))
        else:
            a = torch.rand((E, n, *space.shape), generator=gen)
        out[g] = {"action": a}
    return TensorDict(out, batch_size=[E])


def _trl_step(env, td):
    """TorchRL's collector step: step, then reset the worlds that finished."""
    return env.step_and_maybe_reset(td)


def _trl(name, env_id, **kw):
    # bad actions go through EnvBase.step (step_and_maybe_reset first moves the tensordict to
    # the env's device, TorchRL's own convention, so a 'meta' tensor would fail inside tensordict)
    return Harness(name, _trl_make(env_id, **kw), lambda env: env.reset(), _trl_good, _trl_step,
                   lambda env: env.close(), lambda env, td: env.step(td))


TRL_CATEGORICAL = _trl("TorchRLEnv (categorical)", "PredatorPrey-v0")
TRL_ONEHOT = _trl("TorchRLEnv (one-hot)", "PredatorPrey-v0", categorical_actions=False)
TRL_BOX = _trl("TorchRLEnv (Box)", "PredatorPrey-v0", continuous_actions=True)
TRL_MULTI = _trl("TorchRLEnv (MultiDiscrete)", "Tag-v0", episode_length=10)
TRL_MULTI_ONEHOT = _trl("TorchRLEnv (MultiOneHot)", "Tag-v0", episode_length=10, categorical_actions=False)


# -- skrl: {agent: tensor [E(, ...)]}
def _skrl_make(env_id, **kw):
    def make():
        from war_train.adapters.skrl import SkrlMultiAgentEnv
        return SkrlMultiAgentEnv(env_id, num_envs=E, seed=SEED, **kw)
    return make


def _skrl_good(env, k):
    gen, out = _gen(k), {}
    for agent in env.possible_agents:
        space = env.action_spaces[agent]
        if hasattr(space, "nvec"):
            out[agent] = torch.stack([torch.randint(0, int(m), (E,), generator=gen) for m in space.nvec], -1)
        elif hasattr(space, "n"):
            out[agent] = torch.randint(0, int(space.n), (E,), generator=gen)
        else:
            out[agent] = torch.rand((E, *space.shape), generator=gen)
    return out


def _skrl(name, env_id, **kw):
    step = lambda env, a: env.step(a)  # noqa: E731
    return Harness(name, _skrl_make(env_id, **kw), lambda env: env.reset(), _skrl_good, step,
                   lambda env: env.close(), step)


SKRL_DISCRETE = _skrl("SkrlMultiAgentEnv (Discrete)", "PredatorPrey-v0")
SKRL_BOX = _skrl("SkrlMultiAgentEnv (Box)", "PredatorPrey-v0", continuous_actions=True)
SKRL_MULTI = _skrl("SkrlMultiAgentEnv (MultiDiscrete)", "Tag-v0", episode_length=10)


# -- Gymnasium AgentsAsEnvs: flat actions [E * A(, ...)] like SB3, in each autoreset mode
def _aae_make(env_id, **kw):
    def make():
        from war_envs.frontends.agents_as_envs import AgentsAsEnvs
        return AgentsAsEnvs(env_id, num_envs=E, seed=SEED, pad_observations=True, **kw)
    return make


def _aae_good(envs, k):
    return _flat_actions(envs.single_action_space, envs.num_envs, k)


def _aae_step(envs, a):
    """One step; SAME_STEP's ``final_obs`` object array as a list (comparable); under DISABLED
    the finished worlds are then reset (``reset_mask``), as a DISABLED user must."""
    obs, rew, term, trunc, info = envs.step(a)
    info = {k: x.tolist() if isinstance(x, np.ndarray) and x.dtype == object else x for k, x in info.items()}
    out = (obs, rew, term, trunc, info)
    if envs.autoreset_mode == AutoresetMode.DISABLED and (term | trunc).any():
        out += (envs.reset(options={"reset_mask": term | trunc}),)
    return out


def _aae(name, env_id, **kw):
    return Harness(name, _aae_make(env_id, **kw), lambda envs: envs.reset(), _aae_good, _aae_step,
                   lambda envs: envs.close(), lambda envs, a: envs.step(a))


# -- strict_action_mask: SMAX-v0 (2 worlds x 3 allies, Discrete(8)), whose valid action here is
# "stop" (4), available to every unit at every step; attacks (5..7) are out of range at the start
STOP = 4
SMAX_STRICT = {"strict_action_mask": True, "max_steps": 10}
SB3_STRICT = replace(_sb3("SB3VecEnv (SMAX-v0, strict_action_mask)", "SMAX-v0", **SMAX_STRICT),
                     good=lambda venv, k: np.full(venv.num_envs, STOP))
TRL_STRICT = replace(_trl("TorchRLEnv (SMAX-v0, strict_action_mask)", "SMAX-v0", **SMAX_STRICT),
                     good=lambda env, k: TensorDict({"ally": {"action": torch.full((E, 3), STOP)}}, batch_size=[E]))
SKRL_STRICT = replace(_skrl("SkrlMultiAgentEnv (SMAX-v0, strict_action_mask)", "SMAX-v0", **SMAX_STRICT),
                      good=lambda env, k: {a: torch.full((E,), STOP) for a in env.possible_agents})
AAE_STRICT = replace(_aae("AgentsAsEnvs (SMAX-v0, strict_action_mask)", "SMAX-v0", **SMAX_STRICT),
                     good=lambda envs, k: np.full(envs.num_envs, STOP))

AAE_DISCRETE = _aae("AgentsAsEnvs (Discrete)", "PredatorPrey-v0")  # NEXT_STEP, Gymnasium's default
AAE_SAME_STEP = _aae("AgentsAsEnvs (Discrete, SAME_STEP)", "PredatorPrey-v0", autoreset_mode="same_step")
AAE_DISABLED = _aae("AgentsAsEnvs (Discrete, DISABLED)", "PredatorPrey-v0", autoreset_mode="disabled")
AAE_BOX = _aae("AgentsAsEnvs (Box)", "PredatorPrey-v0", continuous_actions=True)
AAE_MULTI = _aae("AgentsAsEnvs (MultiDiscrete)", "Tag-v0", episode_length=10)


# ----------------------------------------------------------------------------- comparison
def assert_same(x, y, where="out"):
    """Exactly equal, recursively (numpy arrays, tensors, TensorDicts, dicts, sequences)."""
    if isinstance(x, TensorDictBase):
        assert isinstance(y, TensorDictBase), where
        keys = set(x.keys(True, True))
        assert keys == set(y.keys(True, True)), where
        for key in keys:
            assert_same(x.get(key), y.get(key), f"{where}[{key!r}]")
    elif isinstance(x, torch.Tensor):
        assert isinstance(y, torch.Tensor) and x.dtype == y.dtype and torch.equal(x, y), where
    elif isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype and np.array_equal(x, y), where
    elif isinstance(x, dict):
        assert isinstance(y, dict) and list(x) == list(y), where
        for key in x:
            assert_same(x[key], y[key], f"{where}[{key!r}]")
    elif isinstance(x, (list, tuple)):
        assert type(x) is type(y) and len(x) == len(y), where
        for i, (a, b) in enumerate(zip(x, y)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert x == y, where


def assert_steps_like_twin(h: Harness, env, twin, steps=STEPS):
    """The env that saw the bad input steps exactly like its untouched twin (observations,
    rewards, dones, infos), across an episode boundary."""
    for k in range(steps):
        assert_same(h.step(env, h.good(env, k)), h.step(twin, h.good(twin, k)), f"{h.name} step {k}")


# ----------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    desc: str                                  # the table's "case" column
    call: Callable[[Harness, Any, Any], Any]   # (harness, env, a valid action) -> the bad call
    error: type
    match: str


def act(desc, mutate, error, match) -> Case:
    """A bad action made from a valid one, passed to the adapter's step."""
    return Case(desc, lambda h, env, a: h.submit(env, mutate(a)), error, match)


def _set(a: np.ndarray, index, value):
    a = a.copy()
    a[index] = value
    return a


def _with(a: dict, key, value) -> dict:
    return {**a, key: value}


# -- SB3 (8 sub-envs = 2 worlds x (3 adversaries + 1 agent); Tag: 2 x 11)
SB3_DISCRETE_BAD = [
    act("shape (7,): one sub-env short", lambda a: a[:-1], ValueError,
        r"actions: expected shape \(8,\) \(num_envs = 2 worlds x 4 agents\), got \(7,\)"),
    act("shape (8, 1)", lambda a: a[:, None], ValueError, r"actions: expected shape \(8,\) .*got \(8, 1\)"),
    act("dtype float32", lambda a: a.astype(np.float32), TypeError,
        r"actions: expected integer actions for Discrete\(5\), got dtype torch.float32"),
    act("dtype bool", lambda a: a.astype(bool), TypeError, r"actions: expected integer actions .* torch.bool"),
    act("value 5 (>= n)", lambda a: _set(a, 3, 5), ValueError,
        r"actions: expected Discrete\(5\) actions in \[0, 4\], got 5"),
    act("value -1", lambda a: _set(a, 6, -1), ValueError, r"actions: expected Discrete\(5\) .* got -1"),
    act("value 2**40", lambda a: _set(a, 0, 2**40), ValueError, r"actions: .* got 1099511627776"),
    act("a str", lambda a: "left", TypeError, r"actions: expected an array of shape \(8,\), got str"),
    act("None", lambda a: None, TypeError, r"actions: expected an array of shape \(8,\), got NoneType"),
    act("object array", lambda a: a.astype(object), TypeError, "actions: expected a numeric array, got dtype object"),
    act("tensor on device 'meta'", lambda a: torch.from_numpy(a).to("meta"), ValueError,
        r"actions: expected a numpy array or a tensor on device cpu, got a tensor on meta"),
]
SB3_BOX_BAD = [
    act("NaN in one entry", lambda a: _set(a, (4, 2), math.nan), ValueError,
        r"actions: expected finite Box actions in \[0.0, 1.0\], got NaN"),
    act("+inf", lambda a: _set(a, (1, 0), math.inf), ValueError, r"actions: expected Box actions in \[0.0, 1.0\], got inf"),
    act("-inf", lambda a: _set(a, (7, 4), -math.inf), ValueError, r"actions: .* got -inf"),
    act("1.5 (above high)", lambda a: _set(a, (2, 1), 1.5), ValueError, r"actions: expected Box actions .* got 1.5"),
    act("-0.5 (below low)", lambda a: _set(a, (5, 3), -0.5), ValueError, r"actions: .* got -0.5"),
    act("dtype int64", lambda a: (a * 0).astype(np.int64), TypeError,
        r"actions: expected floating actions for Box\(0.0, 1.0, \(5,\), float32\), got dtype torch.int64"),
    act("shape (8, 4)", lambda a: a[:, :4], ValueError, r"actions: expected shape \(8, 5\) .*got \(8, 4\)"),
    act("shape (8,)", lambda a: a[:, 0], ValueError, r"actions: expected shape \(8, 5\) .*got \(8,\)"),
]
SB3_MULTI_BAD = [
    act("component 1 = 11 (>= nvec)", lambda a: _set(a, (3, 1), 11), ValueError,
        r"actions\[:, 1\]: expected Discrete\(11\) actions in \[0, 10\], got 11"),
    act("component 0 = -1", lambda a: _set(a, (20, 0), -1), ValueError, r"actions\[:, 0\]: .* got -1"),
    act("shape (22,)", lambda a: a[:, 0], ValueError, r"actions: expected shape \(22, 2\)"),
]
SB3_BEFORE_RESET = [
    Case("step() before reset()", lambda h, venv, a: venv.step(a), RuntimeError,
         r"SB3VecEnv: step_async\(\) called before reset\(\); call reset\(\) first"),
    Case("step_async() before reset()", lambda h, venv, a: venv.step_async(a), RuntimeError,
         r"step_async\(\) called before reset\(\)"),
    Case("step_wait() before reset()", lambda h, venv, a: venv.step_wait(), RuntimeError,
         r"SB3VecEnv: step_wait\(\) called without step_async\(\)"),
]
SB3_READY_LIFECYCLE = [
    Case("step_wait() without step_async()", lambda h, venv, a: venv.step_wait(), RuntimeError,
         r"step_wait\(\) called without step_async\(\)"),
    Case("step_async(good), step_async(bad) refused, step_wait()",
         lambda h, venv, a: (venv.step_async(a), pytest.raises(ValueError, venv.step_async, a + 5),
                             venv.step_wait()),
         RuntimeError, r"step_wait\(\) called without step_async\(\)"),
]
SB3_CLOSED = [
    Case("step() after close()", lambda h, venv, a: venv.step(a), RuntimeError,
         r"SB3VecEnv: step_async\(\) called after close\(\); the environment is closed"),
    Case("step_wait() after close()", lambda h, venv, a: venv.step_wait(), RuntimeError,
         r"step_wait\(\) called after close\(\)"),
    Case("reset() after close()", lambda h, venv, a: venv.reset(), RuntimeError, r"reset\(\) called after close\(\)"),
]


# -- TorchRL (PredatorPrey: groups 'adversary' [2, 3] and 'agent' [2, 1]; Tag: 'tagger', 'runner')
def _td_set(td: TensorDict, key, value) -> TensorDict:
    """A copy of ``td`` whose ``key`` holds ``value`` (any shape or device)."""
    out = TensorDict({g: {"action": td[g, "action"]} for g in td.keys()}, batch_size=td.batch_size)
    g, leaf = key
    out[g] = TensorDict({leaf: value}, batch_size=td.batch_size)
    return out


def _td_without(td: TensorDict, group) -> TensorDict:
    return TensorDict({g: {"action": td[g, "action"]} for g in td.keys() if g != group}, batch_size=td.batch_size)


ADV, AGT = ("adversary", "action"), ("agent", "action")
TRL_CATEGORICAL_BAD = [
    act("('agent', 'action') missing", lambda td: _td_without(td, "agent"), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: missing; expected the action of group 'agent'"),
    act("action at the root, not per group", lambda td: TensorDict({"action": td["adversary", "action"]}, [E]),
        ValueError, r"tensordict\[\('adversary', 'action'\)\]: missing"),
    act("('adversary', 'action') dtype float32", lambda td: _td_set(td, ADV, td[ADV].float()), TypeError,
        r"tensordict\[\('adversary', 'action'\)\]: expected an integer dtype for Discrete\(5\) actions, got torch.float32"),
    act("('agent', 'action') dtype bool", lambda td: _td_set(td, AGT, td[AGT].bool()), TypeError,
        r"tensordict\[\('agent', 'action'\)\]: expected an integer dtype .* torch.bool"),
    act("('agent', 'action') value 5 (>= n)", lambda td: _td_set(td, AGT, td[AGT] * 0 + 5), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected Discrete\(5\) actions in \[0, 4\], got 5"),
    act("('adversary', 'action') value -1", lambda td: _td_set(td, ADV, td[ADV] * 0 - 1), ValueError,
        r"tensordict\[\('adversary', 'action'\)\]: .* got -1"),
    act("('adversary', 'action') shape [2, 3, 1]", lambda td: _td_set(td, ADV, td[ADV][..., None]), ValueError,
        r"tensordict\[\('adversary', 'action'\)\]: expected shape \(2, 3\), got \(2, 3, 1\)"),
    act("('adversary', 'action') shape [2, 2]", lambda td: _td_set(td, ADV, td[ADV][:, :2]), ValueError,
        r"tensordict\[\('adversary', 'action'\)\]: expected shape \(2, 3\), got \(2, 2\)"),
    act("('agent', 'action') on device 'meta'", lambda td: _td_set(td, AGT, td[AGT].to("meta")), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected a tensor on device cpu, got one on meta"),
    act("tensordict batch_size [3]", lambda td: TensorDict(
        {"adversary": {"action": torch.zeros(3, 3, dtype=torch.long)},
         "agent": {"action": torch.zeros(3, 1, dtype=torch.long)}}, [3]), ValueError,
        r"tensordict: expected batch_size \[2\] \(num_envs\), got \[3\]"),
    act("tensordict batch_size [] (unbatched)", lambda td: TensorDict(td.to_dict(), []), ValueError,
        r"tensordict: expected batch_size \[2\] \(num_envs\), got \[\]"),
    act("a dict, not a TensorDict", lambda td: td.to_dict(), TypeError,
        r"tensordict: expected a TensorDict with batch_size \[2\], got dict"),
]
TRL_ONEHOT_BAD = [
    act("('agent', 'action') all zeros", lambda td: _td_set(td, AGT, td[AGT] * 0), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected one-hot rows of width 5 \(a single 1, the rest 0\)"),
    act("('adversary', 'action') two ones in a row", lambda td: _td_set(td, ADV, td[ADV].index_fill(-1, torch.tensor([0, 1]), 1)),
        ValueError, r"tensordict\[\('adversary', 'action'\)\]: expected one-hot rows"),
    act("('agent', 'action') a 2 instead of the 1", lambda td: _td_set(td, AGT, td[AGT] * 2), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected one-hot rows of width 5"),
    act("('agent', 'action') probabilities 0.2 each, not a one-hot", lambda td: _td_set(td, AGT, td[AGT] * 0 + 0.2),
        ValueError, r"tensordict\[\('agent', 'action'\)\]: expected one-hot rows"),
    act("('agent', 'action') NaN (float)", lambda td: _td_set(td, AGT, td[AGT].float() * math.nan), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected one-hot rows"),
    act("('agent', 'action') width 4", lambda td: _td_set(td, AGT, td[AGT][..., :4]), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected shape \(2, 1, 5\), got \(2, 1, 4\)"),
    act("('adversary', 'action') indices, not one-hots", lambda td: _td_set(td, ADV, td[ADV].argmax(-1)), ValueError,
        r"tensordict\[\('adversary', 'action'\)\]: expected shape \(2, 3, 5\), got \(2, 3\)"),
]
TRL_BOX_BAD = [
    act("('agent', 'action') NaN", lambda td: _td_set(td, AGT, td[AGT].index_fill(-1, torch.tensor([2]), math.nan)),
        ValueError, r"tensordict\[\('agent', 'action'\)\]: expected finite Box actions in \[0.0, 1.0\], got NaN"),
    act("('adversary', 'action') +inf", lambda td: _td_set(td, ADV, td[ADV] + math.inf), ValueError,
        r"tensordict\[\('adversary', 'action'\)\]: expected Box actions in \[0.0, 1.0\], got inf"),
    act("('agent', 'action') 1.5 (above high)", lambda td: _td_set(td, AGT, td[AGT] * 0 + 1.5), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected Box actions in \[0.0, 1.0\], got 1.5"),
    act("('agent', 'action') -0.5 (below low)", lambda td: _td_set(td, AGT, td[AGT] * 0 - 0.5), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected Box actions in \[0.0, 1.0\], got -0.5"),
    act("('agent', 'action') dtype int64", lambda td: _td_set(td, AGT, td[AGT].long()), TypeError,
        r"tensordict\[\('agent', 'action'\)\]: expected a floating dtype for Box actions, got torch.int64"),
    act("('agent', 'action') shape [2, 1, 4]", lambda td: _td_set(td, AGT, td[AGT][..., :4]), ValueError,
        r"tensordict\[\('agent', 'action'\)\]: expected shape \(2, 1, 5\), got \(2, 1, 4\)"),
]
TRL_MULTI_BAD = [
    act("('runner', 'action') component 1 = 11 (>= nvec)",
        lambda td: _td_set(td, ("runner", "action"), td["runner", "action"].index_fill(-1, torch.tensor([1]), 11)),
        ValueError, r"tensordict\[\('runner', 'action'\)\]\[\.\.\., 1\]: expected Discrete\(11\) actions in \[0, 10\], got 11"),
    act("('tagger', 'action') shape [2, 1]",
        lambda td: _td_set(td, ("tagger", "action"), td["tagger", "action"][..., 0]),
        ValueError, r"tensordict\[\('tagger', 'action'\)\]: expected shape \(2, 1, 2\), got \(2, 1\)"),
]
TRL_MULTI_ONEHOT_BAD = [
    act("('runner', 'action') second block all zeros",
        lambda td: _td_set(td, ("runner", "action"), td["runner", "action"].index_fill(-1, torch.arange(11, 22), 0)),
        ValueError, r"tensordict\[\('runner', 'action'\)\]\[\.\.\., 11:22\]: expected one-hot rows of width 11"),
]
TRL_BEFORE_RESET = [
    Case("step() before reset()", lambda h, env, td: env.step(td), RuntimeError,
         r"PredatorPrey-v0: step\(\) called before reset\(\); call reset\(\) first"),
]
TRL_CLOSED = [
    Case("step() after close()", lambda h, env, td: env.step(td), RuntimeError,
         r"TorchRLEnv: step\(\) called after close\(\); the environment is closed"),
    Case("reset() after close()", lambda h, env, td: env.reset(), RuntimeError, r"TorchRLEnv: reset\(\) called after close\(\)"),
]


# -- skrl (PredatorPrey agents: adversary_0..2, agent_0; Tag: tagger_0, runner_0..9)
SKRL_DISCRETE_BAD = [
    act("'agent_0' missing", lambda a: {k: x for k, x in a.items() if k != "agent_0"}, ValueError,
        r"actions: expected keys \['adversary_0', 'adversary_1', 'adversary_2', 'agent_0'\]; missing \['agent_0'\]"),
    act("unknown key 'ghost'", lambda a: _with(a, "ghost", a["agent_0"]), ValueError, r"actions: expected keys .*; unknown \['ghost'\]"),
    act("a list, not a dict", lambda a: list(a.values()), TypeError, r"actions: expected a dict keyed by \['adversary_0'"),
    act("'agent_0' dtype float32", lambda a: _with(a, "agent_0", a["agent_0"].float()), TypeError,
        r"actions\['agent_0'\]: expected an integer dtype for Discrete\(5\) actions, got torch.float32"),
    act("'adversary_1' dtype float32 (others int)", lambda a: _with(a, "adversary_1", a["adversary_1"].float()),
        TypeError, r"actions\['adversary_1'\]: expected an integer dtype"),
    act("'adversary_1' dtype bool (others int)", lambda a: _with(a, "adversary_1", a["adversary_1"].bool()),
        TypeError, r"actions\['adversary_1'\]: expected an integer dtype .* torch.bool"),
    act("'adversary_2' value 5 (>= n)", lambda a: _with(a, "adversary_2", a["adversary_2"] * 0 + 5), ValueError,
        r"actions\['adversary_2'\]: expected Discrete\(5\) actions in \[0, 4\], got 5"),
    act("'agent_0' value -1", lambda a: _with(a, "agent_0", a["agent_0"] * 0 - 1), ValueError,
        r"actions\['agent_0'\]: .* got -1"),
    act("'agent_0' shape (1,)", lambda a: _with(a, "agent_0", a["agent_0"][:1]), ValueError,
        r"actions\['agent_0'\]: expected shape \(2,\) or \(2, 1\), got \(1,\)"),
    act("'adversary_0' shape (2, 2)", lambda a: _with(a, "adversary_0", a["adversary_0"][:, None].repeat(1, 2)),
        ValueError, r"actions\['adversary_0'\]: expected shape \(2,\) or \(2, 1\), got \(2, 2\)"),
    act("'agent_0' on device 'meta'", lambda a: _with(a, "agent_0", a["agent_0"].to("meta")), ValueError,
        r"actions\['agent_0'\]: expected a tensor on device cpu, got one on meta"),
    act("'agent_0' a str", lambda a: _with(a, "agent_0", "left"), TypeError,
        r"actions\['agent_0'\]: expected a torch.Tensor or numpy array, got str"),
]
SKRL_BOX_BAD = [
    act("'agent_0' NaN", lambda a: _with(a, "agent_0", a["agent_0"].index_fill(1, torch.tensor([3]), math.nan)),
        ValueError, r"actions\['agent_0'\]: expected finite Box actions in \[0.0, 1.0\], got NaN"),
    act("'adversary_0' +inf", lambda a: _with(a, "adversary_0", a["adversary_0"] + math.inf), ValueError,
        r"actions\['adversary_0'\]: expected Box actions in \[0.0, 1.0\], got inf"),
    act("'agent_0' 1.5 (above high)", lambda a: _with(a, "agent_0", a["agent_0"] * 0 + 1.5), ValueError,
        r"actions\['agent_0'\]: .* got 1.5"),
    act("'adversary_2' -0.5 (below low)", lambda a: _with(a, "adversary_2", a["adversary_2"] * 0 - 0.5), ValueError,
        r"actions\['adversary_2'\]: .* got -0.5"),
    act("'adversary_1' dtype int64 (others float)", lambda a: _with(a, "adversary_1", a["adversary_1"].long()),
        TypeError, r"actions\['adversary_1'\]: expected a floating dtype for Box actions, got torch.int64"),
    act("'agent_0' shape (2, 4)", lambda a: _with(a, "agent_0", a["agent_0"][:, :4]), ValueError,
        r"actions\['agent_0'\]: expected shape \(2, 5\), got \(2, 4\)"),
    act("'adversary_0' shape (1, 5)", lambda a: _with(a, "adversary_0", a["adversary_0"][:1]), ValueError,
        r"actions\['adversary_0'\]: expected shape \(2, 5\), got \(1, 5\)"),
    act("'agent_0' on device 'meta'", lambda a: _with(a, "agent_0", a["agent_0"].to("meta")), ValueError,
        r"actions\['agent_0'\]: expected a tensor on device cpu, got one on meta"),
]
SKRL_MULTI_BAD = [
    act("'runner_3' component 0 = 11 (>= nvec)",
        lambda a: _with(a, "runner_3", a["runner_3"].index_fill(1, torch.tensor([0]), 11)), ValueError,
        r"actions\['runner_3'\]\[:, 0\]: expected Discrete\(11\) actions in \[0, 10\], got 11"),
    act("'tagger_0' shape (2,)", lambda a: _with(a, "tagger_0", a["tagger_0"][:, 0]), ValueError,
        r"actions\['tagger_0'\]: expected shape \(2, 2\), got \(2,\)"),
]
SKRL_BEFORE_RESET = [
    Case("step() before reset()", lambda h, env, a: env.step(a), RuntimeError,
         r"PredatorPrey-v0: step\(\) called before reset\(\); call reset\(\) first"),
]
SKRL_CLOSED = [
    Case("step() after close()", lambda h, env, a: env.step(a), RuntimeError,
         r"SkrlMultiAgentEnv: step\(\) called after close\(\); the environment is closed"),
    Case("reset() after close()", lambda h, env, a: env.reset(), RuntimeError, r"reset\(\) called after close\(\)"),
    Case("state() after close()", lambda h, env, a: env.state(), RuntimeError, r"state\(\) called after close\(\)"),
]


# -- AgentsAsEnvs: a Gymnasium VectorEnv of 8 sub-envs (2 worlds x 4 agents; Tag: 2 x 11); its
# user passes one flat ``actions`` array, so no error may name a group
AAE_DISCRETE_BAD = [
    act("shape (7,): one sub-env short", lambda a: a[:-1], ValueError,
        r"actions: expected shape \(8,\) \(num_envs = 2 worlds x 4 agents\), got \(7,\)"),
    act("shape (8, 1)", lambda a: a[:, None], ValueError, r"actions: expected shape \(8,\) \(num_envs .*got \(8, 1\)"),
    act("dtype float32", lambda a: a.astype(np.float32), TypeError,
        r"actions: expected integer actions for Discrete\(5\), got dtype torch.float32"),
    act("dtype bool", lambda a: a.astype(bool), TypeError,
        r"actions: expected integer actions for Discrete\(5\), got dtype torch.bool"),
    act("value 5 (>= n) for agent_0 of world 0", lambda a: _set(a, 3, 5), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 5$"),
    act("value -1 for adversary_2 of world 1", lambda a: _set(a, 6, -1), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got -1$"),
    act("value 2**40", lambda a: _set(a, 0, 2**40), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 1099511627776$"),
    act("value 5 in a cpu tensor", lambda a: torch.from_numpy(_set(a, 7, 5)), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 5$"),
    act("a str", lambda a: "left", TypeError, r"actions: expected an array of shape \(8,\), got str"),
    act("None", lambda a: None, TypeError, r"actions: expected an array of shape \(8,\), got NoneType"),
    act("object array", lambda a: a.astype(object), TypeError, "actions: expected a numeric array, got dtype object"),
    act("tensor on device 'meta'", lambda a: torch.from_numpy(a).to("meta"), ValueError,
        r"actions: expected a numpy array or a tensor on device cpu, got a tensor on meta"),
]
AAE_EPISODE_END_BAD = [  # NEXT_STEP: the autoreset step, whose action the env ignores -- still checked
    act("value 5 on the autoreset step after an episode's end", lambda a: _set(a, 0, 5), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 5$"),
    act("tensor on device 'meta' on the autoreset step", lambda a: torch.from_numpy(a).to("meta"), ValueError,
        r"actions: expected a numpy array or a tensor on device cpu, got a tensor on meta"),
]
AAE_SAME_STEP_BAD = [
    act("value 5 (>= n)", lambda a: _set(a, 2, 5), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 5$"),
    act("tensor on device 'meta'", lambda a: torch.from_numpy(a).to("meta"), ValueError,
        r"actions: expected a numpy array or a tensor on device cpu, got a tensor on meta"),
]
AAE_SAME_STEP_EPISODE_END_BAD = [
    act("value -1 right after the step that autoreset every world", lambda a: _set(a, 5, -1), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got -1$"),
]
AAE_DISABLED_BAD = [
    act("value 5 (>= n)", lambda a: _set(a, 4, 5), ValueError,
        r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 5$"),
    act("shape (9,)", lambda a: np.append(a, 0), ValueError,
        r"actions: expected shape \(8,\) \(num_envs = 2 worlds x 4 agents\), got \(9,\)"),
]
AAE_DISABLED_EPISODE_END_BAD = [
    act("value 7 right after reset(options={'reset_mask': ...}) of the finished worlds",
        lambda a: _set(a, 1, 7), ValueError, r"^actions: expected Discrete\(5\) actions in \[0, 4\], got 7$"),
]
AAE_BOX_BAD = [
    act("NaN in one entry", lambda a: _set(a, (4, 2), math.nan), ValueError,
        r"^actions: expected finite Box actions in \[0.0, 1.0\], got NaN$"),
    act("+inf", lambda a: _set(a, (1, 0), math.inf), ValueError,
        r"^actions: expected Box actions in \[0.0, 1.0\], got inf$"),
    act("-inf", lambda a: _set(a, (7, 4), -math.inf), ValueError,
        r"^actions: expected Box actions in \[0.0, 1.0\], got -inf$"),
    act("1.5 (above high)", lambda a: _set(a, (2, 1), 1.5), ValueError,
        r"^actions: expected Box actions in \[0.0, 1.0\], got 1.5$"),
    act("-0.5 (below low)", lambda a: _set(a, (5, 3), -0.5), ValueError,
        r"^actions: expected Box actions in \[0.0, 1.0\], got -0.5$"),
    act("dtype int64", lambda a: (a * 0).astype(np.int64), TypeError,
        r"actions: expected floating actions for Box\(0.0, 1.0, \(5,\), float32\), got dtype torch.int64"),
    act("shape (8, 4)", lambda a: a[:, :4], ValueError,
        r"actions: expected shape \(8, 5\) \(num_envs = 2 worlds x 4 agents\), got \(8, 4\)"),
    act("shape (8,)", lambda a: a[:, 0], ValueError, r"actions: expected shape \(8, 5\) .*got \(8,\)"),
    act("tensor on device 'meta'", lambda a: torch.from_numpy(a).to("meta"), ValueError,
        r"actions: expected a numpy array or a tensor on device cpu, got a tensor on meta"),
]
AAE_MULTI_BAD = [
    act("component 1 = 11 (>= nvec)", lambda a: _set(a, (3, 1), 11), ValueError,
        r"^actions\[:, 1\]: expected Discrete\(11\) actions in \[0, 10\], got 11$"),
    act("component 0 = -1", lambda a: _set(a, (20, 0), -1), ValueError,
        r"^actions\[:, 0\]: expected Discrete\(11\) actions in \[0, 10\], got -1$"),
    act("shape (22,)", lambda a: a[:, 0], ValueError,
        r"actions: expected shape \(22, 2\) \(num_envs = 2 worlds x 11 agents\), got \(22,\)"),
    act("shape (22, 3)", lambda a: np.concatenate([a, a[:, :1]], 1), ValueError,
        r"actions: expected shape \(22, 2\) .*got \(22, 3\)"),
]
AAE_BEFORE_RESET = [
    Case("step() before reset()", lambda h, envs, a: envs.step(a), RuntimeError,
         r"AgentsAsEnvs: step\(\) called before reset\(\); call reset\(\) first"),
]
AAE_CLOSED = [
    Case("step() after close()", lambda h, envs, a: envs.step(a), RuntimeError,
         r"AgentsAsEnvs: step\(\) called after close\(\); the environment is closed"),
    Case("reset() after close()", lambda h, envs, a: envs.reset(), RuntimeError,
         r"AgentsAsEnvs: reset\(\) called after close\(\)"),
]

# -- strict_action_mask (SMAX-v0): an unavailable action, refused before anything is stepped
_UNAVAILABLE = r"is unavailable now \(the action mask allows \[0, 1, 2, 3, 4\]\); strict_action_mask=True refuses"
SB3_STRICT_BAD = [
    act("action 7 (attack enemy_2, out of range) for sub-env 4", lambda a: _set(a, 4, 7), ValueError,
        r"^actions\[4\] \(agent 'ally_1' of world 1\): action 7 " + _UNAVAILABLE),
]
TRL_STRICT_BAD = [
    act("action 6 (attack enemy_1, out of range) for ally_2 of world 1",
        lambda td: _td_set(td, ("ally", "action"), torch.tensor([[STOP] * 3, [STOP, STOP, 6]])), ValueError,
        r"^tensordict\[\('ally', 'action'\)\] \(agent 'ally_2', world 1\): action 6 " + _UNAVAILABLE),
]
SKRL_STRICT_BAD = [
    act("action 5 (attack enemy_0, out of range) for ally_0 of world 0",
        lambda a: _with(a, "ally_0", torch.tensor([5, STOP])), ValueError,
        r"^actions\['ally_0'\] at world 0: action 5 " + _UNAVAILABLE),
]
AAE_STRICT_BAD = [
    act("action 5 (attack enemy_0, out of range) for sub-env 2", lambda a: _set(a, 2, 5), ValueError,
        r"^actions\[2\] \(agent 'ally_2' of world 0\): action 5 " + _UNAVAILABLE),
]

# (harness, stage, cases): what the tests run and scripts/error_table.py tabulates, in order
CASES = [
    (SB3_DISCRETE, "ready", SB3_DISCRETE_BAD + SB3_READY_LIFECYCLE),
    (SB3_BOX, "ready", SB3_BOX_BAD),
    (SB3_MULTI, "ready", SB3_MULTI_BAD),
    (SB3_DISCRETE, "before_reset", SB3_BEFORE_RESET),
    (SB3_DISCRETE, "closed", SB3_CLOSED),
    (SB3_STRICT, "ready", SB3_STRICT_BAD),
    (TRL_CATEGORICAL, "ready", TRL_CATEGORICAL_BAD),
    (TRL_ONEHOT, "ready", TRL_ONEHOT_BAD),
    (TRL_BOX, "ready", TRL_BOX_BAD),
    (TRL_MULTI, "ready", TRL_MULTI_BAD),
    (TRL_MULTI_ONEHOT, "ready", TRL_MULTI_ONEHOT_BAD),
    (TRL_CATEGORICAL, "before_reset", TRL_BEFORE_RESET),
    (TRL_CATEGORICAL, "closed", TRL_CLOSED),
    (TRL_STRICT, "ready", TRL_STRICT_BAD),
    (SKRL_DISCRETE, "ready", SKRL_DISCRETE_BAD),
    (SKRL_BOX, "ready", SKRL_BOX_BAD),
    (SKRL_MULTI, "ready", SKRL_MULTI_BAD),
    (SKRL_DISCRETE, "before_reset", SKRL_BEFORE_RESET),
    (SKRL_DISCRETE, "closed", SKRL_CLOSED),
    (SKRL_STRICT, "ready", SKRL_STRICT_BAD),
    (AAE_DISCRETE, "ready", AAE_DISCRETE_BAD),
    (AAE_DISCRETE, "episode_end", AAE_EPISODE_END_BAD),
    (AAE_SAME_STEP, "ready", AAE_SAME_STEP_BAD),
    (AAE_SAME_STEP, "episode_end", AAE_SAME_STEP_EPISODE_END_BAD),
    (AAE_DISABLED, "ready", AAE_DISABLED_BAD),
    (AAE_DISABLED, "episode_end", AAE_DISABLED_EPISODE_END_BAD),
    (AAE_BOX, "ready", AAE_BOX_BAD),
    (AAE_MULTI, "ready", AAE_MULTI_BAD),
    (AAE_DISCRETE, "before_reset", AAE_BEFORE_RESET),
    (AAE_DISCRETE, "closed", AAE_CLOSED),
    (AAE_STRICT, "ready", AAE_STRICT_BAD),
]


def prepared(h: Harness, stage: str):
    """An env and its untouched twin, both at ``stage``."""
    env, twin = h.make(), h.make()
    if stage != "before_reset":
        h.reset(env)
        h.reset(twin)
    if stage == "episode_end":
        for k in range(EPISODE):
            out = h.step(env, h.good(env, k))
            assert_same(out, h.step(twin, h.good(twin, k)), f"{h.name} step {k}")
        if h.step is _aae_step:  # (obs, rew, terminated, truncated, info[, reset])
            assert (out[2] | out[3]).all(), f"{h.name}: the first episode should end at step {EPISODE}"
    if stage == "closed":
        h.close(env)
    return env, twin


def _params():
    return [pytest.param(h, stage, case, id=f"{h.name}|{stage}|{case.desc}")
            for h, stage, cases in CASES for case in cases]


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("h,stage,case", _params())
def test_bad_input_is_refused_and_the_env_steps_like_its_twin(h, stage, case):
    env, twin = prepared(h, stage)
    with pytest.raises(case.error, match=case.match):
        case.call(h, env, h.good(env, 0))
    if stage == "closed":
        with pytest.raises(case.error, match=case.match):  # and keeps refusing
            case.call(h, env, h.good(env, 0))
        h.close(env)  # idempotent
        h.close(twin)
        return
    if stage == "before_reset":
        assert_same(h.reset(env), h.reset(twin), f"{h.name} reset")
    assert_steps_like_twin(h, env, twin)
    h.close(env)
    h.close(twin)


def test_every_case_list_is_tabulated():
    """Each case list above is in CASES (so docs/errors.md lists it) exactly once."""
    lists = [v for k, v in globals().items() if k.isupper() and k.endswith(("_BAD", "_RESET", "_CLOSED", "_LIFECYCLE"))]
    in_cases = [c for _, _, cases in CASES for c in cases]
    for cases in lists:
        for c in cases:
            assert sum(x is c for x in in_cases) == 1, c.desc
    assert len({(h.name, stage, c.desc) for h, stage, cases in CASES for c in cases}) == len(in_cases)


# -- accepted variants: not over-strict, and they act exactly like the canonical form
def test_sb3_accepts_lists_int32_cpu_tensors_and_float64():
    env, twin = prepared(SB3_DISCRETE, "ready")
    for k in range(STEPS):
        a = SB3_DISCRETE.good(env, k)
        variant = [a.tolist(), a.astype(np.int32), torch.from_numpy(a), a.astype(np.uint8)][k % 4]
        assert_same(env.step(variant), twin.step(a), f"step {k}")
    env, twin = prepared(SB3_BOX, "ready")
    for k in range(STEPS):
        a = SB3_BOX.good(env, k)
        assert_same(env.step(a.astype(np.float64) if k % 2 else torch.from_numpy(a)), twin.step(a), f"step {k}")


def test_torchrl_accepts_int32_float_bool_and_straight_through_one_hots_and_extra_keys():
    env, twin = prepared(TRL_CATEGORICAL, "ready")
    for k in range(STEPS):
        td = TRL_CATEGORICAL.good(env, k)
        variant = TensorDict({g: {"action": td[g, "action"].int(), "note": torch.ones(E, len(env.group_map[g]))}
                              for g in td.keys()}, [E])
        variant["extra"] = torch.zeros(E)  # a TensorDict carries other entries (observations, ...)
        out, ref = _trl_step(env, variant), _trl_step(twin, td)
        assert_same(out[0]["next"], ref[0]["next"], f"step {k}")
        assert_same(out[1].select(*ref[1].keys(True, True)), ref[1], f"step {k} reset")
    env, twin = prepared(TRL_ONEHOT, "ready")
    for k in range(STEPS):
        td = TRL_ONEHOT.good(env, k)
        def straight_through(x):  # what OneHotCategorical.rsample returns: x + p - p, off by an ulp
            p = torch.rand(x.shape, generator=_gen(k))
            return x.float() + p - p
        variant = TensorDict({g: {"action": [td[g, "action"].float(), td[g, "action"].bool(),
                                             straight_through(td[g, "action"])][k % 3]}
                              for g in td.keys()}, [E])
        assert_same(_trl_step(env, variant)[0]["next"], _trl_step(twin, td)[0]["next"], f"step {k}")


def test_skrl_accepts_column_shapes_numpy_and_int32():
    env, twin = prepared(SKRL_DISCRETE, "ready")
    for k in range(STEPS):
        a = SKRL_DISCRETE.good(env, k)
        variant = {agent: [x[:, None], x.numpy(), x.int(), x.to(torch.uint8)][(k + i) % 4]
                   for i, (agent, x) in enumerate(a.items())}
        assert_same(env.step(variant), twin.step(a), f"step {k}")
    env, twin = prepared(SKRL_BOX, "ready")
    for k in range(STEPS):
        a = SKRL_BOX.good(env, k)
        assert_same(env.step({g: x.double() for g, x in a.items()}), twin.step(a), f"step {k}")


@pytest.mark.parametrize("h", [AAE_DISCRETE, AAE_SAME_STEP, AAE_DISABLED])
def test_agents_as_envs_accepts_lists_int32_uint8_and_cpu_tensors(h):
    env, twin = prepared(h, "ready")
    for k in range(STEPS):
        a = h.good(env, k)
        variant = [a.tolist(), a.astype(np.int32), torch.from_numpy(a), a.astype(np.uint8)][k % 4]
        assert_same(h.step(env, variant), h.step(twin, a), f"{h.name} step {k}")


def test_agents_as_envs_accepts_float64_and_cpu_tensors_for_box():
    env, twin = prepared(AAE_BOX, "ready")
    for k in range(STEPS):
        a = AAE_BOX.good(env, k)
        variant = a.astype(np.float64) if k % 2 else torch.from_numpy(a)
        assert_same(AAE_BOX.step(env, variant), AAE_BOX.step(twin, a), f"step {k}")


def test_closing_an_adapter_over_a_given_env_leaves_that_env_open():
    """An adapter refuses calls after its close(), but does not close a batched env it was
    handed (it did not build it)."""
    from war_envs.frontends.agents_as_envs import AgentsAsEnvs
    from war_train.adapters.sb3 import SB3VecEnv
    from war_train.adapters.skrl import SkrlMultiAgentEnv
    from war_train.adapters.torchrl import TorchRLEnv

    for cls, mode in [(SB3VecEnv, "same_step"), (TorchRLEnv, "disabled"), (SkrlMultiAgentEnv, "same_step"),
                      (AgentsAsEnvs, "next_step")]:
        batched = war_envs.make("Spread-v0", num_envs=E, autoreset_mode=mode)
        adapter = cls(batched)
        adapter.reset()
        adapter.close()
        with pytest.raises(RuntimeError, match=f"{cls.__name__}: reset\\(\\) called after close\\(\\)"):
            adapter.reset()
        assert not batched.closed
        batched.reset(seed=0)
        batched.step({"agent": torch.zeros(E, 3, dtype=torch.long)})
