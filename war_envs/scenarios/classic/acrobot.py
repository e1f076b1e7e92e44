"""Acrobot-v1: Gymnasium 1.4's ``AcrobotEnv`` (Sutton's two-link acrobot) in Warp."""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np
import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.classic.base import (REACHED_GOAL, ClassicControl, as_float32, episode_stream,
                                             numpy_square, reset_bounds, rotate, uniform)

__all__ = ["Acrobot"]

LINK_LENGTH_1 = LINK_LENGTH_2 = 1.0
LINK_MASS_1 = LINK_MASS_2 = 1.0
LINK_COM_POS_1 = LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
GRAVITY = 9.8
MAX_VEL_1, MAX_VEL_2 = 4 * math.pi, 9 * math.pi
DYNAMICS = ("book", "nips")


@wp.func
def acrobot_reset(w: Any, e: int):
    """theta1, theta2, dtheta1, dtheta2 ~ U[low, high) in order, rounded to float32 (Gymnasium's
    ``uniform(...).astype(np.float32)``)."""
    rng = episode_stream(w, e)
    for k in range(4):
        w.state[e, k] = as_float32(uniform(wp.randf(rng), w.low, w.high))


@wp.func
def acrobot_derivs(w: Any, theta1: Any, theta2: Any, dtheta1: Any, dtheta2: Any, a: Any):
    """``AcrobotEnv._dsdt``: (dtheta1, dtheta2, ddtheta1, ddtheta2), in Gymnasium's operation
    order (its constant subexpressions, evaluated left to right, are the ``c_*`` parameters)."""
    cos2 = wp.cos(theta2)
    sin2 = wp.sin(theta2)
    d1 = w.c_m1_lc1sq + w.m2 * (w.c_l1sq_lc2sq + w.c_2l1_lc2 * cos2) + w.moi + w.moi
    d2 = w.m2 * (w.c_lc2sq + w.c_l1_lc2 * cos2) + w.moi
    phi2 = w.c_m2_lc2_g * wp.cos(theta1 + theta2 - w.half_pi)
    phi1 = (w.c_neg_m2_l1_lc2 * numpy_square(dtheta2, w.two) * sin2
            - w.c_2_m2_l1_lc2 * dtheta2 * dtheta1 * sin2
            + w.c_m1lc1_m2l1_g * wp.cos(theta1 - w.half_pi) + phi2)
    if w.nips == 0:
        ddtheta2 = (a + d2 / d1 * phi1 - w.c_m2_l1_lc2 * numpy_square(dtheta1, w.two) * sin2 - phi2) / (
            w.c_m2_lc2sq_i2 - numpy_square(d2, w.two) / d1)
    else:
        ddtheta2 = (a + d2 / d1 * phi1 - phi2) / (w.c_m2_lc2sq_i2 - numpy_square(d2, w.two) / d1)
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return wp.vector(dtheta1, dtheta2, ddtheta1, ddtheta2)


@wp.func
def wrap(x: Any, low: Any, high: Any):
    """Gymnasium's ``wrap``: x moved by whole periods ``high - low`` into [low, high]."""
    diff = high - low
    while x > high:
        x = x - diff
    while x < low:
        x = x + diff
    return x


@wp.func
def acrobot_step(w: Any, e: int):
    """``AcrobotEnv.step``: torque -1, 0, +1 (actions 0, 1, 2), one RK4 step of dt (Gymnasium's
    ``rk4`` over ``[0, dt]``), angles wrapped into [-pi, pi], velocities bounded by 4 pi and
    9 pi; terminated when ``-cos(theta1) - cos(theta2 + theta1) > 1``; reward -1, 0 at the goal."""
    s = wp.vector(w.state[e, 0], w.state[e, 1], w.state[e, 2], w.state[e, 3])
    a = type(w.dt)(float(w.action[e, 0] - 1))
    dt2 = w.dt / type(w.dt)(2.0)
    k1 = acrobot_derivs(w, s[0], s[1], s[2], s[3], a)
    y = s + dt2 * k1
    k2 = acrobot_derivs(w, y[0], y[1], y[2], y[3], a)
    y = s + dt2 * k2
    k3 = acrobot_derivs(w, y[0], y[1], y[2], y[3], a)
    y = s + w.dt * k3
    k4 = acrobot_derivs(w, y[0], y[1], y[2], y[3], a)
    ns = s + w.dt / type(w.dt)(6.0) * (k1 + type(w.dt)(2.0) * k2 + type(w.dt)(2.0) * k3 + k4)
    theta1 = wrap(ns[0], -w.pi, w.pi)
    theta2 = wrap(ns[1], -w.pi, w.pi)
    w.state[e, 0] = theta1
    w.state[e, 1] = theta2
    w.state[e, 2] = wp.min(wp.max(ns[2], -w.max_vel_1), w.max_vel_1)
    w.state[e, 3] = wp.min(wp.max(ns[3], -w.max_vel_2), w.max_vel_2)
    term = -wp.cos(theta1) - wp.cos(theta2 + theta1) > type(w.dt)(1.0)
    w.reward[e, 0] = type(w.dt)(-1.0)
    if term:
        w.reward[e, 0] = type(w.dt)(0.0)
    return term


