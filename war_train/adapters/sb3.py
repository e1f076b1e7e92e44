"""Stable-Baselines3: a native ``VecEnv`` over a batched war-envs scenario.

```python
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor
from war_train.adapters.sb3 import SB3VecEnv

venv = VecMonitor(SB3VecEnv("Spread-v0", num_envs=256, seed=0))   # 256 worlds x 3 agents
model = PPO("MlpPolicy", venv, n_steps=64, batch_size=1024).learn(200_000)
```

**Agents as environments**: ``E`` worlds x ``A`` agents give ``E * A`` SB3 sub-envs (sub-env
``i = w * A + a`` is agent ``a`` of world ``w``), one shared policy (parameter sharing), and
every ``step_wait`` is **one** batched step of all worlds (one kernel pipeline), not a Python
loop over worlds.  The flattening is ``war_envs.frontends.agents_as_envs.AgentLayout``:

- every group must share one observation and one action space; for PredatorPrey (16 vs 14
  observations) pass ``pad_observations=True`` (zeros appended, as SuperSuit's
  ``pad_observations_v0``); different action spaces are an error.
- SAME_STEP autoreset (what SB3 expects): at an episode's end ``obs`` already holds the next
  episode's first observation; ``infos[i]["terminal_observation"]`` holds the last one and
  ``infos[i]["TimeLimit.truncated"]`` is ``truncated and not terminated`` (real time limits:
  SB3 bootstraps them).  Every info has ``TimeLimit.truncated``, as ``DummyVecEnv``.
- observations are float32 numpy **copies**, rewards float32, dones bool.
- agents that leave (Tag's tagged runners): a sub-env's episode is its world's (see
  ``AgentLayout.flags_np``): its ``done`` comes at the world's end, with ``TimeLimit.truncated``
  False for an agent that left (no bootstrap); MultiDiscrete actions are ``int [E*A, k]``.
- ``seed(s)`` applies at the next ``reset()``: world ``w`` gets the stream of ``s + w`` (the
  agents of a world share it); the returned list gives each sub-env its world's seed.
- ``env_method("action_masks")`` / ``action_masks()``: bool ``[E * A, n]`` (MultiDiscrete:
  ``sum(nvec)``), sb3-contrib's ``MaskablePPO`` convention: the scenario's ``action_mask()``
  for scenarios with ``has_action_mask`` (SMAX-v0: each agent's available actions for the
  observation handed out), else all True.  Every action of the space is played, an unavailable
  one as the scenario's trusted step plays it (SMAX-v0: JaxMARL's semantics; plain ``PPO``
  runs too); ``strict_action_mask=True`` refuses it in ``step_async`` (a ``ValueError`` naming
  the sub-env, its agent and world).
- ``get_attr(name)`` resolves per-sub-env attributes ``agent``, ``group``, ``world``,
  ``render_mode``, then the batched env's attributes (one object shared by every sub-env);
  ``set_attr`` sets a batched-env attribute, which is shared, so only for every sub-env at once.
  ``env_is_wrapped`` is ``False`` (no Gymnasium wrappers inside).
- works under ``VecMonitor``, ``VecNormalize``, ``VecFrameStack`` like any ``VecEnv``.
- ``render_mode="rgb_array"``: ``get_images()`` draws each world once and hands that frame to
  each of its agents.
- **Bad input** is refused in ``step_async`` with a ``ValueError`` / ``TypeError`` naming
  ``actions`` (shape, dtype, range, NaN/inf, a tensor on another device), before anything is
  kept or written; ``step_async`` before ``reset()`` and any call after ``close()`` raise
  ``RuntimeError`` (see ``docs/errors.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch

from war_envs._extras import needs_extra

with needs_extra("sb3", "the Stable-Baselines3 adapter (war_train.adapters.sb3)"):
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from war_envs.core import validation as v
from war_envs.frontends.action_masks import check_strict
from war_envs.frontends.agents_as_envs import AgentLayout, resolve_env

__all__ = ["SB3VecEnv"]

_VIRTUAL = ("agent", "group", "world", "render_mode")


class SB3VecEnv(VecEnv):
    """``SB3VecEnv(env_or_id, *, pad_observations=False, render_mode=None, strict_action_mask=False,
    **make_kwargs)``.

    ``env_or_id``: a scenario id (``make_kwargs`` go to ``war_envs.make``: ``num_envs`` =
    worlds, ``seed``, ``device``, scenario arguments; autoreset is SAME_STEP) or a
    ``BatchedEnv`` built with ``autoreset_mode="same_step"``.  See the module docstring.
    """

    def __init__(self, env_or_id, *, pad_observations: bool = False, render_mode: str | None = None,
                 strict_action_mask: bool = False, **make_kwargs) -> None:
        self.strict_action_mask = check_strict(strict_action_mask)
        self.env, self._owned = resolve_env(env_or_id, make_kwargs, autoreset_mode="same_step",
                                            who="SB3VecEnv")
        self.layout = AgentLayout(self.env, pad_observations=v.check_bool("pad_observations", pad_observations),
                                  who="SB3VecEnv")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: expected None or 'rgb_array', got {render_mode!r}")
        self._render_mode = render_mode
        self.num_worlds = self.layout.num_worlds
        self.num_agents = self.layout.num_agents
        self.agent_names = list(self.layout.agent_names)
        self._actions: dict[str, torch.Tensor] | None = None
        self._pending_seed: int | None = None
        self._needs_reset = True
        self._closed = False
        super().__init__(self.layout.n, self.layout.single_observation_space, self.layout.single_action_space)
        space = self.action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            self._mask_size = int(space.n)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):  # MaskablePPO: masks concatenated
            self._mask_size = int(np.sum(space.nvec))
        else:
            self._mask_size = None

    # ------------------------------------------------------------------ core API
    def reset(self) -> np.ndarray:
        """Reset every world (with the seed of the last ``seed()`` call, once)."""
        self._check_open("reset")
        if any(self._options):
            raise ValueError(f"SB3VecEnv: reset options are not supported, got {self._options[0]!r}")
        obs = self.env.reset(seed=self._pending_seed)
        self._pending_seed = None
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._needs_reset = False
        self._actions = None
        return self.layout.observations_np(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Check ``actions`` (shape, dtype, device, range) and keep them for ``step_wait``;
        a bad batch raises here and nothing is kept."""
        self._check_open("step_async")
        if self._needs_reset:
            raise RuntimeError("SB3VecEnv: step_async() called before reset(); call reset() first")
        self._actions = None
        # every check (device, shape, dtype, ranges, NaN) is AgentLayout.actions', shared with
        # AgentsAsEnvs, on the flat batch, so errors name ``actions`` (never a group, which an
        # SB3 caller never sees)
        checked = self.layout.actions(actions)
        if self.strict_action_mask and self.layout.has_action_mask:
            self.layout.check_available(checked)
        self._actions = checked

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open("step_wait")
        if self._actions is None:
            raise RuntimeError("SB3VecEnv: step_wait() called without step_async()")
        actions, self._actions = self._actions, None
        # checked in step_async (AgentLayout.actions): the batched env's trusted path
        obs, rew, term, trunc, info = self.env.step(actions, trusted=True)
        lay = self.layout
        observations = lay.observations_np(obs)
        rewards = lay.per_agent_np(rew, np.float32)
        terminated, truncated, _ = lay.flags_np(term, trunc)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{"TimeLimit.truncated": False} for _ in range(self.num_envs)]
        done_idx = np.flatnonzero(dones)
        if done_idx.size:
            final = lay.observations_np(info["final_obs"])
            time_limit = truncated & ~terminated
            for i in done_idx.tolist():
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(time_limit[i])
        return observations, rewards, dones, infos

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next ``reset()``: world ``w`` gets ``seed + w``.  Returns each sub-env's world seed."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        seed = v.check_seed("seed", seed)
        self._pending_seed = seed
        return [seed + i // self.num_agents for i in range(self.num_envs)]

    def close(self) -> None:
        """Release the batched env (if this adapter built it); later calls raise.  Idempotent."""
        if self._owned and not self.env.closed:
            self.env.close()
        self._closed = True

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise RuntimeError(f"SB3VecEnv: {call}() called after close(); the environment is closed")

    # ------------------------------------------------------------------ attributes
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        idx = list(self._get_indices(indices))
        for i in idx:
            if not 0 <= int(i) < self.num_envs:
                raise IndexError(f"indices: sub-env {i} out of range [0, {self.num_envs})")
        return [int(i) for i in idx]

    def _virtual(self, name: str, i: int):
        if name == "agent":
            return self.agent_names[i % self.num_agents]
        if name == "group":
            return self.layout.agent_groups[i % self.num_agents]
        if name == "world":
            return i // self.num_agents
        return self._render_mode  # render_mode

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        idx = self._indices(indices)
        if attr_name in _VIRTUAL:
            return [self._virtual(attr_name, i) for i in idx]
        if attr_name == "action_masks":
            return [self.action_masks] * len(idx)
        value = getattr(self.env, attr_name)  # AttributeError if absent (has_attr relies on it)
        return [value] * len(idx)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        idx = self._indices(indices)
        if len(set(idx)) != self.num_envs:
            raise ValueError(f"set_attr({attr_name!r}): the {self.num_envs} sub-envs share one batched env; "
                             "set attributes for every sub-env at once (indices=None)")
        if attr_name in _VIRTUAL:
            raise AttributeError(f"set_attr: {attr_name!r} is read-only")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        """``action_masks`` per sub-env; any other method is called **once** on the batched env
        (shared by every sub-env) and its result repeated for each index."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def action_masks(self) -> np.ndarray:
        """``bool [E * A, n]`` (MultiDiscrete: ``sum(nvec)``): the scenario's ``action_mask()``
        (``has_action_mask``), else all True."""
        if self._mask_size is None:
            raise TypeError(f"action_masks: only for Discrete / MultiDiscrete action spaces, got {self.action_space}")
        if not self.layout.has_action_mask:
            return np.ones((self.num_envs, self._mask_size), dtype=np.bool_)
        return self.layout.masks(self.env.action_mask()).cpu().numpy()

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self._render_mode != "rgb_array":
            return [None] * self.num_envs
        frames = [self.env.render_frame(w) for w in range(self.num_worlds)]
        return [frames[i // self.num_agents] for i in range(self.num_envs)]

    def __repr__(self) -> str:
        return (f"SB3VecEnv({self.env.env_id!r}, worlds={self.num_worlds}, agents={self.num_agents}, "
                f"num_envs={self.num_envs})")
