"""Wheel-v0 against VMAS 1.5.2's ``wheel`` in the same process (tests/vmas_reference.py): one
step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, a crowd on the line, a spinning line, VMAS's own
heuristic policy turning the line), the reset distribution, bad arguments and the shared API
checks."""

import math

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

from vmas.scenarios.wheel import HeuristicPolicy  # noqa: E402

ENV, SCENARIO = "Wheel-v0", "wheel"
OPTIONS = {"n_agents": 6, "line_length": 1.5, "line_mass": 5, "desired_velocity": 0.3}
INFO = ()  # VMAS's wheel has no info entries


def spinning(vm):
    """The line at any rotation (several turns either way: the observation's ``rot mod pi``)
    spinning fast, the agents crowded onto it with random velocities."""
    gen = torch.Generator().manual_seed(3)
    E = vm.num_envs
    line = vm.world.landmarks[0]
    line.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * 20
    line.state.rot[0] = -math.pi  # exact multiples of pi and a tiny negative angle
    line.state.rot[1] = 2 * math.pi
    line.state.rot[2] = -1e-8
    line.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 4
    R.crowd(vm, scale=0.5, seed=4)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, steps=30, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_spinning(kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, steps=20, start=spinning, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, steps=100, **kwargs)


@pytest.mark.parametrize("start", [R.crowd, spinning], ids=["crowd", "spinning"])
def test_whole_episode_contacts(start):
    R.whole_episode(ENV, SCENARIO, steps=60, start=start, n_agents=8, line_mass=3)


@pytest.mark.parametrize("kwargs", [{}, {"line_mass": 3, "desired_velocity": 0.5}], ids=["default", "light"])
def test_heuristic_policy_turns_the_line_as_vmas(kwargs):
    """VMAS's own heuristic (push the line's second end a quarter turn on) for a whole episode:
    the line turns for real, and both sides stay together every step.  (The agents pile up on
    the same end: their contacts amplify a 1-ulp difference ~2x every 5 steps, measured; 70 steps
    keep it within the episode tolerance.)"""
    E, steps = 8, 70
    vm = R.make_vmas(SCENARIO, E, 0, True, max_steps=steps, **kwargs)
    ours = R.make_ours(ENV, E, True, max_steps=steps, **kwargs)
    policy = HeuristicPolicy(True)
    obs = vm.reset()
    R.copy_state(vm, ours)
    speeds = []
    for t in range(steps):
        acts = [policy.compute_action(o, u_range=1.0) for o in obs]
        vm_out = vm.step(acts)
        our_out = ours.step({"agents": torch.stack(acts, dim=1)})
        R.compare_outputs(f"heuristic step {t}", vm, ours, vm_out, our_out, R.EPISODE_TOL)
        obs = vm_out[0]
        speeds.append(our_out[4]["line_ang_vel"].abs())
    assert float(torch.stack(speeds[-30:]).mean()) > 0.01  # the line does turn


def test_rewards_and_info():
    """Every agent's reward is VMAS's one [E, 1] value; the info is the line's angular velocity and
    the reward's gap."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    spinning(vm)
    ours = R.make_ours(ENV, 8, True, max_steps=5)
    R.copy_state(vm, ours)
    acts = [torch.zeros(8, 2)] * 4
    vm_out = vm.step(acts)
    obs, rew, term, trunc, info = ours.step({"agents": torch.zeros(8, 4, 2)})
    R.compare_outputs("step", vm, ours, vm_out, (obs, rew, term, trunc, info), R.STEP_TOL)
    assert tuple(vm_out[1][0].shape) == (8, 1)
    assert torch.equal(rew["agents"], rew["agents"][:, :1].expand(8, 4))
    omega = ours.get_state()["ang_vel"][:, 0]
    torch.testing.assert_close(info["line_ang_vel"], omega)
    torch.testing.assert_close(info["ang_vel_error"], -rew["agents"][:, 0])
    torch.testing.assert_close(info["ang_vel_error"], (omega.abs() - 0.05).abs())
    assert not bool(ours.world_flags()[0].any())


def test_comparison_bites():
    """A perturbed desired velocity, line mass or line length on VMAS's side is caught."""
    def desired(vm):
        vm.scenario.desired_velocity = 0.06

    def heavier(vm):
        spinning(vm)
        vm.world.landmarks[0].mass = 31  # (VMAS's moment of inertia follows the mass)

    def longer(vm):
        spinning(vm)
        vm.scenario.line_length = 2.1

    for start, what in ((desired, "reward|obs"), (heavier, "ang_vel|rot|obs|reward"), (longer, "obs")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, steps=20, start=start)


