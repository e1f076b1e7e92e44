"""SpeakerListener-v0 (mpe2 ``simple_speaker_listener_v4``, the MAPPO paper's "Comm" task):
the speaker's and the listener's policies (each group its own, as in the on-policy code's
separated runner for this task), trained on mpe2's rewards; the progress metric is the
on-policy code's "average episode rewards" (``onpolicy_episode_reward``: −2·goal_dist² per
step, summed over the episode; see speaker_listener.py).  2 M env steps, as the on-policy code's
``train_mpe_comm.sh``.

The Spread preset's changes (see spread.py) plus one: the speaker learns at 0.2 × the learning
rate.  Measured (seed 1, 2 M env steps): with the speaker at the full rate it settles on a
deterministic code within ≈ 0.5 M steps while the listener still ignores it, and the code
merges two of the three goals into one word (on-policy reward −22.9, greedy −24.1; also with
the entropy bonus at 0.03 annealed to 0: −23.0); at 0.2 × it keeps exploring until the listener
reads it, and learns three words (−15.2, greedy −16.1).  (Tuning trials, before training
seeds had worlds of their own; three independent seeds:
``benchmarks/results/learning_speaker_listener.json``, docs/training.md.)
"""

from war_train.presets.spread import PRESET as _SPREAD

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "SpeakerListener-v0 (the MAPPO paper's Comm), speaker at 0.2 x the learning rate, 2 M env steps"

PRESET = {**_SPREAD, "scenario": "SpeakerListener-v0", "total_env_steps": 2_000_000,
          "group_lr_scale": {"speaker": 0.2}}
