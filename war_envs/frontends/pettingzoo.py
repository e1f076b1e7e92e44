"""PettingZoo front end: a ``ParallelEnv`` (and an AEC env) over one world of a batched env.

```python
env = war_envs.parallel_env("Spread-v0", N=3, max_cycles=25)   # or ParallelEnv("Spread-v0")
obs, infos = env.reset(seed=0)
while env.agents:
    actions = {a: env.action_space(a).sample() for a in env.agents}
    obs, rewards, terminations, truncations, infos = env.step(actions)
```

- One world of ``war_envs.make(env_id, num_envs=1, autoreset_mode="disabled", **kwargs)``;
  ``kwargs`` are the scenario's arguments plus ``seed``, ``precision`` and ``device``.
  ``env.batched`` is that batched env (get/set_state, metrics, ...).
- Agent names and order are the reference's (mpe2's); ``agents`` empties when the episode
  ends (termination or truncation at ``max_cycles``); stepping then is an error until
  ``reset()``.
- Everything handed out is plain numpy / Python: observations are float32 **copies** (never
  views of the Warp buffers), rewards Python floats, flags Python bools.  Per-agent infos carry
  the scenario's task metrics (``collisions``, ...: the agent's own value where the metric is
  per agent, i.e. in the scenario's declared ``per_agent_metrics``; world-level and
  per-landmark metrics as scalars / arrays) and ``t``.
- Agents can leave before the episode ends (``Tag-v0``'s tagged runners): an agent is reported
  terminated once, at the step it leaves, and is then removed from ``agents`` (PettingZoo's rule).
- Actions: ``Discrete`` as Python or numpy integers; ``MultiDiscrete`` as integer arrays (or
  lists) of its length; ``Box`` as float arrays.  A bad action
  (missing or unknown agent, wrong type/shape, out of range, NaN) raises ``TypeError`` /
  ``ValueError`` naming the agent *before* anything is written: the env is unchanged.
  Out-of-range continuous actions are an error, not clipped (mpe2 clips them with a warning,
  and so does the mpe2 drop-in, ``war_envs.mpe2``: it sets ``clip_box_actions``).
- Action masks (scenarios with ``has_action_mask``, e.g. ``SMAX-v0``; nothing changes for the
  others): every live agent's info has ``"action_mask"``, an int8 ``[n]`` array (1 = available)
  for the observation handed out, at ``reset`` and every ``step``, the key PettingZoo's masked
  envs use (``env.action_space(agent).sample(mask=infos[agent]["action_mask"])``; ``api_test``
  and ``seed_test`` sample with it).  Every action of the space is taken, an unavailable one
  played as the scenario plays it (SMAX-v0: JaxMARL's semantics), as PettingZoo's
  ``parallel_api_test`` / ``parallel_seed_test`` need (they sample without the mask);
  ``strict_action_mask=True`` refuses it with a ``ValueError`` naming the agent, the action and
  the available ones (the AEC env at the ``step`` that passes it).
- ``state()`` is mpe2's: every agent's observation concatenated.  ``world_state=True`` (for
  scenarios that declare a world state, e.g. ``SMAX-v0``) makes it the scenario's world state
  instead — JaxMARL's ``get_world_state`` for SMAX-v0, the input its MAPPO gives the critic —
  with ``state_space`` sized to match; a scenario without one refuses the argument
  (``TypeError``).
- ``render_mode``: ``"rgb_array"`` (numpy rasteriser, no display needed), ``"human"``
  (pygame window, drawn at every reset/step), or ``None``.
- ``EzPickle``: pickling stores the constructor arguments; unpickling builds a fresh env.
- ``aec_env(...)`` is the AEC version (``parallel_to_aec`` + ``OrderEnforcingWrapper``, like mpe2).
- ``register_pettingzoo()`` adds ``war_envs/<Id>`` to PettingZoo's registries
  (``pettingzoo.make("parallel", "war_envs/Spread-v0")``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import gymnasium
import numpy as np
import torch
from gymnasium.utils import EzPickle

from war_envs._extras import needs_extra

with needs_extra("pettingzoo", "the PettingZoo front end (war_envs.parallel_env / war_envs.env)"):
    import pettingzoo
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
    from pettingzoo.utils.env_logger import EnvLogger
    from pettingzoo.utils.wrappers import (AssertOutOfBoundsWrapper, BaseWrapper, ClipOutOfBoundsWrapper,
                                           OrderEnforcingWrapper)

from war_envs.core import validation as v
from war_envs.core.scenario import FINAL_STATE_KEYS
from war_envs.frontends.action_masks import check_strict, unavailable
from war_envs.frontends.world_state import check_world_state, require_world_state
from war_envs.frontends.registration import PETTINGZOO_NAMESPACE, register_pettingzoo

__all__ = ["ParallelEnv", "aec_env", "parallel_env", "CheckedActionWrapper", "ClippedActionWrapper",
           "register_pettingzoo", "PETTINGZOO_NAMESPACE"]

_CPU = torch.device("cpu")
_RENDER_MODES = ("human", "rgb_array")


class ParallelEnv(pettingzoo.ParallelEnv, EzPickle):
    """A PettingZoo ``ParallelEnv`` over one world of the batched scenario ``env_id``.

    ``ParallelEnv(env_id, render_mode=None, dynamic_rescaling=True, strict_action_mask=False,
    world_state=False, **kwargs)``: ``kwargs`` are the scenario's arguments (see its docstring)
    plus ``seed``, ``precision`` and ``device``.  ``dynamic_rescaling`` (mpe2's render argument)
    scales drawn entities with the camera zoom.  ``strict_action_mask`` refuses actions the
    action mask rules out (scenarios with ``has_action_mask``).  ``world_state`` makes
    ``state()`` the scenario's world state (scenarios with ``world_state_dim > 0``) instead of
    every agent's observation.  See the module docstring for the conventions.
    """

    metadata = {"render_modes": list(_RENDER_MODES), "name": "war_envs", "is_parallelizable": True,
                "render_fps": 10}
    #: out-of-range ``Box`` actions: ``False`` (here) refuses them with a ``ValueError`` naming the
    #: agent and the bounds; ``True`` clips them to the box with PettingZoo's out-of-bound warning,
    #: as mpe2 does (``war_envs.mpe2``'s drop-in sets it unless ``strict_actions=True``)
    clip_box_actions: bool = False

    def __init__(self, env_id: str, render_mode: str | None = None, *, dynamic_rescaling: bool = True,
                 strict_action_mask: bool = False, world_state: bool = False, **kwargs) -> None:
        EzPickle.__init__(self, env_id, render_mode=render_mode, dynamic_rescaling=dynamic_rescaling,
                          strict_action_mask=strict_action_mask, world_state=world_state, **kwargs)
        for name in ("num_envs", "autoreset_mode"):
            if name in kwargs:
                raise TypeError(
                    f"{name}: not accepted by the PettingZoo ParallelEnv (it steps one world with "
                    f"autoreset disabled); use war_envs.make({env_id!r}, {name}=...) for batches")
        if render_mode is not None and render_mode not in _RENDER_MODES:
            raise ValueError(f"render_mode: expected one of {[None, *_RENDER_MODES]}, got {render_mode!r}")
        self.dynamic_rescaling = v.check_bool("dynamic_rescaling", dynamic_rescaling)
        self.strict_action_mask = check_strict(strict_action_mask)
        world_state = check_world_state(world_state)
        import war_envs  # the package is fully imported by the time an env is built

        self.batched = war_envs.make(env_id, num_envs=1, autoreset_mode="disabled", **kwargs)
        self.env_id = self.batched.env_id or env_id
        #: whether ``state()`` is the scenario's world state (``True``) or every agent's observation
        self.world_state = require_world_state(world_state, self.batched)
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "name": self.env_id}

        self._groups = dict(self.batched.groups)
        self._where: dict[str, tuple[str, int]] = {}  # agent -> (group, index in group)
        self.observation_spaces: dict[str, gymnasium.spaces.Space] = {}
        self.action_spaces: dict[str, gymnasium.spaces.Space] = {}
        for g, spec in self._groups.items():
            for k, agent in enumerate(spec.agents):
                self._where[agent] = (g, k)
                # one space object per agent: seeding one agent's space must not reseed another's
                self.observation_spaces[agent] = copy.deepcopy(spec.observation_space)
                self.action_spaces[agent] = copy.deepcopy(spec.action_space)
                space = spec.action_space
                if isinstance(space, gymnasium.spaces.Discrete) and int(space.start) != 0:
                    raise TypeError(f"{self.env_id}: Discrete action spaces must start at 0")
        self.possible_agents: list[str] = list(self.batched.agents)
        self.agents: list[str] = self.possible_agents[:]
        state_dim = self.batched.world_state_dim if self.world_state else self.batched.state_dim
        self.state_space = gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(state_dim,), dtype=np.float32)

        self._needs_reset = True
        self._original_cam_range: float | None = None
        self._info_layout: dict[str, bool] | None = None
        self._viewer = None
        self._closed = False
        # the step's fixed costs, paid once: per agent (group, index in group, its agent-order
        # index, Discrete n or None), per group an action array and its tensor
        self._slots = [(agent, *self._where[agent], i, self._discrete_n(agent))
                       for i, agent in enumerate(self.possible_agents)]
        self._action_arrays, self._action_tensors = {}, {}
        for g, spec in self._groups.items():
            space = spec.action_space
            dtype = np.float32 if isinstance(space, gymnasium.spaces.Box) else np.int64
            self._action_arrays[g] = np.zeros((1, spec.n_agents, *(space.shape or ())), dtype=dtype)
            self._action_tensors[g] = torch.from_numpy(self._action_arrays[g])
        self._on_cpu = self.batched.torch_device.type == "cpu"
        self._host_views: tuple | None = None
        # action masks (has_action_mask): handed out in every agent's info; checked if strict
        self._masked = bool(self.batched.has_action_mask)
        self._strict = self.strict_action_mask and self._masked

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._space(self.observation_spaces, agent)

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._space(self.action_spaces, agent)

    def _space(self, spaces: dict, agent: str) -> gymnasium.spaces.Space:
        try:
            return spaces[agent]
        except (KeyError, TypeError):
            raise KeyError(f"agent: unknown agent {agent!r}; possible agents: {self.possible_agents}") from None

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a new episode (a fresh random start).  ``seed`` reseeds the world's stream
        (same seed ⇒ same episodes); ``options`` is accepted and ignored (as mpe2).
        Returns ``(observations, infos)`` keyed by agent."""
        self._check_open()
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
        obs_t = self.batched.reset(seed=seed)
        self._needs_reset = False
        self.agents = self.possible_agents[:]
        if self.render_mode is not None:  # mpe2's camera range: only a renderer reads it
            state = self.batched.get_state()
            positions = torch.cat([state[k][0].reshape(-1, 2) for k in ("agent_pos", "landmark_pos")
                                   if k in state]).double()
            self._original_cam_range = float(positions.abs().max()) if positions.numel() else 1.0
        obs_h = (self._host_views[0] if self._host_views is not None
                 else {g: obs_t[g][0].detach().cpu().numpy() for g in self._groups})
        observations = self._observations(obs_h, self.agents)
        infos = {agent: {} for agent in self.agents}
        if self._masked:
            self._add_masks(infos, self._mask_rows())
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def step(self, actions: Mapping):
        """Advance the world one step with ``{agent: action}`` for every live agent.

        Returns ``observations, rewards, terminations, truncations, infos``, each keyed by the
        agents that were live before the step."""
        self._check_open()
        if self._needs_reset:
            raise RuntimeError(f"{self.env_id}: step() called before reset(); call reset() first")
        if not self.agents:
            raise RuntimeError(
                f"{self.env_id}: step() called after the episode ended (every agent is terminated "
                "or truncated); call reset() to start a new episode")
        live = self.agents
        if not (isinstance(actions, dict) and len(actions) == len(live) and all(map(actions.__contains__, live))):
            v.check_keys("actions", actions, live)
        # the actions were checked here, so the batched env takes them on its trusted path
        obs_t, rew_t, term_t, trunc_t, info_t = self.batched.step(self._batch_actions(actions), trusted=True)

        views = self._host(obs_t, rew_t, term_t, trunc_t, info_t)
        obs_h, rew_h, term_h, trunc_h = views[:4]
        per_group = {g: (rew_h[g].tolist(), term_h[g].tolist(), trunc_h[g].tolist()) for g in self._groups}
        observations = self._observations(obs_h, live)
        rewards, terminations, truncations = {}, {}, {}
        for agent in observations:
            g, k = self._where[agent]
            r, te, tr = per_group[g]
            rewards[agent], terminations[agent], truncations[agent] = float(r[k]), bool(te[k]), bool(tr[k])
        infos = self._infos(views, observations)
        if self._masked:
            self._add_masks(infos, views[5])
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """Every agent's observation concatenated in ``possible_agents`` order (float32, a copy),
        as mpe2's ``state()``; with ``world_state=True`` the scenario's world state for the
        observations just returned (SMAX-v0: JaxMARL's ``get_world_state``)."""
        self._check_open()
        if self._needs_reset:
            raise RuntimeError(f"{self.env_id}: state() called before reset(); call reset() first")
        state = self.batched.world_state() if self.world_state else self.batched.state()
        return np.array(state[0].detach().cpu().numpy(), dtype=np.float32, copy=True)

    def render(self):
        """``rgb_array``: an ``[H, W, 3]`` uint8 frame; ``human``: draws into a window, returns
        None; no render mode: warns and returns None (as mpe2)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._check_open()
        if self._needs_reset:
            raise RuntimeError(f"{self.env_id}: render() called before reset(); call reset() first")
        cam = self._original_cam_range if self.dynamic_rescaling else None
        # a scenario without a renderer raises TypeError ("render_mode: ... has no renderer")
        frame = self.batched.render_frame(0, original_cam_range=cam)
        if self.render_mode == "rgb_array":
            return frame
        if self._viewer is None:
            from war_envs.render import HumanViewer

            self._viewer = HumanViewer(title=self.env_id, fps=self.metadata["render_fps"])
        self._viewer.show(frame)
        return None

    def close(self) -> None:
        """Close the window (if any) and release the batched env; idempotent."""
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None
        if not self._closed:
            self._closed = True
            self.batched.close()

    # ------------------------------------------------------------------ extras
    @property
    def max_cycles(self) -> int:
        """Episode length (fixed at construction: pass ``max_cycles=`` to the constructor)."""
        return self.batched.max_cycles

    @max_cycles.setter
    def max_cycles(self, value) -> None:
        # PettingZoo's parallel_api_test assigns this attribute; mpe2's parallel env ignores it too
        if value != self.batched.max_cycles:
            gymnasium.logger.warn(
                f"{self.env_id}: max_cycles is fixed at construction ({self.batched.max_cycles}); "
                f"ignoring max_cycles={value!r}. Pass max_cycles=... to the constructor instead.")

    @property
    def curriculum_stage(self) -> int:
        return self.batched.curriculum_stage

    @property
    def num_curriculum_stages(self) -> int:
        return self.batched.num_curriculum_stages

    def advance_curriculum(self) -> None:
        """Move to the next curriculum stage (no-op at the last one), as mpe2."""
        self.batched.advance_curriculum()

    def set_curriculum_stage(self, stage: int) -> None:
        """Jump to curriculum stage ``stage`` (an out-of-range stage is an error)."""
        self.batched.set_curriculum_stage(stage)

    def check_action(self, agent: str, action):
        """Validate one agent's action; returns it as an ``int`` (Discrete), an int64 array
        (MultiDiscrete) or a float32 array (Box).  Raises ``TypeError`` / ``ValueError`` naming the
        agent; with ``strict_action_mask`` also ``ValueError`` for an action the agent's current
        action mask rules out."""
        space = self.action_space(agent)
        # fast paths for what policies usually pass; anything else (and every error) goes
        # through the shared validation helpers below
        if isinstance(space, gymnasium.spaces.Discrete):
            if isinstance(action, (int, np.integer)) and not isinstance(action, bool) \
                    and 0 <= action < space.n:
                return self._available(agent, int(action)) if self._strict else int(action)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            if (isinstance(action, np.ndarray) and action.dtype.kind in "iu"
                    and action.shape == space.shape and bool(((action >= 0) & (action < space.nvec)).all())):
                return action.astype(np.int64)
        elif (isinstance(space, gymnasium.spaces.Box) and isinstance(action, np.ndarray)
              and action.dtype.kind == "f" and action.shape == space.shape):
            if bool((action >= space.low).all() and (action <= space.high).all()):  # False for NaN
                return action.astype(np.float32)
        name = f"actions[{agent!r}]"
        if action is None:
            raise TypeError(f"{name}: expected an action in {space}, got None")
        if isinstance(action, torch.Tensor):
            action = action.detach().to(_CPU)
        try:
            tensor = v.as_tensor(name, action, _CPU)
        except Exception as err:
            if str(err).startswith(name):
                raise
            # e.g. a numpy string array, which torch cannot wrap
            raise TypeError(f"{name}: expected a number or numeric array for {space}, "
                            f"got {type(action).__name__} {action!r}") from err
        if isinstance(space, gymnasium.spaces.Discrete):
            n = int(space.n)
            if tensor.dim() != 0:
                raise ValueError(f"{name}: expected a scalar integer for Discrete({n}), "
                                 f"got shape {tuple(tensor.shape)}")
            v.check_discrete(name, tensor, n)
            return self._available(agent, int(tensor)) if self._strict else int(tensor)
        if isinstance(space, gymnasium.spaces.MultiDiscrete):
            v.check_shape(name, tensor, space.shape)
            flat, nvec = tensor.reshape(-1), space.nvec.reshape(-1)
            for d, n in enumerate(nvec):
                v.check_discrete(f"{name}[{d}]", flat[d], int(n))
            return tensor.to(torch.int64).numpy()
        if isinstance(space, gymnasium.spaces.Box):
            v.check_shape(name, tensor, space.shape)
            if self.clip_box_actions:
                tensor = clip_box_action(action, tensor, space)
            low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
            v.check_box(name, tensor, float(low.min()), float(high.max()))
            values = tensor.to(torch.float64).numpy()
            if ((values < low) | (values > high)).any():  # non-uniform bounds
                raise ValueError(f"{name}: expected Box actions within {space}, got {values.tolist()}")
            return tensor.to(torch.float32).numpy()
        raise TypeError(f"{name}: unsupported action space {space}")  # pragma: no cover

    # ------------------------------------------------------------------ internals
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self.env_id}: the environment is closed")

    def _mask_rows(self) -> dict[str, np.ndarray]:
        """World 0's current action masks, ``{group: bool [n_g, n]}`` (views on the CPU)."""
        return {g: m[0].detach().cpu().numpy() for g, m in self.batched.action_mask().items()}

    def _add_masks(self, infos: dict[str, dict], rows: Mapping[str, np.ndarray]) -> None:
        """``infos[agent]["action_mask"]``: the agent's int8 ``[n]`` mask (a new array), PettingZoo's
        convention (``action_space(agent).sample(mask=...)`` takes it)."""
        for agent, entry in infos.items():
            g, k = self._where[agent]
            entry["action_mask"] = rows[g][k].astype(np.int8)

    def _available(self, agent: str, action: int) -> int:
        """``action`` if the agent's current mask allows it, else the ``unavailable`` error."""
        g, k = self._where[agent]
        row = self.batched.action_mask()[g][0, k].detach().cpu().numpy()
        if not row[action]:
            raise unavailable(f"actions[{agent!r}]", action, row)
        return action

    def _discrete_n(self, agent: str) -> int | None:
        space = self.action_spaces[agent]
        return int(space.n) if isinstance(space, gymnasium.spaces.Discrete) else None

    def _batch_actions(self, actions: Mapping) -> dict[str, torch.Tensor]:
        """Every live agent's action checked (``check_action``; Python / numpy integers in
        range inline), in agent order, into the per-group action arrays (zeros, no-ops, for
        agents that already left); nothing reaches the batched env before every action passed."""
        live = self.agents
        everyone = len(live) == len(self.possible_agents)
        if not everyone:
            for array in self._action_arrays.values():
                array.fill(0)
        arrays = self._action_arrays
        for agent, g, k, _, n in self._slots:
            if everyone or agent in live:
                action = actions[agent]
                if n is None or type(action) is not int or not 0 <= action < n or self._strict:
                    action = self.check_action(agent, action)
                arrays[g][0, k] = action
        if self._on_cpu:
            return self._action_tensors
        return {g: t.to(self.batched.torch_device) for g, t in self._action_tensors.items()}

    def _host(self, obs_t, rew_t, term_t, trunc_t, info_t) -> tuple:
        """World 0's observations, rewards, flags (``{group: numpy}``), task metrics and action
        masks (``{group: bool [n_g, n]}``, or None without ``has_action_mask``) as numpy:
        on the CPU views of the batched env's buffers, built once (its tensors are the same
        views every step); on a GPU host copies, every call."""
        if self._host_views is not None:
            return self._host_views
        host = lambda t: t[0].detach().cpu().numpy()  # noqa: E731
        views = tuple({g: host(d[g]) for g in self._groups} for d in (obs_t, rew_t, term_t, trunc_t))
        views += ({key: host(info_t[key]) for key in self._layout(info_t)},)
        views += ({g: host(m) for g, m in info_t["action_mask"].items()} if self._masked else None,)
        if self._on_cpu:
            self._host_views = views
        return views

    def _observations(self, obs_h: Mapping[str, np.ndarray], agents) -> dict[str, np.ndarray]:
        """``agents``' rows of world 0's ``{group: float32 [n_g, d]}``, each a copy (the
        arrays may be views of the Warp buffers)."""
        return {agent: obs_h[g][k].copy() for agent, g, k, _, _ in self._slots if agent in agents}

    def _layout(self, info: Mapping) -> dict[str, bool]:
        """Which info entries are task metrics, and which of those are per agent (the
        scenario's declared ``per_agent_metrics``)."""
        if self._info_layout is None:
            per_agent = self.batched.per_agent_metrics
            self._info_layout = {
                key: key in per_agent for key, value in info.items()
                if key not in FINAL_STATE_KEYS and not key.startswith("_") and isinstance(value, torch.Tensor)}
        return self._info_layout

    def _infos(self, views: tuple, agents) -> dict[str, dict]:
        """Per live agent: the world-level metrics (scalars; per-landmark arrays, a copy each),
        then its own value of each per-agent metric."""
        metrics = views[4]
        shared = {key: metrics[key].item() if metrics[key].ndim == 0 else None
                  for key, is_agent in self._info_layout.items() if not is_agent}
        arrays = [key for key, value in shared.items() if value is None]
        own = [(key, metrics[key].tolist()) for key, is_agent in self._info_layout.items() if is_agent]
        out = {}
        for agent, _, _, i, _ in self._slots:
            if agent in agents:
                entry = dict(shared)
                for key in arrays:
                    entry[key] = metrics[key].copy()
                for key, values in own:
                    entry[key] = values[i]
                out[agent] = entry
        return out

    def __repr__(self) -> str:
        return f"ParallelEnv({self.env_id!r}, render_mode={self.render_mode!r})"


def clip_box_action(action, tensor: torch.Tensor, space: gymnasium.spaces.Box) -> torch.Tensor:
    """mpe2's policy for an out-of-range continuous action, which its ``env()`` and
    ``parallel_env()`` apply through PettingZoo's ``ClipOutOfBoundsWrapper``: PettingZoo's
    warning (``EnvLogger.warn_action_out_of_bound``, the same message), then every value clipped
    to ``[space.low, space.high]`` (``±inf`` included).  ``tensor`` is ``action`` as a tensor of
    the space's shape; an in-range, non-floating or NaN one is returned as it is (the strict
    check then accepts it or names what is wrong: mpe2 raises a bare ``AssertionError`` on NaN)."""
    if not tensor.is_floating_point() or bool(torch.isnan(tensor).any()):
        return tensor
    values = tensor.to(torch.float64).numpy()
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    if not ((values < low) | (values > high)).any():
        return tensor
    EnvLogger.warn_action_out_of_bound(action=action, action_space=space, backup_policy="clipping to space")
    return torch.from_numpy(np.clip(values, low, high))


class _CheckedStep:
    """An AEC wrapper's ``step``: the action goes through the parallel env's ``check_action``
    at the call that passes it (a clear ``TypeError``/``ValueError`` naming the agent, before
    anything is stored, so the env stays usable), and the checked action is stored."""

    def step(self, action) -> None:
        agent = self.agent_selection
        if not (action is None and (self.terminations[agent] or self.truncations[agent])):
            action = self.unwrapped.check_action(agent, action)
        BaseWrapper.step(self, action)


class CheckedActionWrapper(_CheckedStep, AssertOutOfBoundsWrapper):
    """AEC wrapper that rejects a bad action at the call that passes it (rather than with a bare
    ``AssertionError``).  A subclass of mpe2's ``AssertOutOfBoundsWrapper`` so code checking for
    it still finds it."""


class ClippedActionWrapper(_CheckedStep, ClipOutOfBoundsWrapper):
    """AEC wrapper for an env whose ``clip_box_actions`` is set (the mpe2 drop-in's continuous
    envs): out-of-range ``Box`` actions are clipped with PettingZoo's warning
    (``clip_box_action``, the parallel env's own code path) at the call that passes them; any
    other bad action is refused as ``CheckedActionWrapper`` refuses it.  A subclass of mpe2's
    ``ClipOutOfBoundsWrapper`` so code checking for it still finds it."""


def parallel_env(env_id: str, render_mode: str | None = None, **kwargs) -> ParallelEnv:
    """``ParallelEnv(env_id, render_mode, **kwargs)``."""
    return ParallelEnv(env_id, render_mode=render_mode, **kwargs)


def aec_env(env_id: str, render_mode: str | None = None, **kwargs):
    """The AEC version of ``ParallelEnv(env_id, ...)``: ``parallel_to_aec``, wrapped like mpe2's
    envs (action check, then ``OrderEnforcingWrapper`` outermost)."""
    par = ParallelEnv(env_id, render_mode=render_mode, **kwargs)
    return OrderEnforcingWrapper(CheckedActionWrapper(parallel_to_aec_wrapper(par)))

