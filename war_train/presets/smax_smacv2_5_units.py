"""SMAX-v0 on map smacv2_5_units (SMACv2-style: 5 random units a side from random start positions; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps).  Results: ``benchmarks/results/learning_smax_table.json`` (docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("smacv2_5_units")

PRESET = map_preset("smacv2_5_units")
