"""Discovery-v0 against VMAS 1.5.2's ``discovery`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state and whole free-running episodes (continuous and discrete
actions, default and non-default arguments, crowded starts and starts around the targets, with
and without respawning), the respawn and out-of-play laws, the reset distribution, bad
arguments and the shared API checks.

VMAS draws a covered target's new place inside its step (torch's global generator); here it is
drawn from the world's own stream.  So that both sides take the same draws, ``step_both`` steps
ours first and hands our drawn places to VMAS's step (its ``find_random_pos_for_entity`` and
``get_outside_pos`` return them, in VMAS's call order: one call per target); the laws of the
draws are tested apart (``test_respawn_law_matches_vmas``, ``test_out_of_play_law``)."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Discovery-v0", "discovery"
INFO = ("covering_reward", "collision_rew", "targets_covered")
OPTIONS = dict(use_agent_lidar=True, shared_reward=True, agent_collision_penalty=-0.5, time_penalty=-0.01,
               covering_rew_coeff=2.0, n_lidar_rays_entities=10, n_lidar_rays_agents=8, lidar_range=0.4)
NO_RESPAWN = dict(targets_respawn=False, agents_per_target=1, n_targets=4, n_agents=3, x_semidim=0.8,
                  y_semidim=0.6, covering_range=0.3)


def extra_state(vm):
    return {"all_time_covered_targets": vm.scenario.all_time_covered_targets.clone()}


def step_both(vm, ours, acts, ours_acts):
    our_out = ours.step(ours_acts)
    with R.discovery_draws(vm, ours):
        vm_out = vm.step(acts)
    return vm_out, our_out


def around_targets(vm):
    """A covering-heavy start: agents in pairs around the targets (within covering range, some
    overlapping a target or each other), random velocities."""
    gen = torch.Generator().manual_seed(0)
    targets = vm.scenario._targets
    for i, agent in enumerate(vm.agents):
        centre = targets[(i // 2) % len(targets)].state.pos
        agent.state.pos = centre + (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.3
        agent.state.vel = (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.5


def run(steps=100, num_envs=8, continuous=True, start=None, one_step=False, seed=0, **kwargs):
    """Both sides from VMAS's start (``start(vm)`` first), the same random actions, compared
    after every step (``one_step``: VMAS's state copied into ours before each step).  Returns
    the coverings seen and the worlds done at the end."""
    vm = R.make_vmas(SCENARIO, num_envs, seed, continuous, max_steps=steps, **kwargs)
    if start is not None:
        start(vm)
    ours = R.make_ours(ENV, num_envs, continuous, max_steps=steps, **kwargs)
    R.copy_state(vm, ours, extra_state)
    gen = torch.Generator().manual_seed(seed + 1)
    covered = 0
    for t in range(steps):
        if one_step:
            R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        vm_out, our_out = step_both(vm, ours, acts, ours_acts)
        R.compare_outputs(f"{ENV} step {t}", vm, ours, vm_out, our_out, R.STEP_TOL if one_step else R.EPISODE_TOL,
                          INFO)
        covered += int(our_out[4]["targets_covered"][:, 0].sum())
    return covered, int(ours.world_flags()[0].sum())


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", ["default", "options", "no_respawn"])
def test_one_step_from_every_vmas_state(case, continuous):
    kwargs = {"default": {}, "options": OPTIONS, "no_respawn": NO_RESPAWN}[case]
    covered, _ = run(steps=30, continuous=continuous, start=around_targets, one_step=True, **kwargs)
    assert covered > 0


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", ["crowd", "around_targets"])
def test_whole_episodes(case, continuous):
    start = {"crowd": R.crowd, "around_targets": around_targets}[case]
    covered, _ = run(continuous=continuous, start=start, **(OPTIONS if case == "crowd" else {}))
    assert covered > 0


def test_whole_episode_without_respawn_ends_when_every_target_was_covered():
    covered, done = run(start=around_targets, **NO_RESPAWN)
    assert covered >= 4 and done > 0


def test_the_comparison_bites():
    """A different covering range on our side is caught."""
    with pytest.raises(AssertionError, match="reward|obs|info"):
        vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=30)
        around_targets(vm)
        ours = R.make_ours(ENV, 8, True, max_steps=30, covering_range=0.2)
        R.copy_state(vm, ours, extra_state)
        gen = torch.Generator().manual_seed(1)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            R.compare_outputs(f"step {t}", vm, ours, *step_both(vm, ours, acts, ours_acts), R.EPISODE_TOL, INFO)


def test_float64_worlds_follow_float32_vmas():
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=30, **OPTIONS)
    around_targets(vm)
    ours = war_envs.make(ENV, num_envs=8, autoreset_mode="disabled", precision="float64", max_steps=30, **OPTIONS)
    gen = torch.Generator().manual_seed(1)
    for t in range(20):
        R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        R.compare_outputs(f"float64 step {t}", vm, ours, *step_both(vm, ours, acts, ours_acts), R.STEP_TOL, INFO)


def _covered_start(vm):
    """Agents 0 and 1 on target 0 in every world (so it is covered and moves), the others kept."""
    t0 = vm.scenario._targets[0].state.pos
    vm.agents[0].state.pos = t0 + torch.tensor([0.11, 0.0])
    vm.agents[1].state.pos = t0 - torch.tensor([0.11, 0.0])


@pytest.mark.parametrize("kwargs", [{}, dict(x_semidim=0.5, y_semidim=0.7, n_targets=8, n_agents=4,
                                             min_dist_between_entities=0.25)], ids=["default", "tight"])
def test_respawn_law_matches_vmas(kwargs):
    """From the same state in 4 000 worlds (target 0 covered), target 0's new place: the same
    x and y distributions as VMAS's own draws (KS at level 1e-3), inside the arena and at least
    min_dist_between_entities from every agent and other target."""
    n = 4_000
    vm = R.make_vmas(SCENARIO, n, 7, True, **kwargs)
    _covered_start(vm)
    ours = R.make_ours(ENV, n, True, **kwargs)
    R.copy_state(vm, ours, extra_state)
    zero = [torch.zeros(n, 2) for _ in vm.agents]
    vm.step(zero)
    ours.step({"agents": torch.zeros(n, len(vm.agents), 2)})
    theirs, mine = R.vmas_state(vm)["pos"].numpy(), ours.get_state()["pos"].numpy()
    crit = R.ks_critical(n, n)
    for axis in (0, 1):
        assert R.ks_statistic(mine[:, 0, axis], theirs[:, 0, axis]) < crit
    sx, sy = kwargs.get("x_semidim", 1), kwargs.get("y_semidim", 1)
    assert np.all(np.abs(mine[:, 0, 0]) <= sx) and np.all(np.abs(mine[:, 0, 1]) <= sy)
    assert np.linalg.norm(mine[:, 1:] - mine[:, :1], axis=-1).min() >= kwargs.get("min_dist_between_entities",
                                                                                 0.2) - 1e-6
    # the rest of the world is VMAS's (same physics, no other target covered in most worlds)
    np.testing.assert_allclose(mine[:, len(vm.scenario._targets):], theirs[:, len(vm.scenario._targets):],
                               rtol=1e-5, atol=2e-5)


def test_out_of_play_law():
    """Without respawning a covered target goes to a uniform point of [-1000 x_semidim, -10
    x_semidim]^2 (KS against that law), fresh per world."""
    n = 4_000
    vm = R.make_vmas(SCENARIO, n, 7, True, targets_respawn=False, x_semidim=0.5)
    _covered_start(vm)
    ours = R.make_ours(ENV, n, True, targets_respawn=False, x_semidim=0.5)
    R.copy_state(vm, ours, extra_state)
    out = ours.step({"agents": torch.zeros(n, 5, 2)})
    assert bool((out[4]["targets_covered"][:, 0] >= 1).all())
    p = ours.get_state()["pos"][:, 0].numpy()
    assert ours.get_state()["all_time_covered_targets"][:, 0].all()
    ref = np.random.default_rng(0).uniform(-500, -5, 2 * n)
    assert R.ks_statistic(p.ravel(), ref) < R.ks_critical(2 * n, 2 * n)
    assert len(np.unique(p[:, 0])) == n


def _starts(n, ours: bool, **kwargs):
    if ours:
        env = war_envs.make(ENV, num_envs=n, seed=5, **kwargs)
        env.reset()
        return env.get_state()["pos"].numpy()
    return R.vmas_state(R.make_vmas(SCENARIO, n, 5, True, **kwargs))["pos"].numpy()


@pytest.mark.parametrize("kwargs", [{}, dict(n_agents=3, n_targets=9, x_semidim=0.6, min_dist_between_entities=0.3)],
                         ids=["default", "tight"])
def test_reset_distribution_matches_vmas(kwargs):
    """5 000 starts each: every body's x and y and the distance of agent 0 to its nearest target
    have the same distributions (KS at level 1e-3); bodies at least min_dist_between_entities
    apart, inside the arena."""
    n = 5_000
    ours, theirs = _starts(n, True, **kwargs), _starts(n, False, **kwargs)
    crit = R.ks_critical(n, n)
    for b in range(ours.shape[1]):
        for axis in (0, 1):
            stat = R.ks_statistic(ours[:, b, axis], theirs[:, b, axis])
            assert stat < crit, f"body {b} axis {axis}: KS {stat:.4f} >= {crit:.4f}"
    m = kwargs.get("n_targets", 7)
    d = [np.linalg.norm(p[:, :m] - p[:, m, None], axis=-1).min(-1) for p in (ours, theirs)]
    assert R.ks_statistic(*d) < crit
    gaps = np.linalg.norm(ours[:, :, None] - ours[:, None], axis=-1) + 9 * np.eye(ours.shape[1])
    assert gaps.min() >= kwargs.get("min_dist_between_entities", 0.2) - 1e-6
    assert np.abs(ours[..., 0]).max() <= kwargs.get("x_semidim", 1)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, OPTIONS, NO_RESPAWN):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert ours.groups["agents"].agents == tuple(a.name for a in vm.agents)
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        np.testing.assert_array_equal(ours.groups["agents"].action_space.high, vm.action_space[0].high)
        assert ours.groups["agents"].obs_dim == vm.observation_space[0].shape[0]
    assert war_envs.make(ENV, continuous_actions=False).groups["agents"].action_space.n == 9


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_targets": 0}, "n_targets"), ({"x_semidim": 0}, "x_semidim"),
    ({"y_semidim": -1}, "y_semidim"), ({"min_dist_between_entities": -0.1}, "min_dist_between_entities"),
    ({"min_dist_between_entities": 1.5}, "min_dist_between_entities"), ({"lidar_range": 0}, "lidar_range"),
    ({"covering_range": -0.1}, "covering_range"), ({"use_agent_lidar": 1}, "use_agent_lidar"),
    ({"n_lidar_rays_entities": 0}, "n_lidar_rays_entities"), ({"n_lidar_rays_agents": 0}, "n_lidar_rays_agents"),
    ({"agents_per_target": -1}, "agents_per_target"), ({"targets_respawn": "yes"}, "targets_respawn"),
    ({"shared_reward": None}, "shared_reward"), ({"agent_collision_penalty": float("inf")}, "agent_collision_penalty"),
    ({"covering_rew_coeff": "x"}, "covering_rew_coeff"), ({"time_penalty": float("nan")}, "time_penalty"),
    ({"max_steps": 0}, "max_steps"), ({"unknown_kwarg": 1}, "unknown_kwarg"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, use_agent_lidar=True, targets_respawn=False,
                               n_agents=2, n_targets=3, pettingzoo=False, gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0, use_agent_lidar=True)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # bounds, targets, agents, rays on white
