"""Conformance checks a scenario author runs on their own scenario.

```python
import war_envs.testing as wt

wt.check_all("MyScenario-v0", max_cycles=10)       # every check below, in order
wt.check_batch_api("MyScenario-v0")                # or one at a time
```

Each check builds the scenario with ``war_envs.make(env_id, **kwargs)`` (small batches; pass
scenario arguments such as a short ``max_cycles`` through ``kwargs``), drives it with random
actions drawn from each group's action space, and raises ``AssertionError`` naming the check,
the scenario and what differed.  An unexpected exception inside a check is re-raised as an
``AssertionError`` with the original chained.

- ``check_batch_api``: groups, spaces, shapes, dtypes, devices; every returned observation in
  its space; ``state()``; ``get_state``/``set_state`` round trip; documented aliasing (step
  results are views of the env's buffers, the same storage every step); ``close``.
- ``check_autoreset_modes``: NEXT_STEP, SAME_STEP and DISABLED agree until an episode ends;
  at the end SAME_STEP's ``final_obs`` is the terminal observation and its ``obs`` a fresh
  start, NEXT_STEP returns the terminal observation then (next step) that same fresh start
  with zero reward, DISABLED's ``reset(mask=...)`` draws it too and leaves other worlds alone.
- ``check_determinism_and_world_slicing``: same seed ⇒ bitwise-identical trajectories; world
  ``w`` of seed ``s`` replays world 0 of a one-world env seeded ``s + w`` across autoresets;
  unseeded resets draw fresh starts.
- ``check_bad_inputs``: wrong shapes, dtypes, ranges, NaN/inf, missing/unknown keys, bad reset
  arguments, step before reset: each raises ``ValueError``/``TypeError`` (``RuntimeError`` for
  step-before-reset) and the env then steps exactly like an untouched twin.  A scenario that
  ``clips_actions`` takes Box values outside the space and plays them as the clipped values
  (observations, flags and state as its twin's stepped with them).
- ``check_pettingzoo``: PettingZoo's ``parallel_api_test``, ``api_test`` and ``seed_test``.
- ``check_gymnasium``: ``gymnasium.utils.env_checker.check_env`` on ``gym.make``, and
  ``gym.make_vec`` agreeing step for step with ``SyncVectorEnv`` over ``gym.make`` in every
  autoreset mode.

A newly ``war_envs.register``-ed scenario is registered with Gymnasium and PettingZoo by the
checks that need it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping

import numpy as np

from war_envs._extras import MissingExtraError, needs_extra

__all__ = ["check_all", "check_autoreset_modes", "check_bad_inputs", "check_batch_api",
           "check_determinism_and_world_slicing", "check_gymnasium", "check_pettingzoo",
           "random_actions"]


# ----------------------------------------------------------------------------- plumbing
def _check(fn: Callable) -> Callable:
    """Run ``fn``; any failure becomes an AssertionError prefixed with the check and env id."""

    @functools.wraps(fn)
    def wrapper(env_id: str, *args, **kwargs):
        where = f"{fn.__name__}({env_id!r}{''.join(f', {k}={v!r}' for k, v in kwargs.items())})"
        try:
            return fn(env_id, *args, **kwargs)
        except AssertionError as err:
            raise AssertionError(f"{where}: {err}") from err
        except MissingExtraError:  # not a conformance failure: the check cannot run here
            raise
        except Exception as err:  # noqa: BLE001 - a conformance check reports everything
            raise AssertionError(f"{where}: unexpected {type(err).__name__}: {err}") from err

    return wrapper


def _make(env_id: str, **kwargs):
    import war_envs

    return war_envs.make(env_id, **kwargs)


def random_actions(env, generator, num_envs: int | None = None) -> dict:
    """``{group: Tensor}`` of valid random actions for every group (Discrete: integers in
    ``[start, start + n)``, uniformly among the available ones where ``env.has_action_mask``; Box: uniform in ``[low, high]``, float32), on the env's device."""
    import gymnasium
    import torch

    n = env.num_envs if num_envs is None else num_envs
    out = {}
    for g, spec in env.groups.items():
        space = spec.action_space
        if isinstance(space, gymnasium.spaces.Discrete) and env.has_action_mask and n == env.num_envs:
            # uniformly among the actions available now (env.action_mask())
            mask = env.action_mask()[g].cpu()
            u = torch.rand(mask.shape, generator=generator)
            a = torch.where(mask, u, torch.full_like(u, -1.0)).argmax(-1) + int(space.start)
        elif isinstance(space, gymnasium.spaces.Discrete):
            start = int(space.start)
            a = torch.randint(start, start + int(space.n), (n, spec.n_agents), generator=generator)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            nvec = torch.as_tensor(np.asarray(space.nvec).reshape(-1), dtype=torch.int64)
            start = torch.as_tensor(np.asarray(space.start).reshape(-1), dtype=torch.int64)
            u = torch.rand((n, spec.n_agents, len(nvec)), generator=generator)
            a = (u * nvec).long().clamp(max=nvec - 1) + start
            a = a.reshape(n, spec.n_agents, *space.shape)
        elif isinstance(space, gymnasium.spaces.Box):
            low = torch.as_tensor(np.nan_to_num(space.low, neginf=-1.0), dtype=torch.float32)
            high = torch.as_tensor(np.nan_to_num(space.high, posinf=1.0), dtype=torch.float32)
            u = torch.rand((n, spec.n_agents, *space.shape), generator=generator)
            a = low + u * (high - low)
        else:
            raise AssertionError(f"group {g!r}: unsupported action space {space} (Discrete, MultiDiscrete or Box)")
        out[g] = a.to(env.torch_device)
    return out


