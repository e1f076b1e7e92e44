"""Drop-in replacement for `mpe2 <https://mpe2.farama.org>`_ 1.1.1: switching is a one-line
import change.

```python
# from mpe2 import simple_spread_v3
from war_envs.mpe2 import simple_spread_v3

env = simple_spread_v3.parallel_env(N=3, max_cycles=25, continuous_actions=False)
observations, infos = env.reset(seed=42)
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
env.close()
```

Every mpe2 module name is here (``simple_v3``, ``simple_adversary_v3``, ``simple_crypto_v3``,
``simple_push_v3``, ``simple_reference_v3``, ``simple_speaker_listener_v4``,
``simple_spread_v3``, ``simple_tag_v3``, ``simple_world_comm_v3``, ``simple_formation_v1``,
``simple_line_v1``, ``collect_treasure_v1``), each with ``env(**kwargs)`` (AEC, wrapped as
mpe2's ``make_env`` does), ``parallel_env(**kwargs)`` and ``raw_env`` (the unwrapped AEC env):
mpe2's parameter names, order and defaults, agent names and order, spaces and
``metadata["name"]``.  Each module is served by a war-envs scenario (``simple_spread_v3`` by
``Spread-v0``, ``simple_tag_v3`` by ``PredatorPrey-v0``, ...: ``MODULES``), looked up when an
env is built: a module whose scenario is not registered imports fine and raises
``NotImplementedError`` when called.

Differences: ``benchmark_data=True`` is not supported (infos carry the scenario's task metrics);
``env.unwrapped`` has no ``world`` / ``scenario`` objects (the state lives in Warp arrays:
``env.unwrapped.batched.get_state()``); ``parallel_env`` is war-envs' native parallel env, not
an AEC-to-parallel conversion; discrete actions out of range raise ``ValueError`` naming the
agent rather than ``AssertionError``; the same seed gives different start states than mpe2's
(a different random generator; the same distributions).  For batches of worlds, a GPU or
float64 use ``war_envs.make(id, num_envs=..., device=..., precision=...)`` or
``war_envs.parallel_env(id, ...)``.

Continuous actions out of range are clipped to the box with PettingZoo's warning, as mpe2's
``env`` and ``parallel_env`` do (its ``ClipOutOfBoundsWrapper``).  The one argument added to
mpe2's, keyword-only ``strict_actions=True`` (``env``, ``parallel_env``, ``raw_env``), refuses
them instead with a ``ValueError`` naming the agent and the bounds, as war-envs' own
``war_envs.parallel_env(id, ...)`` always does.
"""

from __future__ import annotations

import importlib

from war_envs.mpe2._factory import MODULES

__all__ = list(MODULES)


def __getattr__(name: str):
    # `import war_envs.mpe2; war_envs.mpe2.simple_v3` without importing every module up front
    if name in MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *MODULES])
