"""The batched base every scenario builds on.

``BatchedEnv`` owns what is the same for every scenario: argument checks, per-world seeds,
the autoreset mode, the captured step graph, torch views of the Warp buffers, action
validation, ``state()``, ``get_state``/``set_state``/``clone_worlds`` and ``close``.
A scenario subclass allocates its Warp arrays and says which kernels make a step, and declares
the scenario interface (episode metrics, per-agent info entries, episode-length argument, alive
mask, evaluation variants, renderer), documented in ``war_envs.core.scenario``; the defaults
are here.

Aliasing: the tensors returned by ``reset``/``step`` are views of the env's buffers; the
next ``step``/``reset`` overwrites them.  Clone what you keep.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import itertools
import numbers
import os
from collections.abc import Mapping, Sequence

import gymnasium
import numpy as np
import torch
import warp as wp
from gymnasium.vector import AutoresetMode

from war_envs.core import validation as v
from war_envs.core.runtime import capture_guard, init_warp, resolve_device
from war_envs.core.scenario import EpisodeMetric

__all__ = ["AutoresetMode", "BatchedEnv", "EpisodeMetric", "GroupSpec", "world_seeds"]

_PRECISIONS = {"float32": (wp.float32, torch.float32), "float64": (wp.float64, torch.float64)}
_MODE_CODES = {AutoresetMode.NEXT_STEP: 0, AutoresetMode.SAME_STEP: 1, AutoresetMode.DISABLED: 2}
_SAME_STEP_CODE = _MODE_CODES[AutoresetMode.SAME_STEP]
#: CPU action batches of at most SMALL_SCAN values in at most SMALL_ROWS last-axis rows (one
#: world's actions, a few worlds') are range-checked in Python from one ``tolist()``: about
#: 0.5 µs + 0.3 µs a row + 0.03 (int) to 0.07 (float) µs a value, against about 2 µs for the
#: ``aminmax`` reduction that checks larger ones
SMALL_SCAN = 32
SMALL_ROWS = 4
_SMALL_SCAN_INTS = frozenset((torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8))


@dataclasses.dataclass(frozen=True)
class GroupSpec:
    """Agents that share observation and action spaces (and, in the trainer, parameters).

    ``start`` is the index of the group's first agent in the world's agent order.
    """

    name: str
    agents: tuple[str, ...]
    start: int
    obs_dim: int
    action_space: gymnasium.spaces.Space
    observation_space: gymnasium.spaces.Box

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    @property
    def stop(self) -> int:
        return self.start + len(self.agents)


def _mix32(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser folded to 31 bits: nearby seeds give unrelated streams."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & np.uint64(0xFFFFFFFFFFFFFFFF)
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & np.uint64(0xFFFFFFFFFFFFFFFF)
        x = x ^ (x >> np.uint64(31))
    return (x & np.uint64(0x7FFFFFFF)).astype(np.int32)


def world_seeds(seed, num_envs: int) -> np.ndarray:
    """Per-world stream keys.  An int ``s``: world w uses the key of seed s + w, so it replays
    world 0 of a one-world env seeded s + w (Gymnasium's vector-env convention).  A sequence of
    ``num_envs`` seeds: world w uses the key of ``seed[w]`` (a training run derives them from
    its seed, rank and world so that different runs share no world: ``war_train.seeding``)."""
    if isinstance(seed, (int, np.integer)):
        return _mix32((np.uint64(seed) + np.arange(num_envs, dtype=np.uint64)))
    return _mix32(np.asarray(seed, dtype=np.uint64))


def check_world_seeds(name: str, value, num_envs: int):
    """None, an int seed, or ``num_envs`` per-world seeds (a list, numpy array or CPU torch
    tensor of ints in [0, 2**63)) returned as an int64 numpy array."""
    if value is None or (isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))):
        return v.check_seed(name, value)
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name}: expected None, an int or {num_envs} per-world ints, got {type(value).__name__}")
    seeds = [v.check_seed(f"{name}[{i}]", s if not isinstance(s, np.integer) else int(s))
             for i, s in enumerate(list(value))]
    if any(s is None for s in seeds):
        raise TypeError(f"{name}: per-world seeds must all be ints, got None at index {seeds.index(None)}")
    if len(seeds) != num_envs:
        raise ValueError(f"{name}: expected {num_envs} per-world seeds (num_envs), got {len(seeds)}")
    return np.asarray(seeds, dtype=np.int64)


def parse_autoreset_mode(value) -> AutoresetMode:
    """An ``AutoresetMode``, its name in any case (``"same_step"``) or Gymnasium's value (``"SameStep"``)."""
    if isinstance(value, AutoresetMode):
        return value
    if isinstance(value, str):
        key = value.strip().upper().replace("-", "_")
        if key in AutoresetMode.__members__:
            return AutoresetMode[key]
        try:
            return AutoresetMode(value)
        except ValueError:
            pass
    raise ValueError(
        "autoreset_mode: expected one of AutoresetMode.NEXT_STEP / SAME_STEP / DISABLED "
        f"(or 'next_step', 'same_step', 'disabled'), got {value!r}"
    )


def world_bytes(*buffers: tuple[tuple[int, ...], object]) -> int:
    """Bytes per world of ``[E, *tail]`` buffers given as ``(tail, Warp dtype)`` pairs."""
    return sum(int(np.prod(tail, dtype=np.int64)) * wp.types.type_size_in_bytes(dtype) for tail, dtype in buffers)


def available_memory(device) -> int | None:
    """Bytes that can still be allocated on a Warp ``device`` (``None``: unknown).  CPU: the
    kernel's ``MemAvailable`` (``/proc/meminfo``), else free physical pages; CUDA: the free
    memory ``torch.cuda.mem_get_info`` reports."""
    if not device.is_cpu:
        return int(torch.cuda.mem_get_info(device.ordinal)[0])
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def format_bytes(n: int) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover



def world_chunk(device, worlds: int) -> tuple[int, int]:
    """``(threads, chunk)`` of a launch over ``worlds`` worlds on ``device`` (a ``wp.Device``):
    one world a thread on a GPU, one thread for all of them on the CPU, where Warp runs the
    threads one after another and copies the kernel's arguments (a world struct of a few KB)
    into each: a cost of a few hundred instructions a world and kernel that one thread pays once."""
    if device.is_cpu:
        return min(worlds, 1), max(worlds, 1)
    return worlds, 1

class BatchedEnv:
    """E worlds stepped together by Warp kernels, exposed as torch tensors.

    Subclasses set ``groups`` (ordered, in agent order), allocate their buffers and implement
    ``_launch_step`` (the kernels of one step, captured into a graph),
    ``_launch_observe(write_final)`` (reset the worlds flagged in ``_reset_now``, then
    observe every world) and ``_state_arrays``.  Before allocating, a subclass passes its
    estimate of the bytes per world to ``_check_allocation``, which refuses (``MemoryError``) a
    batch the device cannot hold.  The scenario interface below (see
    ``war_envs.core.scenario``) has defaults; a subclass overrides what it needs.
    """

    #: id under which the scenario is registered (set by subclasses)
    env_id: str = ""
    #: autoreset used when the caller does not choose one
    default_autoreset_mode = AutoresetMode.SAME_STEP
    #: Gymnasium-style metadata (``render_modes``, ``render_fps``) the Gymnasium front ends merge
    #: over their defaults (``{}``: the defaults)
    metadata: dict = {}

    # ------------------------------------------------------------------ scenario interface
    #: the task metrics (and reward conventions) a trainer logs per finished episode, in column order
    episode_metrics: tuple[EpisodeMetric, ...] = ()
    #: the per-episode column a progress bar shows (``episode_return`` or an ``episode_metrics`` name)
    progress_metric: str = "episode_return"
    #: info entries holding one value per agent (``[E, A]``, agent order); the other tensor
    #: entries are per world (``[E]``) or per landmark
    per_agent_metrics: tuple[str, ...] = ()
    #: the constructor argument that sets the episode length (``gym.make_vec(max_episode_steps=)``)
    episode_length_kwarg: str = "max_cycles"
    #: episodes last ``<episode_length_kwarg> + episode_length_offset`` steps (``max_cycles``)
    episode_length_offset: int = 0
    #: whether agents can leave the game before the episode ends (then ``alive_mask`` says who is in)
    agents_can_leave: bool = False

    #: whether some actions are unavailable at times (then ``action_mask`` says which, and
    #: every step's ``info["action_mask"]`` holds the same)
    has_action_mask: bool = False
    #: whether the kernels clip Box actions into the space, as the reference does (the validated
    #: step then takes any finite float32 value; NaN and inf are still refused)
    clips_actions: bool = False
    #: state entries holding random draws already made that no agent has seen yet (the world's
    #: stream key ``rng_key`` is always such an entry); ``redraw_private_future`` re-draws them
    private_future: tuple[str, ...] = ()
    #: whether a reset draws the start from the world's stream (False: every episode of the
    #: configuration starts from the same state, as VMAS's ``multi_give_way``)
    random_start: bool = True
    #: False where the observation is a constant (core/scenario.py: ``informative_observation``)
    informative_observation: bool = True

    @classmethod
    def evaluation_variants(cls, env_kwargs: dict) -> dict[str, dict]:
        """Other start distributions an evaluation should also play: ``{name: kwargs}``, each
        ``kwargs`` overriding ``env_kwargs`` (the run's own constructor arguments); variants
        equal to the run's own env are left out.  Default: none."""
        return {}

    @property
    def alive_mask(self) -> dict[str, torch.Tensor]:
        """``{group: bool [E, n_g]}``: who is in the game.  Here (``agents_can_leave`` False)
        every agent, always: all-True tensors made once, to be read, never written."""
        self._check_open()
        if self._all_alive is None:
            self._all_alive = {g: torch.ones(self.num_envs, s.n_agents, dtype=torch.bool,
                                             device=self.torch_device)
                               for g, s in self.groups.items()}
        return self._all_alive

    def action_mask(self) -> dict[str, torch.Tensor]:
        """``{group: bool [E, n_g, n]}``: which of a ``Discrete(n)`` group's actions each agent
        may take now (for the observations just returned).  Here (``has_action_mask`` False)
        every action, always: all-True tensors made once, to be read, never written.
        ``TypeError`` for a group whose action space is not ``Discrete``."""
        self._check_open()
        if self._all_actions is None:
            masks = {}
            for g, s in self.groups.items():
                if isinstance(s.action_space, gymnasium.spaces.Discrete):
                    masks[g] = torch.ones(self.num_envs, s.n_agents, int(s.action_space.n),
                                          dtype=torch.bool, device=self.torch_device)
            self._all_actions = masks
        missing = [g for g in self.groups if g not in self._all_actions]
        if missing:
            spaces = {g: self.groups[g].action_space for g in missing}
            raise TypeError(f"action_mask: only Discrete action spaces have an action mask; "
                            f"{self.env_id or type(self).__name__} has {spaces}")
        return self._all_actions

    @property
    def world_state_dim(self) -> int:
        """The size of ``world_state()``; 0 here (no world state beyond the observations)."""
        return 0

    def world_state(self) -> torch.Tensor:
        """``[E, world_state_dim]``: what the world holds beyond the agents' observations (SMAC's
        global state), for the observations just returned.  Scenarios with one override this
        (and ``world_state_dim``); here it raises ``TypeError``."""
        raise TypeError(f"world_state: {self.env_id or type(self).__name__} declares no world state "
                        f"(world_state_dim is 0); env.state() is every agent's observation")

    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of world ``world`` (no display needed).
        Scenarios with a renderer override this; here it raises ``TypeError``."""
        raise TypeError(f"render_mode: {self.env_id or type(self).__name__} has no renderer "
                        f"({type(self).__name__} does not implement render_frame); use render_mode=None")

    def __init__(self, *, num_envs: int = 1, device="cpu", seed: int | None = None,
                 precision: str = "float32", autoreset_mode=None,
                 num_threads: int | None = None) -> None:
        init_warp()
        self.num_envs = v.check_int("num_envs", num_envs, minimum=1)
        self.device = resolve_device(device)
        self.torch_device = torch.device("cpu" if self.device.is_cpu else f"cuda:{self.device.ordinal}")
        v.check_choice("precision", precision, tuple(_PRECISIONS))
        self.precision = precision
        self.wp_float, self.torch_float = _PRECISIONS[precision]
        self.autoreset_mode = parse_autoreset_mode(
            self.default_autoreset_mode if autoreset_mode is None else autoreset_mode)
        self._mode_code = _MODE_CODES[self.autoreset_mode]
        seed = v.check_seed("seed", seed)
        self._seed = int(np.random.SeedSequence().entropy % 2**31) if seed is None else seed
        self.num_threads = self._choose_threads(v.check_int("num_threads", num_threads, minimum=1,
                                                             allow_none=True))
        bounds = np.linspace(0, self.num_envs, self.num_threads + 1).astype(int)
        self._shards = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
        self._pool = (concurrent.futures.ThreadPoolExecutor(self.num_threads, "war-envs-shard")
                      if self.num_threads > 1 else None)
        self._closed = False
        self._needs_reset = True
        self._graph = None
        self._info_base: dict | None = None
        self._torch_streams: dict[int, wp.Stream] = {}
        self._all_alive: dict[str, torch.Tensor] | None = None
        self._all_actions: dict[str, torch.Tensor] | None = None
        self.groups: dict[str, GroupSpec] = {}

    #: worlds per CPU shard below which one thread is faster than a thread pool
    MIN_WORLDS_PER_THREAD = 2048

    def _choose_threads(self, requested: int | None) -> int:
        """CPU worlds are split into shards replayed on separate threads; results do not depend
        on the split (worlds are independent).  Default: one shard per available core, at least
        MIN_WORLDS_PER_THREAD worlds each.  CUDA: one shard."""
        if not self.device.is_cpu:
            if requested not in (None, 1):
                raise ValueError(f"num_threads: CUDA devices step every world in one launch; got {requested}")
            return 1
        if requested is not None:
            if requested > self.num_envs:
                raise ValueError(f"num_threads: expected at most num_envs={self.num_envs}, got {requested}")
            return requested
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        return max(1, min(cores, self.num_envs // self.MIN_WORLDS_PER_THREAD))

    # ------------------------------------------------------------------ subclass interface
    def _launch_step(self, worlds: slice | None) -> None:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _launch_step")

    def _launch_observe(self, write_final: bool) -> None:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _launch_observe")

    def _state_arrays(self) -> dict[str, wp.array]:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement _state_arrays")

    # ------------------------------------------------------------------ common buffers
    def _allocate_common(self, num_agents: int) -> None:
        """Per-world clock, stream keys, flags and rewards, and their torch views."""
        self.num_agents = num_agents
        self._world_ids: set[int] = set()
        self._world_seed = self._world_array((), wp.int32)
        self._world_seed.assign(world_seeds(self._seed, self.num_envs))
        self._episode = self._world_array((), wp.int32)
        self._t = self._world_array((), wp.int32)
        self._pending_reset = self._world_array((), wp.int32)
        self._reset_now = self._world_array((), wp.int32)
        self._terminated = self._world_array((), wp.bool)
        self._truncated = self._world_array((), wp.bool)
        self._reward = self._world_array((num_agents,), self.wp_float)
        self._obs_arrays: dict[str, wp.array] = {}
        self._final_obs_arrays: dict[str, wp.array] = {}

    def _common_world_bytes(self, num_agents: int) -> int:
        """Bytes per world of ``_allocate_common``'s buffers (keep the two in step)."""
        return world_bytes(*[((), wp.int32)] * 5, *[((), wp.bool)] * 2, ((num_agents,), self.wp_float))

    def _check_allocation(self, bytes_per_world: int, num_agents: int) -> None:
        """Refuse, before anything is allocated, a batch whose per-world buffers
        (``bytes_per_world`` each, the scenario's estimate) do not fit in the memory available
        on the device: ``MemoryError`` naming worlds x agents, the bytes needed and the bytes
        available."""
        needed = self.num_envs * int(bytes_per_world)
        available = available_memory(self.device)
        if available is None or needed <= available:
            return
        fit = available // max(int(bytes_per_world), 1)
        raise MemoryError(
            f"{self.env_id or type(self).__name__}: num_envs={self.num_envs} worlds x {num_agents} agents "
            f"need about {format_bytes(needed)} ({needed} bytes, {int(bytes_per_world)} per world) but "
            f"{format_bytes(available)} ({available} bytes) is available on {self.device.alias}; "
            f"use at most about num_envs={fit} or fewer agents")

    def _wire_common(self, w) -> None:
        """``_allocate_common``'s buffers into world struct ``w`` (every family's fields
        ``world_seed``, ``episode``, ``t``, ``pending_reset``, ``reset_now``, ``reward``,
        ``terminated``, ``truncated``)."""
        w.world_seed, w.episode, w.t = self._world_seed, self._episode, self._t
        w.pending_reset, w.reset_now = self._pending_reset, self._reset_now
        w.reward, w.terminated, w.truncated = self._reward, self._terminated, self._truncated

    def _world_array(self, tail: tuple[int, ...], dtype) -> wp.array:
        """A zeroed ``[E, *tail]`` buffer, registered as per-world so shards can slice it."""
        array = wp.zeros((self.num_envs, *tail), dtype=dtype, device=self.device)
        self._world_ids.add(id(array))
        return array

    # Scenarios keep every array and parameter in one ``wp.struct`` instance ``self._w`` of type
    # ``self._Struct`` and launch one thread per world (or per world and agent) with it.
    def _struct(self, worlds: slice | None):
        """The world struct for a shard of worlds (its per-world arrays sliced to the shard)."""
        if worlds is None or (worlds.start == 0 and worlds.stop == self.num_envs):
            return self._w
        key = (worlds.start, worlds.stop)
        shard = self._shard_structs.get(key)
        if shard is None:
            shard = self._Struct()
            for name in self._Struct.vars:
                value = getattr(self._w, name)
                if isinstance(value, wp.array) and id(value) in self._world_ids and value.size:
                    value = value[worlds]
                setattr(shard, name, value)
            self._shard_structs[key] = shard
        return shard

    def _launch_chunked(self, kernel, worlds: slice | None, *extra) -> None:
        """Launch a world kernel whose thread runs ``chunk`` consecutive worlds (its last
        argument; ``world_chunk``: every world of the launch in one thread on the CPU, one world a
        thread on a GPU), arguments the world struct, then ``extra``."""
        n = self.num_envs if worlds is None else worlds.stop - worlds.start
        threads, chunk = world_chunk(self.device, n)
        wp.launch(kernel, dim=threads, inputs=[self._struct(worlds), *extra, chunk], device=self.device)

    def _launch_world(self, kernel, worlds: slice | None, *extra, per_agent: bool = False) -> None:
        """Launch ``kernel`` (arguments: the world struct, then ``extra``) with one thread per
        world of ``worlds`` (all if None), or with ``per_agent`` one per (world, agent)."""
        n = self.num_envs if worlds is None else worlds.stop - worlds.start
        dim = (n, self.num_agents) if per_agent else n
        wp.launch(kernel, dim=dim, inputs=[self._struct(worlds), *extra], device=self.device)

    def _make_views(self) -> None:
        """Torch views handed out by reset/step; built once so the hot path allocates little."""
        E = self.num_envs
        reward = wp.to_torch(self._reward)
        term = wp.to_torch(self._terminated)
        trunc = wp.to_torch(self._truncated)
        self._t_view = wp.to_torch(self._t)
        self._reset_now_view = wp.to_torch(self._reset_now)
        self._world_seed_view = wp.to_torch(self._world_seed)
        self._episode_view = wp.to_torch(self._episode)
        self._pending_reset_view = wp.to_torch(self._pending_reset)
        self._reward_view = reward
        # info["_final_obs"]: a bool view written from reset_now at each SAME_STEP step (on the
        # CPU through numpy views of both: cheaper than a torch copy for a few worlds' flags)
        self._final_mask = torch.zeros(E, dtype=torch.bool, device=self.torch_device)
        cpu = self.torch_device.type == "cpu"
        self._final_mask_np = self._final_mask.numpy() if cpu else None
        self._reset_now_np = self._reset_now_view.numpy() if cpu else None
        self._obs = {g: wp.to_torch(self._obs_arrays[g]) for g in self.groups}
        self._final_obs = {g: wp.to_torch(self._final_obs_arrays[g]) for g in self.groups}
        self._rew = self._group_views(reward)
        self._term = {g: term[:, None].expand(E, s.n_agents) for g, s in self.groups.items()}
        self._trunc = {g: trunc[:, None].expand(E, s.n_agents) for g, s in self.groups.items()}
        self._term_world, self._trunc_world = term, trunc
        self._action_parts = self._action_targets()
        # dtypes the trusted path's one-pass check accepts per group (the slow path explains the rest)
        ints = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
        floats = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
        self._trusted_dtypes = {g: floats if part.is_floating_point() else ints
                                for g, part in self._action_parts.items()}
        self._joint_dtypes = floats if self._action_view.is_floating_point() else ints
        self._joint_space = self._shared_action_space()
        self._action_plan = self._validation_plan()

    def _validation_plan(self) -> dict[str, tuple]:
        """What the validated step checks per group, worked out once: ``{group: (name, expected
        shape, space, target view, bounds, numpy target)}``.  ``bounds`` is ``(low, high,
        integer, depth)`` where the batch is small enough for the Python range check (a CPU
        batch of 1..``SMALL_SCAN`` values in at most ``SMALL_ROWS`` rows: Discrete(n) ``[0, n -
        1]``, Box ``[low.min(), high.max()]`` (``clips_actions``: every finite float32); ``depth``
        axes above the last two) and the numpy target a view of the target that takes the
        checked values as they are, else both None (the full check only)."""
        plan = {}
        for g, spec in self.groups.items():
            space = spec.action_space
            shape = (self.num_envs, spec.n_agents, *space.shape)
            bounds = None
            n_values, n_rows = int(np.prod(shape)), int(np.prod(shape[:-1]))
            if self.torch_device.type == "cpu" and 0 < n_values <= SMALL_SCAN and n_rows <= SMALL_ROWS:
                if isinstance(space, gymnasium.spaces.Discrete):
                    bounds = (0, int(space.n) - 1, True)
                elif isinstance(space, gymnasium.spaces.Box) and self.clips_actions:
                    bounds = (-v.FLOAT32_MAX, v.FLOAT32_MAX, False)
                elif isinstance(space, gymnasium.spaces.Box):
                    bounds = (float(space.low.min()), float(space.high.max()), False)
                if bounds is not None:
                    bounds += (len(shape) - 2,)
            part = self._action_parts[g]
            plan[g] = (f"actions[{g!r}]", shape, space, part, bounds,
                       part.numpy() if bounds is not None else None)
        return plan

    def _shared_action_space(self) -> gymnasium.Space | None:
        """The action space every agent has, if every group's is the same one and the groups'
        targets tile the whole action buffer (then ``step`` also takes one ``[E, A, ...]``
        tensor); else None."""
        spaces = [s.action_space for s in self.groups.values()]
        if not spaces or any(space != spaces[0] for space in spaces):
            return None
        full = tuple(self._action_view.shape)
        if full[:2] != (self.num_envs, sum(s.n_agents for s in self.groups.values())):
            return None
        for g, s in self.groups.items():
            part = self._action_parts[g]
            if (tuple(part.shape) != (self.num_envs, s.n_agents, *full[2:])
                    or part.data_ptr() != self._action_view[:, s.start:s.stop].data_ptr()):
                return None
        return spaces[0]

    @property
    def joint_action_space(self) -> gymnasium.Space | None:
        """The one action space all agents share (every group has the same space), or None.
        When it is set, ``step`` also takes a single ``[E, num_agents, ...]`` tensor of every
        agent's action in agent order (one check and one copy instead of one per group)."""
        return self._joint_space

    def _action_targets(self) -> dict[str, torch.Tensor]:
        """``{group: the view of the action buffer its actions are copied into}`` (``[E, n_g, ...]``
        of ``_action_view``, agent columns ``start:stop``); scenarios whose groups' actions differ
        in width override this."""
        return self._group_views(self._action_view)

    # ------------------------------------------------------------------ properties
    @property
    def agents(self) -> list[str]:
        """All agent names in the reference order."""
        return [a for spec in self.groups.values() for a in spec.agents]

    @property
    def state_dim(self) -> int:
        return sum(s.n_agents * s.obs_dim for s in self.groups.values())

    @property
    def seed(self) -> int | None:
        """The seed of the last full seeding (make or reset(seed=...)); None after a reset with
        per-world seeds."""
        return self._seed

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, mask=None) -> dict[str, torch.Tensor]:
        """Start fresh random episodes.

        ``seed`` reseeds (an int: world w gets the stream of seed + w; ``num_envs`` ints: world
        w gets the stream of ``seed[w]``, that of a one-world env seeded ``seed[w]``; episode
        counters restart); ``mask`` (bool ``[E]``) resets only those worlds.  Returns
        ``{group: obs [E, n_g, d_g]}`` (views: the next call overwrites them).
        """
        self._check_open()
        seed = check_world_seeds("seed", seed, self.num_envs)
        if mask is None:
            # torch ops on the buffers' views: the only Warp work is the reset kernel
            if seed is not None:
                self._seed = seed if isinstance(seed, int) else None
                keys = torch.from_numpy(world_seeds(seed, self.num_envs))
                self._world_seed_view.copy_(keys)
                self._episode_view.zero_()
            self._pending_reset_view.zero_()
            self._term_world.zero_()
            self._trunc_world.zero_()
            self._reward_view.zero_()
            self._reset_now_view.fill_(1)
            self._observe_now()
            self._reset_now_view.zero_()
        else:
            mask_t = self._check_world_mask("mask", mask)
            if seed is not None:
                seeds = torch.from_numpy(world_seeds(seed, self.num_envs)).to(self.torch_device)
                self._world_seed_view[mask_t] = seeds[mask_t]
                self._episode_view[mask_t] = 0
            self._pending_reset_view[mask_t] = 0
            self._term_world[mask_t] = False
            self._trunc_world[mask_t] = False
            self._reward_view[mask_t] = 0
            self._reset_now_view.copy_(mask_t.to(torch.int32))
            self._observe_now()
            self._reset_now_view.zero_()
        self._needs_reset = False
        return self._obs

    def step(self, actions: Mapping[str, torch.Tensor], *, trusted: bool = False):
        """Advance every world one step.

        ``actions``: ``{group: Tensor[E, n_g]}`` (Discrete, any integer dtype),
        ``{group: Tensor[E, n_g, m]}`` (MultiDiscrete) or ``{group: Tensor[E, n_g, act_dim]}``
        (Box).  Where every group has the same action space (``joint_action_space`` is not
        None), also one tensor ``[E, num_agents, ...]`` of all agents' actions in agent order
        (a shared policy's output as it is; one check and one copy; a torch tensor or a numpy
        array).  Returns ``obs, rew, term, trunc, info``: dicts of ``[E, n_g(, d)]`` tensors
        (views; the next call overwrites them).  ``info`` holds ``final_obs`` / ``_final_obs``
        (SAME_STEP autoreset), ``t`` and the task metrics.

        ``trusted=True`` is the path for callers that drew the actions from the action spaces
        themselves (a trainer's sampler): keys, tensor type, device, shape and dtype kind are
        checked (metadata only), the *values* are not — no range or NaN scan, so no host
        synchronization on a GPU.  Values outside the space then reach the kernels unchecked:
        never pass user input this way.

        Small batches: a step costs a few microseconds of Python around one replay of the
        captured kernels (torch views, the info dict and its ``_final_obs`` mask are built
        once; the validated step's per-group facts are worked out once, and a CPU batch of at
        most ``SMALL_SCAN`` action values in at most ``SMALL_ROWS`` rows, e.g. one world's, is
        range-checked from one ``tolist()`` instead of a reduction).
        """
        if self._closed:
            self._check_open()
        if self._needs_reset:
            raise RuntimeError(f"{self.env_id}: step() called before reset(); call reset() first")
        if isinstance(actions, (torch.Tensor, np.ndarray)):
            self._write_joint_actions(actions, trusted)
        elif trusted:
            self._write_trusted_actions(actions)
        else:
            self._write_actions(actions)
        self._run_step()
        return self._obs, self._rew, self._term, self._trunc, self._step_info()

    def state(self) -> torch.Tensor:
        """Centralised-critic input ``[E, state_dim]``: every agent's observation, in agent order
        (mpe2's ``state()``).  A new tensor."""
        self._check_open()
        return torch.cat([self._obs[g].reshape(self.num_envs, -1) for g in self.groups], dim=1)

    def elapsed_steps(self) -> torch.Tensor:
        """``int32 [E]`` view: the steps each world's current episode has taken (0 after a reset;
        ``max_cycles`` at the time limit): the observations just returned were made after that many
        steps.  Read it, never write it."""
        self._check_open()
        return self._t_view

    def world_flags(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(terminated, truncated)``: bool ``[E]`` views of the last step's per-world flags."""
        self._check_open()
        return self._term_world, self._trunc_world

    def observations(self) -> dict[str, torch.Tensor]:
        """The current observations (the views last returned by reset/step)."""
        self._check_open()
        return self._obs

    def get_state(self, worlds=None) -> dict[str, torch.Tensor]:
        """A copy of every world's state: ``{name: Tensor[E, ...]}`` (see ``state_keys``);
        ``worlds`` (an index or bool mask): those worlds' rows only, in that order."""
        self._check_open()
        index = self._check_world_index("worlds", worlds, distinct=False)
        if index is None:
            return {k: wp.to_torch(a).clone() for k, a in self._state_arrays().items()}
        return {k: wp.to_torch(a)[index] for k, a in self._state_arrays().items()}

    @property
    def state_keys(self) -> tuple[str, ...]:
        return tuple(self._state_arrays())

    def set_state(self, state: Mapping[str, torch.Tensor], worlds=None, *, trusted: bool = False
                  ) -> dict[str, torch.Tensor]:
        """Write (some of) ``get_state()``'s tensors back into ``worlds`` (all if None) and
        recompute observations.  Every tensor is checked (keys, shape, dtype, device, finite)
        before anything is written, so a bad call leaves every world untouched.

        ``trusted=True`` (a planner writing back states that ``get_state`` gave it): no checks
        and no host synchronization; ``worlds`` must then be None or an int64 index tensor on
        the env's device, and the tensors what ``get_state`` returns for those rows."""
        self._check_open()
        arrays = self._state_arrays()
        if trusted:
            for key, tensor in state.items():
                target = wp.to_torch(arrays[key])
                if worlds is None:
                    target.copy_(tensor)
                else:
                    target[worlds] = tensor
            return self._state_set()
        if not isinstance(state, Mapping):
            raise TypeError(f"state: expected a dict with keys from {list(arrays)}, got {type(state).__name__}")
        unknown = [k for k in state if k not in arrays]
        if unknown:
            raise ValueError(f"state: unknown keys {unknown}; expected keys from {list(arrays)}")
        index = self._check_world_index("worlds", worlds)
        n = self.num_envs if index is None else len(index)
        checked = {}
        for key, value in state.items():
            target = wp.to_torch(arrays[key])
            tensor = v.as_tensor(f"state[{key!r}]", value, self.torch_device)
            v.check_shape(f"state[{key!r}]", tensor, (n, *target.shape[1:]))
            if target.is_floating_point():
                if not tensor.is_floating_point():
                    raise TypeError(f"state[{key!r}]: expected a floating dtype, got {tensor.dtype}")
                if not torch.isfinite(tensor).all():
                    raise ValueError(f"state[{key!r}]: expected finite values, got NaN or inf")
            elif target.dtype == torch.bool:
                if tensor.dtype != torch.bool:
                    raise TypeError(f"state[{key!r}]: expected dtype torch.bool, got {tensor.dtype}")
            else:
                if tensor.is_floating_point() or tensor.dtype == torch.bool:
                    raise TypeError(f"state[{key!r}]: expected an integer dtype, got {tensor.dtype}")
                low = self._state_int_minimum.get(key, 0)
                if tensor.numel() and (int(tensor.min()) < low or int(tensor.max()) > 2**31 - 1):
                    raise ValueError(f"state[{key!r}]: expected values in [{low}, 2**31), got out of range")
            self._check_state_value(key, tensor)
            checked[key] = tensor
        for key, tensor in checked.items():
            target = wp.to_torch(arrays[key])
            if index is None:
                target.copy_(tensor)
            else:
                target[index] = tensor.to(target.dtype)
        return self._state_set()

    def _state_set(self) -> dict[str, torch.Tensor]:
        """After state was written: derived state, observations; the env is stepped from it."""
        self._state_written()
        self._reset_now_view.zero_()
        self._observe_now()
        self._needs_reset = False
        return self._obs

    def redraw_private_future(self, worlds, generator: torch.Generator) -> None:
        """Re-draw, in ``worlds`` (an index or bool mask; None: every world), the random draws
        already in the state that no agent has seen (``private_future``, and the stream key
        ``rng_key`` that every later draw comes from: the next start, in-episode noise) from
        ``generator`` (a ``torch.Generator`` on the env's device), consistently with what the
        agents have seen so far: the worlds then continue as a sample of what could follow
        their past, not as the future the originals hold.  A planner does this to its copies
        of real worlds so that it does not peek.  Observations are unchanged."""
        self._check_open()
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
        if generator.device != self.torch_device:
            raise ValueError(f"generator: expected a generator on the env's device {self.torch_device}, got "
                             f"{generator.device}")
        index = self._check_world_index("worlds", worlds)
        if index is None:
            index = torch.arange(self.num_envs, device=self.torch_device)
        key = wp.to_torch(self._world_seed)
        key[index] = torch.randint(0, 2**31 - 1, (index.numel(),), generator=generator, device=self.torch_device,
                                   dtype=key.dtype)
        self._redraw_private_future(index, generator)

    def _redraw_private_future(self, worlds: torch.Tensor, generator: torch.Generator) -> None:
        """A scenario with ``private_future`` entries re-draws them here in ``worlds`` (an int64
        index on the env's device), from ``generator`` (none by default)."""

    def clone_worlds(self, src, dst) -> None:
        """Copy worlds ``src`` onto worlds ``dst`` (index sequences of equal length): physics,
        clock and random stream, so a clone replays its source exactly."""
        self._check_open()
        src_i = self._check_world_index("src", src, distinct=False)
        dst_i = self._check_world_index("dst", dst)
        if src_i is None or dst_i is None or len(src_i) != len(dst_i):
            raise ValueError("src, dst: expected two index sequences of the same length")
        for array in self._state_arrays().values():
            t = wp.to_torch(array)
            t[dst_i] = t[src_i].clone()
        self._state_written()
        self._reset_now_view.zero_()
        self._observe_now()

    def close(self) -> None:
        """Release the Warp buffers; later calls raise ``RuntimeError``."""
        if self._closed:
            return
        self._closed = True
        self._graph = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for name in list(vars(self)):
            value = getattr(self, name)
            if isinstance(value, (wp.array, torch.Tensor, np.ndarray, dict)) and name.startswith("_"):
                setattr(self, name, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(id={self.env_id!r}, num_envs={self.num_envs}, "
                f"device={self.device.alias!r}, precision={self.precision!r}, "
                f"autoreset_mode={self.autoreset_mode.name})")

    # ------------------------------------------------------------------ internals
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self.env_id}: the environment is closed")

    #: integer state entries that may hold values below 0 (e.g. -1 for "none"): key -> minimum
    _state_int_minimum: dict[str, int] = {}

    def _state_written(self) -> None:
        """Called after ``set_state``/``clone_worlds`` wrote state, before the observation: a
        scenario re-derives here what its kernels keep incrementally from the state (none by
        default)."""

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        """Scenario-specific range checks for set_state (e.g. non-negative clock)."""

    def _clock_state(self) -> dict[str, wp.array]:
        """The state entries every scenario has after its own: clock, episode count, stream key
        and the NEXT_STEP flag (``_state_arrays``'s tail)."""
        return {"t": self._t, "episode": self._episode, "rng_key": self._world_seed,
                "pending_reset": self._pending_reset}

    def _group_views(self, tensor: torch.Tensor) -> dict[str, torch.Tensor]:
        """``{group: tensor[:, its agents]}`` of a per-agent ``[E, A, ...]`` tensor."""
        return {g: tensor[:, s.start:s.stop] for g, s in self.groups.items()}

    def _checked_world(self, world) -> int:
        """``render_frame``'s world index, checked (and the env open)."""
        self._check_open()
        world = v.check_int("world", world, minimum=0)
        if world >= self.num_envs:
            raise ValueError(f"world: expected 0..{self.num_envs - 1}, got {world}")
        return world

    def _check_world_mask(self, name: str, mask) -> torch.Tensor:
        tensor = v.as_tensor(name, mask, self.torch_device)
        if tensor.dtype != torch.bool:
            raise TypeError(f"{name}: expected a bool mask of shape ({self.num_envs},), got dtype {tensor.dtype}")
        v.check_shape(name, tensor, (self.num_envs,))
        return tensor

    def _check_world_index(self, name: str, worlds, distinct: bool = True):
        if worlds is None:
            return None
        tensor = v.as_tensor(name, worlds, self.torch_device)
        if tensor.dtype == torch.bool:
            v.check_shape(name, tensor, (self.num_envs,))
            return tensor.nonzero().flatten()
        if tensor.is_floating_point() or tensor.dim() != 1:
            raise TypeError(f"{name}: expected a 1-D integer index or a bool mask of shape ({self.num_envs},), "
                            f"got dtype {tensor.dtype} with shape {tuple(tensor.shape)}")
        if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= self.num_envs):
            raise ValueError(f"{name}: expected world indices in [0, {self.num_envs - 1}], got "
                             f"{tensor.min().item()}..{tensor.max().item()}")
        if distinct and tensor.numel() != torch.unique(tensor).numel():
            raise ValueError(f"{name}: expected distinct world indices")
        return tensor.long()

    def _write_trusted_actions(self, actions) -> None:
        """``step(trusted=True)``: metadata checks only, then the copy into the action buffer."""
        self._check_action_keys(actions)
        parts = self._action_parts
        if all(type(actions[g]) is torch.Tensor and actions[g].shape == parts[g].shape
               and actions[g].dtype in self._trusted_dtypes[g] and actions[g].device == self.torch_device
               for g in parts):  # the common case, checked in one pass
            for g, part in parts.items():
                part.copy_(actions[g])
            return
        for g in self.groups:
            tensor = actions[g]
            part = self._action_parts[g]
            if not isinstance(tensor, torch.Tensor):
                raise TypeError(f"actions[{g!r}]: the trusted path takes torch tensors, got {type(tensor).__name__}")
            if tensor.device != self.torch_device:
                raise ValueError(f"actions[{g!r}]: expected a tensor on device {self.torch_device}, got one on "
                                 f"{tensor.device}")
            if tuple(tensor.shape) != tuple(part.shape):
                raise ValueError(f"actions[{g!r}]: expected shape {tuple(part.shape)}, got {tuple(tensor.shape)}")
            _check_dtype_kind(f"actions[{g!r}]", tensor, part)
        for g in self.groups:
            self._action_parts[g].copy_(actions[g])

    def _write_joint_actions(self, actions, trusted: bool) -> None:
        """``step(tensor)``: all agents' actions in one ``[E, A, ...]`` tensor."""
        target = self._action_view
        if self._joint_space is None:
            spaces = {g: s.action_space for g, s in self.groups.items()}
            raise TypeError(f"actions: a single tensor of all agents' actions needs every group to have "
                            f"the same action space, here {spaces}; pass {{group: tensor}}")
        if (trusted and type(actions) is torch.Tensor and actions.shape == target.shape
                and actions.dtype in self._joint_dtypes and actions.device == self.torch_device):
            target.copy_(actions)
            return
        if trusted and not isinstance(actions, torch.Tensor):
            raise TypeError(f"actions: the trusted path takes torch tensors, got {type(actions).__name__}")
        if trusted and actions.device != self.torch_device:
            raise ValueError(f"actions: expected a tensor on device {self.torch_device}, got one on "
                             f"{actions.device}")
        tensor = v.as_tensor("actions", actions, self.torch_device)
        v.check_shape("actions", tensor, tuple(target.shape))
        if trusted:
            _check_dtype_kind("actions", tensor, target)
            target.copy_(tensor)
            return
        # the per-group checks (values, dtypes; their errors name the group), then one copy
        self._write_actions({g: tensor[:, s.start:s.stop] for g, s in self.groups.items()})

    def _write_actions(self, actions) -> None:
        """Validate every group's actions (tensor or array, device, shape, dtype kind, values),
        then copy them into the kernels' action buffer (nothing is written unless every group
        passes).  The checks' facts come from ``_validation_plan``: a torch tensor on the env's
        device with the expected shape goes straight to the values; a small CPU batch's values
        are shown in range in Python (``_small_values``) and written from the Python lists that
        gave them (one numpy assignment, cheaper than a torch copy at this size); anything not
        shown valid there goes through ``validation``'s full checks, which raise the error or
        pass, and is copied by torch."""
        self._check_action_keys(actions)
        device = self.torch_device
        checked = []
        for g, (name, shape, space, part, bounds, part_np) in self._action_plan.items():
            tensor = actions[g]
            if type(tensor) is not torch.Tensor or tensor.device != device:
                tensor = v.as_tensor(name, tensor, device)
            if tensor.shape != shape:
                v.check_shape(name, tensor, shape)
            values = None if bounds is None else _small_values(tensor, *bounds)
            if values is None:
                v.check_in_space(name, tensor, space, clipped=self.clips_actions)
                checked.append((part, tensor))
            else:
                checked.append((part_np, values))
        for target, values in checked:
            if type(values) is list:  # checked in Python: nested lists of in-range numbers
                target[...] = values
            else:
                target.copy_(values)

    def _check_action_keys(self, actions) -> None:
        """``actions`` is a dict keyed by exactly the groups (else ``check_keys``' error)."""
        if not (isinstance(actions, dict) and actions.keys() == self.groups.keys()):
            v.check_keys("actions", actions, list(self.groups))

    def _warp_work(self):
        """Context for every Warp launch, replay or memset of this env.

        It never overlaps another thread's graph capture (``capture_guard``).  On CUDA it also
        orders Warp's work after the torch work queued so far on torch's current stream (e.g.
        the action copy) and torch's later work after Warp's, whatever streams the caller uses;
        on the CPU both run synchronously (the guard alone: no generator per step)."""
        if self.torch_device.type == "cpu":
            return capture_guard.shared()
        return self._cuda_warp_work()

    @contextlib.contextmanager
    def _cuda_warp_work(self):
        with capture_guard.shared():
            with self._torch_stream_order():
                yield

    @contextlib.contextmanager
    def _torch_stream_order(self):
        torch_stream = torch.cuda.current_stream(self.torch_device)
        cached = self._torch_streams.get(torch_stream.cuda_stream)
        if cached is None:
            cached = self._torch_streams[torch_stream.cuda_stream] = wp.stream_from_torch(torch_stream)
        warp_stream = wp.get_stream(self.device)
        warp_stream.wait_stream(cached)
        yield
        cached.wait_stream(warp_stream)

    def _observe_now(self) -> None:
        """Reset the worlds flagged in ``_reset_now`` and recompute every observation."""
        with self._warp_work():
            self._launch_observe(write_final=False)

    def _run_step(self) -> None:
        """Replay the captured step: one graph per shard of worlds, shards on a thread pool
        (Warp's CPU replay releases the GIL, so shards use separate cores)."""
        graphs = self._graph
        if graphs is None:
            graphs = []
            with capture_guard.exclusive():
                for worlds in self._shards:
                    with wp.ScopedCapture(device=self.device) as capture:
                        self._launch_step(worlds)
                    graphs.append(capture.graph)
            self._graph = graphs
        with self._warp_work():
            if len(graphs) == 1:
                wp.capture_launch(graphs[0])
            else:
                list(self._pool.map(wp.capture_launch, graphs))

    def _step_info(self) -> dict:
        """A new dict of the views (built once; ``_final_obs`` refreshed from ``reset_now``)."""
        if self._info_base is None:
            info = {"t": self._t_view}
            if self.autoreset_mode == AutoresetMode.SAME_STEP:
                info["final_obs"] = self._final_obs
                info["_final_obs"] = self._final_mask
            info.update(self._metrics)
            self._info_base = info
        if self._mode_code == _SAME_STEP_CODE:
            if self._final_mask_np is not None:
                self._final_mask_np[...] = self._reset_now_np
            else:
                self._final_mask.copy_(self._reset_now_view)
        return dict(self._info_base)


