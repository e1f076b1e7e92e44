"""What VMAS 1.5.2's debug scenarios with a velocity controller share (``goal``,
``vel_control``, ``line_trajectory``, ``circle_trajectory``; ``het_mass`` and ``pollock`` use
only the checks): the command pipeline of ``goal`` / ``circle_trajectory`` (the ``dt_delay``
queue, the norm clamp, the small-input cut), a per-agent velocity controller for
``vel_control`` (whose agents have different force limits, one none), observation noise, the
trajectory scenarios' observation and their fields.

The velocity controller itself is ``world.velocity_controller`` (VMAS's ``VelocityController``,
standard form); ``controller_fields`` gives the struct fields it reads."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, param, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W


def windup_cutoff(f_max: float | None, gain: float, integral_ts: float, dt: float) -> float:
    """VMAS's ``VelocityController.integrator_windup_cutoff``: ``0.5 f_max Ts_i / (dt gain)``, f_max
    the smaller of the agent's ``max_f`` and ``f_range``; ``-1`` (no clamp) where it has neither
    (VMAS warns "Integrator can wind up!" and clamps nothing)."""
    if f_max is None:
        return -1.0
    return 0.5 * f_max * integral_ts / (dt * gain)


def controller_fields(n_agents: int, params: tuple[float, float, float], dt: float,
                      f_max: float | None) -> dict[str, Field]:
    """The fields ``world.velocity_controller`` reads, for agents sharing one force limit
    ``f_max``: gain, 1 / integral time, derivative time, the windup cutoff, and VMAS's
    ``controller.accum_errs`` / ``prev_err`` per agent as state."""
    gain, integral_ts, derivative_ts = params
    return {
        "ctrl_gain": param(float(gain)), "inv_integral_ts": param(1.0 / integral_ts),
        "derivative_ts": param(float(derivative_ts)),
        "windup_cutoff": param(windup_cutoff(f_max, gain, integral_ts, dt)),
        "accum_errs": state("float", n_agents, 2), "prev_err": state("float", n_agents, 2),
    }


def check_obs_noise(value) -> float:
    """``obs_noise``: a float >= 0 (VMAS's ``uniform_(-obs_noise, obs_noise)`` needs it)."""
    return v.check_float("obs_noise", value, low=0.0)


def check_nonnegative(name: str, value) -> float:
    return v.check_float(name, value, low=0.0)


@wp.func(inline=True)
def clear_controller(w: Any, e: int, i: int):
    """VMAS's ``controller.reset(env_index)`` for agent i of world e."""
    for k in range(2):
        w.accum_errs[e, i, k] = type(w.dt)(0.0)
        w.prev_err[e, i, k] = type(w.dt)(0.0)


@wp.func(inline=True)
def clear_queue(w: Any, e: int, i: int):
    """Agent i's ``dt_delay`` queue emptied (zero commands)."""
    for q in range(w.input_queue.shape[2]):
        for k in range(2):
            w.input_queue[e, i, q, k] = type(w.dt)(0.0)


@wp.func(inline=True)
def delayed_command(w: Any, e: int, i: int):
    """VMAS's ``process_action`` of ``goal`` and ``circle_trajectory`` before the controller:
    the action goes through the ``dt_delay``-step queue (``input_queue.append(u)``,
    ``u = input_queue.pop(0)``), is clamped to norm ``u_range`` (``TorchUtils.clamp_with_norm``)
    and zeroed where its norm is below ``min_input_norm``.  Returns the command (the world's
    float type)."""
    F0 = type(w.dt)(0.0)
    ux = type(w.dt)(w.u[e, i, 0])
    uy = type(w.dt)(w.u[e, i, 1])
    d = w.input_queue.shape[2]
    if d > 0:
        qx = w.input_queue[e, i, 0, 0]
        qy = w.input_queue[e, i, 0, 1]
        for q in range(d - 1):
            w.input_queue[e, i, q, 0] = w.input_queue[e, i, q + 1, 0]
            w.input_queue[e, i, q, 1] = w.input_queue[e, i, q + 1, 1]
        w.input_queue[e, i, d - 1, 0] = ux
        w.input_queue[e, i, d - 1, 1] = uy
        ux = qx
        uy = qy
    u = G.clamp_with_norm(wp.vector(ux, uy), w.command_range)
    if G.vector_norm(u) < w.min_input_norm:
        u = wp.vector(F0, F0)
    return u


@wp.func(inline=True)
def control(w: Any, e: int, i: int, command: Any):
    """Agent i's force ``u`` from ``world.velocity_controller`` towards velocity ``command``."""
    b = W.body_of(w, i)
    for k in range(2):
        W.velocity_controller(w, e, i, b, k, command[k])


@wp.func(inline=True)
def delayed_control(w: Any, e: int, i: int):
    """VMAS's ``process_action`` of ``goal`` and ``circle_trajectory``: the delayed,
    norm-clamped command with small inputs cut (``delayed_command``) is the desired velocity of
    VMAS's PID controller (``world.velocity_controller``), whose output times the mass is the
    force ``u``."""
    control(w, e, i, delayed_command(w, e, i))


@wp.func(inline=True)
def add_obs_noise(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32), n: int):
    """U(-obs_noise, obs_noise) noise on the first n entries of agent i's observation, drawn from
    the world's stream of this step and agent (``world.step_stream``); nothing where obs_noise
    is 0 (VMAS adds ``uniform_(-0, 0)``, zeros)."""
    if w.obs_noise > type(w.dt)(0.0):
        rng = W.step_stream(w, e, i)
        for k in range(n):
            noise = W.uniform(wp.randf(rng), -w.obs_noise, w.obs_noise)
            out[e, i, k] = wp.float32(type(noise)(out[e, i, k]) + noise)


@wp.func(inline=True)
def observe_trajectory(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """``line_trajectory``'s and ``circle_trajectory``'s observation: [pos, vel, pos], each entry
    plus U(-obs_noise, obs_noise)."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    o = W.write_vec(out, e, i, o, p)
    add_obs_noise(w, e, i, out, o)


@wp.func
def normalized(x: Any):
    """``torch.nan_to_num(x / vector_norm(x))``: 0 where x is 0."""
    n = G.vector_norm(x)
    zero = type(n)(0.0)
    if n == zero:
        return type(x)(zero, zero)
    return type(x)(x[0] / n, x[1] / n)


@wp.func
def dot(a: Any, b: Any):
    """``torch.einsum("bs,bs->b", a, b)`` of two 2-vectors."""
    return a[0] * b[0] + a[1] * b[1]
