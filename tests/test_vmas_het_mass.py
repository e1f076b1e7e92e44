"""HetMass-v0 against VMAS 1.5.2's debug scenario ``het_mass`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state and whole free-running
episodes (continuous and discrete actions, default and other masses) with VMAS's masses copied
in, the start and the masses' law against VMAS's, random-policy returns against VMAS's, bad
arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "HetMass-v0", "het_mass"
INFO = ("max_speed", "energy_expenditure")
OPTIONS = {"green_mass": 1.5, "blue_mass": 6.0, "mass_noise": 0.4}


def extra_state(vm):
    """VMAS's masses (one per agent for the whole batch) as our per-world ``mass_of``."""
    masses = torch.tensor([[float(a.mass) for a in vm.world.agents]], dtype=torch.float64)
    return {"mass_of": masses.expand(vm.num_envs, 2).clone()}


def moving(vm):
    """Random velocities at the start (both agents faster than their forces can change in a step)."""
    gen = torch.Generator().manual_seed(1)
    for a in vm.world.agents:
        a.state.vel = (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 2


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, start=moving, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, **kwargs)


def test_the_comparisons_bite():
    """A different mass, drag or ignored y force on VMAS's side is caught."""
    def mass(vm):
        vm.world.agents[0].mass = vm.world.agents[0].mass * 1.01

    def drag(vm):
        vm.world._drag = 0.26

    def y_force(vm):
        vm.scenario.process_action = lambda agent: None

    for start, what in ((mass, "obs|vel|pos|reward|info"), (drag, "obs|vel|pos|reward|info"), (y_force, "obs|pos|vel")):
        with pytest.raises(AssertionError, match=what):
            # the masses are copied before the change: VMAS runs with the changed one
            vm = R.make_vmas(SCENARIO, 16, 0, True, max_steps=20)
            ours = R.make_ours(ENV, 16, True, max_steps=20)
            R.copy_state(vm, ours, extra_state)
            start(vm)
            gen = torch.Generator().manual_seed(1)
            for t in range(20):
                acts, ours_acts = R.random_actions(vm, ours, gen)
                R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL, INFO)


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's: KS on each agent's x and y (VMAS's
    per-world resets) and on each agent's mass (VMAS's draws, one per reset); at rest."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n, **OPTIONS)
    mine = D.our_starts(ENV, n, **OPTIONS)
    for b in range(2):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    assert bool((mine["vel"] == 0).all()) and float(mine["pos"].abs().max()) <= 1
    vm = R.make_vmas(SCENARIO, 1, 0, True, **OPTIONS)
    masses = []
    for _ in range(n):
        vm.scenario.reset_world_at(0)
        masses.append([float(a.mass) for a in vm.world.agents])
    masses = np.array(masses)
    for i in range(2):
        assert R.ks_statistic(mine["mass_of"][:, i].numpy(), masses[:, i]) < R.ks_critical(n, n), i
    assert abs(float(mine["mass_of"][:, 0].min()) - 1.1) < 0.01 and abs(float(mine["mass_of"][:, 1].max()) - 6.4) < 0.01


def test_mass_ks_bites():
    n = 10_000
    mine = D.our_starts(ENV, n)["mass_of"][:, 0].numpy()
    assert R.ks_statistic(mine, np.random.default_rng(0).uniform(3.1, 5.1, n)) > R.ks_critical(n, n)


def test_each_world_keeps_its_masses_for_the_episode():
    """Our deliberate change: each world draws its own masses at its reset and keeps them (VMAS
    redraws every world's masses whenever any world resets)."""
    env = war_envs.make(ENV, num_envs=8, max_steps=5)
    env.reset(seed=3)
    first = env.get_state()["mass_of"].clone()
    assert len(set(first[:, 0].tolist())) == 8
    for _ in range(4):
        env.step({"agents": torch.zeros(8, 2, 2)})
        torch.testing.assert_close(env.get_state()["mass_of"], first, rtol=0, atol=0)
    env.step({"agents": torch.zeros(8, 2, 2)})  # the horizon: every world restarts
    assert bool((env.get_state()["mass_of"] != first).all())


@pytest.mark.parametrize("kwargs", [{"mass_noise": 0}, {"green_mass": 1.5, "blue_mass": 6.0, "mass_noise": 0}],
                         ids=["default", "other_masses"])
def test_random_policy_returns_match_vmas(kwargs):
    """2 000 episodes of 60 steps of uniform random actions on each side (fixed masses: VMAS's
    batch shares one draw), from each side's own starts: returns within 4 standard errors."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60, **kwargs)
    mine = D.our_returns(ENV, 2000, 60, **kwargs)
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_returns_bite():
    theirs = D.vmas_returns(SCENARIO, 2000, 60, mass_noise=0)
    mine = D.our_returns(ENV, 2000, 60, mass_noise=0, blue_mass=2.2)
    assert not D.agree(mine, theirs)


@pytest.mark.parametrize("kwargs,match", [
    ({"green_mass": "4"}, "green_mass"), ({"blue_mass": float("nan")}, "blue_mass"), ({"mass_noise": -1}, "mass_noise"),
    ({"blue_mass": 1.0}, "blue_mass"), ({"green_mass": 0.5, "mass_noise": 0.5}, "green_mass"),
    ({"max_steps": 0}, "max_steps"), ({"n_agents": 3}, "n_agents"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    vm = R.make_vmas(SCENARIO, 1, 0, continuous)
    spec = war_envs.make(ENV, continuous_actions=continuous).groups["agents"]
    assert spec.agents == tuple(a.name.replace(" ", "_") for a in vm.agents)
    for i in range(2):
        assert spec.obs_dim == vm.observation_space[i].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[i].high)
        else:
            assert spec.action_space.n == vm.action_space[i].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "mass_of"))


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, extra_state=extra_state,
                           info_keys=INFO, start=moving, **OPTIONS)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, mass_noise=0.5, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 3
