"""Planning worlds: a batched env of its own in which a search plays out copies of real worlds.

``PlanningWorlds(env, capacity)`` builds a second env of the real env's scenario with
``num_envs = capacity`` (``env`` a scenario id plus its keyword arguments, the real env's
``device`` among them, or a function that builds one).  ``load(real_env, worlds, copies)``
copies the state of real worlds ``worlds`` (``w`` of them) into the first ``w * copies`` planning
worlds, copy ``c`` of ``worlds[i]`` in row ``i * copies + c`` (``rows[i, c]``), through the
public state interface: ``real_env.get_state()`` (a copy of every real world's state: physics,
clock, episode counter, random stream) and ``planning_env.set_state(rows' state, worlds=...)``.
The real env is only read: its state, observations and flags are never written.  With
``redraw=None`` a copy replays its source exactly (same random stream, same schedule), so copies
given the same actions stay equal; with a generator, each copy's private future (what the world
drew in advance that no agent has seen: ``BatchedEnv.private_future`` and the stream key) is
re-drawn, as an honest planner needs.

**Episode ends.**  The planning env runs with autoreset ``DISABLED``: a finished planning world is
not reset into a new episode (whose random start would mean nothing to the search), and
``PlanningWorlds`` latches it: from the step that ends its episode on, ``step`` reports it
``done`` at every step, and its rewards after that step are 0 (the step that ends it keeps its
reward).  Its kernels keep running (the env steps every world), so its state after the end is
not meaningful; only ``done`` and the zero rewards are.  A real world loaded while its NEXT_STEP
reset is pending (``pending_reset``: its episode has ended) is done from the start; the rows
beyond ``w * copies`` are done as well (unused; step them with any valid action).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from gymnasium.vector import AutoresetMode

import war_envs
from war_envs.core.batched_env import BatchedEnv
from war_envs.core.validation import as_tensor, check_int

__all__ = ["PlanningWorlds"]


class PlanningWorlds:
    """A planning env for copies of real worlds (see the module docstring).

    ``PlanningWorlds(env, capacity, **env_kwargs)``: ``env`` is a scenario id (the env is then
    ``war_envs.make(env, num_envs=capacity, autoreset_mode=DISABLED, **env_kwargs)``; pass the
    real env's ``device``, ``precision`` and scenario arguments) or a function called as
    ``env(num_envs=capacity, autoreset_mode=AutoresetMode.DISABLED)`` that returns a
    ``BatchedEnv``.  ``capacity`` is the most planning worlds one ``load`` may fill.

    - ``load(real_env, worlds, copies, redraw=generator | None) -> rows [w, copies]``: copies of the real worlds, in
      the planning rows ``rows`` (int64, on the env's device).  Refused (``ValueError``) for
      another scenario, device or precision, more than ``capacity`` copies, or worlds out of
      range or repeated.
    - ``step(actions, trusted=False) -> (obs, reward, done)``: one step of every planning world
      with ``actions`` as ``BatchedEnv.step`` takes them (``capacity`` rows); ``obs`` the
      env's views ``{group: [capacity, n_g, d_g]}`` (the next step overwrites them), ``reward``
      ``{group: [capacity, n_g]}`` new tensors (0 once done), ``done`` bool ``[capacity]`` (a
      new tensor, latched).
    - ``done``: the latched flags (a copy); ``env``: the planning env (its ``get_state``,
      ``state()``, observations; a search model may also drive it itself with ``set_state`` and
      ``env.step``, and then tracks episode ends itself); ``close()``.
    """

    def __init__(self, env: str | Callable[..., BatchedEnv], capacity: int, **env_kwargs) -> None:
        self.capacity = check_int("capacity", capacity, minimum=1)
        disabled = AutoresetMode.DISABLED
        if isinstance(env, str):
            if "num_envs" in env_kwargs or "autoreset_mode" in env_kwargs:
                raise ValueError("env_kwargs: num_envs and autoreset_mode are PlanningWorlds' own "
                                 "(num_envs=capacity, autoreset DISABLED); leave them out")
            planning = war_envs.make(env, num_envs=self.capacity, autoreset_mode=disabled, **env_kwargs)
        elif callable(env):
            if env_kwargs:
                raise ValueError(f"env_kwargs: expected none with a function env, got {sorted(env_kwargs)}")
            planning = env(num_envs=self.capacity, autoreset_mode=disabled)
        else:
            raise TypeError(f"env: expected a scenario id or a function building a BatchedEnv, got "
                            f"{type(env).__name__}")
        if not isinstance(planning, BatchedEnv):
            raise TypeError(f"env: expected the function to return a BatchedEnv, got {type(planning).__name__}")
        if planning.num_envs != self.capacity or planning.autoreset_mode != disabled:
            raise ValueError(f"env: expected an env of num_envs={self.capacity} with autoreset DISABLED, got "
                             f"num_envs={planning.num_envs}, autoreset {planning.autoreset_mode.name}")
        self.env = planning
        self._done = torch.ones(self.capacity, dtype=torch.bool, device=planning.torch_device)
        self._loaded = False

    @property
    def device(self) -> torch.device:
        return self.env.torch_device

    @property
    def done(self) -> torch.Tensor:
        return self._done.clone()

    def load(self, real_env: BatchedEnv, worlds, copies: int, *, redraw: torch.Generator | None) -> torch.Tensor:
        """Copy real worlds ``worlds`` ``copies`` times each into the planning worlds; returns
        ``rows [w, copies]``.  ``real_env`` is only read (``get_state``).  ``redraw``: a
        generator on the env's device from which every copy's private future is re-drawn
        (``BatchedEnv.redraw_private_future``: the copies then do not know the world's future
        random draws, and copies of one world differ from one another); None keeps the
        originals' future (copies replay their world exactly: a planner given them *peeks*)."""
        self._check_real(real_env)
        copies = check_int("copies", copies, minimum=1)
        index = as_tensor("worlds", worlds, self.device)
        if index.dim() != 1 or index.numel() == 0 or index.is_floating_point() or index.dtype == torch.bool:
            raise ValueError(f"worlds: expected a non-empty 1-D integer index of real worlds, got dtype "
                             f"{index.dtype} with shape {tuple(index.shape)}")
        index = index.long()
        if int(index.min()) < 0 or int(index.max()) >= real_env.num_envs:
            raise ValueError(f"worlds: expected indices in [0, {real_env.num_envs - 1}], got {index.tolist()}")
        if torch.unique(index).numel() != index.numel():
            raise ValueError(f"worlds: expected distinct real worlds, got {index.tolist()}")
        n = index.numel() * copies
        if n > self.capacity:
            raise ValueError(f"copies: {index.numel()} worlds x {copies} copies = {n} planning worlds, more "
                             f"than capacity={self.capacity}")
        state = real_env.get_state(index.repeat_interleave(copies))   # (the deciding worlds' rows only)
        rows = torch.arange(n, device=self.device)
        self.env.set_state(state, worlds=rows, trusted=True)   # (get_state's rows of an env like this one)
        if redraw is not None:
            self.env.redraw_private_future(rows, redraw)
        self._done.fill_(True)
        pending = state.get("pending_reset")
        self._done[:n] = pending != 0 if pending is not None else False
        self._loaded = True
        return rows.view(index.numel(), copies)

    def step(self, actions, *, trusted: bool = False):
        """One step of every planning world (see the class docstring)."""
        if not self._loaded:
            raise RuntimeError("PlanningWorlds.step: nothing loaded; call load(real_env, worlds, copies) first")
        obs, reward, _, _, _ = self.env.step(actions, trusted=trusted)
        was_done = self._done.clone()
        terminated, truncated = self.env.world_flags()
        self._done |= terminated | truncated
        kept = {g: r.masked_fill(was_done.view(-1, *([1] * (r.dim() - 1))), 0) for g, r in reward.items()}
        return obs, kept, self._done.clone()

    def close(self) -> None:
        self.env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check_real(self, real_env) -> None:
        if not isinstance(real_env, BatchedEnv):
            raise TypeError(f"real_env: expected a BatchedEnv, got {type(real_env).__name__}")
        mine = (type(self.env).__name__, self.env.env_id, self.device, self.env.precision)
        theirs = (type(real_env).__name__, real_env.env_id, real_env.torch_device, real_env.precision)
        if mine != theirs:
            raise ValueError(f"real_env: expected an env like the planning env (class, id, device, precision) "
                             f"{mine}, got {theirs}")

    def __repr__(self) -> str:
        return f"PlanningWorlds({self.env!r}, capacity={self.capacity}, loaded={self._loaded})"
