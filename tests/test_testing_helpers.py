"""``war_envs.testing``: every registered scenario and the tutorial scenario pass
``check_all``; deliberately broken scenarios fail the check that targets their bug, with a
clear message."""

from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing as wt
from war_envs import registry
from war_envs.scenarios.mpe.spread import Spread

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def short_episodes(env_id: str) -> dict:
    """A short episode length for the scenario (whatever its argument is called)."""
    accepted = registry.accepted_kwargs(registry.scenario_class(env_id))
    for name in ("max_cycles", "episode_length"):
        if name in accepted:
            return {name: 8}
    return {}


#: scenarios whose checks step long at -O0 (hundreds of contact pairs): their kernels at -O3
OPTIMIZED = {"Pollock-v0"}


@pytest.mark.parametrize("env_id", [pytest.param(i, marks=pytest.mark.optimized_kernels) if i in OPTIMIZED else i
                                    for i in war_envs.registered_ids()])
def test_every_registered_scenario_passes_check_all(env_id):
    wt.check_all(env_id, **short_episodes(env_id))


@pytest.fixture
def rendezvous():
    sys.path.insert(0, str(EXAMPLES))
    try:
        module = importlib.import_module("tutorial_scenario")
    finally:
        sys.path.remove(str(EXAMPLES))
    war_envs.register("Rendezvous-v0", f"{module.__name__}:Rendezvous", overwrite=True)
    yield module
    registry._SCENARIOS.pop("Rendezvous-v0", None)


def test_tutorial_scenario_passes_check_all(rendezvous):
    wt.check_all("Rendezvous-v0", max_cycles=10)
    wt.check_all("Rendezvous-v0", N=5, radius=0.5)  # terminations, not only truncations
    # the MPE world gives it float64 worlds, continuous actions and neighbour views too
    wt.check_all("Rendezvous-v0", N=4, radius=0.5, precision="float64", continuous_actions=True,
                 num_agent_neighbors=2, pettingzoo=False, gymnasium=False)
    env = war_envs.make("Rendezvous-v0", num_envs=4, seed=0, N=4)
    obs = env.reset()
    assert obs["agent"].shape == (4, 4, 10)
    assert isinstance(env, rendezvous.MPEBase) and [m.name for m in env.episode_metrics] == ["spread"]


def _softplus(x):
    return np.logaddexp(0.0, x)


@pytest.mark.parametrize("precision,tol", [("float64", 1e-12), ("float32", 2e-6)])
def test_tutorial_world_matches_a_hand_computed_step(rendezvous, precision, tol):
    """One Rendezvous-v0 step by hand: MPE's semi-implicit Euler (position from the old velocity;
    then velocity damped by 0.25 plus force / mass · dt, force = 5 · move + contacts, mass 1,
    dt 0.1), reward -|p_i - centroid|, spread the largest of those distances, terminated once
    it is below radius.  World 0: agents far apart (no contact); world 1: agents 0 and 1
    overlap (soft contact c · d/|d| · softplus(-(|d| - 0.1)/k) · k, c = 100, k = 1e-3)."""
    env = war_envs.make("Rendezvous-v0", num_envs=2, seed=0, precision=precision, radius=0.3,
                        autoreset_mode="disabled")
    env.reset()
    pos = np.array([[[-0.5, -0.5], [0.5, -0.5], [0.0, 0.6]],
                    [[0.10, 0.20], [0.13, 0.24], [0.30, 0.05]]])
    vel = np.array([[[0.1, 0.0], [0.0, -0.2], [0.3, 0.3]],
                    [[-0.4, 0.1], [0.2, 0.2], [0.0, 0.0]]])
    actions = np.array([[0, 1, 4], [2, 3, 0]])
    env.set_state({"agent_pos": torch.tensor(pos, dtype=env.torch_float),
                   "agent_vel": torch.tensor(vel, dtype=env.torch_float)})
    pos = env.get_state()["agent_pos"].double().numpy()  # as the world holds them (float32: rounded)
    vel = env.get_state()["agent_vel"].double().numpy()
    obs, rew, term, trunc, info = env.step({"agent": torch.tensor(actions)})

    force = 5.0 * np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.float64)[actions]
    for e in range(2):
        for i in range(3):
            for j in range(3):
                d = pos[e, i] - pos[e, j]
                dist = np.linalg.norm(d)
                if j != i and dist < 0.1 + 41e-3:  # beyond that the contact term is exactly 0
                    force[e, i] += 100.0 * d / dist * _softplus(-(dist - 0.1) / 1e-3) * 1e-3
    assert np.abs(force[1, :2]).max() > 1.0  # world 1's contact is felt
    new_pos = pos + vel * 0.1
    new_vel = vel * (1.0 - 0.25) + force * 0.1
    dist = np.linalg.norm(new_pos - new_pos.mean(axis=1, keepdims=True), axis=-1)
    state = env.get_state()
    np.testing.assert_allclose(state["agent_pos"].double().numpy(), new_pos, rtol=0, atol=tol)
    np.testing.assert_allclose(state["agent_vel"].double().numpy(), new_vel, rtol=0, atol=tol)
    np.testing.assert_allclose(rew["agent"].double().numpy(), -dist, rtol=0, atol=tol)
    np.testing.assert_allclose(info["spread"].double().numpy(), dist.max(axis=1), rtol=0, atol=tol)
    assert term["agent"][:, 0].tolist() == [False, True] and not trunc["agent"].any()
    for i in range(3):  # [vel_i, pos_i, p_j - p_i for j != i]
        expected = [new_vel[:, i], new_pos[:, i], *(new_pos[:, j] - new_pos[:, i] for j in range(3) if j != i)]
        np.testing.assert_allclose(obs["agent"][:, i].double().numpy(), np.concatenate(expected, axis=1),
                                   rtol=0, atol=max(tol, 1e-6))


