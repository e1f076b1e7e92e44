"""RLlib: war-envs scenarios through PettingZoo's ``ParallelPettingZooEnv`` (extra ``[rllib]``).

```python
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from war_train.adapters.rllib import group_policy_mapping, rllib_env_creator

creator = rllib_env_creator("Spread-v0", max_cycles=25)     # registered as "war_envs/Spread-v0"
policies, mapping_fn = group_policy_mapping("Spread-v0")    # one shared policy per group
config = (PPOConfig().environment(creator.name)
          .multi_agent(policies=policies, policy_mapping_fn=mapping_fn))
algo = config.build_algo()
algo.train()
```

- ``rllib_env_creator(env_id, **kwargs)`` builds an ``RLlibEnvCreator`` and registers it with
  ``ray.tune.registry.register_env`` under ``name`` (default ``"war_envs/<env_id>"``).  Called
  with RLlib's ``EnvContext`` (a dict of env config plus ``worker_index`` / ``vector_index``),
  it returns ``WarPettingZooEnv(war_envs.parallel_env(env_id, **kwargs, **env_config))`` (RLlib's
  ``ParallelPettingZooEnv``, ending an episode whose agents end some by termination and some by
  truncation):
  one world per RLlib env (RLlib steps its envs in Python; for batched speed use the native
  adapters or ``war_train``).  Keys of ``env_config`` override the creator's ``kwargs``.
- Seeds: RLlib reseeds every env with ``reset(seed=...)`` (its ``.debugging(seed=...)``), which
  ``ParallelPettingZooEnv`` forwards to our ``ParallelEnv``.  A ``seed`` given to the creator
  seeds the world at construction; each (worker, sub-env) then gets
  ``seed + 1000 · worker_index + vector_index`` so that copies do not replay one stream.
- ``group_policy_mapping(env_id, **kwargs)`` returns ``(policies, policy_mapping_fn)`` with
  one policy per war-envs group (parameter sharing within a group, as ``war_train``'s MAPPO).
- RLlib pins ``gymnasium==1.2.2``; war-envs' core accepts ``gymnasium>=1.1,<2``, so the
  ``[rllib]`` extra installs next to it, but not next to ``[dev]`` (newer gymnasium):
  ``bash scripts/rllib_check.sh`` builds its own virtual environment and runs two PPO
  iterations on Spread-v0 (see docs/integrations.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from war_envs._extras import needs_extra

with needs_extra("rllib", "the RLlib adapter (war_train.adapters.rllib)",
                 note="(in its own environment: RLlib pins gymnasium==1.2.2; see scripts/rllib_check.sh)"):
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    from ray.tune.registry import register_env

__all__ = ["RLlibEnvCreator", "rllib_env_creator", "make_rllib_env", "group_policy_mapping",
           "GroupPolicyMapping", "WarPettingZooEnv"]

#: ``seed + WORKER_SEED_STRIDE * worker_index + vector_index`` for each RLlib copy of the env
WORKER_SEED_STRIDE = 1000

_RLLIB_CONFIG_KEYS = ("worker_index", "vector_index", "num_workers", "remote", "recreated_worker")


class WarPettingZooEnv(ParallelPettingZooEnv):
    """RLlib's ``ParallelPettingZooEnv`` whose episode ends when every agent has ended, each by
    termination or truncation.  RLlib's own sets ``terminateds["__all__"]`` only when every agent
    terminated and ``truncateds["__all__"]`` only when every agent was truncated, so an episode
    whose last agents end differently (Tag-v0: a runner tagged at the time limit, the taggers
    truncated) never ends for RLlib, and its next ``step`` meets our env's "call reset()" error.
    Here such an episode is truncated as a whole (``truncateds["__all__"]``); every agent keeps
    its own flags, which RLlib's value targets read."""

    def step(self, action_dict):
        obss, rews, terminateds, truncateds, infos = self.par_env.step(action_dict)
        agents = set(terminateds) | set(truncateds)
        ended = all(terminateds.get(a, False) or truncateds.get(a, False) for a in agents)
        terminateds["__all__"] = all(terminateds.get(a, False) for a in agents)
        truncateds["__all__"] = ended and not terminateds["__all__"]
        return obss, rews, terminateds, truncateds, infos


