"""Gymnasium front end for single-agent scenarios (Gymnasium's classic control: ``CartPole-v1``,
``Acrobot-v1``, ``MountainCar-v0``, ``MountainCarContinuous-v0``, ``Pendulum-v1``): Gymnasium's
own spaces, no ``Dict`` and no agent names.

A scenario registered with ``single_agent=True`` (``war_envs.registry.add``) has one group of one
agent; ``gym.make("war_envs/CartPole-v1")`` is ``SingleAgentEnv`` and
``gym.make_vec("war_envs/CartPole-v1", num_envs=W)`` is ``SingleAgentVectorEnv``, whose W worlds
are one batched env (one kernel pipeline per step)::

    import gymnasium as gym, war_envs
    env = gym.make("war_envs/CartPole-v1")                       # as gym.make("CartPole-v1")
    envs = gym.make_vec("war_envs/Pendulum-v1", num_envs=4096)   # as SyncVectorEnv over it

- ``observation_space`` / ``single_observation_space``: the scenario's ``Box`` (float32, as
  Gymnasium's; float64 worlds are computed in float64 and handed out as float32, as Gymnasium
  casts its float64 state);
- ``action_space`` / ``single_action_space``: ``Discrete(n)`` or ``Box`` (``batch_space`` of it in
  the vector env: ``MultiDiscrete([n] * W)`` or ``Box [W, d]``);
- ``step`` returns the observation (``[d]`` / ``[W, d]`` float32 copies), the reward (``float`` /
  float64 ``[W]``), ``terminated``, ``truncated`` (``bool`` / bool ``[W]``) and ``info == {}``, as
  Gymnasium's classic-control envs do; ``reset`` returns ``info == {}``.

Everything else is the ``Dict`` front ends' (``war_envs.frontends.gymnasium``): seeding
(``reset(seed=s)`` gives world ``i`` the stream of ``s + i``, as ``SyncVectorEnv`` does;
``seed=[...]`` per world), every ``autoreset_mode`` in Gymnasium's layout (``SAME_STEP``:
``final_obs`` / ``_final_obs`` / ``final_info`` / ``_final_info``), ``reset(options={"reset_mask":
mask})``, ``max_episode_steps``, ``render_mode="rgb_array"``, and the argument checks.

**Continuous actions** are checked as Gymnasium's envs check them: the right shape and a floating
dtype, finite; values outside the ``Box`` are clipped by the dynamics (Pendulum's torque,
MountainCarContinuous's force), as Gymnasium's ``step`` clips them, unless the scenario was built
with ``strict_actions=True``, which refuses them (``ValueError``): the scenario's declared
``clips_actions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from war_envs.frontends import gymnasium as joint
from war_envs.frontends.gymnasium import JointEnv, VectorEnv

__all__ = ["SingleAgentEnv", "SingleAgentVectorEnv"]


class _SingleLayout:
    """The one agent of a single-agent batched env: its spaces, and numpy views of its buffers."""

    def __init__(self, batched, scenario: str) -> None:
        groups = batched.groups
        if len(groups) != 1 or next(iter(groups.values())).n_agents != 1:
            shape = {g: s.n_agents for g, s in groups.items()}
            raise TypeError(f"{scenario}: the single-agent front end takes a scenario with one group of "
                            f"one agent, got {shape}")
        if batched.has_action_mask:
            raise TypeError(f"{scenario}: the single-agent front end has no action masks "
                            "(use war_envs.frontends.gymnasium's Dict front ends)")
        (self.group, spec), = groups.items()
        self.groups = groups
        self.names = list(spec.agents)
        self.has_action_mask = False
        self.observation_space = spec.observation_space
        self.action_space = spec.action_space
        self.discrete = isinstance(self.action_space, gymnasium.spaces.Discrete)
        if not (self.discrete or isinstance(self.action_space, gymnasium.spaces.Box)):
            raise TypeError(f"{scenario}: the single-agent front end takes Discrete or Box actions, got "
                            f"{self.action_space}")
        self.clips = not self.discrete and bool(batched.clips_actions)
        self.obs_dtype = self.observation_space.dtype
        cpu = batched.torch_device.type == "cpu"
        self._batched = batched
        # numpy views of the batched env's buffers on the CPU (host copies on CUDA, per call)
        self._views = cpu

    def _np(self, tensor: torch.Tensor) -> np.ndarray:
        return tensor.numpy() if self._views else tensor.detach().cpu().numpy()

    def observations(self, obs: Mapping[str, torch.Tensor], world: int | None) -> np.ndarray:
        """``[W, d]`` (``world`` None) or ``[d]`` float32 copies."""
        host = self._np(obs[self.group])
        return host[:, 0].astype(self.obs_dtype) if world is None else host[world, 0].astype(self.obs_dtype)

    def rewards(self, rew: Mapping[str, torch.Tensor]) -> np.ndarray:
        """``[W]`` float64 copies of the step's rewards."""
        return self._np(rew[self.group])[:, 0].astype(np.float64)

    def flags(self) -> tuple[np.ndarray, np.ndarray]:
        term, trunc = self._batched.world_flags()
        return self._np(term).copy(), self._np(trunc).copy()

    def actions(self, value, batch: tuple) -> np.ndarray:
        """One world's action (``batch == ()``) or ``[W]`` / ``[W, d]`` actions, checked, as the
        batched env's ``{group: [W, 1(, d)]}`` array."""
        label = "actions" if batch else "action"
        space = self.action_space
        if self.discrete:
            array = joint._check_discrete(label, value, space, batch)
        elif self.clips:
            array = _check_finite_box(label, value, space, batch)
        else:
            array = joint._check_box(label, value, space, batch)
        return array.reshape((1, 1, *space.shape) if not batch else (batch[0], 1, *space.shape))

    def step(self, array: np.ndarray):
        return self._batched.step({self.group: torch.from_numpy(array).to(self._batched.torch_device)},
                                  trusted=True)


