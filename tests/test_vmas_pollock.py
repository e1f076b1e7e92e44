"""Pollock-v0 against VMAS 1.5.2's debug scenario ``pollock`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state (continuous and discrete
actions, with and without lidar, other counts), whole free-running episodes as far as they stay
within tolerance, the start against VMAS's, random-policy statistics against VMAS's, bad
arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas_debug_reference as D
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "Pollock-v0", "pollock"
SMALL = {"n_agents": 4, "n_lines": 3, "n_boxes": 5}


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, SMALL], ids=["default", "small"])
def test_one_step_from_every_vmas_state(continuous, kwargs):
    """Every step of VMAS's episode, from its state: every contact kind (sphere-sphere,
    line-sphere, line-line, box-sphere, box-line, box-box) is at work from the first step (the
    bodies spawn 0.1 apart, closer than a line's or box's size)."""
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=8, steps=20, continuous=continuous, **kwargs)


@pytest.mark.parametrize("vectorized", [True, False])
def test_one_step_with_lidar(vectorized):
    """Every agent's 16 rays against every other body (VMAS's vectorised and per-ray casts give
    the same readings)."""
    kwargs = {} if vectorized else SMALL  # (VMAS's per-ray cast is slow)
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=4, steps=12, lidar=True, vectorized_lidar=vectorized,
                                **kwargs)


@pytest.mark.parametrize("continuous,steps", [(True, 40), (False, 20)], ids=["continuous", "discrete"])
def test_whole_episode(continuous, steps):
    """Free-running episodes.  Forty-five bodies pressed into each other are chaotic: VMAS itself,
    run twice with the agents' start moved by one float32 ulp, leaves the episode tolerance
    after 5 (continuous) / 2 (discrete) steps (``vmas_twin_horizon``, measured), while ours stays
    within it of VMAS to step 62 (continuous, seed 0) / 26 (discrete, seed 0): our physics
    repeats VMAS's operations, and only last-ulp differences (exp / log1p in the contact force)
    grow.  These horizons stay inside that; the one-step tests check every step tightly."""
    R.whole_episode(ENV, SCENARIO, num_envs=8, steps=steps, continuous=continuous)
    assert D.vmas_twin_horizon(SCENARIO, ENV, steps, continuous=continuous) < steps


def test_whole_episode_with_lidar():
    R.whole_episode(ENV, SCENARIO, num_envs=4, steps=20, lidar=True, **SMALL)


def test_the_comparisons_bite():
    """A different contact stiffness, drag or action multiplier on VMAS's side is caught."""
    def stiffness(vm):
        vm.world._collision_force = 510

    def drag(vm):
        vm.world._drag = 0.26

    def multiplier(vm):
        for a in vm.world.agents:
            a.action._u_multiplier = 0.71
            a.action._u_multiplier_tensor = None

    for start in (stiffness, drag, multiplier):
        with pytest.raises(AssertionError, match="obs|pos|vel|rot"):
            R.whole_episode(ENV, SCENARIO, num_envs=8, steps=5, start=start, **SMALL)


def _min_distance(pos: torch.Tensor) -> torch.Tensor:
    d = torch.cdist(pos.double(), pos.double())
    d = d + torch.eye(pos.shape[1], dtype=torch.float64) * 1e9
    return d.flatten(1).min(1).values


def test_reset_matches_vmas():
    """2 000 of our starts against 2 000 of VMAS's per-world resets (``reset_world_at(i)``): KS
    on the x and y of the first agent (placed first), a line (placed among the middle) and the
    last box (placed last: the rejection sampling shapes it most) and on each world's smallest
    gap; every gap at least 0.1, every body inside the square, rotations 0, at rest."""
    n = 2000
    theirs = D.vmas_starts(SCENARIO, n)
    mine = D.our_starts(ENV, n)
    N = mine["pos"].shape[1]
    for b in (30, 7, 29):  # agent_0, line 7, box 14
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    gaps = _min_distance(mine["pos"])
    assert float(gaps.min()) >= 0.1 - 1e-6 and N == 45
    assert R.ks_statistic(gaps.numpy(), _min_distance(theirs["pos"]).numpy()) < R.ks_critical(n, n)
    assert float(mine["pos"].abs().max()) <= 1
    assert bool((mine["rot"] == 0).all()) and bool((mine["vel"] == 0).all())


def test_reset_ks_bites():
    """The KS test tells a last box drawn without the rejection (plain uniform) apart from ours
    by its gap to the nearest body."""
    n = 2000
    mine = D.our_starts(ENV, n)["pos"]
    plain = mine.clone()
    plain[:, 29] = torch.rand(n, 2, generator=torch.Generator().manual_seed(0), dtype=plain.dtype) * 2 - 1
    gap = lambda p: (p[:, :29] - p[:, 29:30]).norm(dim=-1).min(1).values.numpy()
    assert R.ks_statistic(gap(mine), gap(plain)) > R.ks_critical(n, n)


def _vmas_spread(n, steps, seed=0, start=None, **kwargs):
    """Per world: the mean distance the bodies moved in ``steps`` steps of uniform random actions
    from VMAS's per-world starts (then ``start(vm)``), and the sum of the rewards."""
    vm = R.make_vmas(SCENARIO, n, seed, True, max_steps=steps, **kwargs)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    if start is not None:
        start(vm)
    start = R.vmas_state(vm)["pos"].double()
    gen = torch.Generator().manual_seed(seed + 1)
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(steps):
        _, rew, _, _ = vm.step([torch.rand(n, 2, generator=gen) * 2 - 1 for _ in vm.agents])
        total += torch.stack(rew, 1).double().sum(1)
    return (R.vmas_state(vm)["pos"].double() - start).norm(dim=-1).mean(1).numpy(), total.numpy()