def make_rllib_env(env_id: str, env_config: Mapping[str, Any] | None = None, **kwargs) -> ParallelPettingZooEnv:
    """``WarPettingZooEnv(war_envs.parallel_env(env_id, **kwargs, **env_config))``.

    ``env_config`` may be RLlib's ``EnvContext``: its ``worker_index`` / ``vector_index``
    attributes (not scenario arguments) offset a given ``seed`` (see the module docstring)."""
    import war_envs

    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id: expected a registered war_envs id (one of {war_envs.registry.registered_ids()}), "
                        f"got {env_id!r}")
    if env_config is not None and not isinstance(env_config, Mapping):
        raise TypeError(f"env_config: expected a mapping (RLlib's EnvContext), got {type(env_config).__name__}")
    merged = dict(kwargs)
    merged.update({k: v for k, v in dict(env_config or {}).items() if k not in _RLLIB_CONFIG_KEYS})
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    vector = int(getattr(env_config, "vector_index", 0) or 0)
    if merged.get("seed") is not None:
        merged["seed"] = int(merged["seed"]) + WORKER_SEED_STRIDE * worker + vector
    return WarPettingZooEnv(war_envs.parallel_env(env_id, **merged))


@dataclasses.dataclass(frozen=True)
class RLlibEnvCreator:
    """A picklable env creator for ``ray.tune.registry.register_env``: ``creator(env_config)``
    returns ``make_rllib_env(env_id, env_config, **kwargs)``."""

    env_id: str
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""

    def __call__(self, env_config: Mapping[str, Any] | None = None) -> ParallelPettingZooEnv:
        return make_rllib_env(self.env_id, env_config, **dict(self.kwargs))


def rllib_env_creator(env_id: str, *, name: str | None = None, **kwargs) -> RLlibEnvCreator:
    """Register scenario ``env_id`` with RLlib as ``name`` (default ``"war_envs/<env_id>"``) and
    return the creator (``creator.name`` is what ``AlgorithmConfig.environment`` takes).
    ``kwargs``: scenario arguments plus ``seed`` / ``precision`` / ``device`` /
    ``render_mode``, as ``war_envs.parallel_env``; checked now by building one env."""
    import war_envs

    if not isinstance(env_id, str) or env_id not in war_envs.registered_ids():
        raise ValueError(f"env_id: unknown scenario {env_id!r}; registered: {war_envs.registered_ids()}")
    if name is None:
        name = f"war_envs/{env_id}"
    elif not isinstance(name, str) or not name:
        raise TypeError(f"name: expected a non-empty str, got {name!r}")
    creator = RLlibEnvCreator(env_id, dict(kwargs), name)
    creator().close()  # bad scenario arguments fail here, not inside a remote worker
    register_env(name, creator)
    return creator


@dataclasses.dataclass(frozen=True)
class GroupPolicyMapping:
    """``policy_mapping_fn``: agent id -> its war-envs group's policy id (picklable)."""

    agent_to_group: Mapping[str, str]

    def __call__(self, agent_id, *args, **kwargs) -> str:
        try:
            return self.agent_to_group[agent_id]
        except KeyError:
            raise KeyError(f"agent_id: unknown agent {agent_id!r}; known: {list(self.agent_to_group)}") from None


def group_policy_mapping(env_id: str, **kwargs) -> tuple[set[str], GroupPolicyMapping]:
    """``(policies, policy_mapping_fn)`` for ``AlgorithmConfig.multi_agent``: one policy per
    group of ``env_id`` (built with ``kwargs`` to learn its agents), named after the group."""
    import war_envs

    env = war_envs.parallel_env(env_id, **kwargs)
    try:
        mapping = {a: g for g, spec in env.batched.groups.items() for a in spec.agents}
    finally:
        env.close()
    return set(mapping.values()), GroupPolicyMapping(mapping)
