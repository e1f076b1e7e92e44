"""The batched base: buffers and torch views, per-world RNG, autoreset, graph capture,
input validation, get/set/clone of world state, and the interface a scenario declares."""

from war_envs.core.batched_env import AutoresetMode, BatchedEnv, GroupSpec
from war_envs.core.scenario import EpisodeMetric

__all__ = ["AutoresetMode", "BatchedEnv", "GroupSpec", "EpisodeMetric"]
