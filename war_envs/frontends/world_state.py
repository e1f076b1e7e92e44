"""The world state in the front ends (scenarios that declare one, e.g. ``SMAX-v0``): opt-in
with ``world_state=True``, so that MAPPO implementations in other libraries give their critic
what war-train's ``critic_input="world"`` gives it (JaxMARL's ``get_world_state`` for SMAX-v0).

- PettingZoo's ``ParallelEnv`` / ``aec_env``: ``state()`` (and ``state_space``) become the world
  state instead of every agent's observation concatenated (mpe2's ``state()``).
- Gymnasium's ``gym.make``: ``info["world_state"]`` float32 ``[D]`` at reset and every step;
  ``gym.make_vec``: ``info["world_state"]`` float32 ``[W, D]`` (every world's, for the
  observation handed out), and with SAME_STEP autoreset the finished episodes' last one in
  ``final_info``.

A scenario without a world state (``world_state_dim == 0``) refuses the argument.
"""

from __future__ import annotations

from war_envs.core import validation as v

__all__ = ["check_world_state", "require_world_state"]


def check_world_state(value) -> bool:
    """``world_state=``: a bool (checked before the front end builds anything)."""
    return v.check_bool("world_state", value)


def require_world_state(flag: bool, batched) -> bool:
    """``flag`` (a checked ``world_state=``), ``True`` only for a scenario that declares a world
    state: else a ``TypeError`` naming the argument (``batched`` is closed first, since the
    caller drops it)."""
    if flag and batched.world_state_dim == 0:
        name = batched.env_id or type(batched).__name__
        batched.close()
        raise TypeError(f"world_state: {name} declares no world state beyond its agents' observations "
                        "(world_state_dim is 0); leave world_state=False (PettingZoo's state() is then every "
                        "agent's observation concatenated)")
    return flag
