"""DiffDrive-v0: VMAS 1.5.2's debug scenario ``diff_drive`` (a differential-drive robot beside
holonomic robots that also turn)."""

from __future__ import annotations

from war_envs.core import validation as v
from war_envs.core.fields import Field, param
from war_envs.scenarios.vmas import dynamics as DYN
from war_envs.scenarios.vmas import het_mass, pollock
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase

SUBSTEPS = 10
#: VMAS's ``spawn_entities_randomly`` of the dynamics debug scenarios: in [-1, 1]², 0.1 apart
SPAWN_SEMIDIM, SPAWN_MIN_DIST = 1.0, 0.1
#: the holonomic agents' ``u_range`` and ``u_multiplier`` (force x, force y, torque)
HOLO_ROT_RANGE, HOLO_ROT_MULTIPLIER = (1.0, 1.0, 1.0), (1.0, 1.0, 0.001)


def holo_rot_agents(n_agents: int, **shape) -> list[Body]:
    """VMAS's ``holo_rot_<i>`` agents 1 .. n_agents - 1 of the dynamics debug scenarios:
    ``HolonomicWithRotation`` with ``u_range`` 1 and the torque's ``u_multiplier`` 0.001."""
    return [Body(f"holo_rot_{i}", agent=True, dynamics=DYN.HolonomicWithRotation(), u_range=HOLO_ROT_RANGE,
                 u_multiplier=HOLO_ROT_MULTIPLIER, color=COLORS["blue"], **shape) for i in range(1, n_agents)]


def groups(first: Body, others: list[Body]) -> list[tuple[str, list[str]]]:
    """The groups of a debug scenario with one special agent: TorchRL's ``VmasEnv`` grouping (by
    the name before ``_<i>``), the first agent's own group, then ``holo_rot``."""
    out = [(first.name.rsplit("_", 1)[0], [first.name])]
    if others:
        out.append(("holo_rot", [b.name for b in others]))
    return out


def spawn_fields() -> dict[str, Field]:
    """The fields ``pollock.reset_world`` reads: the agents spawned in [-1, 1]², 0.1 apart."""
    return {"semidim": param(SPAWN_SEMIDIM), "min_dist": param(SPAWN_MIN_DIST)}


class DiffDrive(VmasBase):
    """VMAS 1.5.2's debug scenario ``diff_drive``: agent 0 drives like a differential-drive robot
    (VMAS's ``DiffDrive`` dynamics), the others are holonomic and turn (``HolonomicWithRotation``).
    Nothing to achieve: a testbed of the dynamics.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=2`` (at least 1), plus
    VMAS's environment arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``diff_drive_0`` (group ``diff_drive``) and ``holo_rot_1`` ..
    ``holo_rot_<n-1>`` (group ``holo_rot``), VMAS's names and TorchRL's ``VmasEnv`` grouping:
    spheres of radius 0.05, mass 1, colliding with each other.  VMAS's world with 10 substeps:
    steps of 0.1 s, drag 0.25.  Each starts uniformly in ``[-1, 1]²``, at least 0.1 from the
    agents placed before it, at rotation 0 and at rest.
    **Actions**: ``diff_drive_0``: ``(forward speed, turn rate)`` in ``[-1, 1]²``; VMAS's
    ``DiffDrive`` (fourth-order Runge-Kutta over the step of 0.1 s) turns them into the force and
    torque that would move the agent along that arc (see ``war_envs.scenarios.vmas.dynamics``).
    ``holo_rot_<i>``: ``(force x, force y, torque)`` in ``[-1, 1]³``, the torque times 0.001.
    Discrete: ``Discrete(9)`` and ``Discrete(27)`` (0, -1, +1 per component).
    **Observation** ``[pos, vel]`` (4).  **Reward**: 0.  **Termination**: never (VMAS's
    scenario has no ``done``); truncation at ``max_steps``.  **Info**: none.  **State**: the
    bodies' only.

    **Where this differs from VMAS.**  VMAS draws one start for the whole batch when it resets
    every world at once (``env.reset()``); each world here draws its own (VMAS's
    ``reset_at(i)``).  VMAS's picture adds each agent's heading and the grid.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``diff_drive``.
    """

    env_id = "DiffDrive-v0"
    vmas_scenario = "diff_drive"

    reset_world = pollock.reset_world
    reward_world = pollock.reward_world
    observe_agent = het_mass.observe_agent

    def __init__(self, *, n_agents: int = 2, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        first = Body("diff_drive_0", agent=True, dynamics=DYN.DiffDrive(integration="rk4"), u_range=(1.0, 1.0),
                     u_multiplier=(1.0, 1.0), color=COLORS["blue"])
        others = holo_rot_agents(self.n_agents)
        return Layout(bodies=[first] + others, groups=groups(first, others), substeps=SUBSTEPS)

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return spawn_fields()
