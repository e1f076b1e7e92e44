"""TorchRL: a batched war-envs scenario as an ``EnvBase``, in VMAS's layout (so TorchRL's
multi-agent tutorials, ``SyncDataCollector`` and BenchMARL consume it unchanged).

```python
from torchrl.envs.utils import check_env_specs
from war_train.adapters.torchrl import TorchRLEnv, VmasEnv

env = TorchRLEnv("Spread-v0", num_envs=64, seed=0)
check_env_specs(env)
td = env.rollout(25)          # TensorDict, batch_size [64, 25]
td["agent", "observation"]    # float32 [64, 25, 3, 18]

# VMAS's scenarios: TorchRL's VmasEnv line with only the import changed
env = VmasEnv("navigation", num_envs=64, continuous_actions=True, max_steps=100, seed=0, n_agents=3)
td = env.rollout(100)         # exactly torchrl.envs.libs.vmas.VmasEnv's keys, specs and shapes
```

Two layouts (``layout=``): ``"vmas"``, exactly TorchRL's ``VmasEnv``, the default for the VMAS
family (``war_envs.scenarios.vmas``: Navigation-v0 ...); ``"war"``, VMAS's keys plus a real
``truncated`` and a ``state``, the default (and only choice) for every other scenario.
``TorchRLEnv("Navigation-v0", layout="war")`` gives a VMAS scenario the ``"war"`` layout.

**``layout="vmas"``** (``E`` worlds, tensordict groups ``g`` of ``n_g`` agents) is what
``torchrl.envs.libs.vmas.VmasEnv`` builds for the same VMAS scenario, spec for spec (classes,
shapes, dtypes, bounds, devices; the same in torchrl 0.11 and 0.14):

| key | spec | |
|---|---|---|
| ``(g, "observation")`` | ``Unbounded [E, n_g, obs_dim]`` float32 | |
| ``(g, "action")`` | ``Bounded [E, n_g, 2]`` float32, low/high ``±u_range`` (continuous); ``Categorical(9) [E, n_g]`` int64 (``categorical_actions=True``) or ``OneHot(9) [E, n_g, 9]`` int64 | |
| ``(g, "reward")`` | ``Unbounded [E, n_g, 1]``, torch's default dtype (float32) | |
| ``(g, "info", key)`` | ``Unbounded [E, n_g, 1]`` float32 (``[E, n_g, k]`` for a ``k``-vector) | the scenario's ``per_agent_metrics``: VMAS's ``info()`` entries |
| ``"done"``, ``"terminated"`` | ``Categorical(2) [E, 1]`` bool | both ``terminated | truncated`` |

- **Groups**: ``group_map=None`` is ``VmasEnv``'s default (agents named ``<name>_<int>`` grouped
  by ``<name>``, else all in one group; a lone ``"agent"`` group is called ``"agents"``:
  Navigation's ``"agents"``); a ``MarlGroupMapType`` (``ALL_IN_ONE_GROUP``,
  ``ONE_GROUP_PER_AGENT``) or a dict ``{name: [agent names]}`` regroups agents freely, as
  ``VmasEnv``'s does (the agents of one group must share their observation size and action
  space: ``VmasEnv``'s heterogeneous lazy-stacked groups are not offered, ``ValueError``).
- **No truncation key**, as ``VmasEnv``: the time limit (``max_steps``) is reported as
  ``terminated`` (and ``done``); no ``state`` and no per-group done keys.  Attributes as
  ``VmasEnv``'s: ``group_map``, ``agent_names``, ``agent_names_to_indices_map``, ``n_agents``,
  ``num_envs``, ``continuous_actions``, ``categorical_actions``, ``het_specs`` (False),
  ``het_specs_map``; built with ``allow_done_after_reset=True`` as ``VmasEnv`` is.
- **Resets**: ``VmasEnv``'s ``"_reset"`` ``[E, 1]`` mask resets those worlds (here in one masked
  launch).  After a reset the ``info`` entries hold what the scenario last wrote (the finished
  episode's last step; zeros before the first step), which is what VMAS's ``info()`` returns
  there too for scenarios that set their info in ``reward()`` (Navigation).  Two differences
  remain: VMAS evaluates ``done()`` on the fresh start (``done`` at reset is then ``True`` only
  for a start that is already solved); here ``done`` is ``False`` after every reset.
  ``set_seed(s)`` seeds the next reset (world ``w`` gets ``s + w``), where VMAS seeds torch's
  global generator.
- ``render(mode="rgb_array", env_index=0)``: world ``env_index``'s picture (VMAS's call,
  headless; BenchMARL's evaluation videos call it).
- ``VmasEnv(scenario, *, num_envs, device=None, continuous_actions=True, max_steps=None,
  categorical_actions=True, seed=None, group_map=None, scenario_kwargs=None, **kwargs)`` takes
  ``torchrl.envs.libs.vmas.VmasEnv``'s arguments (``scenario`` a VMAS name such as
  ``"navigation"``, or a registered id): a ``VmasEnv(...)`` line needs only its import changed.

**``layout="war"``** (every scenario; the groups are the scenario's):

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
- Per-agent done keys carry the world's flags (all agents of a world end together, as in
  VMAS): an agent that leaves early (Tag's tagged runners) keeps stepping with the zero
  observations and rewards the scenario gives it until its world ends.

Both layouts:

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
- **Bad input**: ``step`` checks each ``(g, "action")`` (present, shape, dtype, device, range,
  NaN/inf — any finite value where the scenario clamps actions, VMAS's ``clamp_actions``;
  one-hots must be one-hot) and the tensordict's type and batch size, raising a
  ``ValueError`` / ``TypeError`` that names the key, before anything reaches the worlds.  After
  ``close()`` ``step`` and ``reset`` raise ``RuntimeError`` (see ``docs/errors.md``).
"""

