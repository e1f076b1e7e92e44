"""VMAS 1.5.2's dynamics models (``vmas/simulator/dynamics/``), declared per agent as VMAS does
(``Body(agent=True, dynamics=DiffDrive())``, VMAS's ``Agent(dynamics=...)``).

An agent's dynamics turns its physical action ``u`` (VMAS's ``agent.action.u``, after the
scenario's ``process_action``) into the force and torque the physics applies in every substep of
the step (VMAS's ``agent.state.force`` / ``state.torque``, then ``World._apply_action_force`` /
``_apply_action_torque``: the ``max_f`` / ``f_range`` and ``max_t`` / ``t_range`` clamps).  Its
``needed_action_size`` is the agent's default action size (VMAS's ``Agent(action_size=None)``).

==========================  ======  =================================================================
model                       action  force, torque
==========================  ======  =================================================================
``Holonomic`` (default)     2       ``u[:2]``, 0
``HolonomicWithRotation``   3       ``u[:2]``, ``u[2]``
``Rotation``                1       0, ``u[0]``
``Forward``                 1       ``(u[0], 0)`` turned by the agent's rotation, 0
``Static``                  0       0, 0
``DiffDrive``               2       the force and torque that move the agent by the step of a
                                    unicycle with speed ``u[0]`` and turn rate ``u[1]``
``KinematicBicycle``        2       likewise for a kinematic bicycle (speed ``u[0]``, steering
                                    angle ``u[1]`` clamped to ``±max_steering_angle``)
``Drone``                   4       likewise for the planar part of a quadrotor (thrust ``u[0]`` +
                                    ``m g``, body torques ``u[1:4]``) integrated in its own
                                    12-dimensional state (``drone_state``, kept between steps)
==========================  ======  =================================================================

The last three integrate their model over one step ``dt`` (the world's, not the substep's) with
VMAS's own explicit integrators, Euler or classic fourth-order Runge-Kutta (``integration``,
VMAS's default ``"rk4"``; VMAS calls no external ODE solver), then ask for the acceleration that
covers the integrated change: ``a = (delta - v dt) / dt²`` (``delta`` the change of position,
for ``Drone`` of velocity), force ``m a`` and torque ``I a_rot``.  Every operation is VMAS's, in
its order and float32 rounding in float32 worlds.

**Cost.**  A scenario whose agents are all ``Holonomic`` (every scenario but the dynamics debug
ones) compiles the physics without any of this: its action force is read off ``u`` as before and
no torque is added (``agent_dynamics`` returns None and the physics kernel is built without a
dynamics step).  Otherwise the physics calls ``agent_dynamics``'s function once per agent and
step, a dispatch over the kinds of model the scenario's agents have (one direct call when they
share one), and the substeps read ``w.agent_force`` / ``w.agent_torque``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import warp as wp

from war_envs.core.fields import Field, const, param, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W

INTEGRATIONS = ("euler", "rk4")
#: VMAS's ``Drone.g``
DRONE_G = 9.81
#: VMAS's ``Drone.needs_reset``: roll or pitch beyond 30 degrees (its Python float)
DRONE_TILT = 30 * (math.pi / 180)
#: the state of VMAS's ``Drone``: roll, pitch, yaw, their rates, velocity (x, y, z), position
DRONE_STATE = 12
#: per-agent constants of the bicycle (``l_r``, ``l_f + l_r``, ``max_steering_angle``) and the
#: drone (``m g``, ``I_xx``, ``I_yy``, ``I_zz``, ``I_yy - I_zz``, ``I_zz - I_xx``, ``I_xx - I_yy``)
BICYCLE_PARAMS = 3
DRONE_PARAMS = 7


def _check_integration(model: str, integration) -> None:
    if integration not in INTEGRATIONS:
        raise ValueError(f"{model}.integration: expected one of {list(INTEGRATIONS)}, got {integration!r}")


@dataclasses.dataclass(frozen=True)
class Dynamics:
    """An agent's dynamics model (VMAS's ``Dynamics``)."""

    #: VMAS's ``needed_action_size``
    needed_action_size = 2

    def uses_rk4(self) -> bool:
        return getattr(self, "integration", "euler") == "rk4"


@dataclasses.dataclass(frozen=True)
class Holonomic(Dynamics):
    """VMAS's ``Holonomic`` (every agent's default): force ``u[:2]``."""


@dataclasses.dataclass(frozen=True)
class HolonomicWithRotation(Dynamics):
    """VMAS's ``HolonomicWithRotation``: force ``u[:2]``, torque ``u[2]``."""

    needed_action_size = 3


