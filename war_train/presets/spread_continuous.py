"""Spread-v0 with continuous actions (``continuous_actions=True``: mpe2's ``Box(0, 1, (5,))``
per agent), trained by the Gaussian head with the Spread preset's settings.

The Gaussian lives in normalized units mapped onto the box; the env gets the sample clipped to
it (``war_train.learn.distributions``).  Same budget and optimisation settings as ``spread`` so the
two action spaces compare at equal env steps.
"""

from war_train.presets.spread import PRESET as _SPREAD

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "the spread preset with Box actions (continuous_actions=True, a Gaussian head)"

PRESET = {**_SPREAD, "env_kwargs": {"continuous_actions": True}}
