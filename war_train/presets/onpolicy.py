"""The on-policy code's MPE settings, i.e. ``TrainConfig``'s defaults (Spread, 20 M env steps);
``TrainConfig.scenario``'s default is this preset's scenario."""

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "the MAPPO paper's MPE settings (= TrainConfig's defaults): Spread-v0, 128 worlds, 20 M env steps"

PRESET = {"scenario": "Spread-v0"}
