"""What Gymnasium's classic control tasks share as batched scenarios (``ClassicControl``): the
agent group, buffers, the world struct, the step and observe kernels, reset bounds, Gymnasium's
float32 rounding, the ``reached_goal`` metric and a small canvas for the renderers.

**A task is one file**: a ``ClassicControl`` subclass declaring Gymnasium's spaces
(``observation_space``, ``action_space``), the names of Gymnasium's state vector
(``state_names``: ``env.unwrapped.state``, the ``"state"`` entry of ``get_state``), its
per-world integer state besides it (``int_states``), its constants (``_params()``) and three
Warp functions, set as class attributes:

- ``reset_world(w, e)``: world e's start, drawn from its episode stream ``episode_stream(w, e)``
  (Gymnasium's ``np_random.uniform(low, high)`` per component, in order:
  ``uniform(wp.randf(rng), low, high)``);
- ``step_world(w, e) -> bool``: Gymnasium's ``step`` for world e: the dynamics from
  ``w.state[e, :]`` and ``w.action``, the reward into ``w.reward[e, 0]``; returns
  ``terminated``;
- ``observe_world(w, e, out)``: Gymnasium's observation of world e into ``out[e, 0, :]``.

``w`` is the world struct (``world_struct``): the shared fields below plus the task's
constants by name.  The kernels (one thread per world):

    classic_step     NEXT_STEP's reset-only step, or step_world + the clock + Gymnasium's
                     TimeLimit (truncated once t >= max_episode_steps; both flags may hold)
                     + the autoreset (war_envs.core.episode)
    classic_observe  worlds flagged in reset_now: final observation (SAME_STEP), reset_world;
                     then observe_world for every world

Actions: ``Discrete(n)`` tasks read ``w.action[e, 0]`` (int32), ``Box`` tasks
``w.action[e, 0, 0]`` (float32: Gymnasium's action dtype).  The Box tasks clip the value as
Gymnasium does, so their validated step takes any finite float32 value (``clips_actions``;
``strict_actions=True`` refuses values outside the space instead).
"""

import math
from typing import Any

import gymnasium
import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import BatchedEnv, GroupSpec, world_bytes
from war_envs.core.episode import (
    AUTORESET_SAME_STEP,
    KERNEL_MODULE_OPTIONS,
    begin_pending_reset,
    end_step,
    start_episode,
)
from war_envs.core.fields import kernel_module_name, module_kernels, struct_type
from war_envs.core.runtime import capture_guard
from war_envs.core.scenario import EpisodeMetric

__all__ = ["Canvas", "ClassicControl", "REACHED_GOAL", "as_float32", "episode_stream", "numpy_square",
           "numpy_square_float32", "reset_bounds", "rotate", "uniform"]

wp.set_module_options(KERNEL_MODULE_OPTIONS)

GROUP = "agent"
AGENT = "agent_0"


# ------------------------------------------------------------------ Warp helpers for the tasks
@wp.func
def as_float32(x: Any):
    """``x`` rounded to float32, in ``x``'s type: what a NumPy float32 array or scalar holds
    (the identity in float32 worlds)."""
    return type(x)(wp.float32(x))


@wp.func
def numpy_square(x: wp.float64, two: wp.float64):
    """``x ** 2`` as NumPy and Python compute it on a float64 scalar: libm's ``pow(x, 2)``, which
    differs from ``x * x`` in the last bit in about 0.1 % of cases.  ``two`` is a runtime 2 (the
    task's ``two`` constant) so that the compiler keeps the call instead of turning it into
    ``x * x``.  (Float32 worlds: ``x * x``, see the overload below.)"""
    return wp.pow(x, two)


@wp.func
def numpy_square(x: wp.float32, two: wp.float32):
    """Float32 worlds: ``x * x`` (several times cheaper than ``powf``; float32 worlds agree with
    Gymnasium to float32 rounding, not bit for bit)."""
    return x * x


@wp.func
def numpy_square_float32(x: wp.float32, two: wp.float32):
    """``x ** 2`` of a ``np.float32`` scalar: libm's ``powf(x, 2)`` (runtime ``two``, as
    ``numpy_square``), in every world."""
    return wp.pow(x, two)