@dataclasses.dataclass(frozen=True)
class Rotation(Dynamics):
    """VMAS's ``Rotation`` (``dynamics/roatation.py``): torque ``u[0]``, no force."""

    needed_action_size = 1


@dataclasses.dataclass(frozen=True)
class Forward(Dynamics):
    """VMAS's ``Forward``: force ``(u[0], 0)`` turned by the agent's rotation."""

    needed_action_size = 1


@dataclasses.dataclass(frozen=True)
class Static(Dynamics):
    """VMAS's ``Static``: no action, no force or torque."""

    needed_action_size = 0


@dataclasses.dataclass(frozen=True)
class DiffDrive(Dynamics):
    """VMAS's ``DiffDrive(world, integration="rk4")``: ``u = (forward speed, turn rate)``."""

    integration: str = "rk4"

    def __post_init__(self) -> None:
        _check_integration("DiffDrive", self.integration)


@dataclasses.dataclass(frozen=True)
class KinematicBicycle(Dynamics):
    """VMAS's ``KinematicBicycle(world, width, l_f, l_r, max_steering_angle, integration="rk4")``:
    ``u = (speed, steering angle)``; ``l_f`` / ``l_r`` the distances from the centre of gravity
    to the front / rear axle (``width`` is kept, as VMAS keeps it, and used by nothing)."""

    width: float
    l_f: float
    l_r: float
    max_steering_angle: float
    integration: str = "rk4"

    def __post_init__(self) -> None:
        _check_integration("KinematicBicycle", self.integration)
        for name in ("width", "l_f", "l_r", "max_steering_angle"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise TypeError(f"KinematicBicycle.{name}: expected a finite float, got {value!r}")
        if not self.l_f + self.l_r > 0:
            raise ValueError(f"KinematicBicycle: expected l_f + l_r > 0, got l_f {self.l_f}, l_r {self.l_r}")
        if not self.max_steering_angle >= 0:
            raise ValueError(f"KinematicBicycle.max_steering_angle: expected >= 0, got {self.max_steering_angle}")

    def constants(self) -> list[float]:
        """Its row of the ``bicycle`` field (``BICYCLE_PARAMS``)."""
        return [self.l_r, self.l_f + self.l_r, self.max_steering_angle]


@dataclasses.dataclass(frozen=True)
class Drone(Dynamics):
    """VMAS's ``Drone(world, I_xx=8.1e-3, I_yy=8.1e-3, I_zz=14.2e-3, integration="rk4")``:
    ``u = (thrust, torque_x, torque_y, torque_z)``; ``m g`` is added to the thrust (in ``u``,
    as VMAS's in-place ``+=``).  Its state (``drone_state``: roll, pitch, yaw, the body rates,
    velocity and position in 3-D) is zeroed at every reset; each step takes the agent's x, y and
    rotation (yaw) into it, integrates it over ``dt`` and keeps it."""

    I_xx: float = 8.1e-3
    I_yy: float = 8.1e-3
    I_zz: float = 14.2e-3
    integration: str = "rk4"
    needed_action_size = 4

    def __post_init__(self) -> None:
        _check_integration("Drone", self.integration)
        for name in ("I_xx", "I_yy", "I_zz"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Drone.{name}: expected a float > 0, got {value!r}")

    def constants(self, mass: float) -> list[float]:
        """Its row of the ``drone`` field (``DRONE_PARAMS``) for an agent of mass ``mass``."""
        return [mass * DRONE_G, self.I_xx, self.I_yy, self.I_zz, self.I_yy - self.I_zz, self.I_zz - self.I_xx,
                self.I_xx - self.I_yy]


#: every model, in the order of their kind codes (``w.dynamics_kind``)
MODELS = (Holonomic, HolonomicWithRotation, Rotation, Forward, Static, DiffDrive, KinematicBicycle, Drone)


# ---------------------------------------------------------------------------------------------
# Warp: one function per model, writing agent i's force and torque of this step
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def set_force_torque(w: Any, e: int, i: int, fx: Any, fy: Any, torque: Any):
    """Agent i's ``state.force`` and ``state.torque`` of this step."""
    w.agent_force[e, i, 0] = fx
    w.agent_force[e, i, 1] = fy
    w.agent_torque[e, i] = torque


@wp.func(inline=True)
def command(w: Any, e: int, i: int, k: int):
    """``u[k]`` of agent i in the world's float type."""
    return type(w.dt)(w.u[e, i, k])


@wp.func(inline=True)
def holonomic(w: Any, e: int, i: int):
    zero = type(w.dt)(0.0)
    set_force_torque(w, e, i, command(w, e, i, 0), command(w, e, i, 1), zero)


@wp.func(inline=True)
def holonomic_with_rotation(w: Any, e: int, i: int):
    set_force_torque(w, e, i, command(w, e, i, 0), command(w, e, i, 1), command(w, e, i, 2))


@wp.func(inline=True)
def rotation(w: Any, e: int, i: int):
    zero = type(w.dt)(0.0)
    set_force_torque(w, e, i, zero, zero, command(w, e, i, 0))


@wp.func(inline=True)
def forward(w: Any, e: int, i: int):
    """``TorchUtils.rotate_vector((u[0], 0), rot)``."""
    zero = type(w.dt)(0.0)
    f = G.rotate_vector(wp.vector(command(w, e, i, 0), zero), w.rot[e, W.body_of(w, i)])
    set_force_torque(w, e, i, f[0], f[1], zero)


@wp.func(inline=True)
def static(w: Any, e: int, i: int):
    zero = type(w.dt)(0.0)
    set_force_torque(w, e, i, zero, zero, zero)


@wp.func(inline=True)
def cover_change(w: Any, e: int, i: int, dx: Any, dy: Any, drot: Any):
    """VMAS's last lines of ``process_action`` in the integrated models: the accelerations
    ``(change - v dt) / dt²`` (``v`` the agent's velocity and angular velocity now), times the
    mass and the moment of inertia, as agent i's force and torque."""
    b = W.body_of(w, i)
    ax = (dx - w.vel[e, b, 0] * w.dt) / w.dt_squared
    ay = (dy - w.vel[e, b, 1] * w.dt) / w.dt_squared
    arot = (drot - w.ang_vel[e, b] * w.dt) / w.dt_squared
    set_force_torque(w, e, i, w.mass[b] * ax, w.mass[b] * ay, w.inertia[b] * arot)


@wp.func
def heading_rate(theta: Any, speed: Any, beta: Any, turn: Any):
    """``f`` of VMAS's ``KinematicBicycle``, ``(speed cos(theta + beta), speed sin(theta + beta),
    turn)``, and of ``DiffDrive`` with ``beta = -0`` (``theta + -0`` is ``theta``, zeros' signs
    included)."""
    return wp.vector(speed * wp.cos(theta + beta), speed * wp.sin(theta + beta), turn)


@wp.func
def half_step(x: Any, dt: Any, k: Any):
    """``state + dt * k / 2`` (one component)."""
    return x + (dt * k) / type(x)(2.0)


@wp.func
def rk4_sum(k1: Any, k2: Any, k3: Any, k4: Any, dt_sixth: Any):
    """``(dt / 6) * (k1 + 2 k2 + 2 k3 + k4)``."""
    two = type(dt_sixth)(2.0)
    return dt_sixth * (((k1 + two * k2) + two * k3) + k4)


@wp.func
def heading_change(theta: Any, speed: Any, beta: Any, turn: Any, dt: Any, dt_sixth: Any, rk4: int):
    """The change ``(dx, dy, dtheta)`` over ``dt`` of the planar models from heading ``theta``:
    VMAS's ``euler`` (``dt f``) or ``runge_kutta``."""
    k1 = heading_rate(theta, speed, beta, turn)
    if rk4 == 0:
        return dt * k1
    k2 = heading_rate(half_step(theta, dt, k1[2]), speed, beta, turn)
    k3 = heading_rate(half_step(theta, dt, k2[2]), speed, beta, turn)
    k4 = heading_rate(theta + dt * k3[2], speed, beta, turn)
    return rk4_sum(k1, k2, k3, k4, dt_sixth)


@wp.func(inline=True)
def diff_drive(w: Any, e: int, i: int):
    """VMAS's ``DiffDrive.process_action``."""
    no_slip = type(w.dt)(-0.0)
    delta = heading_change(w.rot[e, W.body_of(w, i)], command(w, e, i, 0), no_slip, command(w, e, i, 1), w.dt,
                           w.dt_sixth, w.rk4[i])
    cover_change(w, e, i, delta[0], delta[1], delta[2])


@wp.func(inline=True)
def kinematic_bicycle(w: Any, e: int, i: int):
    """VMAS's ``KinematicBicycle.process_action``: the steering angle clamped to
    ``±max_steering_angle``, the slip angle ``beta = atan2(tan(steer) l_r / (l_f + l_r), 1)``
    and the turn rate ``speed / (l_f + l_r) cos(beta) tan(steer)``."""
    F1 = type(w.dt)(1.0)
    l_r = w.bicycle[BICYCLE_PARAMS * i]
    wheelbase = w.bicycle[BICYCLE_PARAMS * i + 1]
    max_steer = w.bicycle[BICYCLE_PARAMS * i + 2]
    speed = command(w, e, i, 0)
    steer = wp.clamp(command(w, e, i, 1), -max_steer, max_steer)
    tan_steer = wp.tan(steer)
    beta = wp.atan2((tan_steer * l_r) / wheelbase, F1)
    turn = ((speed / wheelbase) * wp.cos(beta)) * tan_steer
    delta = heading_change(w.rot[e, W.body_of(w, i)], speed, beta, turn, w.dt, w.dt_sixth, w.rk4[i])
    cover_change(w, e, i, delta[0], delta[1], delta[2])


@wp.func
def drone_rate(s: Any, thrust: Any, tx: Any, ty: Any, tz: Any, mass: Any, g: Any, inertia: Any,
               inertia_gaps: Any):
    """``f`` of VMAS's ``Drone``: state ``s`` (roll, pitch, yaw, p, q, r, velocity, position) to
    its rate; ``inertia`` ``(I_xx, I_yy, I_zz)``, ``inertia_gaps`` ``(I_yy - I_zz, I_zz - I_xx,
    I_xx - I_yy)``."""
    c_phi = wp.cos(s[0])
    s_phi = wp.sin(s[0])
    c_theta = wp.cos(s[1])
    s_theta = wp.sin(s[1])
    c_psi = wp.cos(s[2])
    s_psi = wp.sin(s[2])
    p = s[3]
    q = s[4]
    r = s[5]
    x_ddot = (((c_phi * s_theta) * c_psi + s_phi * s_psi) * thrust) / mass
    y_ddot = (((c_phi * s_theta) * s_psi - s_phi * c_psi) * thrust) / mass
    z_ddot = (((c_phi * c_theta) * thrust) / mass) - g
    p_dot = (tx - (inertia_gaps[0] * q) * r) / inertia[0]
    q_dot = (ty - (inertia_gaps[1] * p) * r) / inertia[1]
    r_dot = (tz - (inertia_gaps[2] * p) * q) / inertia[2]
    return type(s)(p, q, r, p_dot, q_dot, r_dot, x_ddot, y_ddot, z_ddot, s[6], s[7], s[8])


@wp.func(inline=True)
def drone(w: Any, e: int, i: int):
    """VMAS's ``Drone.process_action``: thrust ``u[0] + m g`` (written back into ``u``, VMAS's
    in-place ``+=``); the agent's x, y and yaw into ``drone_state``, which is integrated over
    ``dt`` and kept; the force and torque that cover the changes of x and y velocity and of yaw
    rate."""
    b = W.body_of(w, i)
    o = DRONE_PARAMS * i
    thrust = command(w, e, i, 0) + w.drone[o]
    w.u[e, i, 0] = wp.float32(thrust)
    tx = command(w, e, i, 1)
    ty = command(w, e, i, 2)
    tz = command(w, e, i, 3)
    inertia = wp.vector(w.drone[o + 1], w.drone[o + 2], w.drone[o + 3])
    gaps = wp.vector(w.drone[o + 4], w.drone[o + 5], w.drone[o + 6])
    w.drone_state[e, i, 9] = w.pos[e, b, 0]
    w.drone_state[e, i, 10] = w.pos[e, b, 1]
    w.drone_state[e, i, 2] = w.rot[e, b]
    s = wp.vector(w.drone_state[e, i, 0], w.drone_state[e, i, 1], w.drone_state[e, i, 2], w.drone_state[e, i, 3],
                  w.drone_state[e, i, 4], w.drone_state[e, i, 5], w.drone_state[e, i, 6], w.drone_state[e, i, 7],
                  w.drone_state[e, i, 8], w.drone_state[e, i, 9], w.drone_state[e, i, 10],
                  w.drone_state[e, i, 11])
    m = w.mass[b]
    dt = w.dt
    k1 = drone_rate(s, thrust, tx, ty, tz, m, w.drone_g, inertia, gaps)
    delta = dt * k1
    if w.rk4[i] != 0:
        half = type(dt)(2.0)
        k2 = drone_rate(s + (dt * k1) / half, thrust, tx, ty, tz, m, w.drone_g, inertia, gaps)
        k3 = drone_rate(s + (dt * k2) / half, thrust, tx, ty, tz, m, w.drone_g, inertia, gaps)
        k4 = drone_rate(s + dt * k3, thrust, tx, ty, tz, m, w.drone_g, inertia, gaps)
        delta = rk4_sum(k1, k2, k3, k4, w.dt_sixth)
    for k in range(DRONE_STATE):
        w.drone_state[e, i, k] = s[k] + delta[k]
    cover_change(w, e, i, delta[6], delta[7], delta[5])


@wp.func(inline=True)
def drone_tilted(w: Any, e: int, i: int):
    """VMAS's ``Drone.needs_reset`` for agent i: its roll or pitch beyond 30 degrees."""
    return wp.abs(w.drone_state[e, i, 0]) > w.drone_tilt or wp.abs(w.drone_state[e, i, 1]) > w.drone_tilt


@wp.func(inline=True)
def clear_drone_state(w: Any, e: int):
    """VMAS's ``Drone.reset(env_index)`` of every agent of world e: ``drone_state`` zeroed."""
    for i in range(w.drone_state.shape[1]):
        for k in range(DRONE_STATE):
            w.drone_state[e, i, k] = type(w.dt)(0.0)


_FUNCS = {Holonomic: holonomic, HolonomicWithRotation: holonomic_with_rotation, Rotation: rotation,
          Forward: forward, Static: static, DiffDrive: diff_drive, KinematicBicycle: kinematic_bicycle, Drone: drone}


# ---------------------------------------------------------------------------------------------
# What a layout's agents need: the dispatch, its struct fields and its kernel module's name
# ---------------------------------------------------------------------------------------------


def kinds(models) -> list[type]:
    """The distinct model classes of ``models`` (one per agent), in ``MODELS`` order."""
    present = {type(m) for m in models}
    return [cls for cls in MODELS if cls in present]


def _dispatch(classes: list[type]):
    """agent i's model function, chosen among ``classes`` by ``w.dynamics_kind[i]``."""
    first = _FUNCS[classes[0]]
    if len(classes) == 1:
        return first
    code = MODELS.index(classes[0])
    rest = _dispatch(classes[1:])

    @wp.func(inline=True)
    def dispatch(w: Any, e: int, i: int):
        if w.dynamics_kind[i] == wp.static(code):
            first(w, e, i)
        else:
            rest(w, e, i)

    return dispatch


def agent_dynamics(models):
    """The physics' per-agent dynamics step for agents with ``models`` (in agent order): None
    where every agent is ``Holonomic`` (the physics reads ``u`` directly), else a Warp function
    ``(w, e, i)`` writing agent i's force and torque of the step."""
    classes = kinds(models)
    if classes in ([], [Holonomic]):
        return None
    return _dispatch(classes)


def module_suffix(models) -> str:
    """What the kernel module's name gets for agents with ``models`` ('' when all are
    ``Holonomic``): the model kinds present, so each set compiles its own kernels."""
    if agent_dynamics(models) is None:
        return ""
    return "_dyn_" + "_".join(cls.__name__ for cls in kinds(models))


def dynamics_fields(models, masses, dt: float) -> dict[str, Field]:
    """The struct fields the dynamics of agents with ``models`` (and masses ``masses``) read
    (none when all are ``Holonomic``): each agent's kind and integrator, ``dt²`` and ``dt / 6``
    (VMAS's Python floats, rounded to the world's type), the bicycles' and drones' constants
    (flattened, ``BICYCLE_PARAMS`` / ``DRONE_PARAMS`` per agent) and the drones' state."""
    if agent_dynamics(models) is None:
        return {}
    classes = kinds(models)
    fields = {"dynamics_kind": const([MODELS.index(type(m)) for m in models], "int"),
              "rk4": const([int(m.uses_rk4()) for m in models], "int"),
              "dt_squared": param(dt**2), "dt_sixth": param(dt / 6)}
    if KinematicBicycle in classes:
        rows = [m.constants() if isinstance(m, KinematicBicycle) else [0.0] * BICYCLE_PARAMS for m in models]
        fields["bicycle"] = const([x for row in rows for x in row])
    if Drone in classes:
        rows = [m.constants(mass) if isinstance(m, Drone) else [0.0] * DRONE_PARAMS for m, mass in zip(models, masses)]
        fields["drone"] = const([x for row in rows for x in row])
        fields["drone_g"] = param(DRONE_G)
        fields["drone_tilt"] = param(DRONE_TILT)
        fields["drone_state"] = state("float", len(models), DRONE_STATE)
    return fields
