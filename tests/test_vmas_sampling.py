"""Sampling-v0 against VMAS 1.5.2's ``sampling`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, agents huddled in one cell, agents against the
bounds), the reset's computations (``max_pdf``, first samples, observations) on VMAS's side,
the reset distribution, bad arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

from torch.distributions import MultivariateNormal  # noqa: E402
from vmas.scenarios.sampling import Scenario as VmasSampling  # noqa: E402

ENV = "Sampling-v0"
INFO = ("agent_sample",)
OPTIONS = dict(n_agents=4, shared_rew=False, lidar_range=0.3, agent_radius=0.04, xdim=1.5, ydim=0.5,
               grid_spacing=0.1, n_gaussians=2, cov=[0.05, 0.2], norm=False)


def extra_state(vm):
    s = vm.scenario
    return {"sampled": s.sampled.clone(), "locs": torch.stack(s.locs, dim=1).clone(), "max_pdf": s.max_pdf.clone()}


class _NoReadings:
    """A sensor measuring nothing: VMAS's observation of agents without a lidar (``collisions=False``,
    where VMAS's own observation reads ``agent.sensors[0]`` and fails) is then ours."""

    def __init__(self, batch_dim):
        self.batch_dim = batch_dim

    def measure(self):
        return torch.zeros(self.batch_dim, 0)


class Vmas(VmasSampling):
    """VMAS's ``sampling`` for the step comparisons, two things changed on the test side: its
    batch reset's ``max_pdf`` worked out world by world with its own single-world path (the batch
    path loops in Python over the 1600 grid points, seconds per reset; the two agree:
    ``test_reset_computations_are_vmas``), and without collisions agents given ``_NoReadings``."""

    def make_world(self, batch_dim, device, **kwargs):
        world = super().make_world(batch_dim, device, **kwargs)
        if not self.collisions:
            for agent in world.agents:
                agent._sensors = [_NoReadings(batch_dim)]
        return world

    def nomrlize_pdf(self, env_index=None):
        if env_index is not None:
            return super().nomrlize_pdf(env_index)
        for i in range(self.world.batch_dim):
            super().nomrlize_pdf(i)


def fast():
    """A fresh ``Vmas`` scenario object (one per VMAS env)."""
    return Vmas()


def huddle(vm):
    """A contact-heavy start: every world's agents within 0.02 of one point (overlapping, most on
    one cell), moving at random."""
    gen = torch.Generator().manual_seed(5)
    centre = vm.world.agents[0].state.pos.clone() * 0.8
    for agent in vm.world.agents:
        agent.state.pos = centre + 0.02 * (torch.rand(centre.shape, generator=gen) - 0.5)
        agent.state.vel = 0.4 * (torch.rand(centre.shape, generator=gen) - 0.5)


def at_the_bounds(vm):
    """Agents next to the field's edges moving outwards (clamped positions, neighbouring cells
    outside the field)."""
    gen = torch.Generator().manual_seed(6)
    sx, sy = vm.scenario.x_semidim, vm.scenario.y_semidim
    for k, agent in enumerate(vm.world.agents):
        pos = agent.state.pos.clone()
        sign = 1.0 if k % 2 == 0 else -1.0
        pos[:, k % 2] = sign * ((sx, sy)[k % 2] - 0.03 * torch.rand(vm.num_envs, generator=gen))
        agent.state.pos = pos
        vel = torch.zeros_like(pos)
        vel[:, k % 2] = sign * 0.5
        agent.state.vel = vel


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, fast(), continuous=continuous, extra_state=extra_state, info_keys=INFO,
                                steps=15, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, fast(), continuous=continuous, extra_state=extra_state, info_keys=INFO, steps=50,
                    **kwargs)


@pytest.mark.parametrize("start", [huddle, at_the_bounds], ids=["huddle", "bounds"])
def test_whole_episode_contacts_and_bounds(start):
    R.whole_episode(ENV, fast(), extra_state=extra_state, info_keys=INFO, steps=40, start=start, n_agents=5)


def test_one_step_huddled_at_the_bounds():
    def start(vm):
        huddle(vm)
        for agent in vm.world.agents:
            agent.state.pos = agent.state.pos.sign() * 0.97 + (agent.state.pos - vm.world.agents[0].state.pos)
    R.one_step_from_every_state(ENV, fast(), extra_state=extra_state, info_keys=INFO, steps=15, start=start,
                                n_agents=4, shared_rew=False)


@pytest.mark.parametrize("kwargs", [dict(collisions=False), dict(collisions=False, spawn_same_pos=True, n_agents=2)],
                         ids=["no_collisions", "same_spawn"])
def test_without_collisions(kwargs):
    """No lidar: VMAS's scenario given a sensor with no readings (its own observation fails there)."""
    R.whole_episode(ENV, fast(), extra_state=extra_state, info_keys=INFO, steps=40, **kwargs)
    R.whole_episode(ENV, fast(), extra_state=extra_state, info_keys=INFO, steps=25, start=huddle, **kwargs)