def _clone(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, Mapping):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _equal(a, b, path: str) -> None:
    """Bitwise equality of nested dicts of tensors (NaN == NaN)."""
    import torch

    if isinstance(a, Mapping):
        assert isinstance(b, Mapping) and set(a) == set(b), f"{path}: keys {sorted(a)} vs {sorted(b) if isinstance(b, Mapping) else b!r}"
        for k in a:
            _equal(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"{path}: {len(a)} items vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _equal(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), f"{path}: tensor vs {type(b).__name__}"
        assert a.shape == b.shape and a.dtype == b.dtype, f"{path}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        same = torch.equal(a, b) or (a.is_floating_point() and torch.equal(torch.isnan(a), torch.isnan(b))
                                      and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))
        if not same:
            diff = (a != b).nonzero()[:3].tolist()
            raise AssertionError(f"{path}: differs (first indices {diff})")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def _world_done(env, term, trunc):
    """``bool [E]``: worlds whose episode ended (every agent terminated or truncated: agents
    that left early, e.g. Tag's tagged runners, stay terminated until the world ends)."""
    import torch

    done = torch.ones(env.num_envs, dtype=torch.bool, device=env.torch_device)
    for g in env.groups:
        done &= (term[g] | trunc[g]).all(dim=1)
    return done


