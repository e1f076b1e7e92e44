"""SMAX-v0 on map 27m_vs_30m (27 marines against 30; heuristic enemy):
``smax.map_preset`` (the shared SMAX settings, world-state critics, the agents told the time, 10 M
env steps), its critics on the world state alone (``critic_input="world_only"``: 684 inputs where
the world state and every ally's observation are 20 610; JaxMARL's MAPPO critic input).  Results: ``benchmarks/results/learning_smax_table.json``
(docs/smax.md)."""

from war_train.presets.smax import map_description, map_preset

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = map_description("27m_vs_30m", critics="critics on the world state alone")

PRESET = map_preset("27m_vs_30m", critic_input="world_only")
