"""Gymnasium front end: ``gym.make`` (one world, joint view) and ``gym.make_vec`` (a native
``VectorEnv``: W worlds stepped by one batched env, one kernel pipeline per step).

``register_gymnasium()`` registers every scenario id as ``war_envs/<Id>``; ``import war_envs``
calls it, so ::

    import gymnasium as gym, war_envs
    env = gym.make("war_envs/Spread-v0", N=3)                  # JointEnv
    envs = gym.make_vec("war_envs/Spread-v0", num_envs=64)     # VectorEnv (vector_entry_point)

**Joint view** (``JointEnv``): observations ``Dict({agent: Box(float32)})``, actions
``Dict({agent: Discrete(5) | Box(0, 1, (5,)) | MultiDiscrete})``.  The scalar reward is the **sum of every
agent's reward** (computed in float64, in agent order); each agent's own reward is in
``info["rewards"][agent]``.  ``terminated`` / ``truncated`` are the world's flags.  ``info``
also carries the scenario's task metrics as numpy copies (e.g. Spread's
``landmark_min_dist``, ``collisions``, ``occupied_landmarks``); ``reset`` returns ``info == {}``.
Every returned array is a fresh numpy copy.

**Flat joint view** (``gym.make("war_envs/<Id>", flat=True)``): for single-agent libraries
(Stable-Baselines3's ``PPO("MlpPolicy", env)``, CleanRL's single-agent scripts) driving a centralized
controller.  Observation ``Box(float32)``: every agent's observation concatenated in agent
order.  Action ``MultiDiscrete`` (one entry per ``Discrete(n)`` agent, a ``MultiDiscrete``
agent's components, agent order) or, when every agent's space is ``Box``, one ``Box`` (the
agents' vectors concatenated, with their bounds); a scenario mixing the two raises
``ValueError`` (use ``flat=False``).  The reward is the same sum over agents, the flags and
``info`` the same as the ``Dict`` view's; ``flat`` must be a bool (``TypeError``).
``gym.make_vec``'s native vector env keeps the ``Dict`` spaces; vectorize the flat view with
``gym.make_vec(id, num_envs=W, vectorization_mode="sync", flat=True)`` (or SB3's
``make_vec_env``).

**Agents that leave** (``Tag-v0``'s tagged runners) stay in the joint observation (they observe
zeros); ``info["alive"]`` (bool ``[A]``, agent order) says who is still in the game.

**Action masks** (scenarios with ``has_action_mask``, e.g. ``SMAX-v0``; nothing changes for the
others): ``info["action_mask"]`` is ``{agent: int8 [n]}`` (1 = available, for the observation
handed out; ``[W, n]`` per agent in the vector env, with Gymnasium's ``_action_mask`` entries),
at ``reset`` and every ``step``, so ``env.action_space.sample(mask=info["action_mask"])`` draws
available actions; the flat view's ``action_masks()`` is sb3-contrib's ``MaskablePPO`` layout.
The vector env lays them out as ``SyncVectorEnv`` over ``gym.make`` does: a world reset in a
step has its new episode's mask (``NEXT_STEP``: the reset's; ``SAME_STEP``: the finished
episode's last one, ``info["final_action_mask"]``, is in ``final_info``).  Every action of the
space is taken, an unavailable one played as the scenario plays it (SMAX-v0: JaxMARL's
semantics), as ``check_env`` needs; ``strict_action_mask=True`` (``gym.make`` /
``gym.make_vec`` argument) refuses it with a ``ValueError`` naming the agent (and world), the
action and the available ones.

**World state** (scenarios that declare one, e.g. ``SMAX-v0``: JaxMARL's ``get_world_state``,
what its MAPPO's critic sees): ``world_state=True`` (``gym.make`` / ``gym.make_vec`` argument;
a scenario without one refuses it) puts it in ``info["world_state"]``, float32 ``[D]`` (``[W, D]``
in the vector env), at ``reset`` and every ``step``, for the observation handed out — laid out
as the action masks are (a world reset in a step has its new episode's; with ``SAME_STEP`` the
finished episode's last one is in ``final_info``).

**Episode length**: the scenario's ``max_cycles`` (25 for MPE; ``episode_length`` for Tag)
truncates episodes.
``gym.make(..., max_episode_steps=k)`` adds Gymnasium's ``TimeLimit`` on top, so it can only
shorten episodes; pass ``max_cycles=k`` to lengthen them.  ``gym.make_vec(...,
max_episode_steps=k)`` sets ``max_cycles=k`` (Tag: ``episode_length=k``, which also sets the
observed time fraction and when the end-of-game reward is paid; SMAX: ``max_steps=k - 1``, as
its episodes last ``max_steps + 1`` steps; Gymnasium applies no ``TimeLimit`` to vector envs).

**Seeding** (Gymnasium semantics): ``reset(seed=s)`` reseeds the world's random stream with
``s``; ``reset()`` continues it.  The vector env's world ``i`` after ``reset(seed=s)`` replays a
``JointEnv`` reset with ``seed=s + i`` — the same convention as ``SyncVectorEnv``, so the two
agree step for step.  ``reset(seed=[s_0, ..., s_{W-1}])`` (entries may be ``None``: continue that
world's stream) reseeds each world separately.

**Autoreset** (vector env): ``autoreset_mode=`` ``NEXT_STEP`` (default, as Gymnasium),
``SAME_STEP`` (``final_obs`` / ``final_info`` in ``info``, exactly as ``SyncVectorEnv`` lays them
out) or ``DISABLED`` (``reset(options={"reset_mask": mask})``; stepping a finished world
without resetting it is an error, as in ``SyncVectorEnv``).  Declared in
``metadata["autoreset_mode"]``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import war_envs
from war_envs import registry
from war_envs.core import validation as v
from war_envs.core.batched_env import parse_autoreset_mode, world_seeds
from war_envs.core.scenario import FINAL_STATE_KEYS
from war_envs.frontends.action_masks import check_available, check_strict, int8_rows
from war_envs.frontends.flat_joint import FlatJointLayout, check_flat
from war_envs.frontends.world_state import check_world_state, require_world_state

__all__ = ["JointEnv", "VectorEnv", "register_gymnasium", "gymnasium_id"]

from war_envs.frontends.registration import NAMESPACE  # noqa: E402
_DEFAULT_METADATA = {"render_modes": ["rgb_array"], "render_fps": 10}
# batch arguments that the Gymnasium front ends choose themselves
_RESERVED = {
    "num_envs": "gym.make builds one world; use gym.make_vec(id, num_envs=W) for W worlds",
    "autoreset_mode": "gym.make's env never auto-resets; pass autoreset_mode to gym.make_vec",
    "seed": "seed through reset(seed=...) (Gymnasium seeding)",
}


from war_envs.frontends.registration import gymnasium_id, register_gymnasium  # noqa: E402,F401


# ---------------------------------------------------------------------------------------------
# helpers shared by both front ends
# ---------------------------------------------------------------------------------------------


def _scenario_key(scenario: str) -> str:
    if not isinstance(scenario, str):
        raise TypeError(f"scenario: expected a str such as 'Spread-v0', got {type(scenario).__name__}")
    return scenario.split("/", 1)[1] if scenario.startswith(f"{NAMESPACE}/") else scenario


def _check_scenario_kwargs(scenario: str, kwargs: Mapping[str, Any], front_end: str,
                           reserved: Mapping[str, str]) -> None:
    """Unknown or front-end-owned keyword arguments: a TypeError listing the accepted ones."""
    cls = registry.scenario_class(scenario)
    accepted = [k for k in registry.accepted_kwargs(cls) if k not in reserved]
    for key in kwargs:
        if key in reserved:
            raise TypeError(f"{scenario}: {front_end} does not take {key!r}: {reserved[key]}")
    unknown = [k for k in kwargs if k not in accepted]
    if unknown:
        raise TypeError(f"{scenario}: unknown keyword argument(s) {unknown} for {front_end}; "
                        f"accepted: {accepted + ['render_mode']}")


def _check_render_mode(render_mode, metadata) -> str | None:
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise ValueError(f"render_mode: expected None or one of {metadata['render_modes']}, "
                         f"got {render_mode!r}")
    return render_mode


def _to_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _action_array(label: str, value, expected: str, shape: tuple, integer: bool) -> np.ndarray:
    """``value`` (``expected``) as a numpy array of ``shape`` with an integer dtype (``integer``),
    else a floating one and finite values; ``TypeError`` / ``ValueError`` naming ``label``."""
    try:
        array = _to_numpy(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{label}: expected {expected}, got {type(value).__name__}") from err
    if integer and (array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{label}: expected {expected} with an integer dtype, got dtype {array.dtype}")
    if not integer and not np.issubdtype(array.dtype, np.floating):
        raise TypeError(f"{label}: expected {expected} with a floating dtype, got dtype {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"{label}: expected shape {shape}, got {array.shape}")
    if not integer and not np.isfinite(array).all():
        raise ValueError(f"{label}: expected finite {expected}, got NaN or inf")
    return array


def _host(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view (CPU) or host copy (CUDA) of a batched-env tensor; copy before keeping."""
    return tensor.detach().cpu().numpy()


