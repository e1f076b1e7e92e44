"""Scenario families: ``mpe`` (Spread-v0, PredatorPrey-v0), ``tag`` (Tag-v0)."""
