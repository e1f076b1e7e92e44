"""Pendulum-v1: Gymnasium 1.4's ``PendulumEnv`` (the inverted pendulum swing-up) in Warp."""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np
import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.classic.base import (ClassicControl, as_float32, episode_stream, numpy_square,
                                             numpy_square_float32, rotate, uniform)

__all__ = ["Pendulum"]

MAX_SPEED, MAX_TORQUE, DT, MASS, LENGTH = 8.0, 2.0, 0.05, 1.0, 1.0


@wp.func
def pendulum_reset(w: Any, e: int):
    """theta ~ U[-x_init, x_init), thetadot ~ U[-y_init, y_init) (Gymnasium's
    ``uniform(low=-high, high=high)``)."""
    rng = episode_stream(w, e)
    w.state[e, 0] = uniform(wp.randf(rng), -w.x_init, w.x_init)
    w.state[e, 1] = uniform(wp.randf(rng), -w.y_init, w.y_init)


@wp.func
def angle_normalize(x: Any, two_pi: Any, pi: Any):
    """``((x + pi) % (2 pi)) - pi`` with NumPy's ``%`` (the remainder takes the divisor's sign)."""
    m = wp.mod(x + pi, two_pi)
    if m < type(x)(0.0):
        m = m + two_pi
    return m - pi


@wp.func
def pendulum_step(w: Any, e: int):
    """``PendulumEnv.step``: u = the torque clipped to +-2 (float32, as Gymnasium's
    ``np.clip`` of the float32 action); cost = angle_normalize(th)^2 + 0.1 thdot^2 +
    0.001 u^2 (the last term in float32, NumPy 2's promotion); thdot += (3 g / (2 l) sin th +
    3 / (m l^2) u) dt, clipped to +-8; th += thdot dt; reward -cost; never terminates."""
    th = w.state[e, 0]
    thdot = w.state[e, 1]
    u32 = wp.min(wp.max(w.action[e, 0, 0], -wp.float32(MAX_TORQUE)), wp.float32(MAX_TORQUE))
    u = type(th)(u32)
    an = angle_normalize(th, w.two_pi, w.pi)
    u_sq = type(th)(numpy_square_float32(u32, wp.float32(w.two)))  # u ** 2 of a np.float32
    costs = numpy_square(an, w.two) + w.speed_cost * numpy_square(thdot, w.two) + type(th)(
        as_float32(as_float32(w.torque_cost) * u_sq))
    newthdot = thdot + (w.gravity_coef * wp.sin(th) + as_float32(w.torque_coef * u)) * w.dt
    newthdot = wp.min(wp.max(newthdot, -w.max_speed), w.max_speed)
    w.state[e, 0] = th + newthdot * w.dt
    w.state[e, 1] = newthdot
    w.reward[e, 0] = -costs
    return False


