"""Drop-in for ``mpe2.simple_crypto_v3``, served by war-envs' ``Crypto-v0``: ``env``, ``parallel_env`` and
``raw_env`` with mpe2's signatures (``from war_envs.mpe2 import simple_crypto_v3``)."""

from war_envs.mpe2._envs import build

env, parallel_env, raw_env = build("simple_crypto_v3")

__all__ = ["env", "parallel_env", "raw_env"]
