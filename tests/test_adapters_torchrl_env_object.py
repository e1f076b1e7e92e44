"""TorchRL: ``TorchRLEnv(env)`` takes a batched env built with any autoreset mode (the
default ``war_envs.make(id, num_envs=E)`` included), leaves that mode alone, passes
``check_env_specs`` and rolls out — and returns exactly what the id-built (DISABLED) adapter
returns under the same seed and actions, across episode ends and partial resets."""

from __future__ import annotations

import warnings

import pytest
import torch

pytest.importorskip("torchrl")

from tensordict import TensorDict  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import war_envs  # noqa: E402
from war_envs.core.batched_env import AutoresetMode  # noqa: E402
from war_train.adapters.torchrl import TorchRLEnv  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

MODES = ["next_step", "same_step", "disabled"]
E = 4


def test_an_env_built_with_defaults_is_accepted_and_keeps_its_mode():
    batched = war_envs.make("PredatorPrey-v0", num_envs=8)
    mode = batched.autoreset_mode
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # nothing is switched, so nothing to warn about
        env = TorchRLEnv(batched)
    assert env.batched is batched and batched.autoreset_mode == mode
    check_env_specs(env, seed=0)
    td = env.rollout(30, break_when_any_done=False)
    assert td.batch_size == torch.Size([8, 30]) and td["next", "done"].any()
    env.close()
    assert not batched.closed  # the adapter did not build it


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id,kw", [
    ("PredatorPrey-v0", {"max_cycles": 6}),
    ("Spread-v0", {"continuous_actions": True, "max_cycles": 6}),
    ("Tag-v0", {"episode_length": 6}),
], ids=["predprey", "spread-continuous", "tag"])
def test_check_env_specs_and_rollout_with_every_mode(env_id, kw, mode):
    env = TorchRLEnv(war_envs.make(env_id, num_envs=E, seed=0, autoreset_mode=mode, **kw))
    assert env.batched.autoreset_mode == AutoresetMode[mode.upper()]
    check_env_specs(env, seed=0)
    td = env.rollout(13, break_when_any_done=False)
    assert td.batch_size == torch.Size([E, 13])
    assert td["next", "done"].any()
    env.close()


def _drive(env: TorchRLEnv, steps: int, seed: int) -> list[TensorDict]:
    """set_seed, reset, then ``steps`` steps of seeded random actions through
    ``step_and_maybe_reset`` (TorchRL's collector loop), with a partial reset of worlds 0 and 2
    at step 3 (episodes then end at different steps).  Every tensordict returned, cloned."""
    env.set_seed(seed)
    td = env.reset()
    out = [td.clone()]
    for i in range(steps):
        torch.manual_seed(1000 + i)
        td.update(env.full_action_spec.rand())
        stepped, td = env.step_and_maybe_reset(td)
        out += [stepped.clone(), td.clone()]
        if i == 3:
            mask = torch.tensor([True, False, True, False]).unsqueeze(-1)
            td = env.reset(TensorDict({"_reset": mask}, batch_size=[E]))
            out.append(td.clone())
    return out


def _assert_same(a: list[TensorDict], b: list[TensorDict]) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        keys = sorted(x.keys(True, True), key=str)
        assert keys == sorted(y.keys(True, True), key=str), i
        for k in keys:
            assert torch.equal(x.get(k), y.get(k)), (i, k)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id,kw", [
    ("PredatorPrey-v0", {"max_cycles": 5}),
    ("Tag-v0", {"episode_length": 5}),
], ids=["predprey", "tag"])
def test_env_object_matches_the_id_built_adapter(env_id, kw, mode):
    reference = TorchRLEnv(env_id, num_envs=E, seed=7, **kw)
    expected = _drive(reference, 14, seed=3)
    env = TorchRLEnv(war_envs.make(env_id, num_envs=E, seed=7, autoreset_mode=mode, **kw))
    got = _drive(env, 14, seed=3)
    assert any(bool(td["next", "done"].any()) for td in got if "next" in td.keys())
    _assert_same(got, expected)
    # a second run continues the streams the same way (no seed: the env's own stream)
    torch.manual_seed(5)
    more_expected = [reference.rollout(12, break_when_any_done=False)]
    torch.manual_seed(5)
    more = [env.rollout(12, break_when_any_done=False)]
    _assert_same(more, more_expected)
    assert env.batched.autoreset_mode == AutoresetMode[mode.upper()]
    reference.close()
    env.close()


def test_same_step_reports_the_final_observation_and_does_not_reset_twice():
    env = TorchRLEnv(war_envs.make("Spread-v0", num_envs=E, seed=1, max_cycles=3, autoreset_mode="same_step"))
    reference = war_envs.make("Spread-v0", num_envs=E, seed=1, max_cycles=3, autoreset_mode="disabled")
    td = env.reset()
    reference.reset()
    calls = []
    original = env.batched.reset
    env.batched.reset = lambda *a, **k: (calls.append(k.get("mask")), original(*a, **k))[1]
    for _ in range(3):
        td["agent", "action"] = torch.randint(0, 5, (E, 3))
        out = env.step(td)["next"]
        r_obs, *_ = reference.step({"agent": td["agent", "action"]})
        torch.testing.assert_close(out["agent", "observation"], r_obs["agent"], rtol=0, atol=0)
        torch.testing.assert_close(out["state"], reference.state(), rtol=0, atol=0)
        td = out
    assert out["truncated"].all()
    td = env.reset(TensorDict({"_reset": out["done"].clone()}, batch_size=[E]))
    assert calls == []  # every world was already restarted by the env's step
    torch.testing.assert_close(td["agent", "observation"], reference.reset()["agent"], rtol=0, atol=0)
    env.close()


def test_make_kwargs_with_an_env_object_are_refused():
    with pytest.raises(TypeError, match="TorchRLEnv: make kwargs"):
        TorchRLEnv(war_envs.make("Spread-v0", num_envs=2), num_envs=2)


def test_collector_over_an_env_object_matches_the_id_built_adapter():
    """TorchRL's collector (which resets finished worlds through the masked _reset) gives the
    same batches over a default-built env object as over the id-built adapter."""
    with warnings.catch_warnings():  # torchrl 0.14 warns about its own deprecated weight updaters
        warnings.simplefilter("ignore", DeprecationWarning)
        try:  # torchrl >= 0.12 renamed SyncDataCollector to Collector
            from torchrl.collectors import Collector
        except ImportError:  # pragma: no cover - older torchrl
            from torchrl.collectors import SyncDataCollector as Collector

    def collect(env):
        env.set_seed(0)
        torch.manual_seed(0)
        collector = Collector(env, policy=None, frames_per_batch=E * 8, total_frames=E * 16)
        batches = [b.clone() for b in collector]
        collector.shutdown()
        return batches

    expected = collect(TorchRLEnv("PredatorPrey-v0", num_envs=E, seed=0, max_cycles=5))
    got = collect(TorchRLEnv(war_envs.make("PredatorPrey-v0", num_envs=E, seed=0, max_cycles=5)))
    assert any(bool(b["next", "done"].any()) for b in got)
    _assert_same(got, expected)