from __future__ import annotations

import difflib

import gymnasium
import torch

from war_envs._extras import needs_extra

with needs_extra("torchrl", "the TorchRL adapter (war_train.adapters.torchrl)"):
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Bounded, Categorical, Composite, MultiCategorical, MultiOneHot, OneHot, Unbounded
    from torchrl.envs import EnvBase
    from torchrl.envs.libs.vmas import VmasWrapper
    from torchrl.envs.utils import MarlGroupMapType, check_marl_grouping

from war_envs.core import validation as v
from war_envs.core.batched_env import AutoresetMode, BatchedEnv
from war_envs.frontends.action_masks import check_available, check_strict
from war_envs.frontends.agents_as_envs import resolve_env

__all__ = ["LAYOUTS", "TorchRLEnv", "VmasEnv", "is_vmas_family", "vmas_scenarios"]

_FLAGS = ("done", "terminated", "truncated")
#: ``layout=`` values: TorchRL's ``VmasEnv`` exactly (VMAS family only), or war-envs' own
LAYOUTS = ("vmas", "war")


def _vmas_name(obj) -> str | None:
    """The VMAS scenario name a scenario (class or instance) of the VMAS family declares
    (``vmas_scenario``, e.g. ``"navigation"``), else None."""
    name = getattr(obj if isinstance(obj, type) else type(obj), "vmas_scenario", None)
    return name if isinstance(name, str) and name else None


def is_vmas_family(batched) -> bool:
    """Whether ``batched`` is a scenario of the VMAS family: it declares the VMAS scenario it
    reproduces (``vmas_scenario``)."""
    return _vmas_name(batched) is not None


