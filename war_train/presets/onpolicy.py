"""The on-policy code's MPE settings, i.e. ``TrainConfig``'s defaults (Spread, 20 M env steps);
``TrainConfig.scenario``'s default is this preset's scenario."""

PRESET = {"scenario": "Spread-v0"}