# ----------------------------------------------------------------------------- batch API
@_check
def check_batch_api(env_id: str, *, num_envs: int = 3, steps: int = 30, seed: int = 0, **kwargs) -> None:
    """Groups, spaces, shapes, dtypes, aliasing, ``state()``, world snapshots, ``close``."""
    import torch

    env = _make(env_id, num_envs=num_envs, seed=seed, **kwargs)
    E = num_envs
    assert env.num_envs == E, f"num_envs: {env.num_envs} != {E}"
    _check_groups(env)

    with _raises((RuntimeError,), "step() before reset()"):
        env.step(random_actions(env, torch.Generator().manual_seed(0)))

    obs = env.reset()
    _check_obs(env, obs, "reset()")
    state = env.state()
    assert state.shape == (E, env.state_dim) and state.dtype == torch.float32, \
        f"state(): expected float32 {(E, env.state_dim)}, got {state.dtype} {tuple(state.shape)}"
    expected_state = torch.cat([obs[g].reshape(E, -1) for g in env.groups], dim=1)
    assert torch.equal(state, expected_state), "state() is not every agent's observation in agent order"

    gen = torch.Generator().manual_seed(seed)
    previous = None
    for t in range(steps):
        out = env.step(random_actions(env, gen))
        assert isinstance(out, tuple) and len(out) == 5, "step() must return (obs, rew, term, trunc, info)"
        obs, rew, term, trunc, info = out
        where = f"step {t}"
        _check_step_out(env, obs, rew, term, trunc, info, where)
        # documented aliasing: the batch API hands out views of its buffers
        if previous is not None:
            for g in env.groups:
                assert obs[g].data_ptr() == previous[g].data_ptr(), \
                    f"{where}: obs[{g!r}] is not the same buffer as last step (the batch API returns views)"
        previous = obs
        assert env.observations() is obs or all(env.observations()[g].data_ptr() == obs[g].data_ptr() for g in obs), \
            "observations() does not return the current observation views"

    snap = env.get_state()
    assert isinstance(snap, Mapping) and snap, "get_state() must return a non-empty dict"
    for k, value in snap.items():
        assert isinstance(value, torch.Tensor) and value.shape[:1] == (E,), f"get_state()[{k!r}]: expected [E, ...] tensor"
    assert "t" in snap, "get_state() needs at least 't' (the episode clock)"
    kept = _clone(env.observations())
    env.step(random_actions(env, gen))
    env.set_state(snap)
    _equal(env.get_state(), snap, "get_state() after set_state(snapshot)")
    _equal(_clone(env.observations()), kept, "observations after set_state(snapshot)")
    env.close()
    with _raises((RuntimeError,), "step() after close()"):
        env.step(random_actions(env, gen))


def _check_groups(env) -> None:
    """Groups in agent order, named, with Box float32 observation spaces of ``obs_dim``; the
    agents' names unique and in group order."""
    import gymnasium

    assert env.groups, "env.groups is empty"
    start = 0
    for g, spec in env.groups.items():
        assert spec.name == g, f"groups[{g!r}].name is {spec.name!r}"
        assert spec.start == start, f"group {g!r} starts at {spec.start}, expected {start} (groups in agent order)"
        assert spec.n_agents >= 1, f"group {g!r} has no agents"
        assert isinstance(spec.observation_space, gymnasium.spaces.Box), f"group {g!r}: observation_space must be a Box"
        assert spec.observation_space.shape == (spec.obs_dim,), \
            f"group {g!r}: observation_space.shape {spec.observation_space.shape} != (obs_dim,) = ({spec.obs_dim},)"
        assert spec.observation_space.dtype == np.float32, f"group {g!r}: observations must be float32"
        start += spec.n_agents
    assert env.agents == [a for s in env.groups.values() for a in s.agents], "env.agents is not the groups' agents in order"
    assert len(set(env.agents)) == len(env.agents), f"agent names are not unique: {env.agents}"
    assert getattr(env, "num_agents", start) == start, f"num_agents {env.num_agents} != {start}"


def _check_step_out(env, obs, rew, term, trunc, info, where: str) -> None:
    """One step's observations, rewards, flags and info: shapes, dtypes, devices, final
    observations of the worlds that ended (SAME_STEP) and the world axis of every info tensor."""
    import torch

    E = env.num_envs
    _check_obs(env, obs, where)
    for g, spec in env.groups.items():
        shape = (E, spec.n_agents)
        assert set(rew) == set(env.groups), f"{where}: rew keys {sorted(rew)}"
        assert rew[g].shape == shape and rew[g].dtype == env.torch_float, \
            f"{where}: rew[{g!r}] expected {env.torch_float} {shape}, got {rew[g].dtype} {tuple(rew[g].shape)}"
        assert torch.isfinite(rew[g]).all(), f"{where}: rew[{g!r}] has NaN/inf"
        for name, flags in (("term", term), ("trunc", trunc)):
            assert flags[g].shape == shape and flags[g].dtype == torch.bool, \
                f"{where}: {name}[{g!r}] expected bool {shape}, got {flags[g].dtype} {tuple(flags[g].shape)}"
        assert rew[g].device == env.torch_device, f"{where}: rew[{g!r}] on {rew[g].device}"
    assert isinstance(info, Mapping), f"{where}: info must be a dict"
    if env.autoreset_mode.name == "SAME_STEP":
        assert "final_obs" in info and "_final_obs" in info, f"{where}: SAME_STEP info needs final_obs/_final_obs"
        _check_obs(env, info["final_obs"], f"{where} info['final_obs']")
        mask = info["_final_obs"]
        assert mask.shape == (E,) and mask.dtype == torch.bool, f"{where}: info['_final_obs'] must be bool [E]"
        assert torch.equal(mask, _world_done(env, term, trunc)), f"{where}: _final_obs != worlds that ended"
    for k, value in info.items():
        if isinstance(value, torch.Tensor):
            assert value.shape[:1] == (E,), f"{where}: info[{k!r}] must lead with the world axis, got {tuple(value.shape)}"


