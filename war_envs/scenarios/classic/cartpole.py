"""CartPole-v1: Gymnasium 1.4's ``CartPoleEnv`` (Barto, Sutton & Anderson's cart-pole) in Warp."""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np
import warp as wp

from war_envs.core import validation as v
from war_envs.scenarios.classic.base import ClassicControl, episode_stream, reset_bounds, rotate, uniform

__all__ = ["CartPole"]

GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
INTEGRATORS = ("euler", "semi-implicit euler")


@wp.func
def cartpole_reset(w: Any, e: int):
    """Every state component ~ U[low, high) in order (x, x_dot, theta, theta_dot); the episode
    has not terminated yet (``steps_beyond_terminated`` None: -1)."""
    rng = episode_stream(w, e)
    for k in range(4):
        w.state[e, k] = uniform(wp.randf(rng), w.low, w.high)
    w.steps_beyond_terminated[e] = -1


@wp.func
def cartpole_step(w: Any, e: int):
    """``CartPoleEnv.step``: force +-force_mag (action 1: right, any other: left), the pole's
    and the cart's accelerations, one Euler (or semi-implicit Euler) step of tau, terminated
    outside +-x_threshold or +-theta_threshold; reward 1 (Sutton-Barto: 0) per step and at the
    termination step, then 0 (-1) for steps taken after termination."""
    x = w.state[e, 0]
    x_dot = w.state[e, 1]
    theta = w.state[e, 2]
    theta_dot = w.state[e, 3]
    force = -w.force_mag
    if w.action[e, 0] == 1:
        force = w.force_mag
    costheta = wp.cos(theta)
    sintheta = wp.sin(theta)
    temp = (force + w.polemass_length * (theta_dot * theta_dot) * sintheta) / w.total_mass
    thetaacc = (w.gravity * sintheta - costheta * temp) / (
        w.length * (w.four_thirds - w.masspole * (costheta * costheta) / w.total_mass))
    xacc = temp - w.polemass_length * thetaacc * costheta / w.total_mass
    if w.semi_implicit == 0:
        x = x + w.tau * x_dot
        x_dot = x_dot + w.tau * xacc
        theta = theta + w.tau * theta_dot
        theta_dot = theta_dot + w.tau * thetaacc
    else:
        x_dot = x_dot + w.tau * xacc
        x = x + w.tau * x_dot
        theta_dot = theta_dot + w.tau * thetaacc
        theta = theta + w.tau * theta_dot
    w.state[e, 0] = x
    w.state[e, 1] = x_dot
    w.state[e, 2] = theta
    w.state[e, 3] = theta_dot
    term = x < -w.x_threshold or x > w.x_threshold or theta < -w.theta_threshold or theta > w.theta_threshold
    reward = w.alive_reward
    if term:
        reward = w.fall_reward
        if w.steps_beyond_terminated[e] < 0:
            w.steps_beyond_terminated[e] = 0
        else:
            w.steps_beyond_terminated[e] = w.steps_beyond_terminated[e] + 1
            reward = w.after_fall_reward
    w.reward[e, 0] = reward
    return term