@wp.func
def episode_stream(w: Any, e: int):
    """World e's random stream of this episode (what its reset draws from)."""
    return wp.rand_init(w.world_seed[e], w.episode[e])


@wp.func
def uniform(u: float, low: Any, high: Any):
    """``U[low, high)`` as NumPy's ``Generator.uniform`` makes it, ``low + (high - low) * u``,
    from ``u = wp.randf(rng) ~ U[0, 1)`` (2^-24 resolution)."""
    return low + (high - low) * type(low)(u)


# ------------------------------------------------------------------ metrics and reset bounds
def _reached_goal(info: dict) -> torch.Tensor:
    return info["reached_goal"]


#: the tasks whose only termination is reaching the goal (``terminates_at_goal``) log it
REACHED_GOAL = EpisodeMetric("reached_goal", "1 if the episode ended by reaching the goal (terminated), else 0 "
                             "(its mean over episodes is the success rate)", _reached_goal, "any")


def reset_bounds(low, high, names: tuple[str, str] = ("low", "high")) -> tuple[float, float]:
    """Gymnasium's reset bounds (``utils.maybe_parse_reset_bounds``): two finite numbers with
    ``low <= high``; a clear error naming the argument otherwise."""
    lo = v.check_float(names[0], low)
    hi = v.check_float(names[1], high)
    if lo > hi:
        raise ValueError(f"{names[0]}, {names[1]}: expected {names[0]} <= {names[1]} (Gymnasium's "
                         f"maybe_parse_reset_bounds), got {names[0]}={lo} > {names[1]}={hi}")
    return lo, hi


# ------------------------------------------------------------------ the world struct and kernels
def world_struct(cls, F, params: dict, action_type):
    """The ``wp.struct`` type of task ``cls``'s worlds in float type ``F``: the shared fields, the
    task's integer states and its constants (a float constant in ``F``, an int as ``int``)."""

    def annotations() -> dict:
        return {
            # Params
            "mode": int, "max_steps": int,
            **{n: (int if type(p) is int else F) for n, p in params.items()},
            # Episode state
            "world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
            "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
            "reset_now": wp.array(dtype=wp.int32),
            # World state: Gymnasium's state vector, the task's integer states
            "state": wp.array2d(dtype=F),
            **{n: wp.array(dtype=wp.int32) for n in cls.int_states},
            # Actions
            "action": action_type,
            # Outputs
            "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
            "truncated": wp.array(dtype=wp.bool),
            "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
            **({"reached_goal": wp.array(dtype=F)} if cls.terminates_at_goal else {}),
        }

    key = (cls, F, tuple((n, type(p) is int) for n, p in params.items()))
    return struct_type(f"{cls.__name__}World_{F.__name__}", cls.__module__, annotations, key)


def step_kernel(World, F, step_world, goal: bool):
    """One world: NEXT_STEP's reset-only step (reward 0, flags false), or the task's step, the
    clock and Gymnasium's TimeLimit: ``truncated = t >= max_episode_steps``, reported with
    ``terminated`` when both hold (as ``gymnasium.wrappers.TimeLimit``).  ``goal``
    (``terminates_at_goal``): ``reached_goal[e]`` is 1 where the step terminated, else 0."""

    def classic_step(w: World):
        e = wp.tid()
        if w.pending_reset[e] != 0:
            w.pending_reset[e] = 0
            w.reward[e, 0] = F(0.0)
            if wp.static(goal):
                w.reached_goal[e] = F(0.0)
            begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            return
        term = step_world(w, e)
        if wp.static(goal):
            w.reached_goal[e] = wp.where(term, F(1.0), F(0.0))
        steps = w.t[e] + 1
        w.t[e] = steps
        end_step(e, term, steps >= w.max_steps, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)

    return classic_step


def observe_kernel(World, reset_world, observe_world):
    """One world: if flagged in ``reset_now``, keep its final observation (``write_final``) and
    draw a fresh start; then its observation."""

    def classic_observe(w: World, write_final: int):
        e = wp.tid()
        if w.reset_now[e] != 0:
            if write_final != 0:
                observe_world(w, e, w.final_obs)
            reset_world(w, e)
            start_episode(e, w.episode, w.t)
        observe_world(w, e, w.obs)

    return classic_observe