def _check_obs(env, obs, where: str) -> None:
    import torch

    assert isinstance(obs, Mapping) and set(obs) == set(env.groups), \
        f"{where}: observations must be {{group: tensor}} for {list(env.groups)}, got {type(obs).__name__}"
    for g, spec in env.groups.items():
        o = obs[g]
        shape = (env.num_envs, spec.n_agents, spec.obs_dim)
        assert isinstance(o, torch.Tensor) and o.shape == shape and o.dtype == torch.float32, \
            f"{where}: obs[{g!r}] expected float32 {shape}, got {getattr(o, 'dtype', type(o))} {tuple(getattr(o, 'shape', ()))}"
        assert o.device == env.torch_device, f"{where}: obs[{g!r}] on {o.device}, env on {env.torch_device}"
        host = o.detach().cpu().numpy()
        for w in range(env.num_envs):
            for k in range(spec.n_agents):
                assert spec.observation_space.contains(host[w, k]), \
                    f"{where}: obs[{g!r}][{w}, {k}] is not in {spec.observation_space}"


class _raises:
    """``with _raises((ValueError, TypeError), "what"):`` — an AssertionError if nothing (or
    something else) is raised."""

    def __init__(self, errors: tuple, what: str) -> None:
        self.errors, self.what = errors, what

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        names = "/".join(e.__name__ for e in self.errors)
        if kind is None:
            raise AssertionError(f"{self.what}: accepted; expected {names}")
        if issubclass(kind, self.errors):
            return True
        raise AssertionError(f"{self.what}: raised {kind.__name__}({value}); expected {names}") from value


