"""VMAS's joints in the shared VMAS physics (``war_envs/scenarios/vmas/world.py``), on the paths no
registered scenario takes yet: a joint whose landmark is a collidable box (``width > 0``), a
rotation VMAS infers at every reset (``rotate_a=False`` without ``fixed_rotation_a``), a dist-0
joint holding a fixed rotation, sphere anchors off their centres (and outside the sphere: VMAS's
normalisation slip), joints between agents only. A test-only scenario beside a VMAS ``World`` built
by hand with the same bodies and joints: the reset's joint landmark and inferred rotation, the joint
forces and torques of one evaluation, and one whole step."""

from typing import Any

import numpy as np
import pytest
import torch
import vmas_reference as R
import warp as wp

from war_envs.core.fields import Field, module_kernels
from war_envs.scenarios.vmas import world as W
from war_envs.scenarios.vmas.base import Body, Joint, Layout, VmasBase

pytest.importorskip("vmas")

RADIUS = 0.05
#: agents' start places (our reset's, VMAS's set_pos)
START = [(-0.3, 0.1), (0.1, 0.25), (0.4, -0.2), (0.5, -0.15)]
#: a0's start rotation (VMAS's set_rot after the set_pos)
START_ROT = 0.7


@wp.func(inline=True)
def probe_reset(w: Any, e: int):
    for i in range(4):
        W.set_position(w, e, W.body_of(w, i), wp.vector(w.start_x[i], w.start_y[i]))
    w.rot[e, W.body_of(w, 0)] = w.start_rot
    W.place_joint_landmarks(w, e)


@wp.func(inline=True)
def probe_reward(w: Any, e: int):
    for i in range(4):
        w.reward[e, i] = type(w.dt)(0.0)
    return False


@wp.func(inline=True)
def probe_observe(w: Any, e: int, i: int, out: wp.array3d(dtype=wp.float32)):
    W.write_vec(out, e, i, 0, W.position(w, e, W.body_of(w, i)))


class JointProbe(VmasBase):
    """Test-only: four sphere agents; ``a0``-``a1`` joined by a collidable box joint of length
    0.4 (``a0``'s side turning with the box: rotation inferred), ``a2``-``a3`` by a dist-0 joint
    at anchors off the spheres' centres holding a fixed rotation of 0.3."""

    env_id = "JointProbe-test"
    vmas_scenario = "joint_probe"
    reset_world = probe_reset
    reward_world = probe_reward
    observe_agent = probe_observe

    def _layout(self) -> Layout:
        agents = [Body(f"a{i}", agent=True, radius=RADIUS, mass=1.0 + 0.5 * i) for i in range(4)]
        box = Joint("a0", "a1", dist=0.4, width=0.05, collidable=True, rotate_a=False, mass=2.0)
        fixed = Joint("a2", "a3", anchor_a=(0.6, 0.6), anchor_b=(-0.5, 0.2), rotate_a=False, rotate_b=False,
                      fixed_rotation_a=0.3, fixed_rotation_b=0.3)
        return Layout(bodies=[box.landmark()] + agents, groups=[("agents", [a.name for a in agents])],
                      joints=[box, fixed], substeps=5, joint_force=300)

    def _obs_dim(self, group: str) -> int:
        return 2

    def _fields(self) -> dict[str, Field]:
        return {"start_rot": Field("param", "float", (), START_ROT),
                "start_x": Field("const", "float", (4,), [p[0] for p in START]),
                "start_y": Field("const", "float", (4,), [p[1] for p in START])}


def vmas_world(E: int):
    """VMAS's World with the same bodies and joints, the agents placed at ``START`` (VMAS's
    ``set_pos``: its joints' ``notify``)."""
    from vmas.simulator.core import Agent, Sphere, World
    from vmas.simulator.joints import Joint as VJoint

    world = World(E, "cpu", substeps=5, joint_force=300)
    agents = [Agent(name=f"a{i}", shape=Sphere(RADIUS), mass=1.0 + 0.5 * i) for i in range(4)]
    for a in agents:
        world.add_agent(a)
    world.add_joint(VJoint(agents[0], agents[1], dist=0.4, width=0.05, collidable=True, rotate_a=False, mass=2.0))
    world.add_joint(VJoint(agents[2], agents[3], anchor_a=(0.6, 0.6), anchor_b=(-0.5, 0.2), rotate_a=False,
                           rotate_b=False, fixed_rotation_a=0.3, fixed_rotation_b=0.3))
    for a, p in zip(agents, START):
        a.set_pos(torch.tensor(p).expand(E, 2).clone(), batch_index=None)
    agents[0].set_rot(torch.full((E, 1), START_ROT), batch_index=None)
    return world