def _our_spread(n, steps, seed=0, **kwargs):
    env = war_envs.make(ENV, num_envs=n, max_steps=steps, autoreset_mode="disabled", **kwargs)
    env.reset(seed=seed)
    start = env.get_state()["pos"].double().clone()
    gen = torch.Generator().manual_seed(seed + 7)
    total = torch.zeros(n, dtype=torch.float64)
    A = len(env.groups["agents"].agents)
    for _ in range(steps):
        _, rew, _, _, _ = env.step({"agents": torch.rand(n, A, 2, generator=gen) * 2 - 1})
        total += rew["agents"].double().sum(1)
    return (env.get_state()["pos"].double() - start).norm(dim=-1).mean(1).numpy(), total.numpy()


def test_random_policy_statistics_match_vmas():
    """500 episodes of 30 steps of uniform random actions on each side (``SMALL``'s twelve
    bodies: VMAS takes minutes for 500 worlds of 45), from each side's own starts: the returns
    are 0 on both sides (VMAS's reward), and the mean distance the bodies moved agrees within 4
    standard errors (mean and spread)."""
    theirs, their_returns = _vmas_spread(500, 30, **SMALL)
    mine, my_returns = _our_spread(500, 30, **SMALL)
    assert not their_returns.any() and not my_returns.any()
    assert D.agree(mine, theirs), (mine.mean(), mine.std(), theirs.mean(), theirs.std())


def test_random_policy_statistics_bite():
    """The same statistic tells VMAS with drag 0.35 (ours: 0.25) apart (12 standard errors off
    in the mean, measured; 0.28 gives about 3, within the test's 4)."""
    def drag(vm):
        vm.world._drag = 0.35

    theirs, _ = _vmas_spread(500, 30, start=drag, **SMALL)
    mine, _ = _our_spread(500, 30, **SMALL)
    assert not D.agree(mine, theirs)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_lines": -1}, "n_lines"), ({"n_boxes": 1.5}, "n_boxes"),
    ({"lidar": 1}, "lidar"), ({"vectorized_lidar": "yes"}, "vectorized_lidar"),
    ({"n_agents": 300, "n_lines": 300}, "n_agents"), ({"max_steps": 0}, "max_steps"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_and_names_match_vmas(continuous):
    for kwargs in ({}, {"lidar": True}, SMALL):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        env = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = env.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert [b.name for b in env.layout.bodies] == [e.name for e in vm.world.entities]
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 5, lidar=True, **SMALL)


def test_float64_worlds_follow_vmas():
    """One step from each of VMAS's states (the free-running crowd is chaotic: see
    ``test_whole_episode``), with lidar."""
    D.float64_against_vmas(ENV, SCENARIO, steps=15, num_envs=4, lidar=True, **SMALL)


@pytest.mark.optimized_kernels
def test_check_all():
    war_envs.testing.check_all(ENV, lidar=True, **SMALL)
    war_envs.testing.check_all(ENV, lidar=True, continuous_actions=False, pettingzoo=False, gymnasium=False)
    # Without lidar every observation is VMAS's constant [0], so no observation can tell starts
    # apart (what check_autoreset_modes and check_determinism_and_world_slicing look at): the
    # other checks here, those two points on the state itself below
    T = war_envs.testing
    T.check_batch_api(ENV)
    T.check_bad_inputs(ENV)
    T.check_pettingzoo(ENV, **SMALL)
    T.check_gymnasium(ENV, **SMALL)


def test_determinism_without_lidar_on_the_state():
    """The same seed gives the same trajectories of every body, another seed another start."""
    def run(seed):
        env = war_envs.make(ENV, num_envs=4, seed=seed)
        env.reset()
        states = [env.get_state()["pos"].clone()]
        gen = torch.Generator().manual_seed(1)
        for _ in range(5):
            env.step({"agents": torch.rand(4, 15, 2, generator=gen) * 2 - 1})
            states.append(env.get_state()["pos"].clone())
        return torch.stack(states)

    a = run(3)
    torch.testing.assert_close(run(3), a, rtol=0, atol=0)
    assert bool((run(4)[0] != a[0]).any())


def test_autoreset_without_lidar_restarts_the_state():
    """``check_autoreset_modes``' point without an informative observation: at the horizon the
    SAME_STEP worlds hold a fresh start (the DISABLED ones the ended episode), and NEXT_STEP's
    next step gives the same fresh start."""
    envs = {m: war_envs.make(ENV, num_envs=3, seed=0, autoreset_mode=m, max_steps=4, **SMALL)
            for m in ("next_step", "same_step", "disabled")}
    for env in envs.values():
        env.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(4):
        u = torch.rand(3, 4, 2, generator=gen) * 2 - 1
        for env in envs.values():
            env.step({"agents": u})
    ended, fresh = envs["disabled"].get_state()["pos"], envs["same_step"].get_state()["pos"]
    torch.testing.assert_close(envs["next_step"].get_state()["pos"], ended, rtol=0, atol=0)
    assert bool((fresh != ended).all(-1).all())
    envs["next_step"].step({"agents": torch.zeros(3, 4, 2)})
    torch.testing.assert_close(envs["next_step"].get_state()["pos"], fresh, rtol=0, atol=0)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0, lidar=True)
    env.reset()
    frame = env.render_frame(1, width=300, height=300)
    assert frame.shape == (300, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # lines, boxes, agents, rays on white
