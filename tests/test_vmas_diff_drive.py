"""DiffDrive-v0 against VMAS 1.5.2's debug scenario ``diff_drive`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state (moving and turning starts)
and whole free-running episodes (continuous and discrete actions, one to three agents), float64
worlds, the start's law and the law of the state after random play against VMAS's, bites, bad
arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "DiffDrive-v0", "diff_drive"


def moving(vm):
    """Random rotations, velocities and angular velocities at the start (VMAS's own start is at
    rest and unrotated)."""
    gen = torch.Generator().manual_seed(1)
    E = vm.num_envs
    for a in vm.world.agents:
        a.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * 8
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 2
        a.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 4


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 3}, {"n_agents": 1}], ids=["default", "three", "one"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, start=moving, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 3}], ids=["default", "three"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, **kwargs)


def test_the_comparisons_bite():
    """VMAS's diff-drive agent integrated by Euler instead of Runge-Kutta, the holonomic agents'
    torque multiplier 0.002 instead of 0.001, or a drag of 0.26 is caught."""
    def euler(vm):
        vm.world.agents[0].dynamics.integration = "euler"

    def multiplier(vm):
        vm.world.agents[1].action._u_multiplier_tensor = torch.tensor([1.0, 1.0, 0.002])

    def drag(vm):
        vm.world._drag = 0.26

    for start, what in ((euler, "pos|vel|rot|obs"), (multiplier, "rot|ang_vel"), (drag, "obs|pos|vel")):
        vm = R.make_vmas(SCENARIO, 16, 0, True, max_steps=20)
        ours = R.make_ours(ENV, 16, True, max_steps=20)
        moving(vm)
        R.copy_state(vm, ours)
        start(vm)
        gen = torch.Generator().manual_seed(1)
        with pytest.raises(AssertionError, match=what):
            for t in range(20):
                acts, ours_acts = R.random_actions(vm, ours, gen)
                R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL)


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's (per-world resets): KS on each agent's x
    and y; every agent 0.1 from the others, at rest and unrotated."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n, n_agents=3)
    mine = D.our_starts(ENV, n, n_agents=3)
    for b in range(3):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    gaps = torch.cdist(mine["pos"], mine["pos"]) + torch.eye(3) * 10
    assert float(gaps.min()) >= 0.1 and float(mine["pos"].abs().max()) <= 1
    assert bool((mine["vel"] == 0).all() and (mine["rot"] == 0).all() and (mine["ang_vel"] == 0).all())


def test_random_play_matches_vmas():
    """The rewards are 0 on both sides; what random play does is compared instead: every body's
    position, velocity, rotation and angular velocity after 30 steps of uniform random actions,
    2 000 worlds from each side's own starts (KS)."""
    theirs = D.vmas_random_rollout(SCENARIO, 2000, 30)
    mine = D.our_random_rollout(ENV, 2000, 30)
    assert not D.rollouts_differ(mine, theirs)
    assert D.rollouts_differ(mine, D.vmas_random_rollout(SCENARIO, 2000, 15))  # (the comparison bites)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": "2"}, "n_agents"), ({"n_agents": 2.0}, "n_agents"),
    ({"max_steps": 0}, "max_steps"), ({"width": 0.1}, "width"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    vm = R.make_vmas(SCENARIO, 1, 0, continuous, n_agents=3)
    env = war_envs.make(ENV, continuous_actions=continuous, n_agents=3)
    assert list(env.groups) == ["diff_drive", "holo_rot"]
    assert env.agents == [a.name for a in vm.agents]
    for i, agent in enumerate(env.agents):
        spec = next(s for s in env.groups.values() if agent in s.agents)
        assert spec.obs_dim == vm.observation_space[i].shape[0] == 4
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[i].high)
            np.testing.assert_array_equal(spec.action_space.low, vm.action_space[i].low)
        else:
            assert spec.action_space.n == vm.action_space[i].n == (9 if i == 0 else 27)


def test_float64_worlds_follow_float32():
    D.float64_follows_float32_groups(ENV, 40)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, start=moving, n_agents=3)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, n_agents=3, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