def test_comparison_bites():
    """VMAS's side with norm off (the rewards), or a coarser grid (cells and observations), is caught."""
    def unnormalized(vm):
        vm.scenario.norm = False

    def coarser(vm):
        vm.scenario.grid_spacing = 0.1

    for start, what in ((unnormalized, "reward"), (coarser, "obs|reward|info")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, fast(), extra_state=extra_state, info_keys=INFO, steps=10, start=start)


def test_a_cell_pays_once():
    """Agents on one cell at rest: the first gets the cell's value, the others and every later
    step 0; ``coverage`` counts the one cell; with ``shared_rew`` everyone gets the sum."""
    env = war_envs.make(ENV, num_envs=2, collisions=False, autoreset_mode="disabled")
    env.reset(seed=0)
    state = env.get_state()
    state["pos"][:] = torch.tensor([0.31, -0.42])
    state["vel"][:] = 0
    env.set_state(state)
    zero = {"agents": torch.zeros(2, 3, 2)}
    _, rew, _, _, info = env.step(zero)
    sample = info["agent_sample"]
    assert bool((sample[:, 0] > 0).all()) and bool((sample[:, 1:] == 0).all())
    torch.testing.assert_close(rew["agents"], sample[:, :1].expand(2, 3))
    torch.testing.assert_close(info["coverage"], torch.full((2,), 1 / 1600, dtype=info["coverage"].dtype))
    _, rew, _, _, info = env.step(zero)
    assert bool((rew["agents"] == 0).all()) and bool((info["agent_sample"] == 0).all())


@pytest.mark.parametrize("kwargs", [{}, dict(OPTIONS, norm=True)], ids=["default", "options"])
def test_reset_computations_are_vmas(kwargs):
    """VMAS's scenario given our worlds' resets (Gaussians, bodies): its ``max_pdf`` over its grid
    points (its batch path and ``Vmas``'s world-by-world path) and the first observations."""
    n = 12
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    obs = ours.reset(seed=3)
    mine = ours.get_state()
    assert not bool(mine["sampled"].any())
    vm = R.make_vmas(fast(), n, 0, True, **kwargs)
    s = vm.scenario
    s.locs = [mine["locs"][:, g].float().clone() for g in range(s.n_gaussians)]
    s.gaussians = [MultivariateNormal(loc=loc, covariance_matrix=cov) for loc, cov in zip(s.locs, s.cov_matrices)]
    s.sampled[:] = False
    for normalize in (VmasSampling.nomrlize_pdf, Vmas.nomrlize_pdf):  # VMAS's batch path, then ours
        s.max_pdf = torch.zeros(n)
        normalize(s)
        R.compare("max_pdf", mine["max_pdf"], s.max_pdf, R.STEP_TOL)
    R.set_vmas_state(vm, mine)
    theirs_obs = torch.stack([s.observation(a) for a in vm.world.agents], dim=1)
    R.compare("obs at reset", obs["agents"], theirs_obs, R.STEP_TOL)


class _DrawsOnly(VmasSampling):
    """VMAS's reset without ``max_pdf`` (it draws nothing; the batch path's Python loop over the
    grid is what makes a 4000-world reset slow)."""

    def nomrlize_pdf(self, env_index=None):  # (VMAS's spelling) skipped: max_pdf is compared elsewhere
        pass


def test_reset_distribution_matches_vmas():
    """4000 of our worlds' starts against 4000 of VMAS's (its batch reset): KS on every
    Gaussian's centre and every agent's position (each clamped into the bounds, both sides),
    and the same share of positions on the bounds."""
    n = 4000
    vm = vmas.make_env(_DrawsOnly(), num_envs=n, device="cpu", seed=0)
    theirs = R.vmas_state(vm)
    theirs["locs"] = torch.stack(vm.scenario.locs, dim=1)
    ours = war_envs.make(ENV, num_envs=n)
    ours.reset(seed=4)
    mine = ours.get_state()
    crit = R.ks_critical(n, n)
    for g in range(3):
        for k in range(2):
            assert R.ks_statistic(mine["locs"][:, g, k].numpy(), theirs["locs"][:, g, k].numpy()) < crit, (g, k)
    edge = np.float32(0.975)
    for b in range(3):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < crit, (b, k)
            assert a.min() >= -edge and a.max() <= edge and c.min() >= -edge and c.max() <= edge
            edge_a, edge_c = np.mean(np.abs(a) == edge), np.mean(np.abs(c) == edge)
            assert abs(edge_a - edge_c) < 0.012 and 0.01 < edge_a < 0.045, (edge_a, edge_c)
    assert bool((mine["vel"] == 0).all()) and bool((mine["rot"] == 0).all())


