"""Waterfall-v0: VMAS 1.5.2's debug scenario ``waterfall`` (a chain of agents joined by collidable
rods, with a box at its end, among loose boxes above a floor)."""

from __future__ import annotations

from typing import Any

import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, const
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Joint, Layout, VmasBase

AGENT_RADIUS = 0.04
AGENT_DIST = 0.1  # the rods' length
U_MULTIPLIER = 0.7
N_BOXES = 5
JOINED = "joined landmark"
#: the most agents VMAS's reset handles without joints (it places ``landmarks[n_agents - 1]``,
#: which exists only up to the floor, landmark 5)
MAX_AGENTS_WITHOUT_JOINTS = N_BOXES + 1


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at`` (no randomness): the agents in a row at y = 1 from x = -0.2,
    0.18 apart, the joined box next in the row; the loose boxes zig-zag down from (-0.2, 0.6)
    turned by ±pi/4; the floor at (0, -1); the rods between their bodies (``Joint.notify``)."""
    for b in range(w.pos.shape[1]):
        w.pos[e, b, 0] = w.start_x[b]
        w.pos[e, b, 1] = w.start_y[b]
        w.rot[e, b] = w.start_rot[b]
    W.place_joint_landmarks(w, e)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward``: minus each agent's distance to the floor's centre.  VMAS's ``done`` is
    always False."""
    floor = W.position(w, e, w.n_landmarks - 1)
    for i in range(w.u.shape[1]):
        w.reward[e, i] = -W.distance(W.position(w, e, W.body_of(w, i)), floor)
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel, then every landmark's position minus the agent's (VMAS's entity order)]."""
    b = W.body_of(w, i)
    p = W.position(w, e, b)
    o = W.write_vec(out, e, i, 0, p)
    o = W.write_vec(out, e, i, o, W.velocity(w, e, b))
    for k in range(w.n_landmarks):
        o = W.write_vec(out, e, i, o, W.position(w, e, k) - p)


class Waterfall(VmasBase):
    """VMAS 1.5.2's debug scenario ``waterfall``: a chain of ``n_agents`` agents joined by
    collidable rods, a box hanging off its last agent, above five loose boxes and a floor; each
    agent is rewarded for getting close to the floor's centre.  No gravity: the chain is pushed
    down through the boxes by the agents.

    Same keyword arguments and defaults as VMAS's scenario: ``n_agents=5`` (>= 1; without joints
    at most 6, where VMAS's reset fails beyond) and ``joints=True`` (``False``: no rods and no
    joined box), plus VMAS's environment arguments (``continuous_actions``, ``max_steps``,
    ``clamp_actions``: see ``war_envs.scenarios.vmas.base``).

    **Bodies** (VMAS's entity order): with ``joints``, the rods ``joint agent_i agent_i+1``
    (movable, rotatable, collidable lines of length 0.1 and mass 1, held from their ends to the
    agents' right and left edges, free to turn), ``joined landmark`` (a movable, rotatable box
    0.08 x 0.3 of mass 1) and its rod ``joint agent_<n-1> joined landmark`` (from the last
    agent's right edge to the box's left edge, neither end free to turn: the rotations at the
    reset are held, VMAS's inferred fixed rotation); then ``landmark 0 … 4`` (movable, rotatable
    0.3 x 0.1 boxes of mass 1), ``floor`` (a static line of length 2), then the agents.  Every
    body collides with every other one, except bodies held together by a rod.  Steps of 0.1 s in
    5 substeps, drag 0.25, collision force 500, VMAS's default joint force, no arena bounds.

    **Agents** ``agent_0 …`` (one group ``agents``): rotatable spheres of radius 0.04, mass 1,
    force ``0.7 u`` for ``u ∈ [-1, 1]²`` (continuous) or ``Discrete(9)``.  Start (the same every
    episode): the agents in a row at y = 1 from x = -0.2, 0.18 apart, the joined box next; box
    i at ((-1)^(i+1) 0.2, 0.6 - 0.3 i) turned by (-1)^(i+1) pi/4; the floor at (0, -1);
    everything at rest.  **Observation** (``4 + 2 × landmarks``: ``n_agents + 7`` landmarks
    with joints, 6 without) ``[pos, vel, then every landmark's position minus the agent's]``.
    **Reward**: minus the agent's distance to the floor's centre.  **Termination**: never
    (VMAS's scenario has no ``done``); truncation at ``max_steps``.  **Info**: none.

    **Where this differs from VMAS.**  When VMAS resets one world (``reset_at``), its
    ``Joint.notify`` moves the rods of *every* world to the middle of their bodies and infers
    the last rod's fixed rotations again from every world's current rotations; each world here
    resets only itself.  Our worlds always work every contact pair out (VMAS's batch-wide
    ``collides`` gate: ``docs/vmas.md``).

    **Version history**: v0 — initial release, VMAS 1.5.2's ``waterfall``.
    """

    env_id = "Waterfall-v0"
    vmas_scenario = "waterfall"
    random_start = False  # VMAS's start has no randomness

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent

    def __init__(self, *, n_agents: int = 5, joints: bool = True, **kwargs) -> None:
        self.n_agents = v.check_int("n_agents", n_agents, minimum=1)
        self.joints = v.check_bool("joints", joints)
        if not self.joints and self.n_agents > MAX_AGENTS_WITHOUT_JOINTS:
            raise ValueError(f"n_agents: expected at most {MAX_AGENTS_WITHOUT_JOINTS} with joints=False (VMAS's "
                             f"reset places landmarks[n_agents - 1], which does not exist beyond), got "
                             f"{self.n_agents}")
        super().__init__(**kwargs)

    def _layout(self) -> Layout:
        n, r = self.n_agents, AGENT_RADIUS
        agents = [Body(f"agent_{i}", agent=True, radius=r, u_multiplier=U_MULTIPLIER, color=COLORS["blue"])
                  for i in range(n)]
        joints, bodies = [], []
        if self.joints:
            joints = [Joint(f"agent_{i}", f"agent_{i + 1}", anchor_a=(1, 0), anchor_b=(-1, 0), dist=AGENT_DIST,
                            collidable=True) for i in range(n - 1)]
            bodies = [j.landmark() for j in joints]
            bodies.append(Body(JOINED, shape="box", length=2 * r, width=0.3, movable=True, rotatable=True,
                               color=COLORS["green"]))
            joints.append(Joint(f"agent_{n - 1}", JOINED, anchor_a=(1, 0), anchor_b=(-1, 0), dist=AGENT_DIST,
                                rotate_a=False, rotate_b=False, collidable=True))
            bodies.append(joints[-1].landmark())
        bodies += [Body(f"landmark {i}", shape="box", length=0.3, width=0.1, movable=True, rotatable=True,
                        color=COLORS["red"]) for i in range(N_BOXES)]
        bodies.append(Body("floor", shape="line", length=2, color=COLORS["black"]))
        return Layout(bodies=bodies + agents, groups=[("agents", [a.name for a in agents])], joints=joints, dt=0.1,
                      drag=0.25, substeps=5, collision_force=500)

    def _obs_dim(self, group: str) -> int:
        return 4 + 2 * self.layout.n_landmarks

    def _start(self) -> tuple[list[float], list[float], list[float]]:
        """Every body's start position and rotation as VMAS's float32 tensors hold them (the rods:
        0, placed by ``Joint.notify``)."""
        n, names = self.n_agents, [b.name for b in self.layout.bodies]
        pos = {f"agent_{i}": (-0.2 + (AGENT_DIST + 2 * AGENT_RADIUS) * i, 1.0) for i in range(n)}
        rot = {}
        if self.joints:
            pos[JOINED] = (-0.2 + (AGENT_DIST + 2 * AGENT_RADIUS) * n, 1.0)
        for i in range(N_BOXES):
            pos[f"landmark {i}"] = (0.2 if i % 2 else -0.2, 0.6 - 0.3 * i)
            rot[f"landmark {i}"] = torch.pi / 4 if i % 2 else -torch.pi / 4
        pos["floor"] = (0.0, -1.0)
        xy = torch.tensor([pos.get(name, (0.0, 0.0)) for name in names], dtype=torch.float32)
        angles = torch.tensor([rot.get(name, 0.0) for name in names], dtype=torch.float32)
        return xy[:, 0].tolist(), xy[:, 1].tolist(), angles.tolist()

    def _fields(self) -> dict[str, Field]:
        x, y, rot = self._start()
        return {"start_x": const(x), "start_y": const(y), "start_rot": const(rot)}
