"""HetMass-v0: VMAS 1.5.2's debug scenario ``het_mass`` (a heavy and a light agent, pushed
along x only, are rewarded for the faster one's speed and pay for their effort)."""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from war_envs.core import validation as v
from war_envs.core.fields import Field, info, param, scratch, state
from war_envs.scenarios.vmas import geometry as G
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import COLORS, Body, Layout, VmasBase

F_RANGE = 1.0
ENERGY_COEFF = 0.17


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """VMAS's ``reset_world_at``: the blue agent's mass ``blue_mass + U(-mass_noise,
    mass_noise)``, then the green one's likewise; each agent at U(-1, 1)² (x, then y)."""
    rng = W.episode_stream(w, e)
    w.mass_of[e, 1] = w.blue_mass + W.uniform(wp.randf(rng), -w.mass_noise, w.mass_noise)
    w.mass_of[e, 0] = w.green_mass + W.uniform(wp.randf(rng), -w.mass_noise, w.mass_noise)
    one = type(w.dt)(1.0)
    for i in range(2):
        x = W.uniform(wp.randf(rng), -one, one)
        y = W.uniform(wp.randf(rng), -one, one)
        W.set_position(w, e, W.body_of(w, i), wp.vector(x, y))


@wp.func(inline=True)
def process_action(w: Any, e: int, i: int):
    """VMAS's ``process_action`` (``u[:, Y] = 0``), then the physics' action force per unit
    mass: VMAS's force ``clamp(u, ±f_range 1)`` divided by this world's mass of the agent (the
    shared physics sees bodies of mass 1 without a force limit, so its ``force / 1`` step is
    VMAS's ``force / mass``).  ``|u|`` is kept for the energy term."""
    F0 = type(w.dt)(0.0)
    ux = type(F0)(w.u[e, i, 0])
    w.u_norm[e, i] = G.vector_norm(wp.vector(ux, F0))
    w.u[e, i, 0] = wp.float32(wp.clamp(ux, -w.force_range, w.force_range) / w.mass_of[e, i])
    w.u[e, i, 1] = wp.float32(0.0)


@wp.func(inline=True)
def reward_world(w: Any, e: int):
    """VMAS's ``reward`` (shared): the larger of the two agents' speeds, minus 0.17 x the sum of
    ``|u| / sqrt(2 f_range²)``.  VMAS's ``done`` is always False."""
    s0 = G.vector_norm(W.velocity(w, e, W.body_of(w, 0)))
    s1 = G.vector_norm(W.velocity(w, e, W.body_of(w, 1)))
    max_speed = G.torch_max(s0, s1)
    energy = -((w.u_norm[e, 0] / w.energy_norm) + (w.u_norm[e, 1] / w.energy_norm)) * w.energy_coeff
    for i in range(2):
        w.top_speed[e, i] = max_speed
        w.energy_expenditure[e, i] = energy
        w.reward[e, i] = max_speed + energy
    return False


