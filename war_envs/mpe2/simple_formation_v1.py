"""Drop-in for ``mpe2.simple_formation_v1``, served by war-envs' ``Formation-v0``: ``env``, ``parallel_env`` and
``raw_env`` with mpe2's signatures (``from war_envs.mpe2 import simple_formation_v1``)."""

from war_envs.mpe2._envs import build

env, parallel_env, raw_env = build("simple_formation_v1")

__all__ = ["env", "parallel_env", "raw_env"]
