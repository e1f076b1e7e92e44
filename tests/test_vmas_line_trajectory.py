"""LineTrajectory-v0 against VMAS 1.5.2's debug scenario ``line_trajectory`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state and whole free-running
episodes (continuous and discrete actions, moving starts, the top of the line reached), the
reset against VMAS's, random-policy returns against VMAS's, the observation noise, bad
arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "LineTrajectory-v0", "line_trajectory"
INFO = ("pos_rew", "dot_product", "steady_rew")


def extra_state(vm):
    """The controller's errors off VMAS's objects."""
    return D.controller_state(vm.world.agents)


def moving(vm):
    """Anywhere in [-1, 1] x [-1, 2.5] (some worlds already past the top), moving at up to 1 m/s
    per axis; a few worlds on the line or at rest (the cosine's 0 / 0)."""
    gen = torch.Generator().manual_seed(3)
    E = vm.num_envs
    a = vm.world.agents[0]
    a.state.pos = torch.stack([torch.rand(E, generator=gen) * 2 - 1, torch.rand(E, generator=gen) * 3.5 - 1], 1)
    a.state.vel = torch.rand(E, 2, generator=gen) * 2 - 1
    a.state.pos[0, 0] = 0.0
    a.state.vel[1] = 0.0


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("start", [None, moving], ids=["vmas", "moving"])
def test_one_step_from_every_vmas_state(continuous, start):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, compare_state=True, start=start)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("start", [None, moving], ids=["vmas", "moving"])
def test_whole_episode(continuous, start):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, start=start)


def test_driving_up_the_line_ends_the_episode():
    """Full speed up from VMAS's starts: VMAS's ``done`` (y > 2) and ours agree every step, and
    every world gets there."""
    vm, ours = R.whole_episode(ENV, SCENARIO, num_envs=16, steps=1, extra_state=extra_state, info_keys=INFO,
                               compare_state=True)
    up = torch.tensor([0.0, 1.0])
    ended = torch.zeros(16, dtype=torch.bool)
    for t in range(200):  # top speed 0.225 m/s (force 0.5 / mass 2, drag 0.1): up to 3 m to go
        vm_out = vm.step([up.expand(16, 2).clone()])
        our_out = ours.step({"agents": up.expand(16, 1, 2).clone()})
        R.compare_outputs(f"up {t}", vm, ours, vm_out, our_out, R.EPISODE_TOL, INFO)
        terminated = ours.world_flags()[0].cpu()
        torch.testing.assert_close(terminated, vm.scenario.done())  # VMAS's own done, without its horizon
        ended |= terminated
    assert bool(ended.all())


def test_the_comparisons_bite():
    """A different controller gain, drag, force limit or steadiness weight on VMAS's side is caught."""
    def gain(vm):
        vm.world.agents[0].controller.ctrl_gain = 4.04

    def drag(vm):
        vm.world._drag = 0.11

    def force(vm):
        vm.world.agents[0]._f_range = 0.45

    def steady(vm):
        original = vm.scenario.reward

        def reward(agent):
            return original(agent) + vm.scenario.steady_rew * 0.01
        vm.scenario.reward = reward

    physics = r"obs|pos|vel|state"
    for start, what in ((gain, physics), (drag, physics), (force, physics), (steady, "reward")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, num_envs=16, steps=30, extra_state=extra_state, info_keys=INFO,
                            compare_state=True, start=start)


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's per-world resets: KS on x and y; at rest,
    the controller cleared."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n)
    mine = D.our_starts(ENV, n)
    for k in range(2):
        assert R.ks_statistic(mine["pos"][:, 0, k].numpy(), theirs["pos"][:, 0, k].numpy()) < R.ks_critical(n, n), k
    assert float(mine["pos"][:, 0, 1].max()) <= 0 and float(mine["pos"][:, 0, 1].min()) >= -1
    assert bool((mine["vel"] == 0).all()) and bool((mine["accum_errs"] == 0).all())


def test_reset_ks_bites():
    n = 10_000
    mine = D.our_starts(ENV, n)["pos"][:, 0, 1].numpy()
    assert R.ks_statistic(mine, np.random.default_rng(0).uniform(-1, 0.05, n)) > R.ks_critical(n, n)


def test_random_policy_returns_match_vmas():
    """2 000 episodes of 60 steps of uniform random actions on each side, from each side's own
    starts and random numbers: the returns' mean and spread agree within 4 standard errors."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60)
    mine = D.our_returns(ENV, 2000, 60)
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_returns_bite():
    """The same statistic tells VMAS's starts drawn from U(-1.2, 1.2) x U(-1.2, 0) apart."""
    def wider(vm):
        vm.world.agents[0].state.pos = vm.world.agents[0].state.pos * 1.2

    theirs = D.vmas_returns(SCENARIO, 2000, 60, start=wider)
    assert not D.agree(D.our_returns(ENV, 2000, 60), theirs)


def test_observation_noise():
    noise = 0.05
    vm = R.make_vmas(SCENARIO, 256, 0, True)
    ours = R.make_ours(ENV, 256, True, obs_noise=noise)
    R.copy_state(vm, ours, extra_state)
    D.check_observation_noise(vm, ours, noise)


@pytest.mark.parametrize("kwargs,match", [
    ({"obs_noise": -0.1}, "obs_noise"), ({"obs_noise": "x"}, "obs_noise"), ({"max_steps": 0}, "max_steps"),
    ({"n_agents": 2}, "n_agents"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    vm = R.make_vmas(SCENARIO, 1, 0, continuous)
    spec = war_envs.make(ENV, continuous_actions=continuous).groups["agents"]
    assert spec.agents == tuple(a.name for a in vm.agents)
    assert spec.obs_dim == vm.observation_space[0].shape[0]
    if continuous:
        np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
    else:
        assert spec.action_space.n == vm.action_space[0].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "accum_errs"))


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, extra_state=extra_state,
                           info_keys=INFO, start=moving)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, obs_noise=0.1, continuous_actions=False, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
