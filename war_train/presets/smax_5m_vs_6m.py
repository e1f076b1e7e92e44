"""SMAX-v0 on map 5m_vs_6m (5 marines against 6, heuristic enemy; outnumbered, so focus fire
has to be learned): ``smax.COMMON`` with 6 M env steps."""

from war_train.presets.smax import COMMON

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "SMAX-v0 5m_vs_6m against the heuristic enemy: MLP MAPPO with action masks, 6 M env steps"

PRESET = {**COMMON, "env_kwargs": {"map_name": "5m_vs_6m"}, "total_env_steps": 6_000_000}
