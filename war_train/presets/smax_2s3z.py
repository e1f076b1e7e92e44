"""SMAX-v0 on map 2s3z (2 stalkers and 3 zealots a side, heuristic enemy): ``smax.COMMON``
with 4 M env steps."""

from war_train.presets.smax import COMMON

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "SMAX-v0 2s3z against the heuristic enemy: MLP MAPPO with action masks, 4 M env steps on one core"

PRESET = {**COMMON, "env_kwargs": {"map_name": "2s3z"}, "total_env_steps": 4_000_000}