def _check_dtype_kind(name: str, tensor: torch.Tensor, target: torch.Tensor) -> None:
    """The trusted path's dtype check: floating actions for a floating buffer, integer (not
    bool) ones for an integer buffer."""
    if tensor.is_floating_point() != target.is_floating_point() or tensor.dtype == torch.bool:
        kind = "a floating" if target.is_floating_point() else "an integer"
        raise TypeError(f"{name}: expected {kind} dtype, got {tensor.dtype}")


def _small_values(tensor: torch.Tensor, low, high, integer: bool, depth: int):
    """``tensor.tolist()`` if ``tensor`` (a CPU tensor of the expected shape, ``depth + 2``
    axes, a small batch: see ``SMALL_SCAN``) has an integer dtype (not bool) when ``integer``,
    else a floating one, and every value lies in ``[low, high]`` (NaN never does).  None means
    "not shown": the caller runs the full check, which raises the error or passes."""
    if integer:
        if tensor.dtype not in _SMALL_SCAN_INTS:
            return None
    elif not tensor.is_floating_point():
        return None
    values = rows = tensor.tolist()  # nested lists (cheaper than flattening the tensor first)
    for _ in range(depth):
        rows = itertools.chain.from_iterable(rows)
    if integer:  # Python ints: min/max over each last-axis row
        for row in rows:
            if min(row) < low or max(row) > high:
                return None
        return values
    for row in rows:  # floats: element by element, so a NaN fails
        for x in row:
            if not low <= x <= high:
                return None
    return values


def stack_group_spaces(spec_obs_dim: int) -> gymnasium.spaces.Box:
    """Observation space of one agent: float32 in (-inf, inf), as mpe2 declares it."""
    return gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(spec_obs_dim,), dtype=np.float32)
