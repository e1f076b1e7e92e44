"""``war_envs.make`` refuses a batch that cannot be allocated, before allocating anything, with
an error naming worlds x agents and the bytes needed; the per-world estimate behind it is
within a factor of 2 of what the scenario really allocates."""

from __future__ import annotations

import re
import types

import pytest
import torch
import warp as wp

import war_envs
from war_envs.core import batched_env
from war_envs.core.batched_env import BatchedEnv, format_bytes
from war_envs.core.runtime import resolve_device


@pytest.fixture
def allocations(monkeypatch):
    """Record the estimate each make passes to ``_check_allocation`` and the bytes of every
    per-world buffer allocated afterwards."""
    record = {"estimate": [], "allocated": 0, "allocated_before_check": 0}
    check, world_array = BatchedEnv._check_allocation, BatchedEnv._world_array

    def checking(self, bytes_per_world, num_agents):
        record["estimate"].append((int(bytes_per_world), num_agents))
        return check(self, bytes_per_world, num_agents)

    def allocating(self, tail, dtype):
        array = world_array(self, tail, dtype)
        nbytes = array.size * wp.types.type_size_in_bytes(array.dtype)
        record["allocated" if record["estimate"] else "allocated_before_check"] += nbytes
        return array

    monkeypatch.setattr(BatchedEnv, "_check_allocation", checking)
    monkeypatch.setattr(BatchedEnv, "_world_array", allocating)
    return record


@pytest.mark.parametrize("env_id,kwargs,agents", [("Spread-v0", {}, 3),
                                                      ("Tag-v0", {"num_taggers": 2, "num_runners": 10}, 12)])
def test_a_huge_batch_is_refused_before_anything_is_allocated(allocations, env_id, kwargs, agents):
    with pytest.raises(MemoryError) as info:
        war_envs.make(env_id, num_envs=10**12, **kwargs)
    message = str(info.value)
    assert f"num_envs={10**12} worlds x {agents} agents" in message, message
    assert re.search(r"need about [\d.]+ [KMGTP]iB \(\d+ bytes, \d+ per world\) but .* is available", message), message
    assert allocations["allocated"] == allocations["allocated_before_check"] == 0


def test_the_limit_is_the_memory_available(monkeypatch):
    monkeypatch.setattr(batched_env, "available_memory", lambda device: 10_000)
    war_envs.make("Spread-v0", num_envs=1)  # a few hundred bytes fit
    with pytest.raises(MemoryError, match=r"num_envs=100 worlds x 3 agents need about .* \(\d+ bytes, \d+ per "
                                          r"world\) but 9.8 KiB \(10000 bytes\) is available on cpu; use at "
                                          r"most about num_envs=\d+"):
        war_envs.make("Spread-v0", num_envs=100)
    monkeypatch.setattr(batched_env, "available_memory", lambda device: None)  # unknown: no check
    war_envs.make("Spread-v0", num_envs=100).close()


def test_available_memory(monkeypatch):
    cpu = resolve_device("cpu")
    available = batched_env.available_memory(cpu)
    assert available is not None and available > 2**20

    def no_proc(*args, **kwargs):
        raise OSError("no /proc")

    monkeypatch.setattr(batched_env, "open", no_proc, raising=False)  # then os.sysconf's free pages
    assert batched_env.available_memory(cpu) > 2**20
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda ordinal: (1000 + ordinal, 5000))  # CUDA: free bytes
    assert batched_env.available_memory(types.SimpleNamespace(is_cpu=False, ordinal=1)) == 1001


def test_format_bytes():
    assert [format_bytes(n) for n in (0, 1023, 1536, 3 * 2**30, 2**60)] == [
        "0 B", "1023 B", "1.5 KiB", "3.0 GiB", "1024.0 PiB"]


@pytest.mark.parametrize("env_id,kwargs", [
    *[(env_id, {}) for env_id in war_envs.registered_ids()],
    ("Spread-v0", {"N": 6, "precision": "float64", "continuous_actions": True, "num_agent_neighbors": 2}),
    ("Tag-v0", {"num_taggers": 3, "num_runners": 40, "precision": "float64", "use_full_observation": True,
                "observe_self": True}),
])
def test_the_estimate_is_within_a_factor_of_2_of_the_allocation(allocations, env_id, kwargs):
    num_envs = 5
    env = war_envs.make(env_id, num_envs=num_envs, **kwargs)
    try:
        [(bytes_per_world, agents)] = allocations["estimate"]
        assert agents == env.num_agents
        estimate, allocated = num_envs * bytes_per_world, allocations["allocated"]
        assert allocations["allocated_before_check"] == 0
        assert allocated / 2 <= estimate <= 2 * allocated, (estimate, allocated)
    finally:
        env.close()
