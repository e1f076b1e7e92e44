"""KinematicBicycle-v0 against VMAS 1.5.2's debug scenario ``kinematic_bicycle`` in the same
process (tests/vmas_reference.py): one step from every recorded VMAS state (moving, turning and
crowded starts) and whole free-running episodes (continuous and discrete actions, default and
other geometry, one to three agents), float64 worlds, the start's law and the law of the state
after random play against VMAS's, bites, bad arguments and the shared API checks.

The agents are boxes colliding with force 500: where two boxes touch, one float32 ulp of a
position or rotation changes VMAS's own next step by up to ~1e-4 in angular velocity (their
closest points jump), more than float32 tolerances.  One step from a moving start (few contacts)
and float64 worlds of the bicycle alone are held to float32 tolerances; crowded starts and whole
episodes are held to
VMAS's own one-ulp spread (``R.one_step_within_vmas_spread``, ``R.whole_episode_within_vmas_spread``:
every output of ours within ``FACTOR`` times VMAS's distance from its one-ulp twin, plus float32
tolerances); ours measured at most 2.3x."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "KinematicBicycle-v0", "kinematic_bicycle"
OPTIONS = {"n_agents": 3, "width": 0.12, "l_f": 0.15, "l_r": 0.05, "max_steering_angle": 0.4, "max_speed": 0.8}


def moving(vm):
    """Random rotations, velocities and angular velocities at the start (VMAS's own start is at
    rest and unrotated)."""
    gen = torch.Generator().manual_seed(1)
    E = vm.num_envs
    for a in vm.world.agents:
        a.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * 8
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 2
        a.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 4


def crowded(vm):
    """``moving``, the boxes pulled towards the origin (contacts: collision force 500)."""
    moving(vm)
    R.crowd(vm, scale=0.2)


#: one-step twins: every rotation an ulp up; every position an ulp up
TWINS = [lambda s: R.ulp_up(s, "rot"), lambda s: R.ulp_up(s, "pos")]
#: how far ours may be from VMAS, in units of VMAS's one-ulp twin's distance (plus STEP_TOL)
FACTOR = 4.0


def sync(twin, vm):
    """No scenario state to copy (the twin's bodies are VMAS's, moved by an ulp)."""


def twin_every_step(s):
    """The free-running twin's rounding: positions, velocities and rotations an ulp up."""
    return R.ulp_up(R.ulp_up(R.ulp_up(s, "pos"), "vel"), "rot")


def one_step(**kwargs):
    return R.one_step_within_vmas_spread(ENV, SCENARIO, twins=TWINS, sync=sync, factor=FACTOR, **kwargs)


def episode(**kwargs):
    return R.whole_episode_within_vmas_spread(ENV, SCENARIO, twin_start=twin_every_step, sync=sync,
                                              twin_forces=R.ulp_noisy_forces, factor=FACTOR, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, {"n_agents": 1}], ids=["default", "options", "one"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous, start=moving, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_contact_heavy(continuous, kwargs):
    one_step(num_envs=16, steps=40, continuous=continuous, start=crowded, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    episode(num_envs=16, steps=100, continuous=continuous, **kwargs)


def test_the_comparisons_bite():
    """VMAS's bicycle integrated by Runge-Kutta instead of Euler, its rear axle at 0.11 instead of
    0.1, the holonomic agents' torque multiplier 0.002 instead of 0.001, or a drag of 0.26 is
    caught."""
    def rk4(vm):
        vm.world.agents[0].dynamics.integration = "rk4"

    def axle(vm):
        vm.world.agents[0].dynamics.l_r = 0.11

    def multiplier(vm):
        vm.world.agents[1].action._u_multiplier_tensor = torch.tensor([1.0, 1.0, 0.002])

    def drag(vm):
        vm.world._drag = 0.26

    for change, what in ((rk4, "obs|pos|vel|rot"), (axle, "obs|pos|vel|rot"), (multiplier, "obs|vel|rot|ang_vel"),
                         (drag, "obs|pos|vel")):
        with pytest.raises(AssertionError, match=what):  # (VMAS and its twins changed alike)
            one_step(num_envs=16, steps=10, start=lambda vm, change=change: (crowded(vm), change(vm)))


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's (per-world resets): KS on each agent's x
    and y; every agent 0.1 from the others, at rest and unrotated."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n, **OPTIONS)
    mine = D.our_starts(ENV, n, **OPTIONS)
    for b in range(3):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    gaps = torch.cdist(mine["pos"], mine["pos"]) + torch.eye(3) * 10
    assert float(gaps.min()) >= 0.1 and float(mine["pos"].abs().max()) <= 1
    assert bool((mine["vel"] == 0).all() and (mine["rot"] == 0).all() and (mine["ang_vel"] == 0).all())


@pytest.mark.optimized_kernels
def test_random_play_matches_vmas():
    """The rewards are 0 on both sides; what random play does is compared instead: every body's
    position, velocity, rotation and angular velocity after 30 steps of uniform random actions,
    2 000 worlds from each side's own starts (KS).  The comparison bites: 500 worlds of VMAS
    after 15 steps are told apart."""
    theirs = D.vmas_random_rollout(SCENARIO, 2000, 30, **OPTIONS)
    mine = D.our_random_rollout(ENV, 2000, 30, **OPTIONS)
    assert not D.rollouts_differ(mine, theirs)
    assert D.rollouts_differ(mine, D.vmas_random_rollout(SCENARIO, 500, 15, **OPTIONS))


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": "2"}, "n_agents"), ({"n_agents": 2.0}, "n_agents"),
    ({"max_steps": 0}, "max_steps"), ({"width": 0}, "width"), ({"width": float("nan")}, "width"),
    ({"l_f": -0.1}, "l_f"), ({"l_r": "0.1"}, "l_r"), ({"l_f": 0, "l_r": 0}, "l_f"),
    ({"max_steering_angle": -0.1}, "max_steering_angle"), ({"max_speed": 0}, "max_speed"), ({"radius": 1}, "radius"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    vm = R.make_vmas(SCENARIO, 1, 0, continuous, **OPTIONS)
    env = war_envs.make(ENV, continuous_actions=continuous, **OPTIONS)
    assert list(env.groups) == ["bicycle", "holo_rot"]
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
    D.float64_follows_float32_groups(ENV, 40, **OPTIONS)


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    """The bicycle alone (no contacts, whose force jumps from 0 to ``0.69 k collision_force`` where
    two boxes' gap crosses 0.001, a switch float32 and float64 may flip differently): float32
    tolerances."""
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, start=moving,
                           **dict(OPTIONS, n_agents=1))


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, **OPTIONS, pettingzoo=False, gymnasium=False)


def test_default_steering_limit_is_vmas_float32():
    """VMAS's default ``max_steering_angle`` is ``torch.deg2rad(torch.tensor(30.0))``."""
    env = war_envs.make(ENV)
    assert env.groups["bicycle"].action_space.high[1] == np.float32(torch.deg2rad(torch.tensor(30.0)))


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
