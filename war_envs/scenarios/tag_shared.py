"""What Tag-v0 (``tag``) and TagGridWorld-v0 (``tag_gridworld``), WarpDrive's two tag games,
share: their arguments (WarpDrive's defaults, then a preset, then the arguments given), the
``tagger`` / ``runner`` groups with one observation buffer each in the world struct, and the
per-agent state ``set_state`` checks."""

from __future__ import annotations

import gymnasium
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, GroupSpec, stack_group_spaces


def preset_args(defaults: dict, presets: dict, preset: str | None, given: dict) -> dict:
    """The game's arguments: ``defaults``, then ``presets[preset]`` (``None``: none), then the
    arguments in ``given`` (the constructor's ``locals()``: those still a ``v.Default`` were not
    given)."""
    given = {k: val for k, val in given.items() if k in defaults and not isinstance(val, v.Default)}
    if preset is not None:
        v.check_choice("preset", preset, list(presets))
    return {**defaults, **(presets[preset] if preset is not None else {}), **given}


def add_groups(env: BatchedEnv, num_taggers: int, runners: tuple[str, ...], obs_dim: int,
               space: gymnasium.spaces.Space) -> None:
    """Group ``tagger`` (``tagger_0 …``) then group ``runner`` (``runners``), one action
    ``space`` and ``obs_dim`` observations for all."""
    env.groups["tagger"] = GroupSpec("tagger", tuple(f"tagger_{i}" for i in range(num_taggers)), 0, obs_dim,
                                     space, stack_group_spaces(obs_dim))
    env.groups["runner"] = GroupSpec("runner", runners, num_taggers, obs_dim, space, stack_group_spaces(obs_dim))


def wire_group_obs(env: BatchedEnv, w, obs_dim: int) -> None:
    """Each group's observation and final-observation buffers (``[E, n_g, obs_dim]``) into
    struct ``w`` (``tagger_obs`` …), which the env keeps."""
    for name, spec in env.groups.items():
        env._obs_arrays[name] = env._world_array((spec.n_agents, obs_dim), wp.float32)
        env._final_obs_arrays[name] = env._world_array((spec.n_agents, obs_dim), wp.float32)
    w.tagger_obs, w.runner_obs = env._obs_arrays["tagger"], env._obs_arrays["runner"]
    w.tagger_final_obs, w.runner_final_obs = env._final_obs_arrays["tagger"], env._final_obs_arrays["runner"]
    env._w = w
    env._shard_structs = {}


def check_positions(key: str, tensor: torch.Tensor, grid_length, what: str, number=float) -> None:
    """``set_state``'s checks of both games (``tensor`` not empty): ``pending_reset`` 0 or 1,
    ``agent_pos`` ``what`` (``"positions"``, ``"cells"``) in ``[0, grid_length]``."""
    if key == "pending_reset" and int(tensor.max()) > 1:
        raise ValueError("state['pending_reset']: expected 0 or 1")
    if key == "agent_pos":
        lo, hi = number(tensor.min()), number(tensor.max())
        if lo < 0 or hi > grid_length:
            raise ValueError(f"state['agent_pos']: expected {what} in [0, grid_length={grid_length}], "
                             f"got values in [{lo}, {hi}]")