def _step_checked(batched, group_actions: Mapping[str, np.ndarray]):
    """Step ``batched`` with actions this front end has validated (``_Layout``'s checks, per
    element of the space): its trusted path, which skips a second value scan."""
    device = batched.torch_device
    return batched.step({g: torch.from_numpy(a).to(device) for g, a in group_actions.items()}, trusted=True)


def _sum_agents(rewards: np.ndarray) -> np.ndarray:
    """``[W, A]`` per-agent rewards -> ``[W]`` float64 sums, added in agent order (the joint and
    vector envs share this so their rewards agree bitwise)."""
    total = rewards[:, 0].astype(np.float64)
    for k in range(1, rewards.shape[1]):
        total = total + rewards[:, k]
    return total


class _Layout:
    """Agent names, their groups and spaces for one batched env."""

    def __init__(self, batched) -> None:
        self.groups = batched.groups
        self.agents_can_leave = batched.agents_can_leave
        self.has_action_mask = bool(batched.has_action_mask)
        self.agents: list[tuple[str, str, int]] = []  # (agent, group, index in group)
        for g, spec in self.groups.items():
            for k, name in enumerate(spec.agents):
                self.agents.append((name, g, k))
        self.names = [a for a, _, _ in self.agents]
        self.observation_space = gymnasium.spaces.Dict(
            {name: self.groups[g].observation_space for name, g, _ in self.agents})
        self.action_space = gymnasium.spaces.Dict(
            {name: self.groups[g].action_space for name, g, _ in self.agents})

    def observations(self, obs: Mapping[str, torch.Tensor], world: int | None) -> dict:
        """Per-agent numpy copies: ``[d]`` of one world, or ``[W, d]`` if ``world`` is None."""
        host = {g: _host(obs[g]) for g in self.groups}
        if world is None:
            return {name: np.array(host[g][:, k]) for name, g, k in self.agents}
        return {name: np.array(host[g][world, k]) for name, g, k in self.agents}

    def rewards(self, rew: Mapping[str, torch.Tensor]) -> np.ndarray:
        """``[W, A]`` float64 per-agent rewards, agents in reference order."""
        return np.concatenate([_host(rew[g]) for g in self.groups], axis=1).astype(np.float64)

    def metrics(self, info: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Task metrics of the batched env's step info, ``[W, ...]`` numpy copies."""
        skip = {"t", *FINAL_STATE_KEYS}
        out = {k: np.array(_host(t)) for k, t in info.items()
               if k not in skip and isinstance(t, torch.Tensor)}
        if self.agents_can_leave:  # info["alive"] (Tag-v0): [W, A] bool, agent order
            mask = np.concatenate([_host(info["alive"][g]) for g in self.groups], axis=1).astype(np.bool_)
            final = info.get("final_alive")
            if final is not None:  # SAME_STEP: who was in the game at the episode's end
                ended = _host(info["_final_obs"]).astype(np.bool_)
                last = np.concatenate([_host(final[g]) for g in self.groups], axis=1).astype(np.bool_)
                mask[ended] = last[ended]
            out["alive"] = mask
        return out

    def masks(self, mask: Mapping[str, torch.Tensor], world: int | None) -> dict[str, np.ndarray]:
        """``info["action_mask"]``: per agent an int8 mask (1 = available; what
        ``space.sample(mask=...)`` takes), ``[n]`` of one world or ``[W, n]`` if ``world`` is
        None; new arrays."""
        rows = int8_rows(mask, world)
        if world is None:
            return {name: np.array(rows[g][:, k]) for name, g, k in self.agents}
        return {name: np.array(rows[g][k]) for name, g, k in self.agents}

    def check_available(self, group_actions: Mapping[str, np.ndarray], mask: Mapping[str, torch.Tensor],
                        vector: bool, worlds: np.ndarray | None = None) -> None:
        """``strict_action_mask``: every agent's action (``{group: [W, n_g]}``, checked in range)
        is one its current mask allows, in the worlds of ``worlds`` (None: all)."""
        for g, actions in group_actions.items():
            agents = self.groups[g].agents
            label = ((lambda e, k: f"actions[{agents[k]!r}] at world {e}") if vector
                     else (lambda e, k: f"action[{agents[k]!r}]"))
            check_available(actions, mask[g], label, worlds)

    # -------------------------------------------------------------- action validation
    def joint_actions(self, action) -> dict[str, np.ndarray]:
        """One world's ``{agent: action}`` -> ``{group: [1, n_g(, d)]}``; every check runs before
        anything is written, and each error names the agent, the expected and the actual value."""
        return self._checked_actions("action", action, ())

    def vector_actions(self, actions, num_envs: int) -> dict[str, np.ndarray]:
        """``{agent: [W] | [W, d]}`` -> ``{group: [W, n_g(, d)]}`` (validated first)."""
        return self._checked_actions("actions", actions, (num_envs,))

    def _checked_actions(self, what: str, actions, batch: tuple) -> dict[str, np.ndarray]:
        """``{agent: action}`` (argument ``what``; each of shape ``batch`` + the space's) checked
        against the agent's action space, then stacked per group (a world axis where ``batch``)."""
        v.check_keys(what, actions, self.names)
        per_agent = {}
        for name, g, _ in self.agents:
            space = self.groups[g].action_space
            label = f"{what}[{name!r}]"
            if isinstance(space, gymnasium.spaces.Discrete):
                per_agent[name] = _check_discrete(label, actions[name], space, batch)
            elif isinstance(space, gymnasium.spaces.MultiDiscrete):
                per_agent[name] = _check_multi_discrete(label, actions[name], space, batch)
            else:
                per_agent[name] = _check_box(label, actions[name], space, batch)
        return self._stack(per_agent, world_axis=bool(batch))

    def _stack(self, per_agent: dict[str, np.ndarray], world_axis: bool) -> dict[str, np.ndarray]:
        out = {}
        for g, spec in self.groups.items():
            arrays = [per_agent[name] for name in spec.agents]
            stacked = np.stack(arrays, axis=1 if world_axis else 0)
            out[g] = stacked if world_axis else stacked[None]
        return out


def _check_discrete(label: str, value, space: gymnasium.spaces.Discrete, batch: tuple) -> np.ndarray:
    n, start = int(space.n), int(space.start)
    expected = f"Discrete({n}) actions (integers in [{start}, {start + n - 1}])"
    if not batch and isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        array = np.asarray(int(value), dtype=np.int64)
    else:
        if isinstance(value, (bool, np.bool_, float, complex, str)) or value is None:
            raise TypeError(f"{label}: expected {expected}, got {type(value).__name__} {value!r}")
        array = _action_array(label, value, expected, batch, integer=True)
    if array.size:
        bad = (array < start) | (array >= start + n)
        if bad.any():
            where = "" if not batch else f" at world {int(np.flatnonzero(bad)[0])}"
            raise ValueError(f"{label}: expected {expected}, got {array[bad].flat[0]}{where}")
    return array.astype(np.int64) - start if start else array.astype(np.int64)


def _check_multi_discrete(label: str, value, space: gymnasium.spaces.MultiDiscrete,
                          batch: tuple) -> np.ndarray:
    nvec = np.asarray(space.nvec)
    shape = (*batch, *nvec.shape)
    expected = f"MultiDiscrete({nvec.tolist()}) actions (integers in [0, nvec - 1])"
    if isinstance(value, (bool, np.bool_, float, complex, str, bytes)) or value is None:
        raise TypeError(f"{label}: expected {expected}, got {type(value).__name__} {value!r}")
    array = _action_array(label, value, expected, shape, integer=True)
    bad = (array < 0) | (array >= nvec)
    if bad.any():
        where = np.argwhere(bad)[0]
        world = f" at world {int(where[0])}" if batch else ""
        raise ValueError(f"{label}: expected {expected}, got {array[tuple(where)]} in component "
                         f"{int(where[-1])} (nvec {int(nvec.reshape(-1)[where[-1]])}){world}")
    return array.astype(np.int64)


def _check_box(label: str, value, space: gymnasium.spaces.Box, batch: tuple) -> np.ndarray:
    shape = (*batch, *space.shape)
    low, high = float(space.low.min()), float(space.high.max())
    expected = f"Box({low}, {high}, {space.shape}) actions"
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{label}: expected {expected}, got {type(value).__name__}")
    array = _action_array(label, value, expected, shape, integer=False)
    below, above = array < space.low, array > space.high
    if below.any() or above.any():
        bad = array[below | above].flat[0]
        raise ValueError(f"{label}: expected {expected} in [{low}, {high}], got {bad}")
    return array.astype(space.dtype)


def _vector_info(values: Mapping[str, Any], mask: np.ndarray) -> dict:
    """Gymnasium's vector-info layout (``VectorEnv._add_info``) for per-world values that exist
    in the worlds of ``mask``: ``{key: array, _key: mask}``, nested dicts recursively, zeros
    where the mask is false; ``{}`` when no world has them."""
    if not mask.any():
        return {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            out[key] = _vector_info(value, mask)
        else:
            array = np.array(value)
            array[~mask] = 0
            out[key] = array
        out[f"_{key}"] = mask.copy()
    return out


# ---------------------------------------------------------------------------------------------
# gym.make: one world, joint view
# ---------------------------------------------------------------------------------------------


class JointEnv(gymnasium.Env):
    """One world of a war-envs scenario as a single Gymnasium env (joint observation/action).

    ``gym.make("war_envs/Spread-v0", render_mode=None, **scenario_kwargs)`` or
    ``JointEnv("Spread-v0", ...)``.  Scenario arguments are the scenario's (e.g. ``N``,
    ``local_ratio``, ``max_cycles``, ``continuous_actions``) plus ``device`` and ``precision``;
    unknown ones raise ``TypeError``.

    - ``observation_space``: ``Dict({agent: Box(-inf, inf, (obs_dim,), float32)})``
    - ``action_space``: ``Dict({agent: Discrete(5)})`` or ``Dict({agent: Box(0, 1, (5,))})``
    - ``step`` returns ``reward = Σ_agents r_agent`` (float, summed in float64 in agent order);
      ``info["rewards"] = {agent: float}`` and the task metrics (numpy copies)
    - ``terminated`` / ``truncated``: the world's flags (truncation after ``max_cycles``)
    - ``render_mode="rgb_array"``: ``render()`` draws the world like mpe2 (no display needed)
    - ``flat=True``: flat joint spaces for single-agent libraries (SB3, CleanRL): observation
      ``Box(float32)`` (every agent's observation concatenated in agent order), action
      ``MultiDiscrete`` (one entry per ``Discrete`` agent, a ``MultiDiscrete`` agent's
      components, in agent order) or, when every agent's space is ``Box``, one ``Box`` (the
      agents' vectors concatenated with their bounds); a mix of ``Box`` and discrete agents is a
      ``ValueError``.  Reward (the sum over agents), flags and ``info`` are the same as with
      ``flat=False``.  See ``war_envs.frontends.flat_joint``.
    - action masks (``has_action_mask``): ``info["action_mask"] = {agent: int8 [n]}`` at reset
      and every step; ``strict_action_mask=True`` refuses unavailable actions (module docstring)
    - ``world_state=True`` (scenarios with a world state, e.g. SMAX-v0): ``info["world_state"]``,
      float32 ``[D]``, at reset and every step (module docstring)

    The world never auto-resets: call ``reset()`` after an episode ends.  ``self.batched`` is
    the underlying one-world ``BatchedEnv``.
    """

    metadata = dict(_DEFAULT_METADATA)

    def __init__(self, scenario: str, render_mode: str | None = None, flat: bool = False,
                 strict_action_mask: bool = False, world_state: bool = False, **kwargs) -> None:
        scenario = _scenario_key(scenario)
        flat = check_flat(flat)
        self.strict_action_mask = check_strict(strict_action_mask)
        world_state = check_world_state(world_state)
        _check_scenario_kwargs(scenario, kwargs, "gym.make", _RESERVED)
        cls = registry.scenario_class(scenario)
        self.metadata = {**_DEFAULT_METADATA, **cls.metadata}
        self.render_mode = _check_render_mode(render_mode, self.metadata)
        self.scenario_id = scenario
        self.batched = war_envs.make(scenario, num_envs=1, autoreset_mode="disabled", **kwargs)
        #: whether ``info`` carries ``"world_state"``
        self.world_state = require_world_state(world_state, self.batched)
        self._layout = _Layout(self.batched)
        self.flat = flat
        self._flat: FlatJointLayout | None = None
        if flat:
            try:
                self._flat = FlatJointLayout(
                    [(name, g, self._layout.groups[g].action_space, self._layout.groups[g].observation_space)
                     for name, g, _ in self._layout.agents], scenario)
            except ValueError:
                self.batched.close()
                raise
            self.observation_space = self._flat.observation_space
            self.action_space = self._flat.action_space
        else:
            self.observation_space = self._layout.observation_space
            self.action_space = self._layout.action_space
        self._original_cam_range: float | None = None

    @property
    def agents(self) -> list[str]:
        """Agent names in the reference order (the keys of the spaces)."""
        return list(self._layout.names)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new episode.  ``seed`` reseeds the world's random stream; without it the
        stream continues.  No options are used (a non-empty ``options`` is an error)."""
        if options is not None:
            if not isinstance(options, Mapping):
                raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
            if options:
                raise ValueError(f"options: {type(self).__name__}.reset takes no options, got keys "
                                 f"{list(options)}")
        seed = v.check_seed("seed", seed)
        super().reset(seed=seed)
        obs = self.batched.reset(seed=seed)
        if self.render_mode is not None:
            self._original_cam_range = _camera_ranges(self.batched)[0]
        info = {"action_mask": self._layout.masks(self.batched.action_mask(), 0)} \
            if self._layout.has_action_mask else {}
        self._add_world_state(info)
        return self._observation(obs), info

    def _add_world_state(self, info: dict) -> None:
        """``world_state=True``: the world state for the observation handed out, a float32 copy."""
        if self.world_state:
            info["world_state"] = np.array(_host(self.batched.world_state())[0])

    def _observation(self, obs: Mapping[str, torch.Tensor]):
        """One world's observation: ``{agent: [d]}``, or the flat ``[D]`` (``flat=True``)."""
        if self._flat is not None:
            return self._flat.observation({g: _host(obs[g])[0] for g in self._layout.groups}, self._layout.groups)
        return self._layout.observations(obs, 0)

    def step(self, action):
        """``action``: ``{agent: int}`` (Discrete) or ``{agent: float array (5,)}`` (Box); with
        ``flat=True`` one flat array of ``action_space``.
        Returns ``obs, reward, terminated, truncated, info`` (numpy copies)."""
        if self.batched.closed:
            raise RuntimeError(f"{self.scenario_id}: the environment is closed")
        if self._flat is not None:
            action = self._flat.actions(action)
        group_actions = self._layout.joint_actions(action)
        if self.strict_action_mask and self._layout.has_action_mask:
            self._layout.check_available(group_actions, self.batched.action_mask(), vector=False)
        obs, rew, term, trunc, info = _step_checked(self.batched, group_actions)
        per_agent = self._layout.rewards(rew)
        reward = float(_sum_agents(per_agent)[0])
        world_term, world_trunc = self.batched.world_flags()  # the world's (an agent can leave earlier)
        terminated = bool(_host(world_term)[0])
        truncated = bool(_host(world_trunc)[0])
        step_info: dict[str, Any] = {
            "rewards": {name: float(per_agent[0, i]) for i, name in enumerate(self._layout.names)}}
        for key, value in self._layout.metrics(info).items():
            step_info[key] = value[0] if value.ndim == 1 else value[0].copy()
        if self._layout.has_action_mask:
            step_info["action_mask"] = self._layout.masks(info["action_mask"], 0)
        self._add_world_state(step_info)
        return self._observation(obs), reward, terminated, truncated, step_info

    def action_masks(self) -> np.ndarray:
        """sb3-contrib's ``MaskablePPO`` convention for the flat view (``flat=True`` with a
        ``MultiDiscrete`` joint action): bool ``[sum(nvec)]``, each entry's mask in turn (all True
        for agents whose actions are never unavailable).  ``TypeError`` for the ``Dict`` view and
        ``Box`` joint actions."""
        if self._flat is None or not self._flat.discrete:
            raise TypeError(f"action_masks: only for flat=True with a MultiDiscrete joint action (sb3-contrib's "
                            f"MaskablePPO); this env's action space is {self.action_space}")
        masks = self._layout.masks(self.batched.action_mask(), 0) if self._layout.has_action_mask else {}
        return self._flat.flat_mask(masks)

    def render(self):
        """An RGB ``[700, 700, 3]`` uint8 frame (``render_mode="rgb_array"``), else ``None``."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                f'You can specify the render_mode at initialization, e.g. gym.make("'
                f'{gymnasium_id(self.scenario_id)}", render_mode="rgb_array")')
            return None
        if self._original_cam_range is None:
            raise RuntimeError(f"{self.scenario_id}: render() called before reset()")
        return self.batched.render_frame(0, original_cam_range=self._original_cam_range)

    def close(self) -> None:
        """Release the world's buffers (idempotent)."""
        batched = getattr(self, "batched", None)
        if batched is not None:
            batched.close()


def _camera_ranges(batched, worlds=None) -> np.ndarray:
    """mpe2's ``original_cam_range`` (max |coordinate| of every entity) per world."""
    state = batched.get_state()
    parts = [state[k].detach().cpu().numpy() for k in ("agent_pos", "landmark_pos") if k in state]
    # no MPE entities (SMAX-v0's fixed map): no camera range to compute, every world gets 1
    pos = np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=1).astype(np.float64) \
        if parts else np.zeros((batched.num_envs, 0))
    if worlds is not None:
        pos = pos[worlds]
    if pos.shape[1] == 0:
        return np.ones(pos.shape[0])
    cam = np.abs(pos).max(axis=1)
    cam[cam == 0] = 1.0
    return cam


# ---------------------------------------------------------------------------------------------
# gym.make_vec: native vector env
# ---------------------------------------------------------------------------------------------


class VectorEnv(gymnasium.vector.VectorEnv):
    """W worlds of a war-envs scenario as a native Gymnasium ``VectorEnv`` (one batched env,
    one kernel pipeline per step).

    ``gym.make_vec("war_envs/Spread-v0", num_envs=W, autoreset_mode=AutoresetMode.NEXT_STEP,
    max_episode_steps=None, render_mode=None, strict_action_mask=False, world_state=False,
    **scenario_kwargs)``.
    Spaces: ``single_observation_space`` / ``single_action_space`` are ``JointEnv``'s ``Dict`` spaces,
    ``observation_space`` / ``action_space`` their ``batch_space``.  ``step`` returns
    ``{agent: float32 [W, obs_dim]}``, rewards ``float64 [W]`` (sum over agents, as
    ``JointEnv``), ``terminations`` / ``truncations`` ``bool [W]`` and infos in Gymnasium's
    vector layout — exactly what ``SyncVectorEnv`` over ``gym.make`` returns.

    ``max_episode_steps`` sets the scenario's ``max_cycles`` (an error if both are given and
    differ).  ``render()`` returns one frame per world (``render_mode="rgb_array"``).
    ``self.batched`` is the underlying ``BatchedEnv``.
    """

    metadata = {**_DEFAULT_METADATA, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, scenario: str, num_envs: int = 1, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None, render_mode: str | None = None,
                 strict_action_mask: bool = False, world_state: bool = False, **kwargs) -> None:
        scenario = _scenario_key(scenario)
        self.strict_action_mask = check_strict(strict_action_mask)
        world_state = check_world_state(world_state)
        reserved = {"seed": _RESERVED["seed"],
                    "flat": "the native vector env has Dict spaces; for the flat joint view vectorize "
                            "gym.make: gym.make_vec(id, num_envs=W, vectorization_mode='sync', flat=True)"}
        _check_scenario_kwargs(scenario, kwargs, "gym.make_vec", reserved)
        num_envs = v.check_int("num_envs", num_envs, minimum=1)
        mode = parse_autoreset_mode(autoreset_mode)
        max_episode_steps = v.check_int("max_episode_steps", max_episode_steps, minimum=1,
                                        allow_none=True)
        cls = registry.scenario_class(scenario)
        if max_episode_steps is not None:
            length = cls.episode_length_kwarg
            if length not in registry.accepted_kwargs(cls):
                raise ValueError(f"max_episode_steps: {scenario} has no episode-length argument "
                                 f"({length}) to set")
            offset = cls.episode_length_offset
            if length in kwargs and kwargs[length] != max_episode_steps - offset:
                extra = f" (episodes last {length} + {offset} steps)" if offset else ""
                raise ValueError(f"max_episode_steps={max_episode_steps} and "
                                 f"{length}={kwargs[length]!r} disagree{extra}; pass one of them")
            kwargs[length] = max_episode_steps - offset
        self.metadata = {**_DEFAULT_METADATA, **cls.metadata, "autoreset_mode": mode}
        self.render_mode = _check_render_mode(render_mode, self.metadata)
        self.scenario_id = scenario
        self.autoreset_mode = mode
        self.num_envs = num_envs
        self.batched = war_envs.make(scenario, num_envs=num_envs, autoreset_mode=mode, **kwargs)
        #: whether ``info`` carries ``"world_state"``
        self.world_state = require_world_state(world_state, self.batched)
        self._layout = _Layout(self.batched)
        self.single_observation_space = self._layout.observation_space
        self.single_action_space = self._layout.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._done = np.zeros(num_envs, dtype=np.bool_)  # terminated or truncated last step
        self._original_cam_range = np.ones(num_envs)

    @property
    def agents(self) -> list[str]:
        return list(self._layout.names)

    # -------------------------------------------------------------- reset
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None):
        """Reset every world, or those of ``options["reset_mask"]`` (bool numpy ``[W]``).

        ``seed``: ``None`` continues each world's stream; ``s`` gives world ``i`` the seed
        ``s + i``; a list gives world ``i`` the seed ``seed[i]`` (``None`` entries continue)."""
        if self.batched.closed:
            raise RuntimeError(f"{self.scenario_id}: the environment is closed")
        given, raw = v.reset_mask_option(options)
        mask = self._check_reset_mask(raw) if given else None
        int_seed, per_world = self._parse_seed(seed)
        if per_world is not None:
            self._reseed_worlds(per_world, mask)
        if int_seed is not None:
            super().reset(seed=int_seed)
        if mask is None:
            obs = self.batched.reset(seed=int_seed)
            self._done[:] = False
        else:
            obs = self.batched.reset(seed=int_seed, mask=mask.copy())  # numpy: moved to the device
            self._done[mask] = False
        if self.render_mode is not None:
            worlds = slice(None) if mask is None else mask
            self._original_cam_range[worlds] = _camera_ranges(self.batched, worlds)
        reset_info = {}   # as SyncVectorEnv lays out gym.make's reset infos
        if self._layout.has_action_mask:
            reset_info["action_mask"] = self._layout.masks(self.batched.action_mask(), None)
        if self.world_state:
            reset_info["world_state"] = _host(self.batched.world_state())
        reset = np.ones(self.num_envs, dtype=np.bool_) if mask is None else mask.copy()
        infos = _vector_info(reset_info, reset) if reset_info else {}
        return self._layout.observations(obs, None), infos

    def _check_reset_mask(self, mask) -> np.ndarray:
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"options['reset_mask']: expected a numpy bool array of shape "
                            f"({self.num_envs},), got {type(mask).__name__}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask']: expected shape ({self.num_envs},), got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"options['reset_mask']: expected dtype bool, got {mask.dtype}")
        if not mask.any():
            raise ValueError("options['reset_mask']: expected at least one True entry, got none")
        return mask

    def _parse_seed(self, seed):
        """-> (int seed for the batched env or None, per-world list or None)."""
        if seed is None:
            return None, None
        if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
            return v.check_seed("seed", seed), None
        if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
            raise TypeError(f"seed: expected None, an int or a list of {self.num_envs} ints/None, "
                            f"got {type(seed).__name__}")
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed: a list of seeds must have num_envs={self.num_envs} entries, "
                             f"got {len(seeds)}")
        seeds = [v.check_seed(f"seed[{i}]", s) for i, s in enumerate(seeds)]
        if all(s is not None for s in seeds) and all(s == seeds[0] + i for i, s in enumerate(seeds)):
            return seeds[0], None  # consecutive: one batched reseed
        return None, seeds

    def _reseed_worlds(self, seeds: list[int | None], mask: np.ndarray | None) -> None:
        """Give world i the stream of seed[i] (that of a one-world env seeded seed[i])."""
        worlds = [i for i, s in enumerate(seeds) if s is not None and (mask is None or mask[i])]
        if not worlds:
            return
        if not {"rng_key", "episode"} <= set(self.batched.state_keys):
            raise ValueError(f"seed: {self.scenario_id} does not support per-world seed lists; "
                             "pass an int (world i gets seed + i)")
        keys = world_seeds([seeds[i] for i in worlds], len(worlds))
        # numpy inputs: the batched env moves them to its device
        self.batched.set_state({"rng_key": keys, "episode": np.zeros(len(worlds), dtype=np.int32)},
                               worlds=np.array(worlds, dtype=np.int64))

    def _check_not_finished(self) -> None:
        """DISABLED autoreset: stepping a finished world without resetting it is an error, as in
        ``SyncVectorEnv``."""
        if self.autoreset_mode == AutoresetMode.DISABLED and self._done.any():
            worlds = np.flatnonzero(self._done).tolist()
            raise RuntimeError(
                f"{self.scenario_id}: worlds {worlds} finished (terminated or truncated) and "
                "autoreset_mode is DISABLED; reset them with reset(options={'reset_mask': mask}) "
                "before stepping")

    # -------------------------------------------------------------- step
    def step(self, actions):
        """``actions``: ``{agent: int [W]}`` (Discrete) or ``{agent: float [W, 5]}`` (Box)."""
        if self.batched.closed:
            raise RuntimeError(f"{self.scenario_id}: the environment is closed")
        self._check_not_finished()
        mode = self.autoreset_mode
        group_actions = self._layout.vector_actions(actions, self.num_envs)
        restarting = self._done.copy() if mode == AutoresetMode.NEXT_STEP else None
        masked = self._layout.has_action_mask
        if self.strict_action_mask and masked:  # a restarting world's actions are not played
            self._layout.check_available(group_actions, self.batched.action_mask(), vector=True,
                                         worlds=None if restarting is None else ~restarting)
        obs, rew, term, trunc, info = _step_checked(self.batched, group_actions)

        per_agent = self._layout.rewards(rew)
        rewards = _sum_agents(per_agent)
        world_term, world_trunc = self.batched.world_flags()  # the world's (an agent can leave earlier)
        terminations = np.array(_host(world_term), dtype=np.bool_)
        truncations = np.array(_host(world_trunc), dtype=np.bool_)
        done = terminations | truncations
        step_info: dict[str, Any] = {
            "rewards": {name: per_agent[:, i] for i, name in enumerate(self._layout.names)},
            **self._layout.metrics(info)}
        observations = self._layout.observations(obs, None)

        if mode == AutoresetMode.SAME_STEP:
            infos = _vector_info(step_info, ~done)
            if done.any():
                final = self._layout.observations(info["final_obs"], None)
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(done):
                    final_obs[i] = {name: final[name][i].copy() for name in self._layout.names}
                infos["final_obs"], infos["_final_obs"] = final_obs, done.copy()
                final_info = dict(step_info)
                if masked:  # the finished episodes' last masks
                    final_info["action_mask"] = self._layout.masks(info["final_action_mask"], None)
                if self.world_state:  # and last world states
                    final_info["world_state"] = _host(info["final_world_state"])
                infos["final_info"] = _vector_info(final_info, done)
                infos["_final_info"] = done.copy()
            reset_worlds = done
        elif mode == AutoresetMode.NEXT_STEP:
            infos = _vector_info(step_info, ~restarting)
            reset_worlds = restarting
        else:
            infos = _vector_info(step_info, np.ones(self.num_envs, dtype=np.bool_))
            reset_worlds = None
        # every world's mask and world state for the observation handed out (a reset world's: the
        # new episode's, which SyncVectorEnv takes from gym.make's reset info)
        current = {}
        if masked:
            current["action_mask"] = self._layout.masks(info["action_mask"], None)
        if self.world_state:
            current["world_state"] = _host(self.batched.world_state())
        if current:
            infos.update(_vector_info(current, np.ones(self.num_envs, dtype=np.bool_)))
        if self.render_mode is not None and reset_worlds is not None and reset_worlds.any():
            self._original_cam_range[reset_worlds] = _camera_ranges(self.batched, reset_worlds)
        self._done = done
        return observations, rewards, terminations, truncations, infos

    # -------------------------------------------------------------- render / close
    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB ``[700, 700, 3]`` uint8 frame per world (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        return tuple(self.batched.render_frame(i, original_cam_range=float(self._original_cam_range[i]))
                     for i in range(self.num_envs))

    def close_extras(self, **kwargs) -> None:
        batched = getattr(self, "batched", None)
        if batched is not None:
            batched.close()