# ----------------------------------------------------------------------------- autoreset
@_check
def check_autoreset_modes(env_id: str, *, num_envs: int = 3, seed: int = 0, max_steps: int = 1000,
                          **kwargs) -> None:
    """The three autoreset modes agree until an episode ends and differ only as documented."""
    import torch

    modes = ("next_step", "same_step", "disabled")
    envs = {m: _make(env_id, num_envs=num_envs, seed=seed, autoreset_mode=m, **kwargs) for m in modes}
    first = {m: _clone(env.reset()) for m, env in envs.items()}
    _equal(first["next_step"], first["same_step"], "reset() NEXT_STEP vs SAME_STEP")
    _equal(first["next_step"], first["disabled"], "reset() NEXT_STEP vs DISABLED")
    gen = torch.Generator().manual_seed(seed)
    nxt, same, off = envs["next_step"], envs["same_step"], envs["disabled"]
    for t in range(max_steps):
        actions = random_actions(off, gen)
        out = {m: _clone(env.step(actions)) for m, env in envs.items()}
        done = _world_done(off, out["disabled"][2], out["disabled"][3])
        for m in ("next_step", "same_step"):
            for i, name in ((1, "rew"), (2, "term"), (3, "trunc")):
                _equal(out[m][i], out["disabled"][i], f"step {t}: {name} {m.upper()} vs DISABLED")
        terminal = out["disabled"][0]
        if not done.any():
            _equal(out["next_step"][0], terminal, f"step {t}: obs NEXT_STEP vs DISABLED")
            _equal(out["same_step"][0], terminal, f"step {t}: obs SAME_STEP vs DISABLED")
            continue
        # the step that ends an episode
        where = f"step {t} (episode end in worlds {done.nonzero().flatten().tolist()})"
        _equal(out["next_step"][0], terminal, f"{where}: NEXT_STEP must return the terminal observation")
        info = out["same_step"][4]
        assert torch.equal(info["_final_obs"], done), f"{where}: SAME_STEP _final_obs != worlds that ended"
        fresh = {}
        for g in off.groups:
            _equal(info["final_obs"][g][done], terminal[g][done], f"{where}: SAME_STEP final_obs[{g!r}]")
            _equal(out["same_step"][0][g][~done], terminal[g][~done], f"{where}: SAME_STEP obs[{g!r}] of running worlds")
            fresh[g] = out["same_step"][0][g][done]
        assert not off.informative_observation or any(not torch.equal(fresh[g], terminal[g][done])
                                                      for g in off.groups), \
            f"{where}: SAME_STEP obs of ended worlds is not a fresh start"
        # NEXT_STEP: the following step restarts them (zero reward, no flags, action ignored)
        o, r, te, tr, _ = _clone(nxt.step(random_actions(nxt, gen)))
        for g in nxt.groups:
            _equal(o[g][done], fresh[g], f"{where}+1: NEXT_STEP restart obs[{g!r}] vs SAME_STEP's fresh start")
            assert (r[g][done] == 0).all(), f"{where}+1: NEXT_STEP restart reward[{g!r}] must be 0"
            assert not (te[g][done] | tr[g][done]).any(), f"{where}+1: NEXT_STEP restart flags must be False"
        # DISABLED: reset(mask) restarts exactly those worlds
        o = _clone(off.reset(mask=done))
        for g in off.groups:
            _equal(o[g][done], fresh[g], f"{where}: DISABLED reset(mask) obs[{g!r}] vs SAME_STEP's fresh start")
            _equal(o[g][~done], terminal[g][~done], f"{where}: DISABLED reset(mask) changed unmasked worlds' obs[{g!r}]")
        for env in envs.values():
            env.close()
        return
    raise AssertionError(f"no episode ended within {max_steps} random steps; pass a shorter episode "
                         "length (e.g. max_cycles=...)")


# ----------------------------------------------------------------------------- determinism
@_check
def check_determinism_and_world_slicing(env_id: str, *, num_envs: int = 4, steps: int = 60, seed: int = 3,
                                        **kwargs) -> None:
    """Same seed ⇒ bitwise equal; world ``w`` of seed ``s`` == world 0 of seed ``s + w``; another
    seed (or an unseeded reset) gives another start, unless the scenario declares
    ``random_start = False``."""
    import torch

    def trace(env, action_seed=0):
        gen = torch.Generator().manual_seed(action_seed)
        rows = [_clone(env.reset(seed=seed))]
        for _ in range(steps):
            rows.append(_clone(env.step(random_actions(env, gen))[:4]))
            rows.append(_clone(env.get_state()))
        return rows

    a = _make(env_id, num_envs=num_envs, **kwargs)
    b = _make(env_id, num_envs=num_envs, **kwargs)
    ta, tb = trace(a), trace(b)
    for i, (x, y) in enumerate(zip(ta, tb)):
        _equal(x, y, f"same seed, record {i}")
    if a.random_start and a.informative_observation:  # (a fixed start / a constant observation: nothing to see)
        c = _make(env_id, num_envs=num_envs, **kwargs)
        other = c.reset(seed=seed + 1000)
        assert any(not torch.equal(other[g], ta[0][g]) for g in c.groups), "a different seed gave the same start"
        again = _clone(a.reset())  # unseeded: continue the stream
        a.reset(seed=seed)
        assert any(not torch.equal(again[g], ta[0][g]) for g in a.groups), \
            "reset() without a seed replayed the seeded start (every reset must draw a fresh start)"
        c.close()

    big = _make(env_id, num_envs=num_envs, **kwargs)
    smalls = [_make(env_id, num_envs=1, **kwargs) for _ in range(num_envs)]
    big_obs = big.reset(seed=seed)
    for w, env in enumerate(smalls):
        o = env.reset(seed=seed + w)
        for g in big.groups:
            _equal(big_obs[g][w], o[g][0], f"reset: world {w} of seed {seed} vs world 0 of seed {seed + w}, obs[{g!r}]")
    gen = torch.Generator().manual_seed(1)
    ended = 0
    for t in range(steps):
        actions = random_actions(big, gen)
        obs, rew, term, trunc, _ = big.step(actions)
        ended += int(_world_done(big, term, trunc).sum())
        for w, env in enumerate(smalls):
            o, r, te, tr, _ = env.step({g: x[w:w + 1] for g, x in actions.items()})
            for g in big.groups:
                for name, x, y in (("obs", obs, o), ("rew", rew, r), ("term", term, te), ("trunc", trunc, tr)):
                    _equal(x[g][w], y[g][0], f"step {t}: world {w} of seed {seed} vs world 0 of seed {seed + w}, {name}[{g!r}]")
    for env in (a, b, big, *smalls):
        env.close()


