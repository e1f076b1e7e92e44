"""Waterfall-v0 against VMAS 1.5.2's debug scenario ``waterfall`` in the same process
(tests/vmas_reference.py, tests/vmas_debug_reference.py).

With ``joints=True`` (VMAS's default) the agents are a chain of stiff joints (collidable rods,
the last one holding a fixed rotation VMAS infers at the reset), so, as in JointPassage-v0
(tests/test_vmas_joint_passage.py), ours is held within ``FACTOR`` times VMAS's one-ulp twin
(``R.one_step_within_vmas_spread``, ``R.whole_episode_within_vmas_spread``) plus float32
tolerances, from VMAS's start and from a contact-heavy one (the chain lowered among the boxes)
(measured: whole episodes at most 2.1x; a wrong constant 3 600x to 40 000x,
``test_comparison_bites``).
The start has no randomness: ours is VMAS's bit for bit, the inferred fixed rotations included.
With ``joints=False`` the comparison is the plain float32 one (``R.one_step_from_every_state``,
``R.whole_episode``)."""

import math

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "Waterfall-v0", "waterfall"
FACTOR = 15.0


def extra_state(vm):
    """VMAS's inferred fixed rotations (``JointConstraint.fixed_rotation``, 0 where the pair turns
    freely) as our ``joint_rot``, in our constraint order (entity-pair order); none without joints."""
    w, E = vm.world, vm.num_envs
    if not w._joints:
        return {}
    index = {e.name: i for i, e in enumerate(w.entities)}
    cons = sorted(w._joints.values(), key=lambda c: sorted((index[c.entity_a.name], index[c.entity_b.name])))
    return {"joint_rot": torch.stack([c.fixed_rotation[:, 0] if torch.is_tensor(c.fixed_rotation)
                                      else torch.full((E,), float(c.fixed_rotation)) for c in cons], 1)}


def sync(twin, vm):
    """Nothing to copy: the scenario keeps no state of its own (the fixed rotations, inferred at
    the reset from VMAS's fixed start, are the same on both)."""


def _rods(vm):
    return [i for i, e in enumerate(vm.world.entities) if e.name.startswith("joint ")]


def one_step(**kwargs):
    vm = R.make_vmas(SCENARIO, 1, 0, True, **{k: v for k, v in kwargs.items() if k in ("n_agents", "joints")})
    rods = _rods(vm)
    twins = [lambda s: R.ulp_up(s, "rot", rods), lambda s: R.ulp_up(s, "pos")]
    return R.one_step_within_vmas_spread(ENV, SCENARIO, twins=twins, sync=sync, extra_state=extra_state,
                                         factor=FACTOR, **kwargs)


def episode(factor=FACTOR, **kwargs):
    return R.whole_episode_within_vmas_spread(ENV, SCENARIO, twin_start=R.twin_every_step(), sync=sync,
                                              twin_forces=R.ulp_noisy_forces, extra_state=extra_state,
                                              factor=factor, **kwargs)


def lowered(vm):
    """A contact-heavy start: the chain (agents, rods, joined box) moved down by 0.35, among the
    loose boxes (agent_0 on box 0, the chain across box 1), moving down at up to 0.5."""
    gen = torch.Generator().manual_seed(4)
    E = vm.num_envs
    chain = [e for e in vm.world.entities if e in vm.world.agents or e.name.startswith("joint")
             or e.name == "joined landmark"]
    push = torch.stack([(torch.rand(E, generator=gen) - 0.5) * 0.4, -0.5 * torch.rand(E, generator=gen)], 1)
    for e in chain:
        e.state.pos = e.state.pos - torch.tensor([0.0, 0.35])
        e.state.vel = push.clone()


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 3}], ids=["default", "three"])
def test_one_step_from_every_state(continuous, kwargs):
    print(one_step(continuous=continuous, steps=25, **kwargs))


def test_one_step_contact_heavy():
    print(one_step(steps=20, start=lowered))


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 3}], ids=["default", "three"])
def test_whole_episode(continuous, kwargs):
    print(episode(continuous=continuous, steps=100, **kwargs))


def test_whole_episode_contact_heavy():
    print(episode(steps=40, start=lowered))


def test_contact_heavy_start_does_what_it_says():
    """``lowered`` makes contacts: the loose boxes are pushed (they move) within a few steps."""
    vm = R.make_vmas(SCENARIO, 16, 0, True)
    lowered(vm)
    boxes = [e for e in vm.world.landmarks if e.name.startswith("landmark")]
    for _ in range(5):
        vm.step([torch.zeros(16, 2)] * 5)
    moved = torch.stack([b.state.vel.norm(dim=1) for b in boxes], 1).amax(1)
    assert int((moved > 1e-3).sum()) >= 12


def test_float64_worlds_follow_vmas():
    """A float64 world against VMAS (float32) within VMAS's own one-ulp spread."""
    one_step(steps=10, precision="float64", start=lowered)
    episode(steps=40, precision="float64")


