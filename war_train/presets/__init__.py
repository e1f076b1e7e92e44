"""Presets: per-scenario overrides of ``TrainConfig``'s on-policy defaults.

``preset_config(name_or_scenario, **overrides)`` -> a validated ``TrainConfig``.  A preset is a
module in this package with a ``PRESET`` dict (only the fields it changes) and a one-line
``DESCRIPTION`` (``preset_descriptions()``, ``war-train train --list-presets``); ``DEFAULT_PRESETS``
says which preset a scenario gets by default, ``VARIANT_PRESETS`` which one a variant of it gets
(SMAX-v0's maps: ``default_preset("SMAX-v0", {"map_name": "2s3z"})``), and ``DECLARED_WAR_COSTS`` which declared costs the
WAR harness gives it.  These tables are data keyed by scenario id: the trainer's code names no
scenario.
"""

from __future__ import annotations

import dataclasses
import importlib

# (war_train.config imports war_train.presets.onpolicy for its default scenario, so this package
# imports the config module inside the functions that need it)

__all__ = ["PRESETS", "DEFAULT_PRESETS", "VARIANT_PRESETS", "default_preset", "with_preset", "DECLARED_WAR_COSTS", "ARTICLE_COSTS", "preset_names", "preset_overrides", "preset_config",
           "preset_descriptions"]

#: the SMAX maps' presets built by ``smax.map_preset`` (one module each)
SMAX_MAP_PRESETS = tuple(f"smax_{m}" for m in ("3s5z", "3s_vs_5z", "6h_vs_8z", "10m_vs_11m", "27m_vs_30m",
                                               "3s5z_vs_3s6z", "smacv2_5_units", "smacv2_10_units"))
#: preset name -> module
PRESETS = {name: name for name in ("onpolicy", "spread", "spread_onpolicy_starts", "spread_continuous",
                                    "predator_prey", "tag", "tag_warpdrive", "speaker_listener", "reference",
                                    "relay", "smoke", "smax", "smax_2s3z", "smax_5m_vs_6m", *SMAX_MAP_PRESETS, "tag_gridworld",
                                    "cartpole", "pendulum", "navigation", "balance", "transport", "wheel", "sampling",
                                    "overcooked", "overcooked_asymm_advantages", "hanabi", "joint_passage")}
#: scenario id -> default preset
DEFAULT_PRESETS = {"Spread-v0": "spread", "PredatorPrey-v0": "predator_prey", "Tag-v0": "tag",
                    "SpeakerListener-v0": "speaker_listener", "Reference-v0": "reference",
                    "Relay-v0": "relay", "SMAX-v0": "smax", "TagGridWorld-v0": "tag_gridworld",
                    "CartPole-v1": "cartpole", "Pendulum-v1": "pendulum",
                    "Navigation-v0": "navigation", "Balance-v0": "balance",
                    "Transport-v0": "transport", "Wheel-v0": "wheel", "Sampling-v0": "sampling",
                    "Overcooked-v0": "overcooked", "Hanabi-v0": "hanabi",
                    "JointPassage-v0": "joint_passage"}
#: scenario id -> (the env argument that names a variant, {its value: preset}): a variant's own
#: preset where it has one (other variants get the scenario's default preset)
VARIANT_PRESETS = {"SMAX-v0": ("map_name", {"3m": "smax", "2s3z": "smax_2s3z", "5m_vs_6m": "smax_5m_vs_6m",
                                           **{name[len("smax_"):]: name for name in SMAX_MAP_PRESETS}}),
                   "Overcooked-v0": ("layout", {"cramped_room": "overcooked",
                                                "asymm_advantages": "overcooked_asymm_advantages"})}
#: the source article's case: 1 agent at 50 ms + 9 at 5 ms per decision 
ARTICLE_COSTS = {"commander": {"per_decision_ms": 50.0}, "sentry": {"per_decision_ms": 5.0}}
#: scenario id -> the declared WAR costs it gets when ``WarConfig.costs`` is empty (others: measured)
DECLARED_WAR_COSTS = {"Command-v0": ARTICLE_COSTS}


def default_preset(scenario: str, env_kwargs: dict | None = None) -> str | None:
    """The preset ``war-train train SCENARIO`` uses without ``--preset``: the variant's own (the
    map ``env_kwargs`` names, ``VARIANT_PRESETS``), else the scenario's (``DEFAULT_PRESETS``), else
    None (``TrainConfig``'s defaults)."""
    key, table = VARIANT_PRESETS.get(scenario, (None, {}))
    variant = (env_kwargs or {}).get(key) if key else None
    if isinstance(variant, str) and variant in table:
        return table[variant]
    return DEFAULT_PRESETS.get(scenario)


def preset_names() -> list[str]:
    return sorted(PRESETS)


def preset_descriptions() -> dict[str, str]:
    """Preset name -> its one-line ``DESCRIPTION``, in ``preset_names()`` order."""
    return {name: importlib.import_module(f"war_train.presets.{PRESETS[name]}").DESCRIPTION for name in preset_names()}


def preset_overrides(name: str) -> dict:
    """The fields preset ``name`` (or the default preset of scenario ``name``) sets."""
    key = DEFAULT_PRESETS.get(name, name)
    if key not in PRESETS:
        raise ValueError(f"preset: unknown {name!r}; expected one of {preset_names()} "
                         f"or a scenario with a preset {sorted(DEFAULT_PRESETS)}")
    module = importlib.import_module(f"war_train.presets.{PRESETS[key]}")
    return dict(module.PRESET)


def with_preset(values: dict, name: str | None, overrides: dict) -> dict:
    """``values`` <- preset ``name`` (None: none) <- ``overrides``, as a new dict.  ``env_kwargs``
    merge key by key, the overrides' keys winning: naming a map (``{"map_name": "3s5z"}``) keeps the
    other env arguments its preset sets (SMAX's ``observe_time``); give a key to change it."""
    preset = preset_overrides(name) if name else {}
    out = {**values, **preset, **overrides}
    if isinstance(preset.get("env_kwargs"), dict) and isinstance(overrides.get("env_kwargs"), dict):
        out["env_kwargs"] = {**preset["env_kwargs"], **overrides["env_kwargs"]}
    return out


def preset_config(name: str, **overrides):
    """``TrainConfig`` defaults <- preset ``name`` <- ``overrides`` (``with_preset``; a validated
    ``TrainConfig``); a scenario id as ``name`` takes its default preset, a variant's where
    ``overrides["env_kwargs"]`` names one that has its own (``default_preset``)."""
    from war_train.config import TrainConfig, config_from_dict, config_to_dict

    name = default_preset(name, overrides.get("env_kwargs")) or name
    return config_from_dict(with_preset(config_to_dict(TrainConfig()), name, overrides))


def _fields() -> set[str]:
    from war_train.config import TrainConfig

    return {f.name for f in dataclasses.fields(TrainConfig)}
