"""TorchRL: a batched war-envs scenario as an ``EnvBase`` in VMAS's layout (so TorchRL's
multi-agent tutorials, ``SyncDataCollector`` and BenchMARL-style code consume it unchanged).

```python
from torchrl.envs.utils import check_env_specs
from war_train.adapters.torchrl import TorchRLEnv

env = TorchRLEnv("Spread-v0", num_envs=64, seed=0)
check_env_specs(env)
td = env.rollout(25)          # TensorDict, batch_size [64, 25]
td["agent", "observation"]    # float32 [64, 25, 3, 18]
```

Layout (``E`` worlds, groups ``g`` of ``n_g`` agents; VMAS's keys plus a real ``truncated``):

| key | shape | |
|---|---|---|
| ``(g, "observation")`` | ``[E, n_g, obs_dim_g]`` float32 | |
| ``(g, "action")`` | ``[E, n_g]`` int64 (``categorical_actions=True``, as VMAS), ``[E, n_g, 5]`` one-hot or Box(0, 1) float32; MultiDiscrete: ``[E, n_g, k]`` int64 (or concatenated one-hots) | |
| ``(g, "reward")`` | ``[E, n_g, 1]`` (the world's precision) | |
| ``(g, "done" / "terminated" / "truncated")`` | ``[E, n_g, 1]`` bool | per agent |
| ``"done"``, ``"terminated"``, ``"truncated"`` | ``[E, 1]`` bool | per world |
| ``"state"`` | ``[E, state_dim]`` float32 | centralized-critic input (``env.state()``) |
| ``(g, "action_mask")`` | ``[E, n_g, n]`` bool | scenarios with ``has_action_mask`` only (SMAX-v0) |

- **Group names** are the scenario's (Spread-v0: ``"agent"``) unless ``group_map`` renames them:
  ``group_map=MarlGroupMapType.ALL_IN_ONE_GROUP`` gives a one-group scenario VMAS's ``"agents"``
  (the name TorchRL's multi-agent tutorials use; ``examples/torchrl_mappo_tutorial.py`` runs
  that tutorial with it), or a dict ``{name: [agents]}`` names each scenario group.
  ``env.n_agents`` counts the agents of all groups, as VMAS's does.
- ``truncated`` is the scenario's time limit (``max_cycles``); ``terminated`` its own
  termination (e.g. ``terminate_on_success``); ``done = terminated | truncated``.  (VMAS's
  wrapper has no truncated key and reports time limits as termination.)
- **Resets**: TorchRL resets finished worlds through ``_reset``: a ``"_reset"`` (``[E, 1]``)
  and/or ``(g, "_reset")`` (``[E, n_g, 1]``) mask becomes one masked ``env.reset(mask=...)``
  (one launch), every agent of a world resets together.  ``set_seed(s)`` seeds the next reset
  (world ``w`` gets the stream of ``s + w``).  Built from an id, the batched env runs with
  autoreset DISABLED.
- **Any batched env**: ``TorchRLEnv(env)`` takes an env built with any ``autoreset_mode`` and
  leaves that mode as it is (no warning: nothing about the env is switched); the adapter does
  TorchRL's resets itself and returns exactly what an id-built (DISABLED) adapter returns under
  the same seed and actions.  ``NEXT_STEP``: the masked ``_reset`` of a finished world clears
  the restart the env had scheduled for its next step.  ``SAME_STEP``: the env restarts a
  finished world inside ``step``; the adapter returns that world's final observation (and
  ``state``) as the step's ``("next", ...)`` values, and the ``_reset`` that follows hands out
  the already-started episode instead of resetting the world again (a pending ``set_seed``
  reseeds it as usual).  One difference remains outside TorchRL's own loops: stepping a
  finished world *without* resetting it first follows the env's mode (``NEXT_STEP``: that
  step restarts the world; ``SAME_STEP``: it is already in its next episode).
- **Action masks** (scenarios with ``has_action_mask``, e.g. SMAX-v0; nothing changes for the
  others): TorchRL's convention, as ``PettingZooWrapper`` and ``SMACv2Env`` have it — each
  group's ``(g, "action_mask")`` (bool, 1 = available, for the observation handed out; a
  ``Categorical(2)`` entry of the observation spec) at every reset and step, and the action
  spec's mask updated to it (``update_mask``), so ``env.rand_action()``, ``rollout()`` without a
  policy and ``check_env_specs`` draw available actions only; pass the key to a masked
  distribution (``MaskedCategorical(logits, mask=...)``).  SAME_STEP: a restarted world's step
  output carries its final mask (``info["final_action_mask"]``).  Every action of the space is
  played, an unavailable one as the scenario's trusted step plays it (SMAX-v0: JaxMARL's
  semantics); ``strict_action_mask=True`` refuses it (a ``ValueError`` naming the tensordict
  key, the agent and the world).
- Every returned tensor is a copy (never a view of the Warp buffers).
- Per-agent done keys carry the world's flags (all agents of a world end together, as in
  VMAS): an agent that leaves early (Tag's tagged runners) keeps stepping with the zero
  observations and rewards the scenario gives it until its world ends.
- **Bad input**: ``step`` checks each ``(g, "action")`` (present, shape, dtype, device, range,
  NaN/inf; one-hots must be one-hot) and the tensordict's type and batch size, raising a
  ``ValueError`` / ``TypeError`` that names the key, before anything reaches the worlds.  After
  ``close()`` ``step`` and ``reset`` raise ``RuntimeError`` (see ``docs/errors.md``).
"""

