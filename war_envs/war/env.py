"""``WarEnv``: WAR's decision schedule and hold semantics as a batched-env wrapper, for any trainer.

WAR lets a slow group decide less often than every step and *hold* its last action in between
(``war_envs.war.scheduler``).  A group's transition then runs from one of its decisions to the
next: a **macro-step** of ``k`` env steps whose reward is ``R = Σ_{i<k} γ^i r_{t0+i}`` and whose
bootstrap is ``γ^k V(s_{t0+k})`` (an SMDP).  ``WarEnv`` does exactly that bookkeeping around a
batched env, so a CleanRL-style loop, TorchRL or any other library can train with WAR's
schedule; ``war_train.rollout.collector.Collector`` (what every ``war_train`` mode collects with) is built on it.

    war = WarEnv(war_envs.make("Command-v0", num_envs=64), schedule)
    obs = war.reset(seed=0)
    while ...:
        decide = war.decides()                 # {group: bool [E]}: who needs a fresh action
        actions = {g: policy(g, obs[g]) for g in war.groups}   # rows of other worlds are ignored
        obs, rew, term, trunc, info = war.step(actions)
        for g, m in info["war"].items():      # m: a MacroStepInfo per group
            ...                                # m.ends: a macro-step ended: (R = m.reward, k = m.k)

**Per group and step** ``info["war"][group]`` reports (``[E]`` or ``[E, n]`` tensors):

- ``decided``: the worlds whose agents took a fresh action at this step (the others held);
- ``k``: steps of the macro-step in force, this one included (1 right after a decision);
- ``reward``: ``Σ_{i<k} γ^i r`` accumulated since the group's last decision, this step included;
- ``version``: the behaviour-policy version stamped at the decision (``set_version``);
- ``start``: the wrapper's global step of that decision;
- ``ends``: the macro-step is over after this step — the episode ended (``terminated`` or
  ``truncated``; with a truncation, bootstrap from ``info["final_obs"]``) or the group decides
  again at the next step.  Where ``ends``: the SMDP transition is (obs at the decision, the
  held action, ``reward``, ``k``, next obs), bootstrapped with ``γ^k V(next)`` unless terminated.

**Rules.**  A world must decide when its group has no action in force (the first step, after an
episode ended, or after ``release``); where the schedule says so it decides too
(``Schedule.decides_at`` on each world's own step counter, 0 at every episode start).  The env
must autoreset in the same step (``AutoresetMode.SAME_STEP``), so that an episode's first
observation is the one ``step`` returns.  Actions are validated by the env as usual (the held
actions of a group are one tensor of the group's action shape).  Same seed, same schedule and
same actions give the same transitions.
"""

from __future__ import annotations

import dataclasses
import math
import time

import torch

from war_envs.core import validation as v
from war_envs.war.scheduler import Schedule, plan, with_episode_starts

__all__ = ["WarEnv", "MacroStepInfo", "Selection", "every_step_schedule", "action_layout"]


def every_step_schedule(groups) -> Schedule:
    """Every group decides at every step (lock-step MAPPO)."""
    return Schedule(interval={g: 1.0 for g in groups}, staggered={g: True for g in groups},
                    quota={g: 0 for g in groups})


@dataclasses.dataclass
class MacroStepInfo:
    """One group's macro-step bookkeeping after a step (see the module docstring)."""

    decided: torch.Tensor   # [E] bool
    k: torch.Tensor         # [E] int64
    reward: torch.Tensor    # [E, n] float32
    version: torch.Tensor   # [E] int64
    start: torch.Tensor     # [E] int64
    ends: torch.Tensor      # [E] bool


