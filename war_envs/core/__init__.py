"""The batched base: buffers and torch views, per-world RNG, autoreset, graph capture,
input validation, get/set/clone of world state."""

from war_envs.core.batched_env import AutoresetMode, BatchedEnv, GroupSpec

__all__ = ["AutoresetMode", "BatchedEnv", "GroupSpec"]
