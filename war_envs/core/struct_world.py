"""One base for the scenario families whose kernels read one world struct declared with fields
(MPE, VMAS): ``StructWorldEnv`` checks a scenario's Warp functions and ``_fields()``, makes its
groups, refuses a batch that does not fit, lays the scenario's own fields out in the struct
(``param``/``const`` values, per-world ``state``/``info``/``scratch`` arrays) and wires the
struct's actions, observations and info to the batch API.  A family's ``_build`` adds its own
shared fields (``war_envs.core.fields.world_struct``) and kernels (``fields.module_kernels``).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import warp as wp

from war_envs.core.batched_env import (
    BatchedEnv,
    GroupSpec,
    stack_group_spaces,
    world_bytes,
)
from war_envs.core.fields import ROLES, Field, warp_dtype


class StructWorldEnv(BatchedEnv):
    """A batch of worlds held in one ``wp.struct`` (``self._w``) with the scenario's own fields."""

    #: the Warp functions every scenario of the family sets as class attributes
    required_functions: tuple[str, ...] = ()

    def _obs_dim(self, group: str) -> int:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _obs_dim")

    def _fields(self) -> dict[str, Field]:
        """The scenario's own struct fields (none by default)."""
        return {}

    def _require_functions(self) -> None:
        """A ``TypeError`` where the scenario does not set a required Warp function."""
        cls = type(self)
        for fn in cls.required_functions:
            if getattr(cls, fn) is None:
                raise TypeError(f"{cls.__name__} must set {fn} (a Warp function)")

    def _checked_fields(self) -> dict[str, Field]:
        """The scenario's ``_fields()``, every one with a known role and dtype."""
        cls = type(self)
        fields = self._fields()
        for name, f in fields.items():
            if f.role not in ROLES or f.dtype not in ("float", "int", "bool"):
                raise ValueError(f"{cls.__name__}._fields[{name!r}]: role must be one of {ROLES} and dtype "
                                 f"'float', 'int' or 'bool', got {f.role!r}, {f.dtype!r}")
        return fields

    def _add_groups(self, groups: list[tuple[str, list[str]]], spaces: list[gymnasium.spaces.Space]) -> None:
        """``self.groups`` from ``(group, agent names)`` in agent order and every agent's action
        space (one per group)."""
        start = 0
        for name, agents in groups:
            space = spaces[start]
            if any(s != space for s in spaces[start:start + len(agents)]):
                raise ValueError(f"Layout.groups: the agents of group {name!r} must share one action space")
            dim = self._obs_dim(name)
            self.groups[name] = GroupSpec(name=name, agents=tuple(agents), start=start, obs_dim=dim,
                                          action_space=space, observation_space=stack_group_spaces(dim))
            start += len(agents)

    def _allocate_worlds(self, num_agents: int, buffers: list, fields: dict[str, Field]) -> None:
        """Refuse a batch whose per-world buffers (the family's ``buffers``, the scenario's
        per-world fields and the common ones) cannot fit, then allocate the common ones."""
        F = self.wp_float
        buffers = buffers + [(f.shape, warp_dtype(f.dtype, F)) for f in fields.values()
                             if f.role not in ("param", "const")]
        self._check_allocation(self._common_world_bytes(num_agents) + world_bytes(*buffers), num_agents)
        self._allocate_common(num_agents)

    def _array(self, values, dtype) -> wp.array:
        """A (shared, not per-world) array of ``values`` on the device."""
        return wp.array(np.asarray(values, dtype=wp.dtype_to_numpy(dtype)), dtype=dtype, device=self.device)

    def _ints(self, flags) -> wp.array:
        return self._array([int(x) for x in flags], wp.int32)

    def _set_fields(self, w, fields: dict[str, Field]) -> None:
        """The scenario's own fields into struct ``w``: parameters, constants and zeroed per-world
        arrays (``state`` ones in ``self._scenario_state``, ``info`` ones in ``self._info``)."""
        F = self.wp_float
        self._scenario_state, self._info = {}, {}
        for name, f in fields.items():
            dtype = warp_dtype(f.dtype, F)
            if f.role == "param":
                setattr(w, name, f.value)
            elif f.role == "const":
                setattr(w, name, self._array(f.value if f.value else [0], dtype))
            else:
                value = self._world_array(f.shape, dtype)
                setattr(w, name, value)
                if f.role == "state":
                    self._scenario_state[name] = value
                elif f.role == "info":
                    self._info[name] = value

    def _finish_struct(self, w, Struct, fields: dict[str, Field], num_agents: int, act_dim: int, obs_dim: int):
        """The common buffers, actions (discrete ``[E, A]``, continuous ``[E, A, act_dim]``),
        observations (``[E, A, obs_dim]``) and the scenario's own fields into struct ``w``, then
        ``_wire_struct``."""
        self._wire_common(w)
        w.action_discrete = self._world_array((num_agents,), wp.int32)
        w.action_continuous = self._world_array((num_agents, act_dim), wp.float32)
        w.obs = self._world_array((num_agents, obs_dim), wp.float32)
        w.final_obs = self._world_array((num_agents, obs_dim), wp.float32)
        self._set_fields(w, fields)
        self._wire_struct(w, Struct)

    def _wire_struct(self, w, Struct) -> None:
        """Keep struct ``w`` (type ``Struct``) and hand out its actions, observations and info:
        each group's observations are a view of its agents' rows of the per-agent buffer (its
        first obs_dim columns; contiguous when one group fills the buffer, strided otherwise)."""
        self._w, self._Struct = w, Struct
        self._shard_structs = {}
        self._action_view = wp.to_torch(w.action_continuous if self.continuous_actions else w.action_discrete)
        for name, spec in self.groups.items():
            rows = (slice(None), slice(spec.start, spec.stop), slice(0, spec.obs_dim))
            self._obs_arrays[name], self._final_obs_arrays[name] = w.obs[rows], w.final_obs[rows]
        self._metric_arrays = self._info
        self._metrics = {k: wp.to_torch(a) for k, a in self._info.items()}

    def _family_state(self) -> dict[str, wp.array]:  # pragma: no cover - abstract
        """The family's own per-world state arrays (``get_state`` keys before the scenario's)."""
        raise TypeError(f"{type(self).__name__} must implement _family_state")

    def _state_arrays(self) -> dict[str, wp.array]:
        return {**self._family_state(), **self._scenario_state, **self._clock_state()}

    def _check_state_value(self, key: str, tensor) -> None:
        if key == "pending_reset" and tensor.numel() and int(tensor.max()) > 1:
            raise ValueError("state['pending_reset']: expected 0 or 1")
