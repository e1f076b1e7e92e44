"""The flat joint view of ``JointEnv(flat=True)`` (``gym.make("war_envs/<Id>", flat=True)``):
one world as a single-agent env with flat spaces, for libraries that take no ``Dict`` spaces
(Stable-Baselines3, CleanRL's single-agent scripts) driving a centralized controller.

- **Observation**: ``Box(float32, (sum of obs_dim,))``: every agent's observation
  concatenated in agent order (``JointEnv.agents``), each agent's bounds kept.
- **Action**: ``MultiDiscrete`` when every agent's action space is ``Discrete`` or
  ``MultiDiscrete``: one entry per ``Discrete(n)`` agent (``nvec`` entry ``n``, its ``start``
  kept), a ``MultiDiscrete`` agent (Tag-v0) contributing its components, in agent order.
  ``Box`` when every agent's space is ``Box``: the agents' vectors concatenated with their
  bounds.  A mix of ``Box`` and discrete agents has no flat form: ``ValueError`` naming the
  spaces (use ``flat=False``, the ``Dict`` view).
- Rewards, ``terminated`` / ``truncated`` and ``info`` are the ``Dict`` view's (the reward is
  the sum over agents; each agent's own reward is in ``info["rewards"]``; action masks, for
  scenarios with ``has_action_mask``, in ``info["action_mask"][agent]``).
- ``JointEnv.action_masks()`` (``MultiDiscrete`` joint action): bool ``[sum(nvec)]``, the
  entries' masks concatenated, sb3-contrib's ``MaskablePPO`` convention (``flat_mask``).

``FlatJointLayout`` does the conversions; ``JointEnv`` owns one when ``flat=True``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import gymnasium
import numpy as np
import torch

__all__ = ["FlatJointLayout", "check_flat"]

_DISCRETE = (gymnasium.spaces.Discrete, gymnasium.spaces.MultiDiscrete)


def check_flat(flat) -> bool:
    """``flat=``: a bool (numpy bools too); anything else is a ``TypeError``."""
    if not isinstance(flat, (bool, np.bool_)):
        raise TypeError(f"flat: expected a bool (True: flat Box / MultiDiscrete joint spaces, False: the "
                        f"Dict joint view), got {type(flat).__name__} {flat!r}")
    return bool(flat)


def _describe(agents: Sequence[tuple[str, gymnasium.spaces.Space]]) -> str:
    return ", ".join(f"{name}: {space}" for name, space in agents)


class FlatJointLayout:
    """Flat joint spaces over ``agents`` (``[(name, group, action_space, observation_space)]``
    in agent order) and the conversions between them and the ``Dict`` view's values.

    ``scenario`` only labels errors."""

    def __init__(self, agents: Sequence[tuple[str, str, gymnasium.spaces.Space, gymnasium.spaces.Box]],
                 scenario: str = "") -> None:
        self.scenario = scenario
        self.names = [a[0] for a in agents]
        actions = [(name, space) for name, _, space, _ in agents]
        where = f"{scenario}: " if scenario else ""
        unsupported = [(n, s) for n, s in actions if not isinstance(s, (*_DISCRETE, gymnasium.spaces.Box))]
        if unsupported:
            raise ValueError(f"{where}flat=True supports Discrete, MultiDiscrete and Box action spaces, got "
                             f"{_describe(unsupported)}; use flat=False (the Dict joint view)")
        discrete = all(isinstance(s, _DISCRETE) for _, s in actions)
        box = all(isinstance(s, gymnasium.spaces.Box) for _, s in actions)
        if not (discrete or box):
            raise ValueError(f"{where}flat=True needs every agent's action space to be discrete (Discrete / "
                             f"MultiDiscrete: one MultiDiscrete joint action) or every one to be Box (one Box "
                             f"joint action); this scenario mixes them ({_describe(actions)}); use flat=False "
                             f"(the Dict joint view)")
        self.discrete = discrete
        # per agent: (name, slice of the flat action, the agent's space)
        self._slices: list[tuple[str, slice, gymnasium.spaces.Space]] = []
        offset = 0
        if discrete:
            nvec, start = [], []
            for name, space in actions:
                if isinstance(space, gymnasium.spaces.Discrete):
                    nvec.append(int(space.n))
                    start.append(int(space.start))
                    width = 1
                else:
                    nvec += [int(x) for x in np.asarray(space.nvec).reshape(-1)]
                    start += [int(x) for x in np.asarray(space.start).reshape(-1)]
                    width = int(np.asarray(space.nvec).size)
                self._slices.append((name, slice(offset, offset + width), space))
                offset += width
            self.action_space = gymnasium.spaces.MultiDiscrete(
                np.array(nvec, dtype=np.int64), start=np.array(start, dtype=np.int64))
        else:
            lows, highs = [], []
            for name, space in actions:
                width = int(np.prod(space.shape))
                lows.append(np.asarray(space.low, dtype=np.float64).reshape(-1))
                highs.append(np.asarray(space.high, dtype=np.float64).reshape(-1))
                self._slices.append((name, slice(offset, offset + width), space))
                offset += width
            dtype = np.result_type(*[s.dtype for _, s in actions])
            self.action_space = gymnasium.spaces.Box(np.concatenate(lows).astype(dtype),
                                                     np.concatenate(highs).astype(dtype), dtype=dtype)
        self._agent_of = np.concatenate([np.full(s.stop - s.start, i) for i, (_, s, _) in enumerate(self._slices)])
        obs = [space for *_, space in agents]
        self.observation_space = gymnasium.spaces.Box(
            np.concatenate([np.asarray(s.low, dtype=np.float32).reshape(-1) for s in obs]),
            np.concatenate([np.asarray(s.high, dtype=np.float32).reshape(-1) for s in obs]), dtype=np.float32)

    # -------------------------------------------------------------- observations
    def observation(self, per_group: Mapping[str, np.ndarray], groups: Sequence[str]) -> np.ndarray:
        """``{group: [n_g, d_g]}`` of one world (groups in agent order) -> float32 ``[D]`` (a new array)."""
        return np.concatenate([np.asarray(per_group[g]).reshape(-1) for g in groups]).astype(np.float32)

    # -------------------------------------------------------------- actions
    def _label(self, index: int) -> str:
        name, part, _ = self._slices[int(self._agent_of[index])]
        return f"action[{index}] (agent {name!r}, entry {index - part.start} of its action)"

    def actions(self, action) -> dict[str, np.ndarray | int]:
        """A flat joint action -> ``{agent: action}`` for the ``Dict`` view, after checking
        type, shape, dtype and range; each error names the entry and its agent."""
        space = self.action_space
        expected = (f"a MultiDiscrete({space.nvec.tolist()}) joint action" if self.discrete
                    else f"a Box joint action of shape {space.shape}")
        if isinstance(action, (str, bytes, Mapping, numbers.Number)) or action is None:
            hint = " (flat=True takes one flat array; a {agent: action} dict is the flat=False form)" \
                if isinstance(action, Mapping) else ""
            raise TypeError(f"action: expected {expected}, got {type(action).__name__}{hint}")
        try:
            array = action.detach().cpu().numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
        except (TypeError, ValueError) as err:
            raise TypeError(f"action: expected {expected}, got {type(action).__name__}") from err
        if array.shape != space.shape:
            raise ValueError(f"action: expected {expected}, got shape {array.shape}")
        if self.discrete:
            if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
                raise TypeError(f"action: expected {expected} with an integer dtype, got dtype {array.dtype}")
            low = np.asarray(space.start)
            bad = (array < low) | (array >= low + space.nvec)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{self._label(i)}: expected an integer in [{low[i]}, {low[i] + space.nvec[i] - 1}], "
                                 f"got {array[i]}")
            out = {}
            for name, part, agent_space in self._slices:
                if isinstance(agent_space, gymnasium.spaces.Discrete):
                    out[name] = int(array[part.start])
                else:
                    out[name] = array[part].astype(np.int64).reshape(np.asarray(agent_space.nvec).shape)
            return out
        if not np.issubdtype(array.dtype, np.floating):
            raise TypeError(f"action: expected {expected} with a floating dtype, got dtype {array.dtype}")
        finite = np.isfinite(array)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise ValueError(f"{self._label(i)}: expected a finite value, got {array[i]}")
        bad = (array < space.low) | (array > space.high)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self._label(i)}: expected a value in [{space.low[i]}, {space.high[i]}], got {array[i]}")
        return {name: array[part].astype(agent_space.dtype).reshape(agent_space.shape)
                for name, part, agent_space in self._slices}

    def flat_mask(self, per_agent: Mapping[str, np.ndarray]) -> np.ndarray:
        """``{agent: [n] mask}`` (the ``Dict`` view's ``info["action_mask"]``; agents without an
        entry have every action available) -> bool ``[sum(nvec)]``, each entry of the
        ``MultiDiscrete`` joint action's mask in turn (sb3-contrib's ``MaskablePPO`` layout)."""
        parts = []
        for name, _, space in self._slices:
            if name in per_agent:
                parts.append(np.asarray(per_agent[name], dtype=np.bool_).reshape(-1))
            else:
                parts.append(np.ones(int(np.sum(getattr(space, "nvec", space.n))), dtype=np.bool_))
        return np.concatenate(parts)

    def flatten_action(self, per_agent: Mapping[str, object]) -> np.ndarray:
        """The inverse of ``actions``: ``{agent: action}`` -> the flat joint action."""
        parts = [np.asarray(per_agent[name]).reshape(-1) for name, _, _ in self._slices]
        return np.concatenate(parts).astype(self.action_space.dtype)