# ------------------------------------------------------------------ the checks catch bugs
class ClampingSpread(Spread):
    """Bug: clamps out-of-range discrete actions instead of rejecting them."""

    def _write_actions(self, actions):
        if isinstance(actions, dict) and "agent" in actions and isinstance(actions["agent"], torch.Tensor) \
                and not actions["agent"].is_floating_point() and actions["agent"].dtype != torch.bool:
            actions = {**actions, "agent": actions["agent"].clamp(0, 4)}
        super()._write_actions(actions)


class CopyingSpread(Spread):
    """Bug (against the documented aliasing): hands out fresh copies of the observations."""

    def step(self, actions):
        obs, rew, term, trunc, info = super().step(actions)
        return {g: o.clone() for g, o in obs.items()}, rew, term, trunc, info


class SeedDoublingSpread(Spread):
    """Bug: reset(seed=s) seeds world w with 2s + w, so world slicing breaks."""

    def reset(self, seed=None, mask=None):
        return super().reset(seed=None if seed is None else 2 * seed, mask=mask)


class StaleFinalObsSpread(Spread):
    """Bug: SAME_STEP final_obs holds the reset observation instead of the terminal one."""

    def _step_info(self):
        info = super()._step_info()
        if "final_obs" in info:
            info["final_obs"] = self._obs
        return info


class Float64ObsSpread(Spread):
    """Bug: float64 observations (the spaces say float32)."""

    def reset(self, seed=None, mask=None):
        return {g: o.double() for g, o in super().reset(seed=seed, mask=mask).items()}


@pytest.fixture
def broken():
    added = []

    def register(cls):
        env_id = f"Broken{cls.__name__}-v0"
        war_envs.register(env_id, f"{__name__}:{cls.__name__}", overwrite=True)
        added.append(env_id)
        return env_id

    yield register
    for env_id in added:
        registry._SCENARIOS.pop(env_id, None)


@pytest.mark.parametrize("cls,check,message", [
    (ClampingSpread, wt.check_bad_inputs, r"step\(actions\['agent'\] = start \+ n \(out of range\)\): accepted"),
    (CopyingSpread, wt.check_batch_api, "does not return the current observation views|not the same buffer"),
    (SeedDoublingSpread, wt.check_determinism_and_world_slicing, r"world 1 of seed 3 vs world 0 of seed 4"),
    (StaleFinalObsSpread, wt.check_autoreset_modes, r"SAME_STEP final_obs\['agent'\]"),
    (Float64ObsSpread, wt.check_batch_api, r"reset\(\): obs\['agent'\] expected float32"),
])
def test_checks_catch_broken_scenarios(broken, cls, check, message):
    env_id = broken(cls)
    with pytest.raises(AssertionError, match=message) as info:
        check(env_id, max_cycles=6)
    assert str(info.value).startswith(f"{check.__name__}('{env_id}'")


def test_unexpected_exceptions_become_assertion_errors():
    with pytest.raises(AssertionError, match=r"check_batch_api\('Spread-v0', N=0\): unexpected ValueError: N"):
        wt.check_batch_api("Spread-v0", N=0)
