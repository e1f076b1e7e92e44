"""TorchRL: ``TorchRLEnv`` (VMAS layout, real truncated key, masked partial reset in one
launch) passes ``check_env_specs``, agrees with the batch API, and runs in a collector."""

from __future__ import annotations

import warnings

import pytest
import torch

pytest.importorskip("torchrl")

from tensordict import TensorDict  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import war_envs  # noqa: E402
from war_train.adapters.torchrl import TorchRLEnv  # noqa: E402

with warnings.catch_warnings():  # torchrl 0.14 warns about its own deprecated weight updaters
    warnings.simplefilter("ignore", DeprecationWarning)
    try:  # torchrl >= 0.12 renamed SyncDataCollector to Collector
        from torchrl.collectors import Collector as SyncDataCollector
    except ImportError:  # pragma: no cover - older torchrl
        from torchrl.collectors import SyncDataCollector

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


@pytest.mark.parametrize("env_id,kw", [
    ("Spread-v0", {}),
    ("Spread-v0", {"continuous_actions": True}),
    ("PredatorPrey-v0", {}),
    ("PredatorPrey-v0", {"categorical_actions": False}),
    ("Tag-v0", {"episode_length": 10}),
    ("Tag-v0", {"episode_length": 10, "categorical_actions": False}),
], ids=["spread", "spread-continuous", "predprey", "predprey-onehot", "tag-multidiscrete", "tag-onehot"])
def test_check_env_specs(env_id, kw):
    env = TorchRLEnv(env_id, num_envs=4, seed=0, **kw)
    check_env_specs(env, seed=0)
    groups = list(war_envs.make(env_id).groups)
    assert set(env.group_map) == set(groups)
    for g in groups:
        for key in ("done", "terminated", "truncated"):
            assert (g, key) in env.done_keys
        assert (g, "reward") in env.reward_keys and (g, "action") in env.action_keys
    assert {"done", "terminated", "truncated"} <= set(env.done_keys)
    assert "state" in env.observation_spec.keys()
    env.close()


def test_rollout_agrees_with_batch_api_and_truncation_is_real():
    env = TorchRLEnv("Spread-v0", num_envs=3, seed=2, max_cycles=5)
    ref = war_envs.make("Spread-v0", num_envs=3, seed=2, max_cycles=5, autoreset_mode="disabled")
    td = env.reset()
    torch.testing.assert_close(td["agent", "observation"], ref.reset()["agent"], rtol=0, atol=0)
    for t in range(1, 6):
        td["agent", "action"] = torch.randint(0, 5, (3, 3))
        out = env.step(td)["next"]
        r_obs, r_rew, r_term, r_trunc, _ = ref.step({"agent": td["agent", "action"]})
        torch.testing.assert_close(out["agent", "observation"], r_obs["agent"], rtol=0, atol=0)
        torch.testing.assert_close(out["agent", "reward"], r_rew["agent"].unsqueeze(-1), rtol=0, atol=0)
        torch.testing.assert_close(out["state"], ref.state(), rtol=0, atol=0)
        assert out["truncated"].all() == (t == 5) and not out["terminated"].any()
        assert torch.equal(out["agent", "truncated"], out["truncated"].unsqueeze(1).expand(3, 3, 1))
        assert torch.equal(out["done"], out["terminated"] | out["truncated"])
        td = out
    # values are copies, not views of the Warp buffers
    kept = td["agent", "observation"].clone()
    ref.step({"agent": torch.zeros(3, 3, dtype=torch.int64)})
    td2 = env.reset()
    assert torch.equal(td["agent", "observation"], kept) and not torch.equal(td2["agent", "observation"], kept)


def test_masked_partial_reset_is_one_batched_reset():
    env = TorchRLEnv("Spread-v0", num_envs=4, seed=0)
    env.reset()
    env.rand_step(env.reset())
    before = env.batched.get_state()
    calls = []
    original = env.batched.reset

    def counting_reset(*args, **kwargs):
        calls.append(kwargs.get("mask"))
        return original(*args, **kwargs)

    env.batched.reset = counting_reset
    mask = torch.tensor([True, False, True, False])
    td = env.reset(TensorDict({"_reset": mask.unsqueeze(-1)}, batch_size=[4]))
    assert len(calls) == 1 and torch.equal(calls[0].cpu(), mask)
    after = env.batched.get_state()
    assert torch.equal(after["agent_pos"][~mask], before["agent_pos"][~mask])
    assert not torch.equal(after["agent_pos"][mask], before["agent_pos"][mask])
    assert torch.equal(after["t"][mask], torch.zeros(2, dtype=after["t"].dtype))
    # the group-level reset key works too (any agent of a world resets the world)
    group_mask = torch.zeros(4, 3, 1, dtype=torch.bool)
    group_mask[1, 0] = True
    env.reset(TensorDict({"agent": TensorDict({"_reset": group_mask}, batch_size=[4, 3])}, batch_size=[4]))
    assert torch.equal(calls[-1].cpu(), torch.tensor([False, True, False, False]))
    assert td["agent", "observation"].shape == (4, 3, 18)


def test_collector_runs_with_staggered_episodes():
    """A collector over worlds whose episodes end at different steps (clocks staggered with
    set_state on the policy's first call): TorchRL resets each finished world through the
    masked _reset, and the data stays consistent."""
    env = TorchRLEnv("Spread-v0", num_envs=4, seed=0, max_cycles=6)
    staggered = []

    def policy(td):
        if not staggered:  # after the collector's own reset
            env.batched.set_state({"t": torch.tensor([0, 1, 2, 3], dtype=torch.int32)})
            staggered.append(True)
        td["agent", "action"] = torch.randint(0, 5, (4, 3))
        return td

    masks = []
    original = env.batched.reset
    env.batched.reset = lambda *a, **k: (masks.append(k.get("mask")), original(*a, **k))[1]
    collector = SyncDataCollector(env, policy=policy, frames_per_batch=4 * 12, total_frames=4 * 24)
    batches = list(collector)
    collector.shutdown()
    assert len(batches) == 2 and batches[0].batch_size == torch.Size([4, 12])
    done = torch.cat([b["next", "done"].squeeze(-1) for b in batches], dim=1)
    assert done.any() and not (done == done[0]).all()  # staggered: not every world at once
    partial = [m for m in masks if m is not None]
    assert partial and all(0 < int(m.sum()) < 4 for m in partial)
    # every episode after the first lasts max_cycles steps
    for w in range(4):
        ends = torch.nonzero(done[w]).flatten().tolist()
        assert all(b - a == 6 for a, b in zip(ends, ends[1:]))
    assert batches[0]["next", "agent", "reward"].shape == (4, 12, 3, 1)
