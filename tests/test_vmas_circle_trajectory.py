"""CircleTrajectory-v0 against VMAS 1.5.2's debug scenario ``circle_trajectory`` in the same
process (tests/vmas_reference.py): one step from every recorded VMAS state and whole
free-running episodes (continuous and discrete actions, default and non-default arguments,
starts on, inside and outside the circle and at the origin), the reset against VMAS's,
random-policy returns against VMAS's, the observation noise, bad arguments and the shared API
checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "CircleTrajectory-v0", "circle_trajectory"
INFO = ("pos_rew", "dot_product")
OPTIONS = {"u_range": 0.7, "a_range": 1.5, "dt_delay": 2, "min_input_norm": 0.15, "linear_friction": 0.2}


def extra_state(vm):
    """The controller's errors and the delay queue off VMAS's objects."""
    return {**D.controller_state(vm.world.agents), **D.queue_state(vm)}


def special(vm):
    """World 0 at the origin (VMAS's 0 / 0 closest point), world 1 on the circle (no tangent),
    worlds 2-3 just inside and outside it, the rest anywhere in [-2, 2]², all moving."""
    gen = torch.Generator().manual_seed(8)
    E = vm.num_envs
    a = vm.world.agents[0]
    pos = torch.rand(E, 2, generator=gen) * 4 - 2
    pos[0] = 0.0
    pos[1] = torch.tensor([1.5, 0.0])
    pos[2] = torch.tensor([0.0, 1.499])
    pos[3] = torch.tensor([-1.501, 0.0])
    a.state.pos = pos
    a.state.vel = torch.rand(E, 2, generator=gen) - 0.5
    a.state.vel[0] = 0.0


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
@pytest.mark.parametrize("start", [None, special], ids=["vmas", "special"])
def test_one_step_from_every_vmas_state(continuous, kwargs, start):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, compare_state=True, start=start, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, **kwargs)


def test_special_points_step_by_step():
    """From the origin, the circle itself and either side of it, standing still (zero commands):
    VMAS's rewards at the 0 / 0 closest point and the zero tangent, and ours."""
    vm, ours = R.whole_episode(ENV, SCENARIO, num_envs=16, steps=1, start=special, extra_state=extra_state,
                               info_keys=INFO, compare_state=True)
    for a in vm.world.agents:
        a.state.pos[:4] = torch.tensor([[0.0, 0.0], [1.5, 0.0], [0.0, 1.499], [-1.501, 0.0]])
        a.state.vel[:] = 0.0
        a.controller.reset()
    R.copy_state(vm, ours, extra_state)
    out = None
    for t in range(3):
        vm_out = vm.step([torch.zeros(16, 2)])
        out = ours.step({"agents": torch.zeros(16, 1, 2)})
        R.compare_outputs(f"special {t}", vm, ours, vm_out, out, R.STEP_TOL, INFO)
    # at rest with zero commands nothing moves: on the circle the distance is 0, and at the
    # origin VMAS's closest point 0 / 0 is taken as the origin itself (nan_to_num): also 0
    assert float(out[4]["pos_rew"][1, 0]) == 0.0 and float(out[4]["pos_rew"][0, 0]) == 0.0
    assert float(out[4]["dot_product"][:4].abs().max()) == 0.0


def test_the_comparisons_bite():
    """A different controller gain, friction or tangent direction on VMAS's side is caught."""
    def gain(vm):
        vm.world.agents[0].controller.ctrl_gain = 2.02

    def friction(vm):
        vm.world._linear_friction = 0.11

    def tangent(vm):
        original = vm.scenario.get_tangent_to_circle
        vm.scenario.get_tangent_to_circle = lambda agent, closest_point=None: -original(agent, closest_point)

    physics = r"obs|pos|vel|state"
    for start, what in ((gain, physics), (friction, physics), (tangent, "reward|info")):
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
    assert float(mine["pos"].abs().max()) <= 1.5
    assert bool((mine["vel"] == 0).all()) and bool((mine["accum_errs"] == 0).all())


def test_reset_ks_bites():
    n = 10_000
    mine = D.our_starts(ENV, n)["pos"][:, 0, 0].numpy()
    assert R.ks_statistic(mine, np.random.default_rng(0).uniform(-1.4, 1.4, n)) > R.ks_critical(n, n)


@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_random_policy_returns_match_vmas(kwargs):
    """2 000 episodes of 60 steps of uniform random actions on each side, from each side's own
    starts and random numbers: the returns' mean and spread agree within 4 standard errors."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60, **kwargs)
    mine = D.our_returns(ENV, 2000, 60, **kwargs)
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_returns_bite():
    """The same statistic tells VMAS's starts drawn from U(-1.35, 1.35)² apart (the returns are
    mostly the distance to the circle: random commands barely move the agent, so friction,
    speed or force limits changed by a third, or a 1.4 circle, stay within 4 standard errors;
    measured)."""
    def narrower(vm):
        vm.world.agents[0].state.pos = vm.world.agents[0].state.pos * 0.9

    theirs = D.vmas_returns(SCENARIO, 2000, 60, start=narrower)
    assert not D.agree(D.our_returns(ENV, 2000, 60), theirs)


def test_reset_empties_the_delay_queue():
    D.check_reset_empties_delay_queue(ENV)


def test_observation_noise():
    noise = 0.05
    vm = R.make_vmas(SCENARIO, 256, 0, True)
    ours = R.make_ours(ENV, 256, True, obs_noise=noise)
    R.copy_state(vm, ours, extra_state)
    D.check_observation_noise(vm, ours, noise)


@pytest.mark.parametrize("kwargs,match", [
    ({"u_range": 0}, "u_range"), ({"a_range": -1}, "a_range"), ({"obs_noise": -0.1}, "obs_noise"),
    ({"dt_delay": -1}, "dt_delay"), ({"dt_delay": 1.5}, "dt_delay"), ({"min_input_norm": -1}, "min_input_norm"),
    ({"linear_friction": -0.1}, "linear_friction"), ({"linear_friction": "x"}, "linear_friction"),
    ({"max_steps": 0}, "max_steps"), ({"n_agents": 2}, "n_agents"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    for kwargs in ({}, OPTIONS):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        spec = war_envs.make(ENV, continuous_actions=continuous, **kwargs).groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "accum_errs"), dt_delay=1)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, extra_state=extra_state,
                           info_keys=INFO, start=special, **OPTIONS)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, obs_noise=0.1, dt_delay=1, continuous_actions=False, pettingzoo=False,
                               gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