def _check_finite_box(label: str, value, space: gymnasium.spaces.Box, batch: tuple) -> np.ndarray:
    """A ``Box`` action whose out-of-range values the dynamics clip (as Gymnasium's do): type,
    dtype, shape and finiteness are checked, the bounds are not."""
    shape = (*batch, *space.shape)
    expected = f"{space} actions (finite floats; values outside the bounds are clipped)"
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{label}: expected {expected}, got {type(value).__name__}")
    array = joint._action_array(label, value, expected, shape, integer=False)
    limit = np.finfo(space.dtype).max
    if (np.abs(array) > limit).any():
        raise ValueError(f"{label}: expected {expected} within the {space.dtype} range, got "
                         f"{array[np.abs(array) > limit].flat[0]}")
    return array.astype(space.dtype)


class SingleAgentEnv(JointEnv):
    """One world of a single-agent scenario with Gymnasium's own spaces (``gym.make``).

    ``gym.make("war_envs/CartPole-v1", render_mode=None, **scenario_kwargs)``: ``observation_space``
    and ``action_space`` are the scenario's (Gymnasium's) ``Box`` / ``Discrete``; ``step(action)``
    takes an ``int`` (or integer scalar array) or a float array of the ``Box``'s shape and returns
    ``obs [d] float32, reward float, terminated, truncated, {}``.  The world never auto-resets
    (call ``reset()``).  ``render()`` draws it as Gymnasium does (``render_mode="rgb_array"``).
    ``flat`` and ``strict_action_mask`` do not apply (``TypeError``)."""

    def __init__(self, scenario: str, render_mode: str | None = None, **kwargs) -> None:
        for key in ("flat", "strict_action_mask"):
            if key in kwargs:
                raise TypeError(f"{scenario}: gym.make does not take {key!r}: this single-agent env has "
                                "Gymnasium's own spaces and no action masks")
        super().__init__(scenario, render_mode=render_mode, **kwargs)
        try:
            self._single = _SingleLayout(self.batched, self.scenario_id)
        except TypeError:
            self.batched.close()
            raise
        self.observation_space = self._single.observation_space
        self.action_space = self._single.action_space

    @property
    def agents(self) -> list[str]:
        return list(self._single.names)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, _ = super().reset(seed=seed, options=options)
        return obs, {}

    def _observation(self, obs: Mapping[str, torch.Tensor]) -> np.ndarray:
        return self._single.observations(obs, 0)

    def step(self, action):
        if self.batched.closed:
            raise RuntimeError(f"{self.scenario_id}: the environment is closed")
        obs, rew, _, _, _ = self._single.step(self._single.actions(action, ()))
        terminated, truncated = self._single.flags()
        return (self._single.observations(obs, 0), float(self._single.rewards(rew)[0]),
                bool(terminated[0]), bool(truncated[0]), {})

    def action_masks(self):
        raise TypeError(f"action_masks: {self.scenario_id} has no action masks")

    def render(self):
        """An RGB ``uint8`` frame drawn as Gymnasium draws it (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return super().render()
        return self.batched.render_frame(0)


class SingleAgentVectorEnv(VectorEnv):
    """W worlds of a single-agent scenario as a native Gymnasium ``VectorEnv`` with Gymnasium's
    own spaces (``gym.make_vec("war_envs/CartPole-v1", num_envs=W, autoreset_mode=NEXT_STEP,
    max_episode_steps=None, render_mode=None, **scenario_kwargs)``): ``step(actions)`` takes
    ``int [W]`` (Discrete) or ``float [W, d]`` (Box) and returns ``float32 [W, d]`` observations,
    ``float64 [W]`` rewards, ``bool [W]`` terminations and truncations and infos in Gymnasium's
    vector layout — what ``SyncVectorEnv`` over Gymnasium's own env returns (``{}``, plus
    ``final_obs`` / ``final_info`` with ``SAME_STEP``).  ``render()`` returns one frame per world."""

    def __init__(self, scenario: str, num_envs: int = 1, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None, render_mode: str | None = None, **kwargs) -> None:
        if "strict_action_mask" in kwargs:
            raise TypeError(f"{scenario}: gym.make_vec does not take 'strict_action_mask': this single-agent "
                            "env has no action masks")
        super().__init__(scenario, num_envs, autoreset_mode=autoreset_mode,
                         max_episode_steps=max_episode_steps, render_mode=render_mode, **kwargs)
        try:
            self._layout = _SingleLayout(self.batched, self.scenario_id)
        except TypeError:
            self.batched.close()
            raise
        self.single_observation_space = self._layout.observation_space
        self.single_action_space = self._layout.action_space
        self.observation_space = joint.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = joint.batch_space(self.single_action_space, self.num_envs)

    def step(self, actions):
        """``actions``: ``int [W]`` (Discrete) or ``float [W, d]`` (Box)."""
        if self.batched.closed:
            raise RuntimeError(f"{self.scenario_id}: the environment is closed")
        self._check_not_finished()
        mode = self.autoreset_mode
        layout = self._layout
        obs, rew, _, _, info = layout.step(layout.actions(actions, (self.num_envs,)))
        terminations, truncations = layout.flags()
        done = terminations | truncations
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.SAME_STEP and done.any():
            final = layout.observations(info["final_obs"], None)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = final[i]
            infos = {"final_obs": final_obs, "_final_obs": done.copy(),
                     "final_info": {}, "_final_info": done.copy()}
        self._done = done
        return layout.observations(obs, None), layout.rewards(rew), terminations, truncations, infos

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per world, drawn as Gymnasium draws it (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return super().render()
        return tuple(self.batched.render_frame(i) for i in range(self.num_envs))