@wp.func
def cartpole_observe(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """The state as float32."""
    for k in range(4):
        out[e, 0, k] = wp.float32(w.state[e, k])


class CartPole(ClassicControl):
    """CartPole-v1 — balance a pole on a cart by pushing it left or right (Gymnasium 1.4's
    ``CartPoleEnv``).

    ``war_envs.make("CartPole-v1", num_envs=E, ...)``.  Every constant, rule and space is
    Gymnasium 1.4.0's ``gymnasium/envs/classic_control/cartpole.py`` with its registered
    ``max_episode_steps=500`` (``TimeLimit``); tests replay whole Gymnasium episodes from
    Gymnasium's own states (float64 worlds agree to 1e-10).  Float32 worlds compute in float32.

    **Agent**: one group ``agent`` with ``agent_0`` (batch API: observations ``[E, 1, 4]``,
    actions ``[E, 1]``, rewards ``[E, 1]``).

    **Actions**: ``Discrete(2)``: 0 pushes the cart left, 1 right (force ``force_mag = 10``).
    ``step(trusted=True)`` does not check values: any action other than 1 pushes left, as
    Gymnasium's ``force_mag if action == 1 else -force_mag``.

    **Observation**: ``Box([-4.8, -inf, -0.4189, -inf], [4.8, inf, 0.4189, inf], (4,), float32)``:
    cart position, cart velocity, pole angle, pole angular velocity (the state, as float32).

    **Dynamics** (gravity 9.8, cart mass 1, pole mass 0.1, half pole length 0.5, tau 0.02 s):
    ``temp = (F + m_p l θ̇² sin θ) / M``, ``θ̈ = (g sin θ − cos θ · temp) / (l (4/3 − m_p cos² θ / M))``,
    ``ẍ = temp − m_p l θ̈ cos θ / M``; then ``kinematics_integrator="euler"`` (Gymnasium's
    default: positions from the old velocities) or ``"semi-implicit euler"`` (velocities first).

    **Reward**: +1 every step, the terminating one included; ``sutton_barto_reward=True``: 0
    every step and −1 at termination.  A world stepped on after it terminated (autoreset
    ``DISABLED`` without a reset) gets 0 (−1) while it stays terminated, as Gymnasium does.

    **Episode end**: ``terminated`` when the cart leaves ±2.4 or the pole leans beyond ±12°
    (0.2094 rad); ``truncated`` after ``max_episode_steps`` steps (both are set when both hold,
    as Gymnasium's ``TimeLimit``).

    **Start**: every state component ~ U[low, high) (Gymnasium's ``reset(options={"low": …,
    "high": …})`` as the constructor arguments ``low=-0.05``, ``high=0.05``; both finite,
    ``low <= high``).  Drawn from the world's own counter-based stream: the same seed gives the
    same starts; the draws are not NumPy's (compared with Gymnasium's statistically).

    **Info**: nothing beyond the batch API's ``t`` (and ``final_obs`` with SAME_STEP autoreset).
    No task metrics: the episode return is the number of steps balanced.

    **State** (``get_state``/``set_state``): ``state [E, 4]`` (Gymnasium's
    ``env.unwrapped.state``: x, x_dot, theta, theta_dot), ``steps_beyond_terminated [E]`` (-1:
    Gymnasium's None), ``t``, ``episode``, ``rng_key``, ``pending_reset``.

    **Rendering**: ``render_frame`` draws Gymnasium's 600 × 400 picture (track line, black cart,
    brown pole, blue axle; colours and sizes as Gymnasium's pygame renderer), scaled to fit
    ``width`` × ``height`` (default 600 × 400); ``render_fps`` 50.

    **Arguments**: ``max_episode_steps=500``, ``sutton_barto_reward=False`` (Gymnasium's),
    ``kinematics_integrator="euler"`` (Gymnasium's attribute: ``"euler"`` or
    ``"semi-implicit euler"``), ``low=-0.05``, ``high=0.05`` (Gymnasium's reset options), plus
    ``num_envs``, ``device``, ``seed``, ``precision``, ``autoreset_mode``, ``num_threads``.
    ``max_cycles`` is an alias attribute of ``max_episode_steps``.

    **Version history**: v1 — Gymnasium 1.4.0's ``CartPole-v1``.
    """

    env_id = "CartPole-v1"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}
    observation_space = gymnasium.spaces.Box(
        -np.array([X_THRESHOLD * 2, np.inf, THETA_THRESHOLD * 2, np.inf], dtype=np.float32),
        np.array([X_THRESHOLD * 2, np.inf, THETA_THRESHOLD * 2, np.inf], dtype=np.float32), dtype=np.float32)
    action_space = gymnasium.spaces.Discrete(2)
    state_names = ("x", "x_dot", "theta", "theta_dot")
    int_states = {"steps_beyond_terminated": -1}
    reset_world = cartpole_reset
    step_world = cartpole_step
    observe_world = cartpole_observe

    def __init__(self, *, max_episode_steps: int = 500, sutton_barto_reward: bool = False,
                 kinematics_integrator: str = "euler", low: float = -0.05, high: float = 0.05, **kwargs) -> None:
        self.sutton_barto_reward = v.check_bool("sutton_barto_reward", sutton_barto_reward)
        self.kinematics_integrator = v.check_choice("kinematics_integrator", kinematics_integrator, INTEGRATORS)
        self.low, self.high = reset_bounds(low, high)
        super().__init__(max_episode_steps=max_episode_steps, **kwargs)

    def _params(self) -> dict:
        total_mass = MASSPOLE + MASSCART
        sb = self.sutton_barto_reward
        return {
            "semi_implicit": int(self.kinematics_integrator != "euler"),
            "gravity": GRAVITY, "masspole": MASSPOLE, "total_mass": total_mass, "length": LENGTH,
            "polemass_length": MASSPOLE * LENGTH, "force_mag": FORCE_MAG, "tau": TAU, "four_thirds": 4.0 / 3.0,
            "x_threshold": X_THRESHOLD, "theta_threshold": THETA_THRESHOLD,
            "alive_reward": 0.0 if sb else 1.0, "fall_reward": -1.0 if sb else 1.0,
            "after_fall_reward": -1.0 if sb else 0.0, "low": self.low, "high": self.high,
        }

    def render_frame(self, world: int = 0, *, width: int = 600, height: int = 400,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[height, width, 3]`` uint8 picture of world ``world``, drawn as Gymnasium's
        ``CartPoleEnv.render``.  ``original_cam_range`` is accepted for the front ends and
        ignored (the track is fixed)."""
        state = self._world_state(world)
        canvas = self._canvas(width, height)
        scale = self.screen_size[0] / (X_THRESHOLD * 2)
        polewidth, polelen, cartwidth, cartheight = 10.0, scale * (2 * LENGTH), 50.0, 30.0
        cartx, carty, axleoffset = state[0] * scale + self.screen_size[0] / 2.0, 100, cartheight / 4.0
        canvas.line((0, carty), (self.screen_size[0], carty), (0, 0, 0))
        l, r, t, b = -cartwidth / 2, cartwidth / 2, cartheight / 2, -cartheight / 2
        canvas.polygon([(l + cartx, b + carty), (l + cartx, t + carty), (r + cartx, t + carty),
                        (r + cartx, b + carty)], (0, 0, 0))
        l, r, t, b = -polewidth / 2, polewidth / 2, polelen - polewidth / 2, -polewidth / 2
        pole = rotate([(l, b), (l, t), (r, t), (r, b)], -state[2]) + (cartx, carty + axleoffset)
        canvas.polygon(pole, (202, 152, 101))
        canvas.circle(int(cartx), int(carty + axleoffset), int(polewidth / 2), (129, 132, 203))
        return canvas.image
