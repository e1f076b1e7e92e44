"""Goal-v0 against VMAS 1.5.2's debug scenario ``goal`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state, whole free-running episodes
(continuous and discrete actions, default and non-default arguments, the goal reached), the
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

ENV, SCENARIO = "Goal-v0", "goal"
INFO = ("pos_rew", "energy_rew", "time_rew")
#: every argument away from its default (the delay queue, energy, another friction and range)
OPTIONS = {"u_range": 0.8, "a_range": 1.5, "dt_delay": 2, "min_input_norm": 0.2, "linear_friction": 0.2, "pos_shaping_factor": 2.0,
               "time_rew_coeff": -0.05, "energy_rew_coeff": 0.3}


def extra_state(vm):
    """The scenario's own state off VMAS's objects: the goal's shaping distance, the controller's
    errors and the delay queue."""
    return {"pos_shaping": vm.scenario.goal.pos_shaping, **D.controller_state(vm.world.agents), **D.queue_state(vm)}


def near_goal(vm):
    """The agent 0.05 to 0.3 from the goal, driving past it: the goal is reached and left."""
    gen = torch.Generator().manual_seed(2)
    agent, goal = vm.world.agents[0], vm.scenario.goal
    E = vm.num_envs
    agent.state.pos = goal.state.pos + (torch.rand(E, 2, generator=gen) - 0.5) * 0.3
    agent.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.6


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, compare_state=True, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, **kwargs)


def test_whole_episode_at_the_goal():
    """From next to the goal: the shaping and time rewards stop while the agent is on it, and
    ``reached_goal`` says when."""
    vm, ours = R.whole_episode(ENV, SCENARIO, num_envs=64, steps=1, start=near_goal, extra_state=extra_state,
                               info_keys=INFO, compare_state=True)
    reached = False
    for _ in range(30):
        vm_out = vm.step([torch.zeros(64, 2)])
        our_out = ours.step({"agents": torch.zeros(64, 1, 2)})
        R.compare_outputs("near the goal", vm, ours, vm_out, our_out, R.EPISODE_TOL, INFO)
        on = our_out[4]["reached_goal"].bool()
        assert torch.equal(on, vm.scenario.goal_reached)
        assert bool((our_out[4]["time_rew"][on] == 0).all()) and bool((our_out[4]["time_rew"][~on] == -0.01).all())
        reached |= bool(on.any())
    assert reached


def test_the_comparisons_bite():
    """A different controller gain, friction, shaping factor or time reward on VMAS's side is caught."""
    def gain(vm):
        vm.world.agents[0].controller.ctrl_gain = 2.02

    def friction(vm):
        vm.world.agents[0].linear_friction = 0.11

    def shaping(vm):
        vm.scenario.pos_shaping_factor = 1.01

    def time(vm):
        vm.scenario.time_rew_coeff = -0.011

    physics = "obs|pos|vel|state"
    for start, what in ((gain, physics), (friction, physics), (shaping, "reward|info|state"), (time, "reward|info")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, num_envs=16, steps=30, extra_state=extra_state, info_keys=INFO,
                            compare_state=True, start=start)


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's per-world resets: KS on the agent's and the
    goal's x and y; at rest, the controller cleared, the shaping distance VMAS's formula gives."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n)
    mine = D.our_starts(ENV, n, pos_shaping_factor=2.0)
    for b in range(2):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    assert float(mine["pos"][:, :, 0].abs().max()) <= 3 and float(mine["pos"][:, :, 1].abs().max()) <= 1.5
    assert bool((mine["vel"] == 0).all()) and bool((mine["accum_errs"] == 0).all())
    torch.testing.assert_close(mine["pos_shaping"],
                               torch.linalg.vector_norm(mine["pos"][:, 0] - mine["pos"][:, 1], dim=-1) * 2.0)


def test_reset_ks_bites():
    """The reset's KS test rejects a goal x from a slightly narrower range."""
    n = 10_000
    mine = D.our_starts(ENV, n)["pos"][:, 0, 0].numpy()
    narrower = np.random.default_rng(0).uniform(-2.8, 2.8, n)
    assert R.ks_statistic(narrower, mine) > R.ks_critical(n, n)


@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_random_policy_returns_match_vmas(kwargs):
    """2 000 episodes of 60 steps of uniform random actions on each side, from each side's own
    starts and random numbers: the returns' mean and spread agree within 4 standard errors."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60, **kwargs)
    mine = D.our_returns(ENV, 2000, 60, **kwargs)
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_returns_bite():
    """The same statistic tells a stronger energy penalty apart."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60, energy_rew_coeff=0.3)
    mine = D.our_returns(ENV, 2000, 60, energy_rew_coeff=0.33)
    assert not D.agree(mine, theirs)


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
    ({"linear_friction": -0.1}, "linear_friction"), ({"pos_shaping_factor": float("nan")}, "pos_shaping_factor"),
    ({"time_rew_coeff": "x"}, "time_rew_coeff"), ({"energy_rew_coeff": None}, "energy_rew_coeff"),
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
        assert len(spec.agents) == len(vm.agents) == 1
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "accum_errs"), dt_delay=1, energy_rew_coeff=0.2)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, extra_state=extra_state,
                           info_keys=INFO, **OPTIONS)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, obs_noise=0.1, dt_delay=1, continuous_actions=False, pettingzoo=False,
                               gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 3