def test_same_spawn_starts_at_the_origin():
    ours = war_envs.make(ENV, num_envs=16, collisions=False, spawn_same_pos=True)
    ours.reset(seed=0)
    assert bool((ours.get_state()["pos"] == 0).all())


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_gaussians": 0}, "n_gaussians"), ({"cov": [0.1, 0.2]}, "cov"),
    ({"cov": -0.1}, "cov"), ({"cov": "big"}, "cov"), ({"grid_spacing": 0.3}, "grid_spacing"),
    ({"grid_spacing": 0}, "grid_spacing"), ({"xdim": 0.02}, "xdim"), ({"ydim": -1}, "ydim"),
    ({"agent_radius": 0}, "agent_radius"), ({"lidar_range": 0}, "lidar_range"),
    ({"spawn_same_pos": True}, "spawn_same_pos"), ({"norm": 1}, "norm"), ({"shared_rew": "yes"}, "shared_rew"),
    ({"collisions": None}, "collisions"), ({"comms_range": -1.0}, "comms_range"), ({"max_steps": 0}, "max_steps"),
    ({"bogus": 1}, "bogus"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, OPTIONS, dict(collisions=False)], ids=["default", "options", "no_lidar"])
def test_spaces_and_names_match_vmas(kwargs):
    for continuous in (True, False):
        vm = R.make_vmas(fast(), 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9


def test_episode_metrics():
    """``collected`` sums the agents' samples over the episode; ``coverage`` is the grid's share
    of sampled cells at its end; no termination before the horizon."""
    env = war_envs.make(ENV, num_envs=4, max_steps=25, autoreset_mode="disabled")
    env.reset(seed=1)
    gen = torch.Generator().manual_seed(0)
    total = torch.zeros(4, dtype=torch.float64)
    for t in range(25):
        _, _, term, trunc, info = env.step({"agents": 2 * torch.rand(4, 3, 2, generator=gen) - 1})
        total += info["agent_sample"].double().sum(-1)
        assert not bool(env.world_flags()[0].any())
    assert bool(env.world_flags()[1].all())
    sampled = env.get_state()["sampled"]
    torch.testing.assert_close(info["coverage"].double(), sampled.flatten(1).double().mean(1))
    metrics = {m.name: m for m in env.episode_metrics}
    torch.testing.assert_close(metrics["coverage"].step(info).double(), sampled.flatten(1).double().mean(1))
    assert bool((total > 0).all())


def test_coverage_counts_a_grid_written_by_set_state_or_clone_worlds():
    """The step keeps a running count of sampled cells; a grid written through ``set_state``
    (one world or all) or copied by ``clone_worlds`` is counted from the written grid."""
    env = war_envs.make(ENV, num_envs=3, collisions=False, autoreset_mode="disabled")
    env.reset(seed=2)
    state = env.get_state()
    state["pos"][:] = torch.tensor([0.9, 0.9])  # every agent on one cell
    state["vel"][:] = 0
    grid = torch.zeros(3, 40, 40, dtype=torch.bool)
    grid[0, :10] = True  # 400 cells
    grid[2, 5, :7] = True  # 7 cells
    state["sampled"] = grid
    env.set_state(state)
    zero = {"agents": torch.zeros(3, 3, 2)}
    _, _, _, _, info = env.step(zero)
    expected = (grid.flatten(1).sum(1) + 1).double() / 1600
    torch.testing.assert_close(info["coverage"].double(), expected)
    env.set_state({"sampled": torch.ones(1, 40, 40, dtype=torch.bool)}, worlds=[1])
    env.clone_worlds([0], [2])
    _, _, _, _, info = env.step(zero)
    torch.testing.assert_close(info["coverage"].double(), torch.tensor([401, 1600, 401], dtype=torch.float64) / 1600)
    torch.testing.assert_close(info["coverage"].double(), env.get_state()["sampled"].flatten(1).double().mean(1))


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, **OPTIONS, continuous_actions=False, pettingzoo=False, gymnasium=False)


def test_picture_shows_the_field():
    env = war_envs.make(ENV, num_envs=1, seed=0)
    env.reset()
    frame = env.render_frame(0, width=200, height=200)
    assert frame.shape == (200, 200, 3) and frame.dtype == np.uint8
    assert int(((frame[..., 0] == 255) & (frame[..., 2] < 200)).sum()) > 100  # orange field


def test_same_step_autoreset_reports_the_finished_step():
    """The step that ends an episode (and resets its world at once) reports that step's samples
    and coverage, not the new episode's."""
    env = war_envs.make(ENV, num_envs=3, max_steps=10)
    env.reset(seed=0)
    gen = torch.Generator().manual_seed(1)
    for _ in range(10):
        _, rew, _, trunc, info = env.step({"agents": 2 * torch.rand(3, 3, 2, generator=gen) - 1})
    assert bool(env.world_flags()[1].all())
    assert not bool(env.get_state()["sampled"].any())  # the new episode's grid
    assert bool((info["coverage"] > 0).all())
    torch.testing.assert_close(rew["agents"], info["agent_sample"].sum(-1, keepdim=True).expand(3, 3))
