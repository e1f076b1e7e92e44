"""skrl: a batched war-envs scenario shaped like Isaac Lab's multi-agent env (``DirectMARLEnv``),
which skrl's MAPPO / IPPO consume through ``wrap_env(env, wrapper="isaaclab-multi-agent")``.

```python
from skrl.envs.wrappers.torch import wrap_env
from war_train.adapters.skrl import SkrlMultiAgentEnv

env = wrap_env(SkrlMultiAgentEnv("Spread-v0", num_envs=256, seed=0), wrapper="isaaclab-multi-agent")
# env.possible_agents == ["agent_0", "agent_1", "agent_2"]; build skrl models/memories per agent
```

The API (torch tensors on the env's device, one entry per agent, ``E`` worlds):

- ``possible_agents`` / ``agents``: agent names (the scenario's order); ``num_envs`` = ``E``;
  ``num_agents``, ``max_num_agents``; ``device``.
- ``observation_spaces`` / ``action_spaces``: ``{agent: gymnasium space}`` (one agent's);
  ``state_space``: ``Box(-inf, inf, (state_dim,), float32)`` (the centralized critic's input).
- ``reset(seed=None)`` -> ``({agent: float32 [E, obs_dim]}, info)``.
- ``step({agent: action})`` (Discrete: int ``[E]`` or ``[E, 1]``; Box: float ``[E, 5]``) ->
  ``obs, rewards, terminated, truncated, info`` with rewards float32 ``[E]`` and flags bool
  ``[E]`` per agent; ``info`` is ``{}`` (see action masks below).
- ``state()`` -> float32 ``[E, state_dim]``.
- **Seeding**: skrl's wrapper resets once, with ``seed=skrl.config.torch.key`` (0 unless
  ``skrl.utils.set_seed(s)`` was called), which overrides the ``seed`` given to the
  constructor: world ``w`` then replays the stream of ``key + w``.
- **Autoreset SAME_STEP** (as Isaac Lab): a finished world restarts inside the step, so at an
  episode's end ``obs`` is already the next episode's first observation.  skrl's
  ``time_limit_bootstrap`` would therefore bootstrap from that observation (as with Isaac
  Lab); leave it False (skrl's default) or use ``war_train``'s MAPPO, which bootstraps from
  ``final_obs``.
- **Action masks** (scenarios with ``has_action_mask``, e.g. SMAX-v0): skrl has no action-mask
  convention (its MAPPO / IPPO sample every action), so masks come through ``info``:
  ``info["action_mask"]`` is ``{agent: bool [E, n]}`` (the mask for the observation handed out)
  at ``reset`` and every ``step``.  Every action of the space is played, an unavailable one as
  the scenario's trusted step plays it (SMAX-v0: JaxMARL's semantics);
  ``strict_action_mask=True`` refuses it (a ``ValueError`` naming ``actions[agent]`` and the
  world).
- Every tensor handed out is a copy (skrl keeps observations across steps).
- **Bad input**: every agent's action is checked (key present, shape, dtype, device, range,
  NaN/inf) and refused with a ``ValueError`` / ``TypeError`` naming ``actions[agent]`` before
  anything reaches the worlds; a tensor must already be on ``device`` (it is not moved).  After
  ``close()`` every call raises ``RuntimeError`` (see ``docs/errors.md``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import gymnasium
import numpy as np
import torch

from war_envs.core import validation as v
from war_envs.frontends.action_masks import check_available, check_strict
from war_envs.frontends.agents_as_envs import resolve_env

__all__ = ["SkrlMultiAgentEnv"]


class SkrlMultiAgentEnv:
    """``SkrlMultiAgentEnv(env_or_id, *, strict_action_mask=False, **make_kwargs)``:
    ``env_or_id`` is a scenario id (``make_kwargs`` go to ``war_envs.make``) or a ``BatchedEnv``
    built with ``autoreset_mode="same_step"``.  See the module docstring."""

    def __init__(self, env_or_id, *, strict_action_mask: bool = False, **make_kwargs) -> None:
        self.strict_action_mask = check_strict(strict_action_mask)
        self.batched, self._owned = resolve_env(env_or_id, make_kwargs, autoreset_mode="same_step",
                                                who="SkrlMultiAgentEnv")
        env = self.batched
        self.num_envs = env.num_envs
        self.device = env.torch_device
        self.possible_agents = list(env.agents)
        self.agents = list(self.possible_agents)
        self.num_agents = len(self.agents)
        self.max_num_agents = len(self.possible_agents)
        self._where: dict[str, tuple[str, int]] = {}
        self.observation_spaces: dict[str, gymnasium.Space] = {}
        self.action_spaces: dict[str, gymnasium.Space] = {}
        for g, spec in env.groups.items():
            for k, agent in enumerate(spec.agents):
                self._where[agent] = (g, k)
                self.observation_spaces[agent] = copy.deepcopy(spec.observation_space)
                self.action_spaces[agent] = copy.deepcopy(spec.action_space)
        self.state_space = gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(env.state_dim,),
                                                dtype=np.float32)
        self.render_mode = None
        self._closed = False

    @property
    def unwrapped(self) -> SkrlMultiAgentEnv:
        return self

    def reset(self, seed: int | None = None, options=None):
        """Reset every world; ``seed`` reseeds (world ``w`` gets ``seed + w``)."""
        self._check_open("reset")
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seed = None  # skrl passes its own global key only when it was set as an int
        obs = self.batched.reset(seed=v.check_seed("seed", seed))
        return self._per_agent(obs, torch.float32), self._info(self.batched.action_mask)

    def step(self, actions: Mapping[str, torch.Tensor]):
        """``{agent: action}``; every agent's action is checked (shape, dtype, device, range;
        errors name ``actions[agent]``) before anything reaches the env."""
        self._check_open("step")
        v.check_keys("actions", actions, self.possible_agents)
        env = self.batched
        group_actions = {g: torch.stack([self._action(agent, actions[agent], spec.action_space)
                                         for agent in spec.agents], dim=1)
                         for g, spec in env.groups.items()}
        if self.strict_action_mask and env.has_action_mask:
            mask = env.action_mask()
            for g, spec in env.groups.items():
                check_available(group_actions[g], mask[g],
                                lambda e, k, agents=spec.agents: f"actions[{agents[k]!r}] at world {e}")
        # every value was checked (_action), so the batched env takes its trusted path
        obs, rew, term, trunc, info = env.step(group_actions, trusted=True)
        return (self._per_agent(obs, torch.float32), self._per_agent(rew, torch.float32),
                self._per_agent(term, torch.bool), self._per_agent(trunc, torch.bool),
                self._info(lambda: info["action_mask"]))

    def _info(self, masks) -> dict:
        """``{"action_mask": {agent: bool [E, n]}}`` (copies; ``masks()`` gives the batched env's)
        for scenarios with ``has_action_mask``, else ``{}``."""
        return {"action_mask": self._per_agent(masks(), torch.bool)} if self.batched.has_action_mask else {}

    def _action(self, agent: str, a, space: gymnasium.Space) -> torch.Tensor:
        """One agent's ``[E]`` (Discrete), ``[E, k]`` (MultiDiscrete) or ``[E, *shape]`` (Box)
        action, checked; a tensor must already be on the env's device (never moved silently)."""
        name, E = f"actions[{agent!r}]", self.num_envs
        a = v.as_tensor(name, a, self.device)
        if isinstance(space, gymnasium.spaces.Discrete):
            if a.shape not in ((E,), (E, 1)):
                raise ValueError(f"{name}: expected shape ({E},) or ({E}, 1), got {tuple(a.shape)}")
            a = a.reshape(E)
        else:
            v.check_shape(name, a, (E, *space.shape))
        v.check_in_space(name, a, space)
        return a

    def state(self) -> torch.Tensor:
        self._check_open("state")
        return self.batched.state().to(torch.float32)

    def render(self, *args, **kwargs):
        return None

    def close(self) -> None:
        """Release the batched env (if this adapter built it); later calls raise.  Idempotent."""
        if self._owned and not self.batched.closed:
            self.batched.close()
        self._closed = True

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise RuntimeError(f"SkrlMultiAgentEnv: {call}() called after close(); the environment is closed")

    def _per_agent(self, values: Mapping[str, torch.Tensor], dtype) -> dict[str, torch.Tensor]:
        """``{group: [E, n_g, ...]}`` -> ``{agent: [E, ...]}`` contiguous copies."""
        out = {}
        for agent, (g, k) in self._where.items():
            out[agent] = values[g][:, k].to(dtype=dtype, copy=True).contiguous()
        return out

    def __repr__(self) -> str:
        return f"SkrlMultiAgentEnv({self.batched.env_id!r}, num_envs={self.num_envs})"