@wp.func
def acrobot_observe(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """[cos theta1, sin theta1, cos theta2, sin theta2, dtheta1, dtheta2] as float32."""
    out[e, 0, 0] = wp.float32(wp.cos(w.state[e, 0]))
    out[e, 0, 1] = wp.float32(wp.sin(w.state[e, 0]))
    out[e, 0, 2] = wp.float32(wp.cos(w.state[e, 1]))
    out[e, 0, 3] = wp.float32(wp.sin(w.state[e, 1]))
    out[e, 0, 4] = wp.float32(w.state[e, 2])
    out[e, 0, 5] = wp.float32(w.state[e, 3])


class Acrobot(ClassicControl):
    """Acrobot-v1 — swing the tip of a two-link chain above a line by torquing the middle joint
    (Gymnasium 1.4's ``AcrobotEnv``).

    ``war_envs.make("Acrobot-v1", num_envs=E, ...)``.  Every constant, rule and space is
    Gymnasium 1.4.0's ``gymnasium/envs/classic_control/acrobot.py`` (Sutton and Barto's "book"
    dynamics, fourth-order Runge-Kutta) with its registered ``max_episode_steps=500``; tests
    replay whole Gymnasium episodes, goals reached included, from Gymnasium's own states
    (float64 worlds agree to 1e-10).  Float32 worlds compute in float32 (the system is chaotic:
    their trajectories part from float64 ones over long episodes).

    **Agent**: one group ``agent`` with ``agent_0`` (batch API: observations ``[E, 1, 6]``,
    actions ``[E, 1]``, rewards ``[E, 1]``).

    **Actions**: ``Discrete(3)``: torque −1, 0, +1 on the joint between the links.
    ``step(trusted=True)`` does not check values: action ``a`` applies torque ``a − 1``.

    **Observation**: ``Box([-1, -1, -1, -1, -4π, -9π], [1, 1, 1, 1, 4π, 9π], (6,), float32)``:
    ``cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2`` (θ1 from straight down, θ2 relative to link 1).

    **Dynamics**: links of length 1 and mass 1, centres of mass at 0.5, moments of inertia 1,
    gravity 9.8; ``book_or_nips="book"`` (Gymnasium's default; ``"nips"``: the NeurIPS paper's
    equations, which lack a term) — both Gymnasium's ``_dsdt`` term for term; one RK4 step of
    ``dt = 0.2`` s with the torque held; then θ1, θ2 wrapped into [−π, π], θ̇1 bounded to ±4π and
    θ̇2 to ±9π.  Gymnasium's ``torque_noise_max`` (0) is not an option.

    **Reward**: −1 every step, 0 at the step that reaches the goal.

    **Episode end**: ``terminated`` when the tip is above the line,
    ``−cos θ1 − cos(θ2 + θ1) > 1``; ``truncated`` after ``max_episode_steps`` steps (both set
    when both hold, as Gymnasium's ``TimeLimit``).

    **Start**: θ1, θ2, θ̇1, θ̇2 ~ U[low, high) each, rounded to float32 as Gymnasium's
    (``reset(options={"low": …, "high": …})`` as the constructor arguments ``low=-0.1``,
    ``high=0.1``; finite, ``low <= high``), from the world's own counter-based stream.

    **Info**: ``reached_goal [E]`` (1.0 where this step reached the goal, else 0.0: the
    terminated flag, in the world's precision).  Per-episode metric (``episode_metrics``):
    ``reached_goal`` (1 if the episode ended at the goal).

    **State** (``get_state``/``set_state``): ``state [E, 4]`` (Gymnasium's
    ``env.unwrapped.state``: θ1, θ2, θ̇1, θ̇2), ``t``, ``episode``, ``rng_key``,
    ``pending_reset``.

    **Rendering**: ``render_frame`` draws Gymnasium's 500 × 500 picture (the goal line, two
    cyan links, yellow joints), scaled to fit ``width`` × ``height`` (default 500 × 500);
    ``render_fps`` 15.

    **Arguments**: ``max_episode_steps=500``, ``book_or_nips="book"`` and ``dt=0.2``
    (Gymnasium's attributes of the unwrapped env), ``low=-0.1``, ``high=0.1`` (Gymnasium's reset
    options), plus ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``,
    ``num_threads``.  ``max_cycles`` is an alias attribute of ``max_episode_steps``.

    **Version history**: v1 — Gymnasium 1.4.0's ``Acrobot-v1``.
    """

    env_id = "Acrobot-v1"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}
    observation_space = gymnasium.spaces.Box(
        -np.array([1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2], dtype=np.float32),
        np.array([1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2], dtype=np.float32), dtype=np.float32)
    action_space = gymnasium.spaces.Discrete(3)
    state_names = ("theta1", "theta2", "dtheta1", "dtheta2")
    terminates_at_goal = True
    episode_metrics = (REACHED_GOAL,)
    screen_size = (500, 500)
    reset_world = acrobot_reset
    step_world = acrobot_step
    observe_world = acrobot_observe

    def __init__(self, *, max_episode_steps: int = 500, book_or_nips: str = "book", dt: float = 0.2,
                 low: float = -0.1, high: float = 0.1, **kwargs) -> None:
        self.book_or_nips = v.check_choice("book_or_nips", book_or_nips, DYNAMICS)
        self.dt = v.check_float("dt", dt, low=0.0)
        if self.dt <= 0:
            raise ValueError(f"dt: expected a float > 0, got {self.dt}")
        self.low, self.high = reset_bounds(low, high)
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        m1, m2, l1, lc1, lc2, g = LINK_MASS_1, LINK_MASS_2, LINK_LENGTH_1, LINK_COM_POS_1, LINK_COM_POS_2, GRAVITY
        return {
            "nips": int(self.book_or_nips == "nips"), "dt": self.dt, "m2": m2, "moi": LINK_MOI,
            "c_m1_lc1sq": m1 * lc1**2, "c_l1sq_lc2sq": l1**2 + lc2**2, "c_2l1_lc2": 2 * l1 * lc2,
            "c_lc2sq": lc2**2, "c_l1_lc2": l1 * lc2, "c_m2_lc2_g": m2 * lc2 * g,
            "c_neg_m2_l1_lc2": -m2 * l1 * lc2, "c_2_m2_l1_lc2": 2 * m2 * l1 * lc2,
            "c_m1lc1_m2l1_g": (m1 * lc1 + m2 * l1) * g, "c_m2_l1_lc2": m2 * l1 * lc2,
            "c_m2_lc2sq_i2": m2 * lc2**2 + LINK_MOI, "half_pi": math.pi / 2.0, "pi": math.pi,
            "max_vel_1": MAX_VEL_1, "max_vel_2": MAX_VEL_2, "low": self.low, "high": self.high, "two": 2.0,
        }

    def render_frame(self, world: int = 0, *, width: int = 500, height: int = 500,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of world ``world``, drawn as Gymnasium's
        ``AcrobotEnv.render``.  ``original_cam_range`` is accepted for the front ends and ignored."""
        s = self._world_state(world)
        canvas = self._canvas(width, height)
        dim = self.screen_size[0]
        scale = dim / ((LINK_LENGTH_1 + LINK_LENGTH_2 + 0.2) * 2)
        offset = dim / 2
        p1 = [-LINK_LENGTH_1 * math.cos(s[0]) * scale, LINK_LENGTH_1 * math.sin(s[0]) * scale]
        joints = [(0.0, 0.0), (p1[1], p1[0])]
        thetas = [s[0] - math.pi / 2, s[0] + s[1] - math.pi / 2]
        canvas.line((-2.2 * scale + offset, 1 * scale + offset), (2.2 * scale + offset, 1 * scale + offset),
                    (0, 0, 0))
        for (x, y), th, llen in zip(joints, thetas, [LINK_LENGTH_1 * scale, LINK_LENGTH_2 * scale]):
            x, y = x + offset, y + offset
            l, r, t, b = 0, llen, 0.1 * scale, -0.1 * scale
            canvas.polygon(rotate([(l, b), (l, t), (r, t), (r, b)], th) + (x, y), (0, 204, 204))
            canvas.circle(int(x), int(y), int(0.1 * scale), (204, 204, 0))
        return canvas.image
