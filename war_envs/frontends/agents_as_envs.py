"""Agents as environments: every agent of every world becomes one sub-environment, for
single-agent libraries and CleanRL-style loops (one shared policy over all agents, i.e.
parameter sharing).

```python
from war_envs.frontends.agents_as_envs import AgentsAsEnvs

envs = AgentsAsEnvs("Spread-v0", num_envs=256, seed=0)   # 256 worlds x 3 agents = 768 sub-envs
obs, info = envs.reset()                                   # float32 [768, 18]
obs, rew, term, trunc, info = envs.step(envs.action_space.sample())
```

- **Order**: sub-env ``i = w * A + a`` is agent ``a`` (in the scenario's agent order,
  ``envs.agent_names``) of world ``w``.  ``envs.num_envs`` is ``E * A``; ``envs.num_worlds`` is
  ``E``.
- **Spaces**: ``single_observation_space`` / ``single_action_space`` are one agent's.  Every
  group must share them; for scenarios whose groups observe different sizes (PredatorPrey:
  16 vs 14) pass ``pad_observations=True`` (zeros appended, as SuperSuit's
  ``pad_observations_v0``).  Different action spaces are an error.
- **Agents that leave** (Tag's tagged runners): a sub-env's episode is its world's; it
  reports ``terminated`` (if its agent left) or the world's flag when the world ends, never
  before; in between it observes what the scenario gives agents out of the game (zeros) with
  reward 0.  MultiDiscrete actions are ``int [E*A, k]``.
- **Autoreset**: ``NEXT_STEP`` by default (as Gymnasium's vector envs), ``SAME_STEP``
  (``info["final_obs"]`` object array + ``info["_final_obs"]`` mask, as ``SyncVectorEnv``) or
  ``DISABLED`` (``reset(options={"reset_mask": mask})``: a mask over sub-envs that must be the
  same for every agent of a world).  All agents of a world end and restart together.
- **Action masks** (scenarios with ``has_action_mask``, e.g. SMAX-v0; nothing changes for the
  others): ``info["action_mask"]`` int8 ``[E*A, n]`` (1 = available) with
  ``info["_action_mask"]``, Gymnasium's vector-info layout, at ``reset`` and every ``step``:
  each sub-env's mask for the observation handed out (a reset world's: its new episode's);
  SAME_STEP: the finished episodes' last masks (``info["final_action_mask"]``) in
  ``info["final_info"]["action_mask"]``.  Every action of the space is
  played, an unavailable one as the scenario's trusted step plays it (SMAX-v0: JaxMARL's
  semantics); ``strict_action_mask=True`` refuses it (a ``ValueError`` naming the sub-env, its
  agent and world, before anything is stepped).
- Everything returned is a fresh numpy copy (observations float32, rewards float64 in
  ``SyncVectorEnv``'s convention, flags bool).  One batched step (one kernel pipeline) per
  ``step``.
- **Bad input**: ``step(actions)`` refuses a bad batch (type, a tensor on another device,
  shape, dtype, out-of-range values, NaN/inf) with a ``ValueError`` / ``TypeError`` naming
  ``actions`` and what was expected, before anything is stepped; ``step`` before ``reset()``
  and ``step`` / ``reset`` after ``close()`` raise ``RuntimeError`` (see ``docs/errors.md``).

``AgentLayout`` (the flattening and its checks) is shared with ``war_train.adapters.sb3.SB3VecEnv``.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from war_envs.core import validation as v
from war_envs.frontends.action_masks import check_available, check_strict

__all__ = ["AgentLayout", "AgentsAsEnvs", "resolve_env"]


def resolve_env(env_or_id, make_kwargs: Mapping[str, Any], *, autoreset_mode, who: str):
    """A ``BatchedEnv`` from a scenario id (built with ``autoreset_mode`` and ``make_kwargs``)
    or an existing env (whose autoreset mode must then be ``autoreset_mode``).
    Returns ``(env, owned)``."""
    import war_envs
    from war_envs.core.batched_env import BatchedEnv, parse_autoreset_mode

    mode = parse_autoreset_mode(autoreset_mode)
    if isinstance(env_or_id, str):
        if "autoreset_mode" in make_kwargs:
            raise TypeError(f"{who}: pass autoreset_mode as its own argument, not in make kwargs")
        return war_envs.make(env_or_id, autoreset_mode=mode, **make_kwargs), True
    if isinstance(env_or_id, BatchedEnv):
        if make_kwargs:
            raise TypeError(f"{who}: make kwargs {sorted(make_kwargs)} given with an existing env; "
                            "pass a scenario id to build one")
        if env_or_id.autoreset_mode != mode:
            raise ValueError(f"{who}: needs a batched env with autoreset_mode={mode.name}, got "
                             f"{env_or_id.autoreset_mode.name} (build it with "
                             f"war_envs.make(..., autoreset_mode={mode.name.lower()!r}))")
        return env_or_id, False
    raise TypeError(f"{who}: env_or_id: expected a scenario id such as 'Spread-v0' or a "
                    f"war_envs BatchedEnv, got {type(env_or_id).__name__}")


class AgentLayout:
    """Flattens ``{group: [E, n_g, ...]}`` batches into ``[E * A, ...]`` (world-major, agents in
    the scenario's order) and back.  ``pad_observations`` zero-pads smaller observations."""

    def __init__(self, batched, *, pad_observations: bool = False, who: str = "AgentLayout") -> None:
        self.batched = batched
        self.groups = dict(batched.groups)
        self.num_worlds = batched.num_envs
        self.num_agents = sum(s.n_agents for s in self.groups.values())
        self.n = self.num_worlds * self.num_agents
        self.agent_names = [a for s in self.groups.values() for a in s.agents]
        self.agent_groups = [g for g, s in self.groups.items() for _ in s.agents]
        specs = list(self.groups.values())
        first = specs[0]
        for spec in specs[1:]:
            if spec.action_space != first.action_space:
                raise ValueError(
                    f"{who}: agents as environments need one action space for every group; "
                    f"{batched.env_id} has {first.name!r}: {first.action_space} and "
                    f"{spec.name!r}: {spec.action_space}")
        dims = {s.name: s.obs_dim for s in specs}
        self.obs_dim = max(dims.values())
        self.padded = len(set(dims.values())) > 1
        if self.padded and not pad_observations:
            raise ValueError(
                f"{who}: agents as environments need one observation space for every group; "
                f"{batched.env_id} observes {dims}. Pass pad_observations=True to zero-pad every "
                f"observation to {self.obs_dim} (as SuperSuit's pad_observations_v0), or train the "
                "groups separately with the batch API / war_train")
        if self.padded:
            self.single_observation_space = gymnasium.spaces.Box(
                low=-np.inf, high=np.inf, shape=(self.obs_dim,), dtype=np.float32)
        else:
            self.single_observation_space = copy.deepcopy(first.observation_space)
        self.single_action_space = copy.deepcopy(first.action_space)
        space = self.single_action_space
        self.discrete = isinstance(space, gymnasium.spaces.Discrete)
        self.integer_actions = isinstance(space, (gymnasium.spaces.Discrete, gymnasium.spaces.MultiDiscrete))
        self._action_shape = (self.n,) if self.discrete else (self.n, *space.shape)
        self._device = batched.torch_device
        self.has_action_mask = bool(batched.has_action_mask)

    # -------------------------------------------------------------- batch -> flat
    def _flat(self, per_group: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """``{group: [E, n_g, ...]}`` -> a new ``[E * A, ...]`` tensor (a copy, never a view)."""
        parts = [per_group[g] for g in self.groups]
        out = torch.cat(parts, dim=1) if len(parts) > 1 else parts[0].clone()
        return out.reshape(self.n, *out.shape[2:])

    def observations(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """``[E * A, obs_dim]`` float32 copy (padded with zeros where needed)."""
        if self.padded:
            obs = {g: torch.nn.functional.pad(t, (0, self.obs_dim - t.shape[-1])) for g, t in obs.items()}
        return self._flat(obs)

    def observations_np(self, obs: Mapping[str, torch.Tensor]) -> np.ndarray:
        return self.observations(obs).cpu().numpy()

    def per_agent_np(self, values: Mapping[str, torch.Tensor], dtype) -> np.ndarray:
        """``{group: [E, n_g]}`` -> ``[E * A]`` numpy copy of ``dtype``."""
        return self._flat(values).cpu().numpy().astype(dtype, copy=False)

    def masks(self, mask: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """``{group: bool [E, n_g, n]}`` action masks -> a new bool ``[E * A, n]`` tensor."""
        return self._flat(mask)

    def check_available(self, group_actions: Mapping[str, torch.Tensor], name: str = "actions",
                        worlds: np.ndarray | None = None) -> None:
        """``strict_action_mask``: every sub-env's action (``actions``' ``{group: [E, n_g]}``,
        checked in range) is one its agent's current mask allows, in the worlds of ``worlds``
        (bool ``[E]``; None: all); the error names the sub-env, its agent and world."""
        mask = self.batched.action_mask()
        for g, actions in group_actions.items():
            start = self.groups[g].start

            def label(e: int, k: int, start=start) -> str:
                i = e * self.num_agents + start + k
                return f"{name}[{i}] (agent {self.agent_names[start + k]!r} of world {e})"

            check_available(actions, mask[g], label, worlds)

    def flags_np(self, term: Mapping[str, torch.Tensor], trunc: Mapping[str, torch.Tensor]):
        """``(terminated [E*A], truncated [E*A], world_done [E])`` numpy, per sub-env.

        A world's episode ends when every agent is terminated or truncated; only then do its
        sub-envs report flags (each agent its own: ``terminated`` for an agent that left the
        game earlier, e.g. Tag's tagged runners, else the world's).  Before that every flag is
        False, so a sub-env never ends while its world runs on (single-agent libraries would
        otherwise restart it)."""
        te = self._flat(term).cpu().numpy().astype(np.bool_, copy=False)
        tr = self._flat(trunc).cpu().numpy().astype(np.bool_, copy=False)
        world_done = (te | tr).reshape(self.num_worlds, self.num_agents).all(axis=1)
        done = np.repeat(world_done, self.num_agents)
        terminated = te & done
        truncated = tr & done & ~terminated
        return terminated, truncated, world_done

    # -------------------------------------------------------------- flat -> batch
    def actions(self, actions, name: str = "actions") -> dict[str, torch.Tensor]:
        """``[E * A]`` (Discrete) or ``[E * A, *shape]`` (Box, MultiDiscrete) -> ``{group:
        [E, n_g(, ...)]}``, every check done here on the flat batch so each error names ``name``
        (the one array a caller passes, never a group) with what was expected and what was
        given: the type, a tensor's device (a tensor on another device is refused, not copied),
        shape, dtype kind, ranges (Discrete / MultiDiscrete components in ``[0, n)``) and Box
        values (finite, within ``[low, high]``).  Shared by ``AgentsAsEnvs.step`` and
        ``SB3VecEnv.step_async``; nothing is written until the batch has passed."""
        if isinstance(actions, torch.Tensor):
            if actions.device != self._device:
                raise ValueError(f"{name}: expected a numpy array or a tensor on device {self._device}, "
                                 f"got a tensor on {actions.device}")
            tensor = actions
        else:
            if actions is None or isinstance(actions, (str, bytes, Mapping)):
                raise TypeError(f"{name}: expected an array of shape {self._action_shape}, got "
                                f"{type(actions).__name__}")
            try:
                array = np.asarray(actions)
            except (TypeError, ValueError) as err:
                raise TypeError(f"{name}: expected an array of shape {self._action_shape}, got "
                                f"{type(actions).__name__}") from err
            if array.dtype == object or array.dtype.kind not in "biuf":
                raise TypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
            tensor = torch.from_numpy(np.ascontiguousarray(array))
        if tuple(tensor.shape) != self._action_shape:
            raise ValueError(f"{name}: expected shape {self._action_shape} (num_envs = {self.num_worlds} "
                             f"worlds x {self.num_agents} agents), got {tuple(tensor.shape)}")
        if self.integer_actions and (tensor.is_floating_point() or tensor.dtype == torch.bool):
            raise TypeError(f"{name}: expected integer actions for {self.single_action_space}, got "
                            f"dtype {tensor.dtype}")
        if not self.integer_actions and not tensor.is_floating_point():
            raise TypeError(f"{name}: expected floating actions for {self.single_action_space}, got "
                            f"dtype {tensor.dtype}")
        v.check_in_space(name, tensor, self.single_action_space)
        if tensor.device != self._device:  # a numpy batch for a batched env on another device
            tensor = tensor.to(self._device)
        tensor = tensor.reshape(self.num_worlds, self.num_agents, *tensor.shape[1:])
        return {g: tensor[:, s.start:s.stop] for g, s in self.groups.items()}

    def world_mask(self, mask, name: str) -> np.ndarray:
        """A sub-env mask ``[E * A]`` -> the world mask ``[E]`` (every agent of a world alike)."""
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"{name}: expected a numpy bool array of shape ({self.n},), got "
                            f"{type(mask).__name__}{'' if not isinstance(mask, np.ndarray) else ' ' + str(mask.dtype)}")
        if mask.shape != (self.n,):
            raise ValueError(f"{name}: expected shape ({self.n},), got {mask.shape}")
        per_world = mask.reshape(self.num_worlds, self.num_agents)
        if not (per_world.all(axis=1) | ~per_world.any(axis=1)).all():
            bad = int(np.flatnonzero(per_world.any(axis=1) & ~per_world.all(axis=1))[0])
            raise ValueError(f"{name}: the agents of a world reset together; world {bad} (sub-envs "
                             f"{bad * self.num_agents}..{(bad + 1) * self.num_agents - 1}) is partly masked")
        return per_world[:, 0].copy()



class AgentsAsEnvs(gymnasium.vector.VectorEnv):
    """``E`` worlds x ``A`` agents as a Gymnasium ``VectorEnv`` of ``E * A`` single-agent
    sub-environments (see the module docstring).

    ``AgentsAsEnvs(env_or_id, num_envs=E, *, autoreset_mode=NEXT_STEP, pad_observations=False,
    strict_action_mask=False, **make_kwargs)``: ``env_or_id`` is a scenario id (``make_kwargs`` go to ``war_envs.make``:
    ``seed``, ``device``, scenario arguments) or a ``BatchedEnv`` built with the same
    ``autoreset_mode`` (``num_envs`` must then be omitted or match).  ``num_envs`` counts
    **worlds**; the vector env's ``num_envs`` attribute counts sub-envs (``E * A``).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, env_or_id, num_envs: int | None = None, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 pad_observations: bool = False, strict_action_mask: bool = False, **make_kwargs) -> None:
        from war_envs.core.batched_env import parse_autoreset_mode

        mode = parse_autoreset_mode(autoreset_mode)
        self.strict_action_mask = check_strict(strict_action_mask)
        if isinstance(env_or_id, str):
            make_kwargs["num_envs"] = 1 if num_envs is None else num_envs
        elif num_envs is not None and getattr(env_or_id, "num_envs", None) != num_envs:
            raise ValueError(f"num_envs: {num_envs} given, but the env has {env_or_id.num_envs} worlds")
        self.batched, self._owned = resolve_env(env_or_id, make_kwargs, autoreset_mode=mode,
                                                who="AgentsAsEnvs")
        self.layout = AgentLayout(self.batched, pad_observations=v.check_bool("pad_observations", pad_observations),
                                  who="AgentsAsEnvs")
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.render_mode = None
        self.num_worlds = self.layout.num_worlds
        self.num_agents = self.layout.num_agents
        self.num_envs = self.layout.n
        self.agent_names = list(self.layout.agent_names)
        self.single_observation_space = self.layout.single_observation_space
        self.single_action_space = self.layout.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._done = np.zeros(self.num_worlds, dtype=np.bool_)
        self._needs_reset = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset every world (or, with ``options={"reset_mask": mask}``, the worlds whose agents'
        sub-envs are masked).  ``seed``: an int (world ``w`` gets the stream of ``seed + w``; every
        agent of a world shares it) or None (continue the streams)."""
        self._check_open("reset")
        mask = None
        given, raw = v.reset_mask_option(options)
        if given:
            mask = self.layout.world_mask(raw, "options['reset_mask']")
            if not mask.any():
                raise ValueError("options['reset_mask']: expected at least one True entry, got none")
        if seed is not None and not (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
            raise TypeError(f"seed: expected None or an int (world w gets seed + w), got {type(seed).__name__}")
        seed = v.check_seed("seed", seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        if mask is None:
            obs = self.batched.reset(seed=seed)
            self._done[:] = False
        else:
            obs = self.batched.reset(seed=seed, mask=torch.from_numpy(mask).to(self.batched.torch_device))
            self._done[mask] = False
        self._needs_reset = False
        infos = {}
        if self.layout.has_action_mask:
            reset = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.repeat(mask, self.num_agents)
            infos = self._mask_info(self.batched.action_mask(), reset)
        return self.layout.observations_np(obs), infos

    def step(self, actions):
        """``actions``: ``int [E*A]`` (Discrete), ``int [E*A, k]`` (MultiDiscrete) or
        ``float [E*A, *shape]`` (Box); numpy, a list or a tensor on the env's device.  A bad batch
        (type, device, shape, dtype, range, NaN/inf) raises a ``ValueError`` / ``TypeError``
        naming ``actions`` before anything is stepped (``AgentLayout.actions``)."""
        self._check_open("step")
        if self._needs_reset:
            raise RuntimeError("AgentsAsEnvs: step() called before reset(); call reset() first")
        if self.autoreset_mode == AutoresetMode.DISABLED and self._done.any():
            worlds = np.flatnonzero(self._done).tolist()
            raise RuntimeError(
                f"AgentsAsEnvs: worlds {worlds} finished and autoreset_mode is DISABLED; reset them "
                "with reset(options={'reset_mask': mask}) (every agent of the world) before stepping")
        group_actions = self.layout.actions(actions)
        masked = self.layout.has_action_mask
        if self.strict_action_mask and masked:  # NEXT_STEP: a restarting world's actions are not played
            restarting = self._done if self.autoreset_mode == AutoresetMode.NEXT_STEP else None
            self.layout.check_available(group_actions, worlds=None if restarting is None else ~restarting)
        # every value was checked (AgentLayout.actions), so the batched env takes its trusted path
        obs, rew, term, trunc, info = self.batched.step(group_actions, trusted=True)
        lay = self.layout
        observations = lay.observations_np(obs)
        rewards = lay.per_agent_np(rew, np.float64)
        terminations, truncations, done_world = lay.flags_np(term, trunc)
        infos: dict[str, Any] = {}
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done_world.any():
            done = np.repeat(done_world, self.num_agents)
            final = lay.observations_np(info["final_obs"])
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = final[i]
            infos = {"final_obs": final_obs, "_final_obs": done,
                     "final_info": self._mask_info(info["final_action_mask"], done) if masked else {},
                     "_final_info": done.copy()}
        if masked:  # every sub-env's mask for the observation handed out (a new episode's if reset)
            infos.update(self._mask_info(info["action_mask"], np.ones(self.num_envs, dtype=np.bool_)))
        self._done = done_world
        return observations, rewards, terminations, truncations, infos

    def _mask_info(self, mask, where: np.ndarray) -> dict[str, np.ndarray]:
        """``{"action_mask": int8 [E*A, n], "_action_mask": where}`` (Gymnasium's vector-info
        layout; rows outside ``where`` zero)."""
        rows = self.layout.masks(mask).cpu().numpy().astype(np.int8)
        rows[~where] = 0
        return {"action_mask": rows, "_action_mask": where.copy()}

    def call(self, name: str, *args, **kwargs) -> tuple:
        """Gymnasium's ``call``: an attribute or method of the batched env (shared by every
        sub-env), once per sub-env."""
        attr = getattr(self.batched, name)
        value = attr(*args, **kwargs) if callable(attr) else attr
        return (value,) * self.num_envs

    def get_attr(self, name: str) -> tuple:
        return self.call(name)

    def close_extras(self, **kwargs) -> None:
        if getattr(self, "_owned", False) and getattr(self, "batched", None) is not None:
            self.batched.close()

    def _check_open(self, call: str) -> None:
        # ``closed``: this vector env's close() (Gymnasium's flag), also over a batched env it
        # was handed and left open; ``batched.closed``: that env closed by its owner
        if self.closed or self.batched.closed:
            raise RuntimeError(f"AgentsAsEnvs: {call}() called after close(); the environment is closed")

    def __repr__(self) -> str:
        return (f"AgentsAsEnvs({self.batched.env_id!r}, worlds={self.num_worlds}, agents={self.num_agents}, "
                f"num_envs={self.num_envs}, autoreset_mode={self.autoreset_mode.name})")
