"""The on-policy code's MPE settings, i.e. ``TrainConfig``'s defaults (Spread, 20 M env steps)."""

PRESET = {"scenario": "Spread-v0"}
