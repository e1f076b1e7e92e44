"""SMAX-v0 on map 10m_vs_11m (10 marines against 11; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps).  Results: ``benchmarks/results/learning_smax_table.json`` (docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("10m_vs_11m")

PRESET = map_preset("10m_vs_11m")