# ----------------------------------------------------------------------------- bad inputs
@_check
def check_bad_inputs(env_id: str, *, num_envs: int = 3, seed: int = 0, **kwargs) -> None:
    """Bad actions / reset arguments raise ValueError/TypeError; the env stays like a twin."""
    import torch

    bad = _make(env_id, num_envs=num_envs, seed=seed, **kwargs)
    twin = _make(env_id, num_envs=num_envs, seed=seed, **kwargs)
    bad.reset(seed=seed)
    twin.reset(seed=seed)
    gen = torch.Generator().manual_seed(0)
    good = random_actions(bad, gen)
    E = num_envs
    cases, clipped = _bad_actions(bad, good)
    for what, actions in cases:
        with _raises((ValueError, TypeError), f"step({what})"):
            bad.step(actions)
        _equal(bad.get_state(), twin.get_state(), f"world state after rejected step({what})")
    for what, actions, inside in clipped:
        # the dynamics see the clipped values (a reward may see the given ones, as its reference's)
        ours, theirs = _clone(bad.step(actions)), _clone(twin.step(inside))
        for i, name in ((0, "obs"), (2, "term"), (3, "trunc")):
            _equal(ours[i], theirs[i], f"step({what}) (clips_actions) vs the clipped actions: {name}")
        _equal(bad.get_state(), twin.get_state(), f"world state after step({what}) vs the clipped actions")
    for what, call in [
        ("reset(seed=-1)", lambda: bad.reset(seed=-1)),
        ("reset(seed=1.5)", lambda: bad.reset(seed=1.5)),
        ("reset(mask) of the wrong shape", lambda: bad.reset(mask=torch.ones(E + 1, dtype=torch.bool))),
        ("reset(mask) of a float dtype", lambda: bad.reset(mask=torch.ones(E))),
        ("set_state with an unknown key", lambda: bad.set_state({"no_such_key": torch.zeros(E)})),
    ]:
        with _raises((ValueError, TypeError), what):
            call()
        _equal(bad.get_state(), twin.get_state(), f"world state after rejected {what}")
    for t in range(5):
        actions = random_actions(bad, gen)
        _equal(_clone(bad.step(actions)[:4]), _clone(twin.step(actions)[:4]),
               f"step {t} after the rejected inputs vs an untouched twin")
    fresh = _make(env_id, num_envs=num_envs, seed=seed, **kwargs)
    with _raises((RuntimeError,), "step() before reset()"):
        fresh.step(good)
    for env in (bad, twin, fresh):
        env.close()


