"""One base for the small discrete games (SwitchRiddle-v0, CoinGame-v0): one group ``agent``, a
world a few integers, and one chunked kernel launch per step (``step``: the step, the episode
protocol and the observations) and per reset (``observe``: reset the flagged worlds, observe
every world).  A game builds its world struct's own fields and calls ``_finish_build``."""

from __future__ import annotations

import gymnasium
import torch
import warp as wp

from war_envs.core.batched_env import BatchedEnv, GroupSpec, stack_group_spaces


class SmallGameEnv(BatchedEnv):
    """A batch of small discrete games in one ``wp.struct`` (``self._w``)."""

    #: ``{state key: largest value}`` that ``set_state`` checks (every state is >= 0)
    _state_maxima: dict[str, int] = {}

    def _add_agents(self, n: int, obs_dim: int, n_actions: int) -> None:
        """Group ``agent`` (``agent_0 … agent_{n-1}``), ``Discrete(n_actions)`` each."""
        self.groups["agent"] = GroupSpec("agent", tuple(f"agent_{i}" for i in range(n)), 0, obs_dim,
                                         gymnasium.spaces.Discrete(n_actions), stack_group_spaces(obs_dim))

    def _finish_build(self, w, Struct, kernels: dict, step: str, observe: str, metrics: tuple[str, ...]) -> None:
        """The actions, observations and final observations into struct ``w`` (type ``Struct``),
        then the kernels ``step`` / ``observe`` of ``kernels`` and the info entries ``metrics``
        (fields of ``w``)."""
        n, dim = self.num_agents, self.groups["agent"].obs_dim
        w.action = self._world_array((n,), wp.int32)
        self._action_view = wp.to_torch(w.action)
        w.obs = self._obs_arrays["agent"] = self._world_array((n, dim), wp.float32)
        w.final_obs = self._final_obs_arrays["agent"] = self._world_array((n, dim), wp.float32)
        self._w, self._Struct, self._shard_structs = w, Struct, {}
        self._step_kernel, self._observe_kernel = kernels[step], kernels[observe]
        self._metrics = {name: wp.to_torch(getattr(w, name)) for name in metrics}
        self._make_views()

    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_chunked(self._step_kernel, worlds)

    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        self._launch_chunked(self._observe_kernel, worlds, int(write_final))

    def _inject(self, draws: torch.Tensor) -> None:
        """The next step (only) uses ``draws`` (the shape of ``w.draw``) instead of its own."""
        wp.to_torch(self._w.draw).copy_(draws.reshape(wp.to_torch(self._w.draw).shape))
        wp.to_torch(self._w.draw_injected).fill_(1)

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        top = {**self._state_maxima, "pending_reset": 1}.get(key)
        if top is not None and tensor.numel() and int(tensor.max()) > top:
            raise ValueError(f"state[{key!r}]: expected values in [0, {top}], got up to {int(tensor.max())}")
