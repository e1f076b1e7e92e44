"""Overcooked-v0 on asymm_advantages (JaxMARL's ``overcooked``): the ``overcooked`` preset's
settings on the 5 x 9 kitchen whose two cooks work in separate rooms (one near the onions, the
other near the pots' far side), with twice the env steps for the larger kitchen."""

from war_train.presets.overcooked import PRESET as CRAMPED_ROOM

DESCRIPTION = ("Overcooked-v0 asymm_advantages: MLP MAPPO with JaxMARL's shaped reward added, soups served per "
               "400-step episode")

PRESET = {**CRAMPED_ROOM, "env_kwargs": {"layout": "asymm_advantages", "shaped_reward_coef": 1.0},
          "total_env_steps": 3_000_000}