def _bad_actions(env, good: dict) -> tuple[list, list]:
    """``check_bad_inputs``'s action cases from the valid ``good``: ``(what, actions)`` that
    must be refused, and (``clips_actions``) ``(what, actions, the same clipped)`` accepted."""
    import gymnasium
    import torch

    E = env.num_envs
    g0 = next(iter(env.groups))
    clipped: list[tuple[str, dict, dict]] = []  # clips_actions: (what, actions, the same clipped)
    cases: list[tuple[str, object]] = [
        ("actions missing a group", {g: a for g, a in good.items() if g != g0}),
        ("actions with an unknown group", {**good, "no_such_group": good[g0]}),
        ("actions not a dict", "left"),
        (f"actions[{g0!r}] not a tensor", {**good, g0: "left"}),
    ]
    for g, spec in env.groups.items():
        a = good[g]
        space = spec.action_space
        cases += [
            (f"actions[{g!r}] with an extra world", {**good, g: torch.cat([a, a[:1]])}),
            (f"actions[{g!r}] missing the agent axis", {**good, g: a[:, 0]}),
        ]
        if isinstance(space, gymnasium.spaces.Discrete):
            start, n = int(space.start), int(space.n)
            high, low = a.clone(), a.clone()
            high[E - 1, 0] = start + n
            low[0, spec.n_agents - 1] = start - 1
            cases += [
                (f"actions[{g!r}] float dtype", {**good, g: a.float()}),
                (f"actions[{g!r}] bool dtype", {**good, g: a > start}),
                (f"actions[{g!r}] = start + n (out of range)", {**good, g: high}),
                (f"actions[{g!r}] = start - 1 (out of range)", {**good, g: low}),
            ]
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            nvec = np.asarray(space.nvec).reshape(-1)
            start = np.asarray(space.start).reshape(-1)
            high, low = a.clone(), a.clone()
            high[E - 1, 0].view(-1)[-1] = int(start[-1] + nvec[-1])
            low[0, spec.n_agents - 1].view(-1)[0] = int(start[0]) - 1
            cases += [
                (f"actions[{g!r}] float dtype", {**good, g: a.float()}),
                (f"actions[{g!r}] missing the last component", {**good, g: a[..., :-1]}),
                (f"actions[{g!r}] last component = start + n (out of range)", {**good, g: high}),
                (f"actions[{g!r}] first component = start - 1 (out of range)", {**good, g: low}),
            ]
        else:
            nan, inf, above, below = a.clone(), a.clone(), a.clone(), a.clone()
            nan[E - 1, 0].view(-1)[0] = float("nan")
            inf[0, 0].view(-1)[-1] = float("inf")
            above[0, 0].view(-1)[0] = float(np.max(space.high)) + 1.0
            below[E - 1, 0].view(-1)[-1] = float(np.min(space.low)) - 1.0
            cases += [
                (f"actions[{g!r}] integer dtype", {**good, g: a.long()}),
                (f"actions[{g!r}] with NaN", {**good, g: nan}),
                (f"actions[{g!r}] with inf", {**good, g: inf}),
            ]
            outside = [(f"actions[{g!r}] above the Box", {**good, g: above}),
                       (f"actions[{g!r}] below the Box", {**good, g: below})]
            if env.clips_actions:  # accepted, and played as the values clipped into the space
                low = torch.as_tensor(space.low, dtype=a.dtype, device=a.device)
                high = torch.as_tensor(space.high, dtype=a.dtype, device=a.device)
                clipped += [(what, acts, {**acts, g: torch.clamp(acts[g], low, high)}) for what, acts in outside]
            else:
                cases += outside
    return cases, clipped


# ----------------------------------------------------------------------------- front ends
# hints PettingZoo's / Gymnasium's checkers print for every MPE-style env (Box(-inf, inf)
# observations, groups of different sizes, MultiDiscrete actions) and for Gymnasium's own
# Pendulum (a Box(-2, 2) action space): not conformance failures
_FRONT_END_WARNINGS = ("infinity", "different from the unwrapped version", "different observation space sizes",
                       "symmetric and normalized space", "different shapes", "max_cycles is fixed", "render method without specifying",
                       "Action space for each agent probably should be", "deprecated")


