"""Gymnasium and PettingZoo registration, kept free of torch/Warp imports so ``import war_envs``
stays fast: the entry points are strings resolved on ``gym.make`` / ``pettingzoo.make``."""

from __future__ import annotations

import gymnasium

from war_envs import registry

NAMESPACE = "war_envs"
_ENTRY_POINT = "war_envs.frontends.gymnasium:JointEnv"
_VECTOR_ENTRY_POINT = "war_envs.frontends.gymnasium:VectorEnv"
_SINGLE_ENTRY_POINT = "war_envs.frontends.single_agent:SingleAgentEnv"
_SINGLE_VECTOR_ENTRY_POINT = "war_envs.frontends.single_agent:SingleAgentVectorEnv"


def register(env_id: str, entry_point: str, *, overwrite: bool = False, single_agent: bool = False) -> None:
    """Register a scenario class under ``env_id`` (``"package.module:Class"``), for
    ``war_envs.make`` and as ``war_envs/<env_id>`` with Gymnasium and PettingZoo
    (``single_agent=True``: one group of one agent, Gymnasium's own spaces in ``gym.make`` /
    ``gym.make_vec``)."""
    registry.add(env_id, entry_point, overwrite=overwrite, single_agent=single_agent)
    if overwrite:
        gymnasium.registry.pop(gymnasium_id(env_id), None)
    register_gymnasium()
    register_pettingzoo([env_id])


def gymnasium_id(scenario_id: str) -> str:
    """``"Spread-v0"`` -> ``"war_envs/Spread-v0"``."""
    return scenario_id if scenario_id.startswith(f"{NAMESPACE}/") else f"{NAMESPACE}/{scenario_id}"


def register_gymnasium() -> list[str]:
    """Register every id of ``war_envs.registry.registered_ids()`` with Gymnasium as
    ``war_envs/<Id>`` (``entry_point``: ``JointEnv``, ``vector_entry_point``: ``VectorEnv``;
    single-agent ids: ``SingleAgentEnv`` / ``SingleAgentVectorEnv``; no ``max_episode_steps``:
    scenarios truncate themselves).  Idempotent: ids already in
    Gymnasium's registry are left alone; call it again after ``war_envs.register(...)``.
    Returns the Gymnasium ids."""
    ids = []
    for scenario_id in registry.registered_ids():
        gym_id = gymnasium_id(scenario_id)
        ids.append(gym_id)
        if gym_id in gymnasium.registry:
            continue
        single = registry.is_single_agent(scenario_id)
        gymnasium.register(
            id=gym_id,
            entry_point=_SINGLE_ENTRY_POINT if single else _ENTRY_POINT,
            vector_entry_point=_SINGLE_VECTOR_ENTRY_POINT if single else _VECTOR_ENTRY_POINT,
            max_episode_steps=None,
            kwargs={"scenario": scenario_id},
        )
    return ids


PETTINGZOO_NAMESPACE = "war_envs"


def register_pettingzoo(ids=None) -> list[str]:
    """Register ``war_envs/<Id>`` in PettingZoo's ``"parallel"`` and ``"aec"`` registries for
    every scenario id (or ``ids``); ids already there are left alone.  Returns the PettingZoo
    ids (empty when pettingzoo is not installed).

    ``pettingzoo.make("parallel", "war_envs/Spread-v0", N=4)`` then builds ``ParallelEnv``.
    """
    import importlib.util

    if importlib.util.find_spec("pettingzoo") is None:
        return []
    try:
        import pettingzoo
    except ImportError:  # a broken optional install must not break ``import war_envs``
        return []
    if not hasattr(pettingzoo, "register"):  # PettingZoo < 1.27 has no registry
        return []
    out = []
    for env_id in (registry.registered_ids() if ids is None else ids):
        pz_id = f"{PETTINGZOO_NAMESPACE}/{env_id}"
        for kind, entry in (("parallel", "ParallelEnv"), ("aec", "aec_env")):
            kind_registry = pettingzoo.parallel_registry if kind == "parallel" else pettingzoo.aec_registry
            if pz_id not in kind_registry:
                pettingzoo.register(kind, pz_id, entry_point=f"war_envs.frontends.pettingzoo:{entry}",
                                    kwargs={"env_id": env_id})
        out.append(pz_id)
    return out
