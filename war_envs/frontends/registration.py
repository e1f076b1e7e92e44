"""Gymnasium registration, kept free of torch/Warp imports so ``import war_envs`` stays fast:
the entry points are strings that Gymnasium resolves on ``gym.make``."""

from __future__ import annotations

import gymnasium

from war_envs import registry

NAMESPACE = "war_envs"
_ENTRY_POINT = "war_envs.frontends.gymnasium:JointEnv"
_VECTOR_ENTRY_POINT = "war_envs.frontends.gymnasium:VectorEnv"


def gymnasium_id(scenario_id: str) -> str:
    """``"Spread-v0"`` -> ``"war_envs/Spread-v0"``."""
    return scenario_id if scenario_id.startswith(f"{NAMESPACE}/") else f"{NAMESPACE}/{scenario_id}"


def register_gymnasium() -> list[str]:
    """Register every id of ``war_envs.registry.registered_ids()`` with Gymnasium as
    ``war_envs/<Id>`` (``entry_point``: ``JointEnv``, ``vector_entry_point``: ``VectorEnv``,
    no ``max_episode_steps``: scenarios truncate themselves).  Idempotent: ids already in
    Gymnasium's registry are left alone; call it again after ``war_envs.register(...)``.
    Returns the Gymnasium ids."""
    ids = []
    for scenario_id in registry.registered_ids():
        gym_id = gymnasium_id(scenario_id)
        ids.append(gym_id)
        if gym_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=gym_id,
            entry_point=_ENTRY_POINT,
            vector_entry_point=_VECTOR_ENTRY_POINT,
            max_episode_steps=None,
            kwargs={"scenario": scenario_id},
        )
    return ids