class TorchRLEnv(EnvBase):
    """``TorchRLEnv(env_or_id, *, categorical_actions=True, group_map=None, strict_action_mask=False,
    layout=None, **make_kwargs)``.

    ``env_or_id``: a scenario id (``make_kwargs`` go to ``war_envs.make``: ``num_envs``,
    ``seed``, ``device``, ``precision``, scenario arguments; autoreset DISABLED) or a
    ``BatchedEnv`` built with any ``autoreset_mode`` (``war_envs.make(id, num_envs=E)``'s
    default ``SAME_STEP`` included): its mode is left unchanged and the adapter does TorchRL's
    resets itself, with the same results as an id-built adapter (see the module docstring).

    ``layout``: ``"vmas"`` (TorchRL's ``VmasEnv`` exactly; VMAS-family scenarios only, their
    default) or ``"war"`` (the default for every other scenario); ``None`` picks the default.

    ``group_map`` names the tensordict groups, as ``VmasEnv``'s argument does.  ``"vmas"``:
    ``None`` is ``VmasEnv``'s default grouping, a ``MarlGroupMapType`` or ``{name: [agent
    names]}`` dict any grouping of agents that share observation size and action space.
    ``"war"``: ``None`` keeps the scenario's group names (Spread-v0: ``"agent"``); a
    ``MarlGroupMapType`` or a dict renames them, each entry holding one whole scenario group
    (its agents in order; agents are never regrouped across the scenario's groups:
    ``ValueError``), ``MarlGroupMapType.ALL_IN_ONE_GROUP`` giving a one-group scenario VMAS's
    ``"agents"``.  ``n_agents`` is the number of agents in all groups (VMAS's ``env.n_agents``).
    """

    batch_locked = True

    def __init__(self, env_or_id, *, categorical_actions: bool = True, group_map=None,
                 strict_action_mask: bool = False, layout: str | None = None, _device_unset: bool = False,
                 **make_kwargs) -> None:
        strict = check_strict(strict_action_mask)
        if layout is not None:
            v.check_choice("layout", layout, LAYOUTS)
        categorical_actions = v.check_bool("categorical_actions", categorical_actions)
        # an existing env keeps its own autoreset mode (resolve_env then only checks types and
        # make kwargs); one built here runs with autoreset DISABLED
        mode = env_or_id.autoreset_mode if isinstance(env_or_id, BatchedEnv) else AutoresetMode.DISABLED
        batched, owned = resolve_env(env_or_id, make_kwargs, autoreset_mode=mode, who="TorchRLEnv")
        vmas_family = is_vmas_family(batched)
        if layout is None:
            layout = "vmas" if vmas_family else "war"
        elif layout == "vmas" and not vmas_family:
            if owned:
                batched.close()
            raise ValueError(f"layout: 'vmas' (TorchRL's VmasEnv layout) needs a scenario of the VMAS family "
                             f"(war_envs.scenarios.vmas), got {type(batched).__name__}; use layout='war'")
        self.layout = layout
        self._vmas = layout == "vmas"
        self._mode = batched.autoreset_mode
        # SAME_STEP: worlds the env restarted in the last step and TorchRL has not reset since
        self._restarted: torch.Tensor | None = None
        # VmasEnv is built with allow_done_after_reset=True (VMAS evaluates done() at reset)
        # _device_unset (VmasEnv without a device): TorchRL's device stays None as VmasEnv's does
        # (its specs' and tensordicts' device then reads None); the worlds' device holds the data
        super().__init__(device=None if _device_unset else batched.torch_device,
                         batch_size=torch.Size([batched.num_envs]),
                         **({"allow_done_after_reset": True} if self._vmas else {}))
        self._env, self._owned, self._dev = batched, owned, batched.torch_device
        self.categorical_actions = categorical_actions
        self.strict_action_mask = strict
        self._masked = bool(batched.has_action_mask)
        self.agent_names = list(batched.agents)
        if self._vmas and getattr(type(batched), "vmas_agent_names_spaced", False):
            self.agent_names = [name.replace("_", " ") for name in self.agent_names]   # VMAS's "agent 0"
        self.num_envs = batched.num_envs
        self._pending_seed: int | None = None
        try:
            self._group_agents(group_map)
        except Exception:
            if owned:
                batched.close()
            raise
        if self._vmas:
            self.agent_names_to_indices_map = {a: i for i, a in enumerate(self.agent_names)}
            self.continuous_actions = bool(batched.continuous_actions)
            self.het_specs, self.het_specs_map = False, {g: False for g in self.group_map}
            self._make_vmas_specs()
        else:
            self._make_specs()

    @property
    def batched(self):
        """The underlying war-envs ``BatchedEnv``."""
        return self._env

    @property
    def n_agents(self) -> int:
        """Agents in all groups (VMAS's ``env.n_agents``)."""
        return len(self.agent_names)

    # ------------------------------------------------------------------ groups
    def _group_agents(self, group_map) -> None:
        """``self.group_map`` (tensordict group -> agent names) and how each tensordict group
        maps onto the scenario's groups: ``_whole[g]`` is the scenario group ``g`` is (all its
        agents, in order) or None, then ``_refs[g]`` lists ``(scenario group, index)`` per agent;
        ``_whole_s`` / ``_refs_s`` are the inverse (for actions)."""
        env = self._env
        owner = [(s, k) for s, spec in env.groups.items() for k in range(spec.n_agents)]
        if self._vmas:
            self.group_map = _vmas_group_map(group_map, self.agent_names)
        else:
            renamed = _rename_groups(group_map, env.groups, self.agent_names)
            self.group_map = {g: list(env.groups[s].agents) for g, s in renamed.items()}
        index = {a: i for i, a in enumerate(self.agent_names)}
        self._agent_index = {g: [index[a] for a in names] for g, names in self.group_map.items()}
        self._refs = {g: [owner[i] for i in ids] for g, ids in self._agent_index.items()}
        self._whole, self._space, self._obs_dim = {}, {}, {}
        for g, refs in self._refs.items():
            s = refs[0][0]
            spec = env.groups[s]
            self._whole[g] = s if refs == [(s, k) for k in range(spec.n_agents)] else None
            spaces = {str(env.groups[r[0]].action_space) for r in refs}
            dims = {env.groups[r[0]].obs_dim for r in refs}
            if len(spaces) > 1 or len(dims) > 1:
                raise ValueError(f"group_map: the agents of group {g!r} ({self.group_map[g]}) must share one "
                                 f"observation size and action space (got observation sizes {sorted(dims)}, "
                                 f"action spaces {sorted(spaces)}); VmasEnv's heterogeneous (lazy-stacked) "
                                 "groups are not offered")
            self._space[g], self._obs_dim[g] = spec.action_space, spec.obs_dim
        position = {self._refs[g][p]: (g, p) for g in self._refs for p in range(len(self._refs[g]))}
        self._refs_s = {s: [position[(s, k)] for k in range(spec.n_agents)] for s, spec in env.groups.items()}
        self._whole_s = {s: next((g for g, w in self._whole.items() if w == s), None) for s in env.groups}
        self._agent_index_t = {g: torch.tensor(ids, device=self._dev) for g, ids in self._agent_index.items()}
        self._info_keys = tuple(type(env).per_agent_metrics) if self._vmas else ()

    def _gather(self, per_scenario_group: dict, g: str) -> torch.Tensor:
        """Group ``g``'s ``[E, n_g, ...]`` copy of per-scenario-group ``[E, n_s, ...]`` values."""
        s = self._whole[g]
        if s is not None:
            return per_scenario_group[s].clone()
        return torch.stack([per_scenario_group[s][:, k] for s, k in self._refs[g]], dim=1)

    def _scatter(self, per_group: dict) -> dict:
        """Per-tensordict-group ``[E, n_g, ...]`` values as the scenario's groups' ``[E, n_s, ...]``."""
        out = {}
        for s, g in self._whole_s.items():
            out[s] = per_group[g] if g is not None else torch.stack(
                [per_group[g][:, p] for g, p in self._refs_s[s]], dim=1)
        return out

    # ------------------------------------------------------------------ specs
    def _action_spec(self, space, shape: tuple[int, ...]):
        """The spec of ``space`` actions of shape ``shape + space's own``, in ``VmasEnv``'s
        classes and dtypes (``"war"`` uses the same ones)."""
        dev = self.device
        if isinstance(space, gymnasium.spaces.Discrete):
            n = int(space.n)
            if self.categorical_actions:
                return Categorical(n=n, shape=shape, dtype=torch.int64, device=dev)
            return OneHot(n=n, shape=(*shape, n), dtype=torch.int64, device=dev)
        if isinstance(space, gymnasium.spaces.MultiDiscrete):
            nvec = [int(x) for x in space.nvec.reshape(-1)]
            if self.categorical_actions:
                return MultiCategorical(nvec=torch.tensor(nvec, device=dev).expand(*shape, len(nvec)).clone(),
                                        shape=(*shape, len(nvec)), dtype=torch.int64, device=dev)
            return MultiOneHot(nvec=nvec, shape=(*shape, sum(nvec)), dtype=torch.int64, device=dev)
        if isinstance(space, gymnasium.spaces.Box):
            full = (*shape, *space.shape)
            return Bounded(low=torch.as_tensor(space.low, dtype=torch.float32, device=dev).expand(full).clone(),
                           high=torch.as_tensor(space.high, dtype=torch.float32, device=dev).expand(full).clone(),
                           shape=full, dtype=torch.float32, device=dev)
        raise TypeError(f"TorchRLEnv: unsupported action space {space}")  # pragma: no cover

    def _make_vmas_specs(self) -> None:
        """``VmasEnv``'s specs: per agent, then stacked into each group (so every spec, its
        class, shape, dtype, bounds and device, is what ``VmasEnv._make_specs`` builds), set
        unbatched (TorchRL adds the world dimension and ``terminated``)."""
        dev = self.device
        obs, act, rew = Composite(device=dev), Composite(device=dev), Composite(device=dev)
        info_shapes = {k: tuple(self._env._metrics[k].shape[2:]) or (1,) for k in self._info_keys}
        for g, names in self.group_map.items():
            n = len(names)
            act[g] = torch.stack([Composite({"action": self._action_spec(self._space[g], ())}) for _ in range(n)], 0)
            obs[g] = torch.stack([Composite({"observation": Unbounded(shape=(self._obs_dim[g],), device=dev,
                                                                      dtype=torch.float32)}) for _ in range(n)], 0)
            rew[g] = torch.stack([Composite({"reward": Unbounded(shape=(1,), device=dev)}) for _ in range(n)], 0)
            if info_shapes:
                obs[(g, "info")] = torch.stack([Composite({k: Unbounded(shape=shape, device=dev, dtype=torch.float32)
                                                           for k, shape in info_shapes.items()}).to(dev)
                                                for _ in range(n)], 0)
        self.full_action_spec_unbatched = act
        self.full_observation_spec_unbatched = obs
        self.full_reward_spec_unbatched = rew
        self.full_done_spec_unbatched = Composite(
            {"done": Categorical(n=2, shape=torch.Size((1,)), dtype=torch.bool, device=dev)})
        self._reward_dtype = rew[next(iter(self.group_map)), "reward"].dtype

    def _make_specs(self) -> None:
        E, dev, env = self.num_envs, self.device, self._env
        obs, act, rew, done = {}, {}, {}, {}
        for g in self.group_map:
            n, space = len(self.group_map[g]), self._space[g]
            obs[g] = Composite(observation=Unbounded(shape=(E, n, self._obs_dim[g]), dtype=torch.float32, device=dev),
                               shape=(E, n), device=dev)
            if self._masked:
                obs[g]["action_mask"] = Categorical(n=2, shape=(E, n, int(space.n)), dtype=torch.bool, device=dev)
            act[g] = Composite(action=self._action_spec(space, (E, n)), shape=(E, n), device=dev)
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
        actions = self._scatter({g: self._action(tensordict, g) for g in self.group_map})
        if self.strict_action_mask and self._masked:
            mask = self._env.action_mask()
            for s in self._env.groups:
                refs = self._refs_s[s]
                check_available(actions[s], mask[s],
                                lambda e, k, refs=refs: f"tensordict[{(refs[k][0], 'action')!r}] "
                                                        f"(agent {self.group_map[refs[k][0]][refs[k][1]]!r}, "
                                                        f"world {e})")
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
        a = v.as_tensor(name, a, self._dev)
        E, n = self.num_envs, len(self.group_map[g])
        space = self._space[g]
        if isinstance(space, gymnasium.spaces.Box):
            v.check_shape(name, a, (E, n, *space.shape))
            v.check_box(name, a, float(space.low.min()), float(space.high.max()), clipped=self._env.clips_actions)
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
        return None if mask is None else mask.to(self._dev)

    def _output(self, obs, reward, masks) -> TensorDictBase:
        env, E = self._env, self.num_envs
        term, trunc = env.world_flags()
        term, trunc = term.clone().unsqueeze(-1), trunc.clone().unsqueeze(-1)
        done = term | trunc
        if self._vmas:
            # VmasEnv: VMAS's one done flag (time limit included) as both done and terminated
            source = {"done": done, "terminated": done.clone()}
            metrics = env._metrics  # the info fields' views, holding the last step's values
            info = {k: metrics[k].to(torch.float32) for k in self._info_keys}
        else:
            # env.state(), unless the observations are final ones the env no longer holds (SAME_STEP)
            state = env.state() if obs is env.observations() else torch.cat(
                [obs[g].reshape(E, -1) for g in env.groups], dim=1)
            source = {"done": done, "terminated": term, "truncated": trunc, "state": state}
        for g, names in self.group_map.items():
            n = len(names)
            group = {"observation": self._gather(obs, g)}
            if not self._vmas:
                group.update({"done": done.unsqueeze(1).expand(E, n, 1).clone(),
                              "terminated": term.unsqueeze(1).expand(E, n, 1).clone(),
                              "truncated": trunc.unsqueeze(1).expand(E, n, 1).clone()})
            if reward is not None:
                r = self._gather(reward, g).unsqueeze(-1)
                group["reward"] = r.to(self._reward_dtype) if self._vmas else r
            if masks is not None:
                group["action_mask"] = self._gather(masks, g)
                # TorchRL's convention: rand_action() / rollout() draw available actions only
                self.full_action_spec[g, "action"].update_mask(group["action_mask"].clone())
            if self._info_keys:
                rows = self._agent_index_t[g]
                group["info"] = TensorDict(
                    {k: _per_agent_column(x.index_select(1, rows)) for k, x in info.items()},
                    batch_size=(E, n), device=self.device)
            source[g] = TensorDict(group, batch_size=(E, n), device=self.device)
        return TensorDict(source, batch_size=self.batch_size, device=self.device)

    def render(self, mode: str = "human", env_index: int = 0, agent_index_focus=None,
               visualize_when_rgb: bool = False, **kwargs):
        """VMAS's ``env.render`` (what ``VmasEnv`` forwards to), headless: ``mode="rgb_array"``
        gives world ``env_index``'s ``[700, 700, 3]`` uint8 picture (``**kwargs``:
        ``render_frame``'s ``width`` / ``height``).  ``mode="human"`` (a window) and VMAS's
        camera options (``agent_index_focus``, ``visualize_when_rgb``) are not offered
        (``ValueError``)."""
        self._check_open("render")
        if mode != "rgb_array":
            raise ValueError(f"mode: expected 'rgb_array' (war-envs renders headless, without a window), got {mode!r}")
        if agent_index_focus is not None:
            raise ValueError(f"agent_index_focus: expected None (the camera follows no agent here), "
                             f"got {agent_index_focus!r}")
        if visualize_when_rgb:
            raise ValueError("visualize_when_rgb: expected False (no window is opened)")
        world = v.check_int("env_index", env_index, minimum=0)
        if world >= self.num_envs:
            raise ValueError(f"env_index: expected 0..{self.num_envs - 1}, got {env_index}")
        return self._env.render_frame(world, **kwargs)

    def __repr__(self) -> str:
        if not self._vmas:
            return super().__repr__()
        return (f"{type(self).__name__}(num_envs={self.num_envs}, n_agents={self.n_agents}, "
                f"batch_size={self.batch_size}, device={self.device}) (scenario={self._env.env_id})")

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Release the batched env (if this adapter built it); later steps and resets raise."""
        if getattr(self, "_owned", False) and not self._env.closed:
            self._env.close()
        self._closed = True
        super().close(raise_if_closed=raise_if_closed)

    def _check_open(self, call: str) -> None:
        if getattr(self, "_closed", False):
            raise RuntimeError(f"TorchRLEnv: {call}() called after close(); the environment is closed")


def _per_agent_column(x: torch.Tensor) -> torch.Tensor:
    """A per-agent info entry ``[E, n]`` as ``VmasEnv`` has it, ``[E, n, 1]`` (vectors stay)."""
    return x.unsqueeze(-1) if x.dim() == 2 else x


def _vmas_group_map(group_map, agent_names) -> dict[str, list[str]]:
    """``VmasEnv``'s group map: ``None`` is its default grouping (TorchRL's own
    ``VmasWrapper._get_default_group_map``, so the names follow the installed torchrl), a
    ``MarlGroupMapType`` its premade map, a dict is checked as ``VmasEnv`` checks it."""
    if group_map is None:
        return VmasWrapper._get_default_group_map(None, list(agent_names))
    if isinstance(group_map, MarlGroupMapType):
        return group_map.get_group_map(list(agent_names))
    if not isinstance(group_map, dict) or not all(isinstance(k, str) and isinstance(a, (list, tuple))
                                                  for k, a in group_map.items()):
        raise TypeError(f"group_map: expected None, a MarlGroupMapType or a dict {{name: [agent names]}} over "
                        f"the agents {list(agent_names)}, got {group_map!r}")
    group_map = {k: list(a) for k, a in group_map.items()}
    try:
        check_marl_grouping(group_map, list(agent_names))
    except ValueError as err:
        raise ValueError(f"group_map: expected every agent of {list(agent_names)} in exactly one group, "
                         f"got {group_map!r} ({err})") from None
    return group_map


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


#: ``vmas.make_env`` arguments ``VmasEnv`` passes on that have no war-envs counterpart: accepted
#: at VMAS's default, refused otherwise (``from_pixels`` / ``pixels_only`` are ``VmasEnv``'s own)
_VMAS_ONLY = {"dict_spaces": False, "multidiscrete_actions": False, "grad_enabled": False,
              "terminated_truncated": False, "wrapper_kwargs": None, "from_pixels": False, "pixels_only": False}


def vmas_scenarios() -> dict[str, str]:
    """``{VMAS scenario name: registered id}`` for every registered scenario of the VMAS family
    (its ``vmas_scenario`` is the VMAS name), in registry order."""
    from war_envs import registry

    found = {}
    for env_id in registry.registered_ids():
        name = _vmas_name(registry.scenario_class(env_id))
        if name is not None:
            found.setdefault(name, env_id)
    return found


def _vmas_scenario_id(scenario) -> str:
    """The registered id of ``scenario`` (a VMAS name such as ``"navigation"``, or an id)."""
    if not isinstance(scenario, str):
        raise TypeError(f"scenario: expected a VMAS scenario name such as 'navigation' (war-envs builds its own "
                        f"worlds, so VMAS scenario objects are not taken), got {type(scenario).__name__}")
    ported = vmas_scenarios()
    if scenario in ported:
        return ported[scenario]
    if scenario in ported.values():
        return scenario
    try:
        import vmas

        known = set(vmas.scenarios) | set(vmas.mpe_scenarios) | set(vmas.debug_scenarios)
    except ImportError:  # VMAS is not needed here; it only tells the two errors apart
        known = set()
    listed = f"supported: {sorted(ported)} (or their ids {sorted(ported.values())})"
    if scenario in known:
        raise ValueError(f"scenario: VMAS's {scenario!r} has no war-envs port (yet); {listed}")
    close = difflib.get_close_matches(scenario, list(ported) + list(known), n=3)
    hint = f"; did you mean {close}?" if close else ""
    raise ValueError(f"scenario: unknown VMAS scenario {scenario!r}; {listed}{hint}")


class VmasEnv(TorchRLEnv):
    """``torchrl.envs.libs.vmas.VmasEnv``'s constructor over war-envs' VMAS scenarios:
    ``VmasEnv(scenario, *, num_envs, device=None, continuous_actions=True, max_steps=None,
    categorical_actions=True, seed=None, group_map=None, scenario_kwargs=None, **kwargs)``.

    The same arguments with the same defaults: ``scenario`` a VMAS name (``"navigation"``; a
    registered id such as ``"Navigation-v0"`` works too; one without a port raises a
    ``ValueError`` listing the supported ones), ``device`` (``None``: torch's default device),
    ``max_steps=None`` (no horizon, as ``vmas.make_env``), ``seed`` (``None``: drawn from torch's
    global generator, so ``torch.manual_seed`` makes a run repeat, as it does VMAS's starts),
    ``group_map``, and the
    scenario's keyword arguments in ``**kwargs`` and/or ``scenario_kwargs`` (``kwargs`` win, as
    in torchrl 0.14), VMAS's ``clamp_actions`` among them.  ``vmas.make_env``'s
    ``dict_spaces``, ``multidiscrete_actions``, ``grad_enabled``, ``terminated_truncated`` and
    ``VmasEnv``'s ``from_pixels`` / ``pixels_only`` are accepted at their defaults only.
    war-envs' own ``precision="float64"`` may be added.  The env is a ``TorchRLEnv`` in the
    ``"vmas"`` layout (see the module docstring); ``scenario_name`` is the VMAS name given.
    """

    def __init__(self, scenario, *, num_envs: int, continuous_actions: bool = True, max_steps: int | None = None,
                 categorical_actions: bool = True, seed: int | None = None, group_map=None,
                 scenario_kwargs: dict | None = None, device=None, **kwargs) -> None:
        env_id = _vmas_scenario_id(scenario)
        if scenario_kwargs is not None and not isinstance(scenario_kwargs, dict):
            raise TypeError(f"scenario_kwargs: expected a dict or None, got {type(scenario_kwargs).__name__}")
        kwargs = {**(scenario_kwargs or {}), **kwargs}
        for name, default in _VMAS_ONLY.items():
            if name in kwargs:
                value = kwargs.pop(name)
                if value != default:
                    raise ValueError(f"{name}: only VMAS's default {default!r} is supported by war-envs' VmasEnv, "
                                     f"got {value!r}")
        if seed is None:
            # VMAS unseeded draws its starts from torch's global generator (torch.manual_seed
            # makes a run repeat): the worlds' seed comes from that generator here
            seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        unset = device is None
        if unset:  # VmasEnv: VMAS runs on torch's default device, TorchRL's device stays None
            device = getattr(torch, "get_default_device", lambda: torch.device("cpu"))()
        super().__init__(env_id, layout="vmas", categorical_actions=categorical_actions, group_map=group_map,
                         _device_unset=unset, num_envs=num_envs, device=str(torch.device(device)), seed=seed,
                         continuous_actions=continuous_actions, max_steps=max_steps, **kwargs)
        self.scenario_name = scenario

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(num_envs={self.num_envs}, n_agents={self.n_agents}, "
                f"batch_size={self.batch_size}, device={self.device}) (scenario={self.scenario_name})")
