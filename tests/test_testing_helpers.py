"""``war_envs.testing``: every registered scenario and the tutorial scenario pass
``check_all``; deliberately broken scenarios fail the check that targets their bug, with a
clear message."""

from __future__ import annotations

import importlib
import pathlib
import sys

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


@pytest.mark.parametrize("env_id", war_envs.registered_ids())
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
    env = war_envs.make("Rendezvous-v0", num_envs=4, seed=0, N=4)
    obs = env.reset()
    assert obs["agent"].shape == (4, 4, 10)
    with pytest.raises(ValueError, match="float32 worlds only"):
        war_envs.make("Rendezvous-v0", precision="float64")


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