@wp.func(inline=True)
def observe_agent(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    """[pos, vel]."""
    b = W.body_of(w, i)
    o = W.write_vec(out, e, i, 0, W.position(w, e, b))
    W.write_vec(out, e, i, o, W.velocity(w, e, b))


class HetMass(VmasBase):
    """VMAS 1.5.2's debug scenario ``het_mass``: two agents of different masses, pushed along x
    only, share the reward of the faster one's speed minus what both spend on force.

    Same keyword arguments and defaults as VMAS's scenario: ``green_mass=4``, ``blue_mass=2``,
    ``mass_noise=1`` (each mass minus ``mass_noise`` must be > 0), plus VMAS's environment
    arguments (``continuous_actions``, ``max_steps``, ``clamp_actions``: see
    ``war_envs.scenarios.vmas.base``).

    **Agents** ``agent_0`` (green, mass ``green_mass + U(-mass_noise, mass_noise)``) and
    ``agent_1`` (blue, ``blue_mass + U(-mass_noise, mass_noise)``), one group ``agents``:
    spheres of radius 0.05 that collide with nothing, force limit 1 per component.  VMAS's
    default world: steps of 0.1 s, one substep, drag 0.25.  Each starts at U(-1, 1)².
    **Actions**: a force in ``[-1, 1]²`` whose y component is ignored (VMAS's
    ``process_action`` zeroes it).  Discrete: ``Discrete(9)`` (0, -1, +1 per component).
    **Observation** ``[pos, vel]`` (4).  **Reward** (shared): ``max(|v_0|, |v_1|) - 0.17 (|u_0|
    + |u_1|) / sqrt(2)``.  **Termination**: never (VMAS's scenario has no ``done``); truncation
    at ``max_steps``.  **Info** (VMAS's, per agent): ``max_speed``, ``energy_expenditure``
    (the negative energy term).  **State**: ``mass_of`` (``[E, 2]``, this world's masses of
    agent_0 and agent_1).

    **Where this differs from VMAS.**  VMAS keeps one mass per agent for the whole batch and
    draws new masses (numpy's global generator) every time *any* world resets, so with
    per-world resets (TorchRL's ``reset_at``) every other world's masses change in the middle
    of its episode.  Here each world draws its agents' masses at its own reset and keeps them
    for the episode (state ``mass_of``); the law of a mass is VMAS's.  The bodies' ``mass``
    in ``layout`` is 1: the masses live in ``mass_of`` and ``process_action`` divides the force
    by them.  In float64 worlds the force per unit mass is rounded to float32.

    **Version history**: v0 — initial release, VMAS 1.5.2's ``het_mass``.
    """

    env_id = "HetMass-v0"
    vmas_scenario = "het_mass"
    vmas_agent_names_spaced = True
    per_agent_metrics = ("max_speed", "energy_expenditure")

    reset_world = reset_world
    reward_world = reward_world
    observe_agent = observe_agent
    process_action = process_action

    def __init__(self, *, green_mass: float = 4, blue_mass: float = 2, mass_noise: float = 1, **kwargs) -> None:
        self.mass_noise = v.check_float("mass_noise", mass_noise, low=0.0)
        self.green_mass = v.check_float("green_mass", green_mass)
        self.blue_mass = v.check_float("blue_mass", blue_mass)
        for name, mass in (("green_mass", self.green_mass), ("blue_mass", self.blue_mass)):
            if not mass - self.mass_noise > 0:
                raise ValueError(f"{name}: expected {name} - mass_noise > 0 (a positive mass), got {mass} with "
                                 f"mass_noise {self.mass_noise}")
        super().__init__(**kwargs)

    def _wire_struct(self, w, Struct) -> None:
        # VMAS's info key ``max_speed`` is the name of a VMAS world field here: the struct field
        # ``top_speed`` is handed out under VMAS's name
        self._info = {("max_speed" if k == "top_speed" else k): a for k, a in self._info.items()}
        super()._wire_struct(w, Struct)

    def _layout(self) -> Layout:
        agents = [Body(f"agent_{i}", agent=True, collide=False, color=COLORS[c])
                  for i, c in enumerate(("green", "blue"))]
        return Layout(bodies=agents, groups=[("agents", [a.name for a in agents])])

    def _obs_dim(self, group: str) -> int:
        return 4

    def _fields(self) -> dict[str, Field]:
        return {
            "green_mass": param(self.green_mass), "blue_mass": param(self.blue_mass),
            "mass_noise": param(self.mass_noise), "force_range": param(F_RANGE),
            "energy_norm": param(math.sqrt(2 * F_RANGE**2)), "energy_coeff": param(ENERGY_COEFF),
            "mass_of": state("float", 2),
            "u_norm": scratch("float", 2),
            "top_speed": info("float", 2), "energy_expenditure": info("float", 2),
        }