def kernels(cls, World, F) -> tuple:
    """The step and observe kernels of task ``cls`` and struct type ``World`` in one Warp module
    (named after them; built once per process)."""
    return tuple(module_kernels(kernel_module_name("classic", cls, F), lambda: (
        step_kernel(World, F, cls.step_world, cls.terminates_at_goal),
        observe_kernel(World, cls.reset_world, cls.observe_world))).values())


# ------------------------------------------------------------------ the base class
class ClassicControl(BatchedEnv):
    """Shared machinery of the classic control tasks.  See the task classes for documentation."""

    episode_length_kwarg = "max_episode_steps"
    #: Gymnasium's spaces of the task (one agent's)
    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Space
    #: Gymnasium's state vector, one name per component (``get_state()["state"]``, ``[E, n]``)
    state_names: tuple[str, ...] = ()
    #: the task's per-world int32 state entries besides ``"state"``: name -> smallest value
    int_states: dict[str, int] = {}
    #: terminated means the goal was reached: ``info["reached_goal"]`` (``[E]``, 1.0 where this
    #: step reached it, else 0.0) and the ``reached_goal`` episode metric
    terminates_at_goal: bool = False
    #: the Warp functions of the task (see the module docstring)
    reset_world = None
    step_world = None
    observe_world = None

    def __init__(self, *, max_episode_steps: int, num_envs: int = 1, device="cpu", seed: int | None = None,
                 precision: str = "float32", autoreset_mode=None, num_threads: int | None = None) -> None:
        super().__init__(num_envs=num_envs, device=device, seed=seed, precision=precision,
                         autoreset_mode=autoreset_mode, num_threads=num_threads)
        self.max_episode_steps = v.check_int("max_episode_steps", max_episode_steps, minimum=1)
        self.max_cycles = self.max_episode_steps
        self._state_int_minimum = dict(self.int_states)
        with capture_guard.shared():  # allocations must not land in another thread's capture
            self._build()

    def _params(self) -> dict:
        """The task's constants: ``{name: value}`` (floats in the world's precision, ints as int)."""
        return {}

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        cls, F = type(self), self.wp_float
        for fn in ("reset_world", "step_world", "observe_world"):
            if getattr(cls, fn) is None:
                raise TypeError(f"{cls.__name__} must set {fn} (a Warp function)")
        n, d = len(cls.state_names), int(self.observation_space.shape[0])
        self.groups[GROUP] = GroupSpec(GROUP, (AGENT,), 0, d, self.action_space, self.observation_space)
        discrete = isinstance(self.action_space, gymnasium.spaces.Discrete)
        action_tail, action_dtype = ((1,), wp.int32) if discrete else ((1, 1), wp.float32)
        # every per-world buffer allocated below: refuse a batch that cannot fit before allocating
        self._check_allocation(self._common_world_bytes(1) + world_bytes(
            ((n,), F), (action_tail, action_dtype), *[((1, d), wp.float32)] * 2,
            *[((), wp.int32)] * len(cls.int_states), *[((), F)] * int(cls.terminates_at_goal)), 1)
        self._allocate_common(1)
        params = self._params()
        action_type = wp.array(dtype=action_dtype, ndim=1 + len(action_tail))
        Struct = world_struct(cls, F, params, action_type)
        w = Struct()
        w.mode, w.max_steps = self._mode_code, self.max_episode_steps
        for name, value in params.items():
            setattr(w, name, value if type(value) is int else F(value))
        self._wire_common(w)
        w.state = self._state = self._world_array((n,), F)
        self._int_state_arrays = {}
        for name in cls.int_states:
            self._int_state_arrays[name] = self._world_array((), wp.int32)
            setattr(w, name, self._int_state_arrays[name])
        w.action = self._world_array(action_tail, action_dtype)
        self._action_view = wp.to_torch(w.action)
        w.obs = self._obs_arrays[GROUP] = self._world_array((1, d), wp.float32)
        w.final_obs = self._final_obs_arrays[GROUP] = self._world_array((1, d), wp.float32)
        self._w, self._Struct, self._shard_structs = w, Struct, {}
        self._step, self._observe = kernels(cls, Struct, F)
        self._metrics = {}
        if cls.terminates_at_goal:
            w.reached_goal = self._world_array((), F)
            self._metrics["reached_goal"] = wp.to_torch(w.reached_goal)
        self._make_views()

    def _state_arrays(self) -> dict[str, wp.array]:
        return {"state": self._state, **self._int_state_arrays, **self._clock_state()}

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        if key == "pending_reset" and tensor.numel() and int(tensor.max()) > 1:
            raise ValueError("state['pending_reset']: expected 0 or 1")

    # ------------------------------------------------------------------ launches
    def _launch_step(self, worlds: slice | None = None) -> None:
        self._launch_world(self._step, worlds)
        self._launch_observe(self._mode_code == AUTORESET_SAME_STEP, worlds)

    def _launch_observe(self, write_final: bool, worlds: slice | None = None) -> None:
        self._launch_world(self._observe, worlds, int(write_final))

    # ------------------------------------------------------------------ rendering
    #: Gymnasium's canvas (width, height) in pixels
    screen_size: tuple[int, int] = (600, 400)

    def _world_state(self, world) -> np.ndarray:
        """World ``world``'s state vector (float64 numpy), after checking the index."""
        world = self._checked_world(world)
        return self._state.numpy()[world].astype(np.float64)

    def _canvas(self, width, height) -> "Canvas":
        return Canvas(self.screen_size, v.check_int("width", width, minimum=1),
                      v.check_int("height", height, minimum=1))


