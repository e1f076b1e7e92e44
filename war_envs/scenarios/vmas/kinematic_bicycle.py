"""KinematicBicycle-v0: VMAS 1.5.2's debug scenario ``kinematic_bicycle`` (a car-like robot
steered as a kinematic bicycle, beside holonomic robots that also turn)."""

from __future__ import annotations

import torch

from war_envs.core import validation as v
from war_envs.core.fields import Field
from war_envs.scenarios.vmas import dynamics as DYN
from war_envs.scenarios.vmas import het_mass, pollock
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase, check_positive
from war_envs.scenarios.vmas.diff_drive import SUBSTEPS, groups, holo_rot_agents, spawn_fields

COLLISION_FORCE = 500.0
#: VMAS's default ``max_steering_angle``: ``torch.deg2rad(torch.tensor(30.0))``, a float32
MAX_STEERING_ANGLE = float(torch.deg2rad(torch.tensor(30.0)))


class KinematicBicycle(VmasBase):
    """VMAS 1.5.2's debug scenario ``kinematic_bicycle``: agent 0 is a car-like robot steered as a
    kinematic bicycle (VMAS's ``KinematicBicycle`` dynamics, Euler integration), the others are
    holonomic and turn (``HolonomicWithRotation``).  Nothing to achieve: a testbed of the
    dynamics.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=2`` (at least 1),
    ``width=0.1`` (every agent's width, > 0), ``l_f=0.1`` and ``l_r=0.1`` (the distances from the
    centre of gravity to the front and rear axles, >= 0 with ``l_f + l_r > 0``: every agent is a
    box of length ``l_f + l_r``), ``max_steering_angle`` (radians, >= 0; default VMAS's float32
    ``deg2rad(30)``, 0.52359879), ``max_speed=1.0`` (> 0), plus VMAS's environment arguments
    (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``bicycle_0`` (group ``bicycle``) and ``holo_rot_1`` .. ``holo_rot_<n-1>`` (group
    ``holo_rot``), VMAS's names and TorchRL's ``VmasEnv`` grouping: boxes ``(l_f + l_r) x width``,
    mass 1, colliding with each other (collision force 500); ``bicycle_0``'s speed is clamped to
    ``max_speed``.  VMAS's world with 10 substeps: steps of 0.1 s, drag 0.25.  Each starts
    uniformly in ``[-1, 1]²``, at least 0.1 from the agents placed before it, at rotation 0 and
    at rest.
    **Actions**: ``bicycle_0``: ``(speed, steering angle)`` in ``[-max_speed, max_speed] x
    [-max_steering_angle, max_steering_angle]``; VMAS's ``KinematicBicycle`` (Euler over the
    step of 0.1 s: slip angle ``atan(tan(steer) l_r / (l_f + l_r))``) turns them into the force
    and torque that would move the agent so (see ``war_envs.scenarios.vmas.dynamics``).
    ``holo_rot_<i>``: ``(force x, force y, torque)`` in ``[-1, 1]³``, the torque times 0.001.
    Discrete: ``Discrete(9)`` and ``Discrete(27)`` (0, -u_range, +u_range per component).
    **Observation** ``[pos, vel]`` (4).  **Reward**: 0.  **Termination**: never (VMAS's
    scenario has no ``done``); truncation at ``max_steps``.  **Info**: none.  **State**: the
    bodies' only.

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  Arguments VMAS takes but cannot simulate (a box of no length or width, a
    negative speed or steering limit, axles behind the centre) are refused.  VMAS's picture adds
    each agent's heading.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``kinematic_bicycle``.
    """

    env_id = "KinematicBicycle-v0"
    vmas_scenario = "kinematic_bicycle"

    reset_world = pollock.reset_world
    reward_world = pollock.reward_world
    observe_agent = het_mass.observe_agent

    def __init__(self, *, n_agents: int = 2, width: float = 0.1, l_f: float = 0.1, l_r: float = 0.1,
                 max_steering_angle: float = MAX_STEERING_ANGLE, max_speed: float = 1.0, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.width = check_positive("width", width)
        self.l_f = v.check_float("l_f", l_f, low=0.0)
        self.l_r = v.check_float("l_r", l_r, low=0.0)
        if not self.l_f + self.l_r > 0:
            raise ValueError(f"l_f, l_r: expected l_f + l_r > 0 (the agents' length), got {self.l_f} and {self.l_r}")
        self.max_steering_angle = v.check_float("max_steering_angle", max_steering_angle, low=0.0)
        self.max_speed = check_positive("max_speed", max_speed)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        box = {"shape": "box", "length": self.l_f + self.l_r, "width": self.width}
        model = DYN.KinematicBicycle(width=self.width, l_f=self.l_f, l_r=self.l_r,
                                     max_steering_angle=self.max_steering_angle, integration="euler")
        first = Body("bicycle_0", agent=True, dynamics=model, u_range=(self.max_speed, self.max_steering_angle),
                     u_multiplier=(1.0, 1.0), max_speed=self.max_speed, color=COLORS["blue"], **box)
        others = holo_rot_agents(self.n_agents, **box)
        return Layout(bodies=[first] + others, groups=groups(first, others), substeps=SUBSTEPS,
                      collision_force=COLLISION_FORCE)

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return spawn_fields()