def _ours(E):
    env = JointProbe(num_envs=E, autoreset_mode="disabled", max_steps=None)
    env.reset(seed=0)
    return env


def test_layout_is_vmas():
    world = vmas_world(1)
    env = _ours(1)
    assert [b.name for b in env.layout.bodies] == [e.name for e in world.entities]
    box = env.layout.bodies[0]
    assert (box.shape, box.length, box.width, box.mass, box.collide) == ("box", 0.4, 0.05, 2.0, True)
    # joined pairs never collide; the box collides with a2 and a3
    pairs = {tuple(sorted((a, b))) for a, b, _ in env.layout.contact_pairs()}
    assert (0, 1) not in pairs and (0, 2) not in pairs and (3, 4) not in pairs and (0, 3) in pairs
    cons = env.joint_constraints
    assert len(cons) == len(world._joints) == 3
    # VMAS's delta tensors, its sphere's normalisation slip included
    for (a, b, da, db, rotate, fixed), (va, vb) in zip(cons, [(0, 1), (0, 2), (3, 4)]):
        c = world._joints[frozenset({world.entities[va].name, world.entities[vb].name})]
        assert (a, b) == (world.entities.index(c.entity_a), world.entities.index(c.entity_b))
        assert da == tuple(c._delta_anchor_tensor(c.entity_a)[0].tolist())
        assert db == tuple(c._delta_anchor_tensor(c.entity_b)[0].tolist())
        assert rotate == c.rotate
    # a sphere's anchor outside it: VMAS's normalisation slip (delta / (norm * radius))
    from vmas.simulator.core import Sphere

    from war_envs.scenarios.vmas.base import anchor_delta

    for anchor in ((1, 1), (0.6, 0.6), (-1, 0.3)):
        assert anchor_delta(Body("s", radius=RADIUS), anchor) == Sphere(RADIUS).get_delta_from_anchor(anchor)


def test_reset_places_the_joint_landmark_and_infers_the_rotation():
    """VMAS's ``Joint.notify``: the box at the middle of a0 and a1, turned toward a1, and a0's
    fixed rotation inferred (the angle minus a0's rotation, 0.7), bit for bit."""
    E = 3
    world = vmas_world(E)
    state = _ours(E).get_state()
    box = world.entities[0]
    torch.testing.assert_close(state["pos"][:, 0], box.state.pos, rtol=0, atol=0)
    torch.testing.assert_close(state["rot"][:, 0], box.state.rot[:, 0], rtol=0, atol=1e-7)
    c = world._joints[frozenset({box.name, "a0"})]
    torch.testing.assert_close(state["joint_rot"][:, 0], c.fixed_rotation[:, 0], rtol=0, atol=1e-7)
    assert float(state["joint_rot"][0, 0]) != 0.0


def _disturbed(E, seed=1):
    gen = torch.Generator().manual_seed(seed)
    world = vmas_world(E)
    for e in world.entities:
        e.state.pos = e.state.pos + (torch.rand(E, 2, generator=gen) - 0.5) * 0.04
        e.state.rot = e.state.rot + (torch.rand(E, 1, generator=gen) - 0.5) * 0.6
        e.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.2
    return world


def _copy(world, env):
    c = world._joints[frozenset({world.entities[0].name, "a0"})]
    state = {"pos": torch.stack([e.state.pos for e in world.entities], 1),
             "vel": torch.stack([e.state.vel for e in world.entities], 1),
             "rot": torch.stack([e.state.rot[:, 0] for e in world.entities], 1),
             "ang_vel": torch.stack([e.state.ang_vel[:, 0] for e in world.entities], 1),
             "joint_rot": torch.stack([c.fixed_rotation[:, 0], torch.zeros(world.batch_dim),
                                       torch.full((world.batch_dim,), np.float32(0.3))], 1)}
    env.set_state(state)


