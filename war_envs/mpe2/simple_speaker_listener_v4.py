"""Drop-in for ``mpe2.simple_speaker_listener_v4``, served by war-envs' ``SpeakerListener-v0``: ``env``, ``parallel_env`` and
``raw_env`` with mpe2's signatures (``from war_envs.mpe2 import simple_speaker_listener_v4``)."""

from war_envs.mpe2._envs import build

env, parallel_env, raw_env = build("simple_speaker_listener_v4")

__all__ = ["env", "parallel_env", "raw_env"]