@pytest.mark.parametrize("continuous", [True, False])
def test_without_joints_float32_exact(continuous):
    """``joints=False``: plain float32 tolerances, one step from every state and whole episodes."""
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, steps=30, joints=False)
    R.whole_episode(ENV, SCENARIO, continuous=continuous, steps=100, joints=False, n_agents=6)


def test_without_joints_float64():
    D.float64_against_vmas(ENV, SCENARIO, steps=30, joints=False)
    D.float64_against_vmas(ENV, SCENARIO, steps=60, joints=False, free_running=True)


def test_comparison_bites():
    """A wrong joint force, rod mass, box mass or drag on VMAS's side puts ours far outside
    VMAS's one-ulp band (from the contact-heavy start), and the checked comparison fails."""
    def joint_force(vm):
        lowered(vm)
        vm.world._joint_force = vm.world._joint_force * 1.1

    def rod_mass(vm):
        lowered(vm)
        vm.world.landmarks[0].mass = 1.2

    def box_mass(vm):
        lowered(vm)
        vm.world.landmarks[6].mass = 1.2

    def drag(vm):
        lowered(vm)
        vm.world._drag = 0.26

    for start in (joint_force, rod_mass, box_mass, drag):
        ratio = episode(steps=30, start=start, check=False)
        assert max(ratio.values()) > 1.5 * FACTOR, (start.__name__, ratio)
        with pytest.raises(AssertionError, match="Waterfall-v0 step"):
            episode(steps=30, start=start)


@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 1}, {"n_agents": 8}, {"joints": False},
                                    {"joints": False, "n_agents": 6}],
                         ids=["default", "one", "eight", "no_joints", "no_joints_six"])
def test_start_is_vmas_start(kwargs):
    """VMAS's start has no randomness: ours is VMAS's bit for bit (every body's position and
    rotation, the rods at their bodies' middle, the inferred fixed rotations), after VMAS's
    batched reset and after its per-world ``reset_world_at``, everything at rest."""
    n = 4
    for theirs in (R.vmas_state(R.make_vmas(SCENARIO, n, 0, True, **kwargs)), D.vmas_starts(SCENARIO, n, **kwargs)):
        vm = R.make_vmas(SCENARIO, n, 0, True, **kwargs)
        mine = D.our_starts(ENV, n, **kwargs)
        for key in ("pos", "vel", "rot", "ang_vel"):
            assert torch.equal(mine[key], theirs[key]), key
        for key, value in extra_state(vm).items():
            assert torch.equal(mine[key], value), key
    assert bool((mine["vel"] == 0).all() and (mine["ang_vel"] == 0).all())


@pytest.mark.optimized_kernels
def test_random_policy_returns_match_vmas():
    """2 000 episodes of 50 steps of uniform random actions on each side: the returns' mean and
    spread within 4 standard errors (plain VMAS, its batch gate on)."""
    theirs = D.vmas_returns(SCENARIO, 2000, 50, per_world_reset=False, gated=True)
    mine = D.our_returns(ENV, 2000, 50)
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


@pytest.mark.optimized_kernels
def test_random_policy_returns_bite():
    """The same statistic tells a drag of 0.3 apart."""
    def drag(vm):
        vm.world._drag = 0.3

    theirs = D.vmas_returns(SCENARIO, 2000, 50, per_world_reset=False, gated=True, start=drag)
    mine = D.our_returns(ENV, 2000, 50)
    assert not D.agree(mine, theirs)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 2.0}, "n_agents"), ({"joints": False, "n_agents": 7}, "n_agents"),
    ({"joints": 1}, "joints"), ({"agent_radius": 0.1}, "agent_radius"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_bodies_and_pairs_match_vmas(continuous):
    for kwargs in ({}, {"n_agents": 3}, {"n_agents": 1}, {"joints": False}):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9
        ents = vm.world.entities
        assert [b.name for b in ours.layout.bodies] == [e.name for e in ents]
        for b, e in zip(ours.layout.bodies, ents):
            assert (b.collide, b.movable, b.rotatable, b.mass, b.shape) == (
                e.collide, e.movable, e.rotatable, e.mass, type(e.shape).__name__.lower())
            assert math.isclose(b.moment_of_inertia(), e.moment_of_inertia, rel_tol=1e-6)
        w = vm.world
        assert (w._substeps, w._joint_force, w._collision_force, w._drag, w._dt) == (
            ours.layout.substeps, ours.layout.joint_force, ours.layout.collision_force, ours.layout.drag,
            ours.layout.dt)
        theirs = sorted((a, b) for a in range(len(ents)) for b in range(a + 1, len(ents))
                        if w._joints.get(frozenset({ents[a].name, ents[b].name})) is None
                        and R._collides_without_batch_gate(w, ents[a], ents[b]))
        assert sorted(tuple(sorted((a, b))) for a, b, _ in ours.layout.contact_pairs()) == theirs
        assert len(ours.joint_constraints) == len(w._joints)
        for a, b, _, _, rotate, _ in ours.joint_constraints:
            assert w._joints[frozenset({ents[a].name, ents[b].name})].rotate == rotate


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, n_agents=3)
    war_envs.testing.check_all(ENV, pettingzoo=False, gymnasium=False, joints=False)
