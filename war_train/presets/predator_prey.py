"""PredatorPrey-v0 (3 adversaries, 1 prey, 2 obstacles): the adversaries' policy and the
prey's policy (each with its own centralized critic) trained together on the same rollouts.
Same changes from the on-policy defaults as the Spread preset (see spread.py), with 512
worlds: two groups cost twice the compute per env step."""

from war_train.presets.spread import PRESET as _SPREAD

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "PredatorPrey-v0, adversaries and prey trained together: 512 worlds, 2 M env steps"

PRESET = {**_SPREAD, "scenario": "PredatorPrey-v0", "num_envs": 512, "total_env_steps": 2_000_000}
