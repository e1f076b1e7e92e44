"""Drone-v0: VMAS 1.5.2's debug scenario ``drone`` (quadrotors seen from above, steered by their
body torques at a fixed thrust)."""

from __future__ import annotations

from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field
from war_envs.scenarios.vmas import dynamics as DYN
from war_envs.scenarios.vmas import het_mass, pollock
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase
from war_envs.scenarios.vmas.diff_drive import SUBSTEPS, spawn_fields

#: VMAS's ``u_range`` of each torque
TORQUE_RANGE = 0.00001


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``Drone.reset`` of every agent (``drone_state`` zeroed), then ``reset_world_at``:
    the agents spawned as in DiffDrive-v0 (``pollock.reset_world``)."""
    DYN.clear_drone_state(w, e)
    pollock.reset_world(w, e)


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action``: ``u = [m g, torque_x, torque_y, torque_z]`` (the thrust a
    float32 ``m g``; the ``Drone`` dynamics then add ``m g`` again)."""
    for k in range(3):
        w.u[e, i, 3 - k] = w.u[e, i, 2 - k]
    w.u[e, i, 0] = wp.float32(w.drone[DYN.DRONE_PARAMS * i])


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (0 for every agent) and ``done``: some agent's roll or pitch beyond 30
    degrees (``Drone.needs_reset``)."""
    pollock.reward_world(w, e)
    tilted = bool(False)
    for i in range(w.u.shape[1]):
        if DYN.drone_tilted(w, e, i):
            tilted = True
    return tilted


class Drone(VmasBase):
    """VMAS 1.5.2's debug scenario ``drone``: quadrotors (VMAS's ``Drone`` dynamics, fourth-order
    Runge-Kutta) seen from above, steered by their three body torques while their thrust is
    fixed.  Nothing to achieve: a testbed of the dynamics.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=2`` (at least 1), plus
    VMAS's environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``drone_0`` .. ``drone_<n-1>``, group ``agents``: spheres of radius 0.05, mass 1,
    colliding with each other.  VMAS's world with 10 substeps: steps of 0.1 s, drag 0.25.  Each
    starts uniformly in ``[-1, 1]²``, at least 0.1 from the agents placed before it, at rotation
    0 and at rest, its ``drone_state`` zero.
    **Actions**: the torques ``(x, y, z)`` in ``[-1e-5, 1e-5]³``.  The thrust is ``2 m g``
    (VMAS's ``process_action`` sets ``m g`` and the ``Drone`` dynamics add ``m g``).  Each step
    the drone's 3-D state (``drone_state``: roll, pitch, yaw, their rates, velocity and position)
    takes the agent's x, y and rotation (its yaw), is integrated over 0.1 s, and the agent gets
    the force and torque that change its velocity and turn rate by the integrated changes of
    the drone's x and y velocity and yaw rate (see ``war_envs.scenarios.vmas.dynamics``).
    Discrete: ``Discrete(27)`` (0, -1e-5, +1e-5 per torque).
    **Observation** ``[pos, vel]`` (4).  **Reward**: 0.  **Termination**: some drone's roll or
    pitch beyond 30 degrees (VMAS's ``done``: ``Drone.needs_reset``); truncation at
    ``max_steps``.  **Info**: none.  **State**: ``drone_state`` (``[E, n_agents, 12]``, VMAS's
    ``agent.dynamics.drone_state``).

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  VMAS's picture adds each agent's heading and the grid.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``drone``.
    """

    env_id = "Drone-v0"
    vmas_scenario = "drone"

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = het_mass.observe_agent
    process_action = process_action

    def __init__(self, *, n_agents: int = 2, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        agents = [Body(f"drone_{i}", agent=True, dynamics=DYN.Drone(integration="rk4"), action_size=3,
                       u_range=(TORQUE_RANGE,) * 3, u_multiplier=(1.0, 1.0, 1.0), color=COLORS["blue"])
                  for i in range(self.n_agents)]
        return Layout(bodies=agents, groups=[("agents", [a.name for a in agents])], substeps=SUBSTEPS)

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return spawn_fields()