from __future__ import annotations

import gymnasium
import torch

from war_envs._extras import needs_extra

with needs_extra("torchrl", "the TorchRL adapter (war_train.adapters.torchrl)"):
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Bounded, Categorical, Composite, MultiCategorical, MultiOneHot, OneHot, Unbounded
    from torchrl.envs import EnvBase
    from torchrl.envs.utils import MarlGroupMapType

from war_envs.core import validation as v
from war_envs.core.batched_env import AutoresetMode, BatchedEnv
from war_envs.frontends.action_masks import check_available, check_strict
from war_envs.frontends.agents_as_envs import resolve_env

__all__ = ["TorchRLEnv"]

_FLAGS = ("done", "terminated", "truncated")


class TorchRLEnv(EnvBase):
    """``TorchRLEnv(env_or_id, *, categorical_actions=True, group_map=None, strict_action_mask=False,
    **make_kwargs)``.

    ``env_or_id``: a scenario id (``make_kwargs`` go to ``war_envs.make``: ``num_envs``,
    ``seed``, ``device``, ``precision``, scenario arguments; autoreset DISABLED) or a
    ``BatchedEnv`` built with any ``autoreset_mode`` (``war_envs.make(id, num_envs=E)``'s
    default ``SAME_STEP`` included): its mode is left unchanged and the adapter does TorchRL's
    resets itself, with the same results as an id-built adapter (see the module docstring).

    ``group_map`` names the tensordict groups, as ``VmasEnv``'s argument does: ``None`` keeps
    the scenario's group names (Spread-v0: ``"agent"``); a ``MarlGroupMapType`` or a
    ``{name: [agent names]}`` dict renames them, each entry holding one whole scenario group
    (its agents in order).  ``MarlGroupMapType.ALL_IN_ONE_GROUP`` gives a one-group scenario
    VMAS's ``"agents"`` group, the name TorchRL's multi-agent tutorials write.  Agents are
    never regrouped across the scenario's groups (``ValueError``).  ``n_agents`` is the number
    of agents in all groups (VMAS's ``env.n_agents``).
    """

    batch_locked = True

    def __init__(self, env_or_id, *, categorical_actions: bool = True, group_map=None,
                 strict_action_mask: bool = False, **make_kwargs) -> None:
        strict = check_strict(strict_action_mask)
        # an existing env keeps its own autoreset mode (resolve_env then only checks types and
        # make kwargs); one built here runs with autoreset DISABLED
        mode = env_or_id.autoreset_mode if isinstance(env_or_id, BatchedEnv) else AutoresetMode.DISABLED
        batched, owned = resolve_env(env_or_id, make_kwargs, autoreset_mode=mode, who="TorchRLEnv")
        self._mode = batched.autoreset_mode
        # SAME_STEP: worlds the env restarted in the last step and TorchRL has not reset since
        self._restarted: torch.Tensor | None = None
        super().__init__(device=batched.torch_device, batch_size=torch.Size([batched.num_envs]))
        self._env, self._owned = batched, owned
        self.categorical_actions = v.check_bool("categorical_actions", categorical_actions)
        self.strict_action_mask = strict
        self._masked = bool(batched.has_action_mask)
        self.agent_names = list(batched.agents)
        # tensordict group name -> the scenario's group
        self._scenario_group = _rename_groups(group_map, batched.groups, self.agent_names)
        self.group_map = {g: list(batched.groups[s].agents) for g, s in self._scenario_group.items()}
        self.num_envs = batched.num_envs
        self._pending_seed: int | None = None
        self._make_specs()

    @property
    def batched(self):
        """The underlying war-envs ``BatchedEnv``."""
        return self._env

    @property
    def n_agents(self) -> int:
        """Agents in all groups (VMAS's ``env.n_agents``)."""
        return len(self.agent_names)

    # ------------------------------------------------------------------ specs
    def _make_specs(self) -> None:
        E, dev, env = self.num_envs, self.device, self._env
        obs, act, rew, done = {}, {}, {}, {}
        for g, s in self._scenario_group.items():
            spec = env.groups[s]
            n = spec.n_agents
            obs[g] = Composite(observation=Unbounded(shape=(E, n, spec.obs_dim), dtype=torch.float32, device=dev),
                               shape=(E, n), device=dev)
            space = spec.action_space
            if self._masked:
                obs[g]["action_mask"] = Categorical(n=2, shape=(E, n, int(space.n)), dtype=torch.bool, device=dev)
            if isinstance(space, gymnasium.spaces.Discrete):
                if self.categorical_actions:
                    a = Categorical(n=int(space.n), shape=(E, n), dtype=torch.int64, device=dev)
                else:
                    a = OneHot(n=int(space.n), shape=(E, n, int(space.n)), dtype=torch.int64, device=dev)
            elif isinstance(space, gymnasium.spaces.MultiDiscrete):
                nvec = [int(x) for x in space.nvec.reshape(-1)]
                if self.categorical_actions:
                    a = MultiCategorical(nvec=torch.tensor(nvec, device=dev).expand(E, n, len(nvec)).clone(),
                                         shape=(E, n, len(nvec)), dtype=torch.int64, device=dev)
                else:
                    a = MultiOneHot(nvec=nvec, shape=(E, n, sum(nvec)), dtype=torch.int64, device=dev)
            elif isinstance(space, gymnasium.spaces.Box):
                a = Bounded(low=torch.as_tensor(space.low, device=dev).expand(E, n, *space.shape),
                            high=torch.as_tensor(space.high, device=dev).expand(E, n, *space.shape),
                            shape=(E, n, *space.shape), dtype=torch.float32, device=dev)
            else:  # pragma: no cover - every scenario uses Discrete or Box
                raise TypeError(f"TorchRLEnv: unsupported action space {space} for group {g!r}")
            act[g] = Composite(action=a, shape=(E, n), device=dev)
            rew[g] = Composite(reward=Unbounded(shape=(E, n, 1), dtype=env.torch_float, device=dev),
                               shape=(E, n), device=dev)
            done[g] = Composite({k: Categorical(n=2, shape=(E, n, 1), dtype=torch.bool, device=dev) for k in _FLAGS},
                                shape=(E, n), device=dev)
        self.full_observation_spec = Composite(
            **obs, state=Unbounded(shape=(E, env.state_dim), dtype=torch.float32, device=dev),
            shape=(E,), device=dev)
        self.full_action_spec = Composite(**act, shape=(E,), device=dev)
        self.full_reward_spec = Composite(**rew, shape=(E,), device=dev)
        self.full_done_spec = Composite(
            **done, **{k: Categorical(n=2, shape=(E, 1), dtype=torch.bool, device=dev) for k in _FLAGS},
            shape=(E,), device=dev)

    # ------------------------------------------------------------------ EnvBase
    def _set_seed(self, seed: int | None) -> None:
        self._pending_seed = v.check_seed("seed", seed)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs) -> TensorDictBase:
        self._check_open("reset")
        mask = self._reset_mask(tensordict)
        seed, self._pending_seed = self._pending_seed, None
        restarted = self._restarted
        if restarted is not None:
            # SAME_STEP: the worlds the env already restarted in its last step are not reset
            # again (their new episode is the one a DISABLED env's reset would draw now),
            # unless a seed is pending; those this reset does not ask for stay marked
            wanted = torch.ones_like(restarted) if mask is None else mask
            self._restarted = restarted & ~wanted
            if seed is None:
                started = restarted & wanted
                term, trunc = self._env.world_flags()  # cleared as env.reset(mask=started) would
                term.masked_fill_(started, False)
                trunc.masked_fill_(started, False)
                mask = wanted & ~restarted
                if not bool(mask.any()):
                    return self._output(self._env.observations(), reward=None, masks=self._current_masks())
        if mask is None or bool(mask.all()):
            obs = self._env.reset(seed=seed)
        else:
            obs = self._env.reset(seed=seed, mask=mask)
        return self._output(obs, reward=None, masks=self._current_masks())

    def step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """``EnvBase.step`` after checking the argument's type and batch size (TorchRL's own
        errors for these are an ``AttributeError`` and a message that names no argument)."""
        if not isinstance(tensordict, TensorDictBase):
            raise TypeError(f"tensordict: expected a TensorDict with batch_size {list(self.batch_size)}, "
                            f"got {type(tensordict).__name__}")
        if tensordict.batch_size != self.batch_size:
            raise ValueError(f"tensordict: expected batch_size {list(self.batch_size)} (num_envs), "
                             f"got {list(tensordict.batch_size)}")
        return super().step(tensordict)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        self._check_open("step")
        actions = {s: self._action(tensordict, g) for g, s in self._scenario_group.items()}
        if self.strict_action_mask and self._masked:
            mask = self._env.action_mask()
            for g, s in self._scenario_group.items():
                agents = self.group_map[g]
                check_available(actions[s], mask[s],
                                lambda e, k, g=g, agents=agents: f"tensordict[{(g, 'action')!r}] "
                                                                  f"(agent {agents[k]!r}, world {e})")
        # every value was checked (_action), so the batched env takes its trusted path
        obs, rew, _, _, info = self._env.step(actions, trusted=True)
        masks = info["action_mask"] if self._masked else None
        if self._mode == AutoresetMode.SAME_STEP:
            # a finished world was restarted by this step: report its final observation (a
            # select, not a branch, so no host synchronization on a GPU) and its final mask
            restarted = info["_final_obs"].clone()
            self._restarted = restarted
            final = info["final_obs"]
            obs = {s: torch.where(restarted.view(-1, *([1] * (obs[s].dim() - 1))), final[s], obs[s])
                   for s in self._env.groups}
            if self._masked:
                final_masks = info["final_action_mask"]
                masks = {s: torch.where(restarted.view(-1, 1, 1), final_masks[s], masks[s]) for s in masks}
        return self._output(obs, reward=rew, masks=masks)

    def _current_masks(self):
        """The batched env's action masks for its current observations (None without masks)."""
        return self._env.action_mask() if self._masked else None

    def _action(self, tensordict: TensorDictBase, g: str) -> torch.Tensor:
        """Group ``g``'s checked action from ``tensordict`` (errors name the tensordict key),
        one-hots turned into indices.  Nothing is written to the env here."""
        key = (g, "action")
        name = f"tensordict[{key!r}]"
        a = tensordict.get(key, None)
        if a is None:
            raise ValueError(f"{name}: missing; expected the action of group {g!r} (action keys: "
                             f"{list(self.action_keys)})")
        a = v.as_tensor(name, a, self.device)
        E, n = self.num_envs, len(self.group_map[g])
        space = self._env.groups[self._scenario_group[g]].action_space
        if isinstance(space, gymnasium.spaces.Box):
            v.check_shape(name, a, (E, n, *space.shape))
            v.check_box(name, a, float(space.low.min()), float(space.high.max()))
            return a
        nvec = [int(x) for x in space.nvec.reshape(-1)] if isinstance(space, gymnasium.spaces.MultiDiscrete) \
            else [int(space.n)]
        if self.categorical_actions:
            if isinstance(space, gymnasium.spaces.Discrete):
                v.check_shape(name, a, (E, n))
                v.check_discrete(name, a, nvec[0])
            else:
                v.check_shape(name, a, (E, n, len(nvec)))
                for d, k in enumerate(nvec):
                    v.check_discrete(f"{name}[..., {d}]", a[..., d], k)
            return a
        # one-hot (categorical_actions=False): one 1 per (concatenated) block, the rest 0; float
        # rows within 1e-3 of that pass (a straight-through rsample adds probs - probs.detach())
        v.check_shape(name, a, (E, n, sum(nvec)))
        if a.is_complex():
            raise TypeError(f"{name}: expected one-hot actions (int, bool or float 0/1), got {a.dtype}")
        a = a.byte() if a.dtype == torch.bool else a
        indices = []
        for d, (part, k) in enumerate(zip(a.split(nvec, dim=-1), nvec)):
            one = (part - 1).abs() <= 1e-3
            if not ((one | (part.abs() <= 1e-3)).all() and (one.sum(-1) == 1).all()):
                where = f"{name}[..., {sum(nvec[:d])}:{sum(nvec[:d + 1])}]" if len(nvec) > 1 else name
                raise ValueError(f"{where}: expected one-hot rows of width {k} (a single 1, the rest 0), "
                                 "got a row that is not one-hot")
            indices.append(one.byte().argmax(-1))
        return indices[0] if isinstance(space, gymnasium.spaces.Discrete) else torch.stack(indices, dim=-1)

    def _reset_mask(self, tensordict: TensorDictBase | None):
        """Worlds to reset from ``"_reset"`` / ``(g, "_reset")`` (any agent of a world); None: all."""
        if tensordict is None:
            return None
        mask = None
        root = tensordict.get("_reset", None)
        if root is not None:
            mask = root.reshape(self.num_envs, -1).any(-1)
        for g in self.group_map:
            part = tensordict.get((g, "_reset"), None)
            if part is not None:
                part = part.reshape(self.num_envs, -1).any(-1)
                mask = part if mask is None else mask | part
        return None if mask is None else mask.to(self.device)

    def _output(self, obs, reward, masks) -> TensorDictBase:
        env, E = self._env, self.num_envs
        term, trunc = env.world_flags()
        term, trunc = term.clone().unsqueeze(-1), trunc.clone().unsqueeze(-1)
        done = term | trunc
        # env.state(), unless the observations are final ones the env no longer holds (SAME_STEP)
        state = env.state() if obs is env.observations() else torch.cat(
            [obs[g].reshape(E, -1) for g in env.groups], dim=1)
        source = {"done": done, "terminated": term, "truncated": trunc, "state": state}
        for g, s in self._scenario_group.items():
            n = env.groups[s].n_agents
            group = {"observation": obs[s].clone(),
                     "done": done.unsqueeze(1).expand(E, n, 1).clone(),
                     "terminated": term.unsqueeze(1).expand(E, n, 1).clone(),
                     "truncated": trunc.unsqueeze(1).expand(E, n, 1).clone()}
            if reward is not None:
                group["reward"] = reward[s].unsqueeze(-1).clone()
            if masks is not None:
                group["action_mask"] = masks[s].clone()
                # TorchRL's convention: rand_action() / rollout() draw available actions only
                self.full_action_spec[g, "action"].update_mask(group["action_mask"].clone())
            source[g] = TensorDict(group, batch_size=(E, n), device=self.device)
        return TensorDict(source, batch_size=self.batch_size, device=self.device)

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Release the batched env (if this adapter built it); later steps and resets raise."""
        if getattr(self, "_owned", False) and not self._env.closed:
            self._env.close()
        self._closed = True
        super().close(raise_if_closed=raise_if_closed)

    def _check_open(self, call: str) -> None:
        if getattr(self, "_closed", False):
            raise RuntimeError(f"TorchRLEnv: {call}() called after close(); the environment is closed")


def _rename_groups(group_map, groups, agent_names) -> dict[str, str]:
    """``group_map`` (None, a ``MarlGroupMapType`` or ``{name: [agents]}``) as ``{name: scenario
    group}``; every entry must be one whole scenario group, agents in order."""
    if group_map is None:
        return {g: g for g in groups}
    if isinstance(group_map, MarlGroupMapType):
        group_map = group_map.get_group_map(agent_names)
    scenario = {tuple(spec.agents): g for g, spec in groups.items()}
    expected = ("a MarlGroupMapType or a dict {name: [agent names]} whose entries are the scenario's "
                f"groups {dict((g, list(spec.agents)) for g, spec in groups.items())} (any names, each "
                "group whole, its agents in order)")
    if not isinstance(group_map, dict) or not all(isinstance(k, str) for k in group_map):
        raise TypeError(f"group_map: expected {expected}, got {group_map!r}")
    renamed = {}
    for name, agents in group_map.items():
        s = scenario.get(tuple(agents) if isinstance(agents, (list, tuple)) else None)
        if s is None or s in renamed.values():
            raise ValueError(f"group_map: expected {expected}, got {group_map!r} (entry {name!r}: {agents!r})")
        renamed[name] = s
    if len(renamed) != len(groups):
        raise ValueError(f"group_map: expected {expected}, got {group_map!r} (groups missing)")
    return renamed