class Canvas:
    """Gymnasium's pygame drawing, headless: shapes given in Gymnasium's screen coordinates
    (pixels of its ``size`` canvas, y up: pygame draws y down and then flips the surface) are
    drawn into a white ``[height, width, 3]`` uint8 image, scaled uniformly to fit and centred.
    Pixels whose centres fall inside a shape take its colour (Gymnasium's anti-aliased edges are
    not reproduced)."""

    def __init__(self, size: tuple[int, int], width: int, height: int) -> None:
        self.image = np.full((height, width, 3), 255, dtype=np.uint8)
        self.scale = min(width / size[0], height / size[1])
        self.origin = ((width - size[0] * self.scale) / 2, (height - size[1] * self.scale) / 2)
        self.size = size
        ys, xs = np.mgrid[0:height, 0:width]
        # every pixel centre in Gymnasium's coordinates (pygame's pixel i is at i; y up after
        # the flip: row r of the picture is the surface's row size[1] - 1 - r)
        self._x = (xs + 0.5 - self.origin[0]) / self.scale - 0.5
        self._y = size[1] - 0.5 - (ys + 0.5 - self.origin[1]) / self.scale

    def polygon(self, points, color) -> None:
        """A filled convex polygon (``gfxdraw.filled_polygon``); ``points`` in order."""
        p = np.asarray(points, dtype=np.float64)
        inside = np.ones(self._x.shape, dtype=bool)
        sign = np.sign(_cross(p[1] - p[0], p[2] - p[0])) or 1.0
        for a, b in zip(p, np.roll(p, -1, axis=0)):
            inside &= sign * ((b[0] - a[0]) * (self._y - a[1]) - (b[1] - a[1]) * (self._x - a[0])) >= 0
        self.image[inside] = color

    def circle(self, x: float, y: float, r: float, color) -> None:
        """A filled disc (``gfxdraw.filled_circle``)."""
        self.image[(self._x - x) ** 2 + (self._y - y) ** 2 <= r * r] = color

    def line(self, a, b, color, width: float = 1.0) -> None:
        """A line from ``a`` to ``b`` of ``width`` pixels (``pygame.draw.line``, ``gfxdraw.hline``)."""
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        d = b - a
        length = math.hypot(*d) or 1.0
        n = np.array([-d[1], d[0]]) / length * (width / 2)
        self.polygon([a - n, b - n, b + n, a + n], color)

    def polyline(self, points, color, width: float = 1.0) -> None:
        """Connected line segments (``pygame.draw.aalines``)."""
        for a, b in zip(points[:-1], points[1:]):
            self.line(a, b, color, width)


def _cross(a, b) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def rotate(points, angle: float) -> np.ndarray:
    """``pygame.math.Vector2(p).rotate_rad(angle)`` for every point (counter-clockwise)."""
    p = np.asarray(points, dtype=np.float64)
    c, s = math.cos(angle), math.sin(angle)
    return np.stack([p[:, 0] * c - p[:, 1] * s, p[:, 0] * s + p[:, 1] * c], axis=-1)
