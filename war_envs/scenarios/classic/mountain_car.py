"""MountainCar-v0 and MountainCarContinuous-v0: Gymnasium 1.4's ``MountainCarEnv`` and
``Continuous_MountainCarEnv`` (Moore's mountain car) in Warp."""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np
import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.classic.base import (REACHED_GOAL, ClassicControl, as_float32, episode_stream,
                                             numpy_square, reset_bounds, rotate, uniform)

__all__ = ["MountainCar", "MountainCarContinuous"]

MIN_POSITION, MAX_POSITION, MAX_SPEED = -1.2, 0.6, 0.07
GRAVITY = 0.0025


# ------------------------------------------------------------------ shared by both tasks
@wp.func
def mountain_car_reset(w: Any, e: int):
    """Position ~ U[low, high), velocity 0."""
    rng = episode_stream(w, e)
    w.state[e, 0] = uniform(wp.randf(rng), w.low, w.high)
    w.state[e, 1] = type(w.low)(0.0)


@wp.func
def mountain_car_observe(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """(position, velocity) as float32."""
    out[e, 0, 0] = wp.float32(w.state[e, 0])
    out[e, 0, 1] = wp.float32(w.state[e, 1])


# ------------------------------------------------------------------ MountainCar-v0
@wp.func
def mountain_car_step(w: Any, e: int):
    """``MountainCarEnv.step`` (float64 in Gymnasium): velocity += (action - 1) force -
    gravity cos(3 position), clipped to +-max_speed; position += velocity, clipped to
    [min, max]; at the left wall a negative velocity becomes 0; terminated at the goal
    (position >= 0.5 and velocity >= goal_velocity); reward -1."""
    position = w.state[e, 0]
    velocity = w.state[e, 1]
    push = type(position)(float(w.action[e, 0] - 1))
    velocity = velocity + (push * w.force + wp.cos(type(position)(3.0) * position) * (-w.gravity))
    velocity = wp.min(wp.max(velocity, -w.max_speed), w.max_speed)
    position = position + velocity
    position = wp.min(wp.max(position, w.min_position), w.max_position)
    if position == w.min_position and velocity < type(position)(0.0):
        velocity = type(position)(0.0)
    w.state[e, 0] = position
    w.state[e, 1] = velocity
    w.reward[e, 0] = type(position)(-1.0)
    return position >= w.goal_position and velocity >= w.goal_velocity


# ------------------------------------------------------------------ MountainCarContinuous-v0
@wp.func
def as_compared(x: Any, is_float32: bool):
    """A Python float constant as NumPy compares it with a scalar: rounded to float32 against a
    ``np.float32`` (``is_float32``), as it is against a float64 one."""
    if is_float32:
        return as_float32(x)
    return x


@wp.func
def add_clipped(x: Any, dx: Any, stored32: bool, low: Any, high: Any):
    """``np.clip(x + dx, low, high)`` as Gymnasium computes it: the sum in float32 where the
    state is stored (``stored32``), each bound compared as NumPy compares it; returns the value
    and whether it is a float32 (False once a bound, a Python float, replaced it)."""
    y = x
    if stored32:
        y = as_float32(x + as_float32(dx))
    else:
        y = x + dx
    y32 = stored32
    if y > as_compared(high, y32):
        y = high
        y32 = False
    if y < as_compared(low, y32):
        y = low
        y32 = False
    return y, y32


@wp.func
def continuous_step(w: Any, e: int):
    """``Continuous_MountainCarEnv.step`` with Gymnasium's arithmetic: force = the action
    clipped to [-1, 1]; velocity += force power - 0.0025 cos(3 position), clipped to
    +-max_speed; position += velocity, clipped to [min, max]; left wall as MountainCar;
    terminated at the goal (position >= 0.45 and velocity >= goal_velocity); reward 100 at the
    goal minus 0.1 action^2 (the action given, unclipped).

    Gymnasium keeps the state in float32 between steps (float64 after a reset, ``t == 0``), and
    NumPy 2 rounds a Python float to float32 when it meets a ``np.float32`` scalar: an
    unclipped force, hence its product with power and the velocity increment, is float32; a
    clipped one is a Python float.  Float64 worlds round at the same places (``as_float32``)."""
    position = w.state[e, 0]
    velocity = w.state[e, 1]
    stored32 = w.t[e] != 0  # the state Gymnasium holds is float32 (not straight from a reset)
    action = w.action[e, 0, 0]
    given = type(position)(action)
    three_p = type(position)(3.0) * position
    if stored32:
        three_p = as_float32(three_p)
    slope = w.gravity * wp.cos(three_p)
    if action > wp.float32(1.0) or action < wp.float32(-1.0):  # min(max(a, -1.0), 1.0): a Python float
        dv = wp.min(wp.max(given, type(position)(-1.0)), type(position)(1.0)) * w.power - slope
    else:  # np.float32 arithmetic
        dv = as_float32(as_float32(given * as_float32(w.power)) - as_float32(slope))
    velocity, v32 = add_clipped(velocity, dv, stored32, -w.max_speed, w.max_speed)
    position, p32 = add_clipped(position, velocity, stored32, w.min_position, w.max_position)
    if position == as_compared(w.min_position, p32) and velocity < type(position)(0.0):
        velocity = type(position)(0.0)
        v32 = False
    term = position >= as_compared(w.goal_position, p32) and velocity >= as_compared(w.goal_velocity, v32)
    cost = numpy_square(given, w.two) * w.action_cost  # math.pow(action[0], 2) * 0.1
    reward = -cost
    if term:
        reward = w.goal_reward - cost
    w.state[e, 0] = as_float32(position)
    w.state[e, 1] = as_float32(velocity)
    w.reward[e, 0] = reward
    return term


_DOC_SHARED = """
    **Agent**: one group ``agent`` with ``agent_0`` (batch API: observations ``[E, 1, 2]``,
    rewards ``[E, 1]``).

    **Observation**: ``Box([-1.2, -0.07], [0.6, 0.07], (2,), float32)``: position and velocity
    (the state, as float32).

    **Start**: position ~ U[low, high), velocity 0 (Gymnasium's ``reset(options={"low": …,
    "high": …})`` as the constructor arguments ``low=-0.6``, ``high=-0.4``; finite,
    ``low <= high``), from the world's own counter-based stream.

    **Info**: ``reached_goal [E]`` (1.0 where this step reached the goal, else 0.0: the
    terminated flag, in the world's precision).  Per-episode metric (``episode_metrics``):
    ``reached_goal`` (1 if the episode ended at the goal).

    **State** (``get_state``/``set_state``): ``state [E, 2]`` (Gymnasium's
    ``env.unwrapped.state``: position, velocity), ``t``, ``episode``, ``rng_key``,
    ``pending_reset``.

    **Rendering**: ``render_frame`` draws Gymnasium's 600 × 400 picture (the hill, the car with
    its wheels, the flag at the goal), scaled to fit ``width`` × ``height`` (default 600 ×
    400); ``render_fps`` 30.
"""


class _MountainCarBase(ClassicControl):
    """What the two mountain cars share: start, observation, spaces, rendering."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
    observation_space = gymnasium.spaces.Box(np.array([MIN_POSITION, -MAX_SPEED], dtype=np.float32),
                                             np.array([MAX_POSITION, MAX_SPEED], dtype=np.float32),
                                             dtype=np.float32)
    state_names = ("position", "velocity")
    terminates_at_goal = True
    episode_metrics = (REACHED_GOAL,)
    reset_world = mountain_car_reset
    observe_world = mountain_car_observe
    goal_position: float

    def __init__(self, *, max_episode_steps: int, goal_velocity: float = 0.0, low: float = -0.6,
                 high: float = -0.4, **kwargs) -> None:
        self.goal_velocity = v.check_float("goal_velocity", goal_velocity)
        self.low, self.high = reset_bounds(low, high)
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        return {"min_position": MIN_POSITION, "max_position": MAX_POSITION, "max_speed": MAX_SPEED,
                "goal_position": self.goal_position, "goal_velocity": self.goal_velocity, "gravity": GRAVITY,
                "low": self.low, "high": self.high}

    def render_frame(self, world: int = 0, *, width: int = 600, height: int = 400,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of world ``world``, drawn as Gymnasium's
        mountain car ``render``.  ``original_cam_range`` is accepted for the front ends and ignored."""
        pos = float(self._world_state(world)[0])
        canvas = self._canvas(width, height)
        scale = self.screen_size[0] / (MAX_POSITION - MIN_POSITION)
        carwidth, carheight, clearance = 40, 20, 10

        def height_at(x):
            return np.sin(3 * x) * 0.45 + 0.55

        xs = np.linspace(MIN_POSITION, MAX_POSITION, 100)
        canvas.polyline(np.stack([(xs - MIN_POSITION) * scale, height_at(xs) * scale], axis=-1), (0, 0, 0))
        base = np.array([(pos - MIN_POSITION) * scale, clearance + height_at(pos) * scale])
        l, r, t, b = -carwidth / 2, carwidth / 2, carheight, 0
        canvas.polygon(rotate([(l, b), (l, t), (r, t), (r, b)], math.cos(3 * pos)) + base, (0, 0, 0))
        for wheel in rotate([(carwidth / 4, 0), (-carwidth / 4, 0)], math.cos(3 * pos)) + base:
            canvas.circle(int(wheel[0]), int(wheel[1]), int(carheight / 2.5), (128, 128, 128))
        flagx = int((self.goal_position - MIN_POSITION) * scale)
        flagy1 = int(height_at(self.goal_position) * scale)
        flagy2 = flagy1 + 50
        canvas.line((flagx, flagy1), (flagx, flagy2), (0, 0, 0))
        canvas.polygon([(flagx, flagy2), (flagx, flagy2 - 10), (flagx + 25, flagy2 - 5)], (204, 204, 0))
        return canvas.image


class MountainCar(_MountainCarBase):
    __doc__ = """MountainCar-v0 — drive an underpowered car up a hill by rocking it (Gymnasium 1.4's
    ``MountainCarEnv``).

    ``war_envs.make("MountainCar-v0", num_envs=E, ...)``.  Every constant, rule and space is
    Gymnasium 1.4.0's ``gymnasium/envs/classic_control/mountain_car.py`` with its registered
    ``max_episode_steps=200``; tests replay whole Gymnasium episodes, goals reached included,
    from Gymnasium's own states (float64 worlds agree to 1e-10).  Float32 worlds compute in
    float32.

    **Actions**: ``Discrete(3)`` (batch API ``[E, 1]``): accelerate left, don't accelerate,
    accelerate right (force ``(action − 1) · 0.001``; ``step(trusted=True)`` does not check
    values).

    **Dynamics**: ``velocity += (action − 1) · 0.001 − 0.0025 cos(3 · position)``, clipped to
    ±0.07; ``position += velocity``, clipped to [−1.2, 0.6]; at the left wall (position −1.2) a
    negative velocity becomes 0.

    **Reward**: −1 every step.

    **Episode end**: ``terminated`` when position ≥ 0.5 and velocity ≥ ``goal_velocity``;
    ``truncated`` after ``max_episode_steps`` steps (both set when both hold, as Gymnasium's
    ``TimeLimit``).
    """ + _DOC_SHARED + """
    **Arguments**: ``max_episode_steps=200``, ``goal_velocity=0.0`` (Gymnasium's), ``low=-0.6``,
    ``high=-0.4`` (Gymnasium's reset options), plus ``num_envs``, ``device``, ``seed``,
    ``precision``, ``autoreset_mode``, ``num_threads``.  ``max_cycles`` is an alias attribute of
    ``max_episode_steps``.

    **Version history**: v0 — Gymnasium 1.4.0's ``MountainCar-v0``.
    """

    env_id = "MountainCar-v0"
    action_space = gymnasium.spaces.Discrete(3)
    goal_position = 0.5
    step_world = mountain_car_step

    def __init__(self, *, max_episode_steps: int = 200, **kwargs) -> None:
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        return {**super()._params(), "force": 0.001}


class MountainCarContinuous(_MountainCarBase):
    __doc__ = """MountainCarContinuous-v0 — the mountain car with a continuous force and an energy cost
    (Gymnasium 1.4's ``Continuous_MountainCarEnv``).

    ``war_envs.make("MountainCarContinuous-v0", num_envs=E, ...)``.  Every constant, rule and
    space is Gymnasium 1.4.0's ``gymnasium/envs/classic_control/continuous_mountain_car.py``
    with its registered ``max_episode_steps=999``; tests replay whole Gymnasium episodes, goals
    reached included, from Gymnasium's own states (float64 worlds agree to 1e-10: Gymnasium keeps
    the state in float32 between steps and computes the force term in float32, NumPy 2's
    promotion rules, and float64 worlds round at the same places).  Float32 worlds compute in
    float32.

    **Actions**: ``Box(-1, 1, (1,), float32)`` (batch API ``[E, 1, 1]``): the force, clipped
    into [−1, 1] as Gymnasium does, so the validated step takes any finite float32 value
    (``clips_actions``); ``strict_actions=True`` refuses values outside [−1, 1] instead.  NaN
    and inf are refused either way (``trusted=True`` checks no values).

    **Dynamics**: ``velocity += force · 0.0015 − 0.0025 cos(3 · position)``, clipped to ±0.07;
    ``position += velocity``, clipped to [−1.2, 0.6]; at the left wall a negative velocity
    becomes 0.

    **Reward**: ``−0.1 · action²`` every step (the action as given: an out-of-range value costs
    its own square, as in Gymnasium), plus 100 at the step that reaches the goal.

    **Episode end**: ``terminated`` when position ≥ 0.45 and velocity ≥ ``goal_velocity``;
    ``truncated`` after ``max_episode_steps`` steps (both set when both hold).
    """ + _DOC_SHARED + """
    **Arguments**: ``max_episode_steps=999``, ``goal_velocity=0.0`` (Gymnasium's), ``low=-0.6``,
    ``high=-0.4`` (Gymnasium's reset options), ``strict_actions=False``, plus ``num_envs``,
    ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  ``max_cycles``
    is an alias attribute of ``max_episode_steps``.

    **Version history**: v0 — Gymnasium 1.4.0's ``MountainCarContinuous-v0``.
    """

    env_id = "MountainCarContinuous-v0"
    action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
    goal_position = 0.45
    step_world = continuous_step

    def __init__(self, *, max_episode_steps: int = 999, strict_actions: bool = False, **kwargs) -> None:
        self.strict_actions = v.check_bool("strict_actions", strict_actions)
        self.clips_actions = not self.strict_actions
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        return {**super()._params(), "power": 0.0015, "action_cost": 0.1, "goal_reward": 100.0, "two": 2.0}