@_check
def check_pettingzoo(env_id: str, *, num_cycles: int = 60, **kwargs) -> None:
    """PettingZoo's ``parallel_api_test``, ``api_test`` and ``seed_test`` on our front end."""
    with needs_extra("pettingzoo", "war_envs.testing.check_pettingzoo"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pettingzoo's own deprecated modules
        from pettingzoo.test import api_test, parallel_api_test, seed_test
    import war_envs
    from war_envs.frontends.registration import register_pettingzoo

    register_pettingzoo([env_id])
    with warnings.catch_warnings():
        for text in _FRONT_END_WARNINGS:
            warnings.filterwarnings("ignore", message=f".*{text}.*")
        par = war_envs.parallel_env(env_id, **kwargs)
        parallel_api_test(par, num_cycles=num_cycles)
        par.close()
        aec = war_envs.env(env_id, **kwargs)
        api_test(aec, num_cycles=num_cycles)
        aec.close()
        seed_test(functools.partial(war_envs.env, env_id, **kwargs), num_cycles=min(num_cycles, 20))


@_check
def check_gymnasium(env_id: str, *, num_envs: int = 3, steps: int = 60, seed: int = 7, **kwargs) -> None:
    """``check_env`` on ``gym.make``; ``gym.make_vec`` == ``SyncVectorEnv`` in every autoreset mode."""
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from gymnasium.vector import AutoresetMode, SyncVectorEnv

    from war_envs.frontends.registration import gymnasium_id, register_gymnasium

    register_gymnasium()
    gid = gymnasium_id(env_id)
    with warnings.catch_warnings():
        for text in _FRONT_END_WARNINGS:
            warnings.filterwarnings("ignore", message=f".*{text}.*")
        env = gym.make(gid, **kwargs)
        check_env(env.unwrapped, skip_render_check=True)
        env.close()
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED):
        native = gym.make_vec(gid, num_envs=num_envs, vectorization_mode="vector_entry_point",
                              autoreset_mode=mode, **kwargs)
        sync = SyncVectorEnv([lambda: gym.make(gid, **kwargs)] * num_envs, autoreset_mode=mode)
        assert native.single_observation_space == sync.single_observation_space, "single_observation_space differs"
        assert native.single_action_space == sync.single_action_space, "single_action_space differs"
        assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == mode, "autoreset_mode metadata"
        _same_np(native.reset(seed=seed), sync.reset(seed=seed), f"{mode.name} reset")
        native.action_space.seed(seed)
        ended = 0
        for t in range(steps):
            action = native.action_space.sample()
            out = native.step(action)
            _same_np(out, sync.step(action), f"{mode.name} step {t}")
            assert native.observation_space.contains(out[0]), f"{mode.name} step {t}: obs not in observation_space"
            done = out[2] | out[3]
            ended += int(done.sum())
            if mode == AutoresetMode.DISABLED and done.any():
                _same_np(native.reset(options={"reset_mask": done.copy()}),
                         sync.reset(options={"reset_mask": done.copy()}), f"{mode.name} reset_mask {t}")
        native.close()
        sync.close()


def _same_np(a, b, path: str) -> None:
    """Structural, bitwise equality of Gymnasium returns (dicts, tuples, numpy, object arrays)."""
    if isinstance(a, Mapping):
        assert isinstance(b, Mapping) and set(a) == set(b), \
            f"{path}: keys {sorted(a)} vs {sorted(b) if isinstance(b, Mapping) else type(b).__name__}"
        for k in a:
            _same_np(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a).__name__}/{len(a)} vs {type(b).__name__}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same_np(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and a.shape == b.shape, f"{path}: object arrays differ"
        for i, (x, y) in enumerate(zip(a, b)):
            if x is None or y is None:
                assert x is None and y is None, f"{path}[{i}]: {x!r} vs {y!r}"
            else:
                _same_np(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{path}: ndarray vs {type(b).__name__}"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{path}: values differ"
    else:
        assert type(a) is type(b) and a == b, f"{path}: {a!r} vs {b!r}"


# ----------------------------------------------------------------------------- all
def check_all(env_id: str, *, pettingzoo: bool = True, gymnasium: bool = True, **kwargs) -> None:
    """Every check above, in order, each with its default batch size and step counts
    (``pettingzoo=False`` / ``gymnasium=False`` skip the front ends).  ``kwargs`` are scenario
    arguments only (e.g. a short ``max_cycles``); call a check directly to change its
    ``num_envs`` / ``steps`` / ``seed``."""
    check_batch_api(env_id, **kwargs)
    check_autoreset_modes(env_id, **kwargs)
    check_determinism_and_world_slicing(env_id, **kwargs)
    check_bad_inputs(env_id, **kwargs)
    if pettingzoo:
        check_pettingzoo(env_id, **kwargs)
    if gymnasium:
        check_gymnasium(env_id, **kwargs)
