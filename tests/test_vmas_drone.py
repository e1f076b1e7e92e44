"""Drone-v0 against VMAS 1.5.2's debug scenario ``drone`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state and whole free-running
episodes (continuous and discrete actions, one to three drones; starts with tilted, spinning and
moving drones, some about to pass VMAS's 30 degree limit), every drone's ``drone_state``
compared too, float64 worlds, the start's law and the law of the state after random play against
VMAS's, bites, bad arguments and the shared API checks."""

import math

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "Drone-v0", "drone"


def extra_state(vm):
    """VMAS's ``agent.dynamics.drone_state`` of every drone as our ``drone_state`` ``[E, n, 12]``."""
    return {"drone_state": torch.stack([a.dynamics.drone_state for a in vm.world.agents], dim=1).clone()}


def flying(vm):
    """Drones in flight: roll and pitch within ±0.4 rad, body rates within ±0.5 rad/s, 3-D
    velocity within ±1, height in [0, 2]; the agents moving and turning.  Some worlds' drones
    start at roll 0.52 rolling further: VMAS's done (beyond 30 degrees) in a step or two."""
    gen = torch.Generator().manual_seed(2)
    E = vm.num_envs
    for a in vm.world.agents:
        s = torch.zeros(E, 12)
        s[:, 0:2] = (torch.rand(E, 2, generator=gen) - 0.5) * 0.8
        s[:, 3:6] = (torch.rand(E, 3, generator=gen) - 0.5)
        s[:, 6:9] = (torch.rand(E, 3, generator=gen) - 0.5) * 2
        s[:, 11] = torch.rand(E, generator=gen) * 2
        s[: E // 4, 0] = 0.52
        s[: E // 4, 3] = 0.05
        a.dynamics.drone_state = s
        a.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * 6
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5)
        a.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 2


def comparison(**kwargs):
    return dict(extra_state=extra_state, compare_state=True, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, {"n_agents": 3}, {"n_agents": 1}], ids=["default", "three", "one"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous,
                                **comparison(start=flying, **kwargs))


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("start", [None, flying], ids=["vmas_start", "flying"])
def test_whole_episode(continuous, start):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, **comparison(start=start))


def test_done_when_a_drone_tilts_past_30_degrees():
    """VMAS's done (``Drone.needs_reset``) in the worlds ``flying`` tips over, and ours with it."""
    vm, ours = R.whole_episode(ENV, SCENARIO, num_envs=16, steps=3, **comparison(start=flying))
    done = ours.world_flags()[0]
    assert bool(done[:4].all()) and not bool(done[4:].all())
    limit = 30 * math.pi / 180
    tilted = (ours.get_state()["drone_state"][..., :2].abs() > limit).any(-1).any(-1)
    assert torch.equal(tilted, done)


def test_reset_zeroes_drone_state():
    """VMAS's ``Drone.reset`` at every reset: ``drone_state`` zero (then the first step takes x,
    y and yaw)."""
    env = war_envs.make(ENV, num_envs=4, max_steps=5)
    env.reset(seed=0)
    for _ in range(3):
        env.step({"agents": torch.full((4, 2, 3), 1e-5)})
    assert bool((env.get_state()["drone_state"] != 0).any())
    env.reset(seed=1)
    state = env.get_state()
    assert bool((state["drone_state"] == 0).all())
    env.step({"agents": torch.zeros(4, 2, 3)})
    s = env.get_state()["drone_state"]
    assert bool((s[..., 11] > 0).all())  # thrust 2 m g: climbing
    torch.testing.assert_close(s[..., 9:11], state["pos"], rtol=0, atol=0)  # (x, y taken, not moved: at rest)


def test_the_comparisons_bite():
    """VMAS's drones with I_xx 9e-3 instead of 8.1e-3, Euler instead of Runge-Kutta, or the thrust
    not doubled (``process_action``'s ``m g`` only) are caught."""
    def inertia(vm):
        for a in vm.world.agents:
            a.dynamics.I_xx = 9e-3

    def euler(vm):
        for a in vm.world.agents:
            a.dynamics.integration = "euler"

    def thrust(vm):
        def half(agent):
            agent.action.u = torch.cat([torch.zeros(vm.num_envs, 1), agent.action.u], dim=-1)
        vm.scenario.process_action = half

    for change in (inertia, euler, thrust):
        vm = R.make_vmas(SCENARIO, 16, 0, True, max_steps=20)
        ours = R.make_ours(ENV, 16, True, max_steps=20)
        flying(vm)
        R.copy_state(vm, ours, extra_state)
        change(vm)
        gen = torch.Generator().manual_seed(1)
        with pytest.raises(AssertionError, match="obs|pos|vel|rot|drone_state"):
            for t in range(20):
                acts, ours_acts = R.random_actions(vm, ours, gen)
                R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL)
                R.compare_extra_state(f"step {t}", vm, ours, extra_state, R.EPISODE_TOL)


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's (per-world resets): KS on each drone's x and
    y; 0.1 apart, at rest, ``drone_state`` zero."""
    n = 10_000
    theirs = D.vmas_starts(SCENARIO, n, n_agents=3)
    mine = D.our_starts(ENV, n, n_agents=3)
    for b in range(3):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    gaps = torch.cdist(mine["pos"], mine["pos"]) + torch.eye(3) * 10
    assert float(gaps.min()) >= 0.1 and float(mine["pos"].abs().max()) <= 1
    assert bool((mine["vel"] == 0).all() and (mine["drone_state"] == 0).all())


def test_random_play_matches_vmas():
    """The rewards are 0 on both sides; what random play does is compared instead: every body's
    state after 30 steps of uniform random torques, 2 000 worlds from each side's own starts (KS)."""
    theirs = D.vmas_random_rollout(SCENARIO, 2000, 30)
    mine = D.our_random_rollout(ENV, 2000, 30)
    assert not D.rollouts_differ(mine, theirs)
    assert D.rollouts_differ(mine, D.vmas_random_rollout(SCENARIO, 2000, 20))  # (the comparison bites)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": "2"}, "n_agents"), ({"max_steps": 0}, "max_steps"),
    ({"I_xx": 0.1}, "I_xx"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_match_vmas(continuous):
    vm = R.make_vmas(SCENARIO, 1, 0, continuous, n_agents=3)
    env = war_envs.make(ENV, continuous_actions=continuous, n_agents=3)
    spec = env.groups["agents"]
    assert list(spec.agents) == [a.name for a in vm.agents]
    for i in range(3):
        assert spec.obs_dim == vm.observation_space[i].shape[0] == 4
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[i].high)
        else:
            assert spec.action_space.n == vm.action_space[i].n == 27


def test_float64_worlds_follow_float32():
    D.float64_follows_float32_groups(ENV, 40, state_keys=("pos", "vel", "rot", "ang_vel", "drone_state"))


@pytest.mark.parametrize("free_running", [False, True], ids=["one_step", "episode"])
def test_float64_worlds_follow_vmas(free_running):
    D.float64_against_vmas(ENV, SCENARIO, steps=40, free_running=free_running, start=flying, extra_state=extra_state,
                           n_agents=3)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, n_agents=3, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2
