"""SMAX-v0 on map 3s5z (3 stalkers and 5 zealots a side; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps).  Results: ``benchmarks/results/learning_smax_table.json`` (docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("3s5z")

PRESET = map_preset("3s5z")
