"""VelControl-v0 against VMAS 1.5.2's debug scenario ``vel_control`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state and whole free-running
episodes (continuous and discrete actions, another mass, moving starts), the fixed start,
random-policy returns against VMAS's, the windup limits, bad arguments and the shared API
checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "VelControl-v0", "vel_control"
INFO = ("energy_expenditure",)
CASES = {"default": {}, "heavy": {"green_mass": 3.0}}


def extra_state(vm):
    """The three controllers' errors off VMAS's objects."""
    return D.controller_state(vm.world.agents)


def moving(vm):
    """Every agent somewhere in [-1, 1]², moving at up to 1 m/s per axis, the controllers'
    errors wound up (so the windup limits and agent_1's acceleration limit act)."""
    gen = torch.Generator().manual_seed(4)
    E = vm.num_envs
    for a in vm.world.agents:
        a.state.pos = torch.rand(E, 2, generator=gen) * 2 - 1
        a.state.vel = torch.rand(E, 2, generator=gen) * 2 - 1
        a.controller.accum_errs = (torch.rand(E, 2, generator=gen) - 0.5) * 80
        a.controller.prev_err = torch.rand(E, 2, generator=gen) - 0.5


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_step_from_every_vmas_state(continuous, case):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, compare_state=True, start=moving, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("start", [None, moving], ids=["fixed", "moving"])
def test_whole_episode(continuous, case, start):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, start=start, **CASES[case])


def test_the_comparisons_bite():
    """A different gain, friction, acceleration limit, windup or force limit on VMAS's side is caught."""
    def gain(vm):
        for a in vm.world.agents:
            a.controller.ctrl_gain = 2.02

    def friction(vm):
        vm.world._linear_friction = 0.11

    def accel(vm):
        """agent_1 without its acceleration limit (processed as the other agents)."""
        from vmas.simulator.utils import TorchUtils

        original = vm.scenario.process_action

        def unlimited(agent):
            if agent is not vm.world.agents[1]:
                return original(agent)
            agent.action.u = TorchUtils.clamp_with_norm(agent.action.u, agent.u_range)
            agent.action.u[torch.linalg.vector_norm(agent.action.u, dim=1) < 0.08] = 0
            agent.controller.process_force()
        vm.scenario.process_action = unlimited

    def windup(vm):
        vm.world.agents[2].controller.integrator_windup_cutoff = 30.0

    def force_limit(vm):
        vm.world.agents[0]._f_range = 1.0

    physics = r"obs|pos|vel|state|reward|info"
    for start, what in ((gain, physics), (friction, physics), (accel, physics), (windup, physics),
                        (force_limit, physics)):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, num_envs=16, steps=40, extra_state=extra_state, info_keys=INFO,
                            compare_state=True, start=lambda vm, change=start: (moving(vm), change(vm)))


def test_windup_limits():
    """The integrators are clamped at ±33 (agent_0), not at all (agent_1: no force limit, VMAS
    warns "Integrator can wind up!") and at ±900 (agent_2): a command the agents cannot follow
    (a velocity far off) winds them up."""
    env = war_envs.make(ENV, num_envs=1, autoreset_mode="disabled", max_steps=None)
    env.reset(seed=0)
    state = env.get_state()
    state["accum_errs"][:] = 1000.0
    env.set_state(state)
    env.step({"agents": torch.zeros(1, 3, 2)})
    accum = env.get_state()["accum_errs"][0]
    assert float(accum[0].max()) == 33.0 and float(accum[2].max()) == 900.0 and float(accum[1].min()) > 999


def test_the_start_is_vmas_fixed_start():
    vm = R.make_vmas(SCENARIO, 4, 0, True)
    theirs = R.vmas_state(vm)
    env = war_envs.make(ENV, num_envs=4)
    assert env.random_start is False
    for seed in (0, 1):
        env.reset(seed=seed)
        mine = env.get_state()
        for key in ("pos", "vel", "rot", "ang_vel"):
            torch.testing.assert_close(mine[key], theirs[key], rtol=0, atol=0)
        assert bool((mine["accum_errs"] == 0).all()) and bool((mine["prev_err"] == 0).all())


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.optimized_kernels
def test_random_policy_returns_match_vmas(case):
    """2 000 episodes of 60 steps of uniform random actions on each side: the returns' mean and
    spread agree within 4 standard errors."""
    theirs = D.vmas_returns(SCENARIO, 2000, 60, per_world_reset=False, **CASES[case])
    mine = D.our_returns(ENV, 2000, 60, **CASES[case])
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_returns_bite():
    theirs = D.vmas_returns(SCENARIO, 2000, 60, per_world_reset=False)
    mine = D.our_returns(ENV, 2000, 60, green_mass=1.2)
    assert not D.agree(mine, theirs)


@pytest.mark.parametrize("kwargs,match", [
    ({"green_mass": 0}, "green_mass"), ({"green_mass": "1"}, "green_mass"), ({"green_mass": float("inf")}, "green_mass"),
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
    for i in range(3):
        assert spec.obs_dim == vm.observation_space[i].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[i].high)
        else:
            assert spec.action_space.n == vm.action_space[i].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "accum_errs"), green_mass=2.0)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, extra_state=extra_state,
                           info_keys=INFO, start=moving)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, green_mass=2.0, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 3