class Selection:
    """Worlds of a batch to write: ``Selection(mask)`` (bool ``[E]``), ``Selection.every(E)``.

    ``rows``: how the values written are laid out — ``"selected"`` (one row per selected world,
    in world order: a policy called on those worlds only) or ``"all"`` (``E`` rows, those of the
    other worlds ignored: a policy called on every world).  ``put`` writes either; with ``"all"``
    rows it is a ``torch.where`` (no boolean indexing, no host read: what a CUDA rollout needs),
    with ``"selected"`` rows an indexed write.  Both write the same values."""

    def __init__(self, mask: torch.Tensor | None, rows: str = "selected", every: bool = False) -> None:
        self.mask, self.rows, self.every = mask, rows, every

    @classmethod
    def every_world(cls, E: int, device) -> "Selection":
        return cls(torch.ones(E, dtype=torch.bool, device=device), "all", every=True)

    def _where(self, dst: torch.Tensor) -> torch.Tensor:
        return self.mask.view(-1, *([1] * (dst.dim() - 1)))

    def put(self, dst: torch.Tensor, src) -> None:
        """``dst[selected] = src`` (``src``: rows as ``self.rows`` says, or a scalar)."""
        scalar = not isinstance(src, torch.Tensor) or src.dim() == 0
        if self.every and scalar:
            dst.fill_(src)
        elif self.every:
            dst.copy_(src)
        elif scalar:
            dst.masked_fill_(self._where(dst), src)
        elif self.rows == "selected":
            dst[self.mask] = src
        else:
            dst.copy_(torch.where(self._where(dst), src, dst))

    def put_from(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        """``dst[selected] = src[selected]`` (``src``: ``E`` rows)."""
        if self.every:
            dst.copy_(src)
        elif self.rows == "selected":
            dst[self.mask] = src[self.mask]
        else:
            dst.copy_(torch.where(self._where(dst), src, dst))


def _selection(worlds) -> Selection:
    """``worlds`` (a ``Selection``, a bool mask ``[E]`` with selected-world rows, or ``slice(None)``)."""
    if isinstance(worlds, Selection):
        return worlds
    if isinstance(worlds, slice):
        if worlds != slice(None):
            raise ValueError(f"worlds: expected a bool mask, slice(None) or a Selection, got {worlds!r}")
        return Selection(None, "all", every=True)
    return Selection(worlds, "selected")


class _Macro:
    """The macro-step each world of one group is in."""

    def __init__(self, E: int, n: int, action_shape: tuple, action_dtype, device) -> None:
        self.active = torch.zeros(E, dtype=torch.bool, device=device)
        self.held = torch.zeros((E, n, *action_shape), dtype=action_dtype, device=device)
        self.reward = torch.zeros(E, n, dtype=torch.float32, device=device)
        self.gpow = torch.ones(E, 1, dtype=torch.float32, device=device)  # γ^k
        self.k = torch.zeros(E, dtype=torch.long, device=device)
        self.version = torch.zeros(E, dtype=torch.long, device=device)
        self.start = torch.zeros(E, dtype=torch.long, device=device)


class WarEnv:
    """WAR's decision schedule and hold semantics over a batched env (see the module docstring).

    ``env``: a ``war_envs`` batched env with ``autoreset_mode=SAME_STEP``.  ``schedule``: when
    each group decides (default: every group at every step; ``WarEnv.from_costs`` plans one from
    per-group costs).  ``gamma``: the discount of the accumulated macro-step reward.
    ``trusted``: step the env through its trusted path (see the attribute; a trainer sampling from
    the spaces and masks sets it; held actions are not re-validated there).
    """

    def __init__(self, env, schedule: Schedule | None = None, *, gamma: float = 0.99, trusted: bool = False) -> None:
        mode = getattr(env, "autoreset_mode", None)
        if mode is None or mode.name != "SAME_STEP":
            raise ValueError(f"env: WAR needs a batched env with SAME_STEP autoreset, got {getattr(mode, 'name', mode)}")
        self.env = env
        self.gamma = v.check_float("gamma", gamma, low=0.0, high=1.0)
        #: step the env through its trusted path (``env.step(..., trusted=True)``): for actions drawn
        #: from the action spaces (and masks) by construction, as a trainer's policies draw them; a
        #: held action that has become unavailable then has the env's own semantics (SMAX: JaxMARL's)
        #: where the validated path would refuse it
        self.trusted = v.check_bool("trusted", trusted)
        self.groups = dict(env.groups)
        self.num_envs = env.num_envs
        self.device = getattr(env, "torch_device", torch.device("cpu"))
        self.schedule = schedule if schedule is not None else every_step_schedule(self.groups)
        self.version = 0
        self.last_env_seconds = 0.0                               # the last env.step's wall time
        #: bool ``[E]``: the worlds the last step truncated (``env.world_flags()``)
        self.last_truncated = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        self.t = 0                                                # global step
        #: int64 ``[E]`` on the env's device: steps since each world's episode began
        self.ep_step = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        #: int64 ``[E]``: episodes each world has finished
        self.ep_id = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        #: check that every group has an action in force before a step (a host read; a CUDA rollout
        #: built on the wrapper, which decides where ``decides()`` says by construction, turns it off)
        self.host_checks = self.device.type == "cpu" or not self.trusted
        self._phases: dict = {}
        self.macro = {}
        for g, spec in self.groups.items():
            shape, dtype = action_layout(spec.action_space)
            self.macro[g] = _Macro(self.num_envs, spec.n_agents, shape, dtype, self.device)

    @classmethod
    def from_costs(cls, env, costs: dict, *, window_steps: int, fragment_length: int, floor: int = 1,
                   alpha: float = 1.0, gamma: float = 0.99) -> "WarEnv":
        """A ``WarEnv`` whose schedule is planned from per-group costs (``CostProfile``,
        ``CostModel`` or per-decision seconds; ``war_envs.war.plan``), every episode starting
        with a decision (``with_episode_starts`` on the env's episode length)."""
        n_agents = {g: s.n_agents for g, s in env.groups.items()}
        schedule = plan(costs, n_agents, num_envs=env.num_envs, window_steps=window_steps,
                        fragment_length=fragment_length, floor=floor, alpha=alpha)
        length = getattr(env, env.episode_length_kwarg, None)
        return cls(env, with_episode_starts(schedule, length), gamma=gamma)

    # -------------------------------------------------------------- schedule
    @property
    def schedule(self) -> Schedule:
        return self._schedule

    @schedule.setter
    def schedule(self, schedule: Schedule) -> None:
        if not isinstance(schedule, Schedule):
            raise TypeError(f"schedule: expected a war_envs.war.Schedule, got {type(schedule).__name__}")
        if set(schedule.interval) != set(self.groups):
            raise ValueError(f"schedule: expected intervals for groups {sorted(self.groups)}, got "
                             f"{sorted(schedule.interval)}")
        self._schedule = schedule

    def set_version(self, version: int) -> None:
        """The behaviour-policy version stamped on the decisions taken from now on."""
        self.version = v.check_int("version", version, minimum=0)

    def schedule_says(self, group: str) -> torch.Tensor:
        """Bool ``[E]``: worlds where the schedule makes ``group`` decide at the next step
        (``Schedule.decides_at`` on the device: the same float64 arithmetic)."""
        k = self._schedule.interval[group]
        if k <= 1.0:
            return torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        if not math.isfinite(k):
            return self.ep_step == 0
        key = (group, k, self._schedule.staggered[group])
        phase = self._phases.get(key)
        if phase is None:
            phase = (torch.arange(self.num_envs, dtype=torch.float64, device=self.device) * (k / self.num_envs)
                     if self._schedule.staggered[group] else torch.zeros(self.num_envs, dtype=torch.float64,
                                                                          device=self.device))
            self._phases = {key: phase, **{q: p for q, p in self._phases.items() if q[0] != group}}
        x = self.ep_step.to(torch.float64) + phase
        return (torch.floor(x / k) != torch.floor((x - 1) / k)) | (self.ep_step == 0)

    def decides(self, group: str | None = None):
        """Bool ``[E]`` for ``group`` (or a dict over every group): worlds where it takes a fresh
        action at the next step (no action in force, or the schedule says so)."""
        if group is None:
            return {g: self.decides(g) for g in self.groups}
        return ~self._macro(group).active | self.schedule_says(group)

    def _macro(self, group: str) -> _Macro:
        if group not in self.macro:
            raise KeyError(f"group: unknown {group!r}; groups: {list(self.groups)}")
        return self.macro[group]

    # -------------------------------------------------------------- episodes
    def reset(self, seed=None) -> dict[str, torch.Tensor]:
        """Reset every world; no group has an action in force afterwards."""
        obs = self.env.reset(seed=seed) if seed is not None else self.env.reset()
        for m in self.macro.values():
            m.active[:] = False
        self.ep_step.zero_()
        return obs

    def decide(self, group: str, worlds, actions: torch.Tensor) -> None:
        """``group`` takes fresh ``actions`` in ``worlds``: a bool ``[E]`` mask (``actions``
        ``[w, n, ...]``, one row per selected world), ``slice(None)`` for all, or a ``Selection``
        (its ``rows``): a new macro-step starts there at the next env step."""
        m, sel = self._macro(group), _selection(worlds)
        sel.put(m.held, actions)
        sel.put(m.reward, 0.0)
        sel.put(m.gpow, 1.0)
        sel.put(m.k, 0)
        sel.put(m.version, self.version)
        sel.put(m.start, self.t)
        sel.put(m.active, True)

    def release(self, group: str, worlds) -> None:
        """End ``group``'s macro-steps in ``worlds`` (a bool mask, ``slice(None)`` or a
        ``Selection``) now: it decides there at the next step (a trainer closing a window at its
        boundary)."""
        _selection(worlds).put(self._macro(group).active, False)

    def advance(self):
        """One env step with every group's held actions; accumulate the macro-step rewards; end
        the macro-steps of finished episodes.  Returns the env's ``(obs, rew, term, trunc, info)``
        and the finished worlds ``done [E]``."""
        for g, m in self.macro.items():
            if self.host_checks and not bool(m.active.all()):
                missing = (~m.active).nonzero().flatten().tolist()
                raise RuntimeError(f"advance: group {g!r} has no action in force in worlds {missing[:8]}"
                                   f"{' ...' if len(missing) > 8 else ''}; call decide() there first")
        obs, rew, term, trunc, info, done = self.advance_every({g: m.held for g, m in self.macro.items()})
        for g, m in self.macro.items():
            m.reward += m.gpow * rew[g]
            m.gpow *= self.gamma
            m.k += 1
        for m in self.macro.values():
            m.active &= ~done
        return obs, rew, term, trunc, info, done

    def advance_every(self, actions: dict[str, torch.Tensor]):
        """One env step in which every group decides in every world (the every-step schedule:
        lock-step): ``actions[group]`` go to the env as they are and no macro-step is held or
        accounted (each would be one step long; nothing is in force afterwards).  The episode
        clocks, the global step and ``last_truncated`` advance as ``advance``'s; returns the same."""
        t0 = time.perf_counter()
        obs, rew, term, trunc, info = self.env.step(actions, trusted=self.trusted)
        self.last_env_seconds = time.perf_counter() - t0
        term_w, trunc_w = (f.clone() for f in self.env.world_flags())   # (agents may leave before the episode ends)
        self.last_truncated = trunc_w
        done = term_w | trunc_w
        self.ep_step = torch.where(done, 0, self.ep_step + 1)
        self.ep_id += done
        self.t += 1
        return obs, rew, term, trunc, info, done

    def step(self, actions: dict[str, torch.Tensor]):
        """Decide where each group must (``decides()``), hold elsewhere, step every world.

        ``actions[group]``: ``[E, n, ...]``, read only in the deciding worlds.  Returns the env's
        ``(obs, rewards, terminated, truncated, info)`` with ``info["war"][group]`` a
        ``MacroStepInfo``."""
        if set(actions) != set(self.groups):
            raise KeyError(f"actions: expected groups {sorted(self.groups)}, got {sorted(actions)}")
        decided = {}
        for g, spec in self.groups.items():
            a = torch.as_tensor(actions[g], device=self.device)
            if a.shape[:2] != (self.num_envs, spec.n_agents):
                raise ValueError(f"actions[{g!r}]: expected shape ({self.num_envs}, {spec.n_agents}, ...), "
                                 f"got {tuple(a.shape)}")
            dec = self.decides(g)
            decided[g] = dec
            if bool(dec.all()):
                self.decide(g, slice(None), a)
            elif bool(dec.any()):
                self.decide(g, dec, a[dec])
        obs, rew, term, trunc, info, done = self.advance()
        info = dict(info)
        info["war"] = {g: MacroStepInfo(decided=decided[g], k=m.k.clone(), reward=m.reward.clone(),
                                        version=m.version.clone(), start=m.start.clone(),
                                        ends=done | self.decides(g))
                       for g, m in self.macro.items()}
        return obs, rew, term, trunc, info

    # -------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """The bookkeeping between two steps: global step ``t``, behaviour ``version``, each
        world's episode step and number (``ep_step``/``ep_id``, ``[E]`` int64) and each group's
        macro-step in force (``macro[group]``: ``active``, ``held``, ``reward``, ``gpow`` = γ^k,
        ``k``, ``version``, ``start``).  CPU tensors.  The wrapped env's worlds are not part of it
        (``env.get_state()``), nor is the schedule (its owner sets it)."""
        return {"t": self.t, "version": self.version, "ep_step": self.ep_step.cpu().clone(),
                "ep_id": self.ep_id.cpu().clone(),
                "macro": {g: {name: t.cpu().clone() for name, t in vars(m).items()} for g, m in self.macro.items()}}

    def load_state_dict(self, state: dict) -> None:
        """Restore ``state_dict()``; groups, shapes and dtypes are checked before anything is
        written (``ValueError`` naming the entry)."""
        if set(state["macro"]) != set(self.groups):
            raise ValueError(f"state: expected macro-steps of groups {sorted(self.groups)}, "
                             f"got {sorted(state['macro'])}")
        steps = {name: v.check_like(f"state[{name!r}]", state[name], getattr(self, name))
                 for name in ("ep_step", "ep_id")}
        macro = {g: {name: v.check_like(f"state['macro'][{g!r}][{name!r}]", state["macro"][g][name], t)
                     for name, t in vars(m).items()} for g, m in self.macro.items()}
        self.t = v.check_int("t", state["t"], minimum=0)
        self.version = v.check_int("version", state["version"], minimum=0)
        for name, t in steps.items():
            getattr(self, name).copy_(t)
        for g, m in self.macro.items():
            for name, t in macro[g].items():
                getattr(m, name).copy_(t)

    def close(self) -> None:
        self.env.close()


def action_layout(space) -> tuple[tuple, torch.dtype]:
    """Per-agent action shape and dtype of a Gymnasium space (``Discrete``: scalar int64)."""
    if type(space).__name__ == "Discrete":
        return (), torch.long
    if type(space).__name__ == "MultiDiscrete":
        return tuple(space.shape), torch.long
    if type(space).__name__ == "Box":
        return tuple(space.shape), torch.float32
    raise TypeError(f"env: WAR supports Discrete, MultiDiscrete and Box action spaces, got {space}")
