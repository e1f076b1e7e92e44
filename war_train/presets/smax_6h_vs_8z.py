"""SMAX-v0 on map 6h_vs_8z (6 hydralisks against 8 zealots: outnumbered, kiting and focus fire; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps).  Results: ``benchmarks/results/learning_smax_table.json`` (docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("6h_vs_8z")

PRESET = map_preset("6h_vs_8z")
