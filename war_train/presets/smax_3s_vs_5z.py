"""SMAX-v0 on map 3s_vs_5z (3 stalkers against 5 zealots: kiting (hit and run) has to be learned; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps).  Results: ``benchmarks/results/learning_smax_table.json`` (docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("3s_vs_5z")

PRESET = map_preset("3s_vs_5z")