def _probe(Struct):
    def joint_probe(w: Struct):
        e = wp.tid()
        for b in range(w.pos.shape[1]):
            w.force[e, b, 0] = w.dt * 0.0
            w.force[e, b, 1] = w.dt * 0.0
            w.torque[e, b] = w.dt * 0.0
        for k in range(w.joint_a.shape[0]):
            W.joint_constraint(w, e, k)

    return module_kernels(f"test_vmas_joints_probe_{Struct.__name__}", lambda: (joint_probe,))["joint_probe"]


def test_joint_forces_and_torques_are_vmas():
    """One evaluation of every joint (the pulls, their torques, the fixed rotations' torques on
    both sides) from disturbed states, against VMAS's ``_vectorized_joint_constraints``."""
    E = 64
    world = _disturbed(E)
    env = _ours(E)
    _copy(world, env)
    wp.launch(_probe(env._Struct), dim=E, inputs=[env._w], device=env.device)
    mine_f, mine_t = wp.to_torch(env._w.force).cpu(), wp.to_torch(env._w.torque).cpu()
    ents = world.entities
    world.forces_dict = {e: torch.zeros(E, 2) for e in ents}
    world.torques_dict = {e: torch.zeros(E, 1) for e in ents}
    joints = [world._joints[frozenset({ents[a].name, ents[b].name})] for a in range(len(ents))
              for b in range(a + 1, len(ents)) if frozenset({ents[a].name, ents[b].name}) in world._joints]
    world._vectorized_joint_constraints(joints)
    theirs_f = torch.stack([world.forces_dict[e] for e in ents], 1)
    theirs_t = torch.stack([world.torques_dict[e][:, 0] for e in ents], 1)
    assert float(theirs_f.abs().max()) > 1.0 and float(theirs_t[:, 3:].abs().min()) > 1e-3  # fixed-rotation torques
    torch.testing.assert_close(mine_f, theirs_f, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(mine_t, theirs_t, rtol=1e-5, atol=1e-4)


def test_one_step_is_vmas():
    """A whole step (5 substeps: action forces, joints, the box's contacts with a2 and a3) from
    disturbed states against VMAS's ``World.step`` (VMAS's batch gate off)."""
    E = 64
    world = _disturbed(E, seed=2)
    R.ungated_vmas(type("Env", (), {"world": world})())
    env = _ours(E)
    _copy(world, env)
    gen = torch.Generator().manual_seed(4)
    u = torch.rand(E, 4, 2, generator=gen) * 2 - 1
    for i, a in enumerate(world.agents):
        a.state.force = u[:, i].clone()
    world.step()
    env.step({"agents": u})
    state = env.get_state()
    for key, theirs in (("pos", torch.stack([e.state.pos for e in world.entities], 1)),
                        ("vel", torch.stack([e.state.vel for e in world.entities], 1)),
                        ("rot", torch.stack([e.state.rot[:, 0] for e in world.entities], 1)),
                        ("ang_vel", torch.stack([e.state.ang_vel[:, 0] for e in world.entities], 1))):
        torch.testing.assert_close(state[key], theirs, rtol=1e-4, atol=1e-4, msg=key)


def test_joint_arguments_are_checked():
    with pytest.raises(ValueError, match="itself"):
        Joint("a", "a")
    with pytest.raises(ValueError, match="anchors"):
        Joint("a", "b", anchor_a=(1.5, 0))
    with pytest.raises(ValueError, match="dist 0"):
        Joint("a", "b", collidable=True)
    with pytest.raises(ValueError, match="fixed rotation"):
        Joint("a", "b", dist=0.3, fixed_rotation_a=0.2)
    with pytest.raises(ValueError, match="substeps"):
        Layout(bodies=[Body("a", agent=True), Body("b", agent=True)], groups=[("agents", ["a", "b"])],
               joints=[Joint("a", "b")])
