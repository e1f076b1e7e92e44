"""Relay-v0 (the WAR task where the slow agent matters): the commander's and the sentries'
policies, each group its own, trained together on the shared reward (minus the sentries' mean
distance to the current goal).  The Spread preset's changes (see spread.py) with 256 worlds
(ten agents per world), and, as for SpeakerListener's speaker, the commander learning at
0.2 x the rate, so that it keeps exploring its messages until the sentries read them.
"""

from war_train.presets.spread import PRESET as _SPREAD

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "Relay-v0 (the WAR task), 256 worlds, commander at 0.2 x the learning rate, 2 M env steps"

PRESET = {**_SPREAD, "scenario": "Relay-v0", "num_envs": 256, "total_env_steps": 2_000_000,
          "group_lr_scale": {"commander": 0.2}}