def test_reset_distribution_matches_vmas():
    """20 000 of our worlds' starts against 20 000 of VMAS's (KS on every agent's x and y and the
    line's rotation); the line and the centre at the origin, everything at rest."""
    n = 20_000
    vm = R.make_vmas(SCENARIO, n, 0, True)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n)
    ours.reset(seed=5)
    mine = ours.get_state()
    for b in range(2, 6):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    a, c = mine["rot"][:, 0].numpy(), theirs["rot"][:, 0].numpy()
    assert R.ks_statistic(a, c) < R.ks_critical(n, n)
    assert float(mine["rot"][:, 0].abs().max()) <= math.pi / 2
    assert bool((mine["pos"][:, :2] == 0).all()) and bool((mine["vel"] == 0).all())
    assert bool((mine["rot"][:, 1:] == 0).all()) and bool((mine["ang_vel"] == 0).all())
    assert float(mine["pos"][:, 2:].abs().max()) <= 1.0


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 2.0}, "n_agents"), ({"line_length": 0}, "line_length"),
    ({"line_length": "2"}, "line_length"), ({"line_mass": -1}, "line_mass"),
    ({"desired_velocity": float("nan")}, "desired_velocity"), ({"desired_velocity": None}, "desired_velocity"),
    ({"max_steps": 0}, "max_steps"), ({"continuous_actions": 1}, "continuous_actions"),
    ({"line_width": 1}, "line_width"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_and_names_match_vmas(continuous):
    for kwargs in ({}, OPTIONS):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0] == 13
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
            np.testing.assert_array_equal(spec.action_space.low, vm.action_space[0].low)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20, state_keys=("pos", "rot"), line_mass=3)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, n_agents=2, line_length=1, desired_velocity=0.2, continuous_actions=False,
                               pettingzoo=False, gymnasium=False)


def test_picture_draws_the_line():
    env = war_envs.make(ENV, num_envs=1, seed=0)
    env.reset()
    frame = env.render_frame(0, width=240, height=240)
    assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8
    dark = (frame.max(axis=-1) < 60).sum()
    assert dark > 100  # the black line across the picture


def test_rotation_mod_pi_is_torch_remainder():
    """The observation's ``rot mod pi`` is torch's float32 ``%`` bit for bit, at multiples of pi,
    tiny negative angles and several turns either way (the line at rest, the agents far off)."""
    rots = torch.tensor([-math.pi, math.pi, 2 * math.pi, -2 * math.pi, -1e-8, 1e-8, 0.0, -0.0, -7.5, 12.25, -30.0,
                         30.0, math.pi / 2, -math.pi / 2, 1e-30, -1e-30], dtype=torch.float32)
    E = len(rots)
    env = war_envs.make(ENV, num_envs=E, autoreset_mode="disabled")
    env.reset(seed=0)
    state = env.get_state()
    state["rot"][:, 0] = rots
    state["pos"][:, 2:] = 5.0
    env.set_state(state)
    obs, *_ = env.step({"agents": torch.zeros(E, 4, 2)})
    assert torch.equal(env.get_state()["rot"][:, 0], rots)
    expected = rots % torch.pi
    for i in range(4):
        assert torch.equal(obs["agents"][:, i, 10], expected), (obs["agents"][:, i, 10], expected)