@wp.func
def pendulum_observe(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """[cos theta, sin theta, thetadot] as float32."""
    out[e, 0, 0] = wp.float32(wp.cos(w.state[e, 0]))
    out[e, 0, 1] = wp.float32(wp.sin(w.state[e, 0]))
    out[e, 0, 2] = wp.float32(w.state[e, 1])


class Pendulum(ClassicControl):
    """Pendulum-v1 — swing a pendulum up and keep it upright with a limited torque (Gymnasium
    1.4's ``PendulumEnv``).

    ``war_envs.make("Pendulum-v1", num_envs=E, ...)``.  Every constant, rule and space is
    Gymnasium 1.4.0's ``gymnasium/envs/classic_control/pendulum.py`` with its registered
    ``max_episode_steps=200``; tests replay whole Gymnasium episodes from Gymnasium's own states
    (float64 worlds agree to 1e-10: the torque terms are computed in float32 as NumPy 2 does
    with Gymnasium's float32 action, the rest in float64).  Float32 worlds compute in float32.

    **Agent**: one group ``agent`` with ``agent_0`` (batch API: observations ``[E, 1, 3]``,
    actions ``[E, 1, 1]``, rewards ``[E, 1]``).

    **Actions**: ``Box(-2, 2, (1,), float32)``: the torque, clipped into [−2, 2] as Gymnasium
    does, so the validated step takes any finite float32 value (``clips_actions``);
    ``strict_actions=True`` refuses values outside [−2, 2] instead.  NaN and inf are refused
    either way (``trusted=True`` checks no values).

    **Observation**: ``Box([-1, -1, -8], [1, 1, 8], (3,), float32)``: ``cos θ, sin θ, θ̇``
    (θ = 0 upright).

    **Dynamics** (g = ``g``, mass 1, length 1, dt 0.05): ``θ̇ += (3 g / 2 · sin θ + 3 u) · dt``,
    clipped to ±8; ``θ += θ̇ · dt`` (θ itself is not wrapped).

    **Reward**: ``−(normalize(θ)² + 0.1 θ̇² + 0.001 u²)`` with the old state and the clipped
    torque, ``normalize(θ)`` in [−π, π).

    **Episode end**: never ``terminated``; ``truncated`` after ``max_episode_steps`` steps.

    **Start**: θ ~ U[−x_init, x_init), θ̇ ~ U[−y_init, y_init) (Gymnasium's ``reset(options=
    {"x_init": …, "y_init": …})`` as the constructor arguments ``x_init=π``, ``y_init=1.0``;
    finite numbers, as Gymnasium's ``verify_number_and_cast``), from the world's own
    counter-based stream.

    **Info**: nothing beyond the batch API's ``t`` (and ``final_obs`` with SAME_STEP autoreset).
    No task metrics.

    **State** (``get_state``/``set_state``): ``state [E, 2]`` (Gymnasium's
    ``env.unwrapped.state``: θ, θ̇), ``t``, ``episode``, ``rng_key``, ``pending_reset``.

    **Rendering**: ``render_frame`` draws Gymnasium's 500 × 500 picture (the red rod with its
    round ends, the black axle), scaled to fit ``width`` × ``height`` (default 500 × 500);
    ``render_fps`` 30.  *Deviation*: Gymnasium's arrow picture of the last torque is not drawn
    (the last torque is not part of the state).

    **Arguments**: ``max_episode_steps=200``, ``g=10.0`` (Gymnasium's), ``x_init=π``,
    ``y_init=1.0`` (Gymnasium's reset options), ``strict_actions=False``, plus ``num_envs``,
    ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.  ``max_cycles``
    is an alias attribute of ``max_episode_steps``.

    **Version history**: v1 — Gymnasium 1.4.0's ``Pendulum-v1``.
    """

    env_id = "Pendulum-v1"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
    observation_space = gymnasium.spaces.Box(-np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32),
                                             np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32), dtype=np.float32)
    action_space = gymnasium.spaces.Box(-MAX_TORQUE, MAX_TORQUE, (1,), dtype=np.float32)
    state_names = ("theta", "thetadot")
    screen_size = (500, 500)
    reset_world = pendulum_reset
    step_world = pendulum_step
    observe_world = pendulum_observe

    def __init__(self, *, max_episode_steps: int = 200, g: float = 10.0, x_init: float = math.pi,
                 y_init: float = 1.0, strict_actions: bool = False, **kwargs) -> None:
        self.g = v.check_float("g", g)
        self.x_init = v.check_float("x_init", x_init)
        self.y_init = v.check_float("y_init", y_init)
        self.strict_actions = v.check_bool("strict_actions", strict_actions)
        self.clips_actions = not self.strict_actions
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        return {"gravity_coef": 3 * self.g / (2 * LENGTH), "torque_coef": 3.0 / (MASS * LENGTH**2), "dt": DT,
                "max_speed": MAX_SPEED, "speed_cost": 0.1, "torque_cost": 0.001, "pi": math.pi,
                "two_pi": 2 * math.pi, "x_init": self.x_init, "y_init": self.y_init, "two": 2.0}

    def render_frame(self, world: int = 0, *, width: int = 500, height: int = 500,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of world ``world``, drawn as Gymnasium's
        ``PendulumEnv.render`` (without the torque arrow).  ``original_cam_range`` is accepted
        for the front ends and ignored."""
        theta = float(self._world_state(world)[0])
        canvas = self._canvas(width, height)
        scale = self.screen_size[0] / (2.2 * 2)
        offset = self.screen_size[0] // 2
        rod_length, rod_width = 1 * scale, 0.2 * scale
        l, r, t, b = 0, rod_length, rod_width / 2, -rod_width / 2
        canvas.polygon(rotate([(l, b), (l, t), (r, t), (r, b)], theta + np.pi / 2) + offset, (204, 77, 77))
        canvas.circle(offset, offset, int(rod_width / 2), (204, 77, 77))
        end = rotate([(rod_length, 0)], theta + np.pi / 2)[0]
        canvas.circle(int(end[0] + offset), int(end[1] + offset), int(rod_width / 2), (204, 77, 77))
        canvas.circle(offset, offset, int(0.05 * scale), (0, 0, 0))
        return canvas.image
