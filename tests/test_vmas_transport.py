"""Transport-v0 against VMAS 1.5.2's ``transport`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, contact-heavy starts: agents pushing at the packages
and a crowd of agents and packages), packages on the goal, the reset distribution, bad arguments
and the shared API checks."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Transport-v0", "transport"
#: The rewards are differences of shaping values 100 x a package's goal distance (up to about
#: 100 x 2.9, float32 ulp 3.05e-5); one ulp of a shaping value is above STEP_TOL's atol (see
#: tests/test_vmas_passage.py), and a sum over packages carries one per package.
REWARD_TOL = dict(rtol=1e-5, atol=4 * 3.05e-5)
OPTIONS = {"n_agents": 6, "n_packages": 3, "package_width": 0.1, "package_length": 0.25, "package_mass": 5}


def extra_state(vm):
    packages = vm.scenario.packages
    return {"global_shaping": torch.stack([p.global_shaping for p in packages], dim=1),
            "on_goal": torch.stack([p.on_goal for p in packages], dim=1)}


def pushing(vm):
    """A contact-heavy start: agent i pressed against a side of package ``i % n_packages`` (a
    little inside it), moving into it."""
    gen = torch.Generator().manual_seed(2)
    packages = vm.scenario.packages
    E = vm.num_envs
    for i, agent in enumerate(vm.world.agents):
        package = packages[i % len(packages)]
        side = i // len(packages) % 4
        half = torch.tensor([package.shape.length / 2, package.shape.width / 2])
        direction = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])[side]
        along = (torch.rand(E, 1, generator=gen) - 0.5) * 0.5 * half.flip(0) * direction.flip(0).abs()
        offset = direction * (half + 0.03 - 0.005) + along
        agent.state.pos = package.state.pos + offset
        agent.state.vel = -direction.expand(E, 2) * 0.5 * torch.rand(E, 1, generator=gen)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=40,
                                reward_tol=REWARD_TOL, **kwargs)


@pytest.mark.parametrize("start", [pushing, R.crowd], ids=["pushing", "crowd"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_contact_heavy(start, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, extra_state=extra_state, steps=30, start=start,
                                reward_tol=REWARD_TOL, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=100, **kwargs)


@pytest.mark.parametrize("start", [pushing, R.crowd], ids=["pushing", "crowd"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode_contact_heavy(start, kwargs):
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=60, start=start, **kwargs)


def test_contacts_move_the_packages():
    """The pushing start does push: VMAS's packages move, and ours with them."""
    vm, ours = R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=10, start=pushing)
    assert float(vm.scenario.packages[0].state.vel.norm(dim=1).min()) > 0


def test_comparison_bites():
    """A perturbed package mass, box size or shaping factor on VMAS's side is caught."""
    def heavier(vm):
        pushing(vm)
        vm.scenario.packages[0].mass = 55

    def wider(vm):
        pushing(vm)
        vm.scenario.packages[0].shape._width = 0.16

    def shaping(vm):
        pushing(vm)
        vm.scenario.shaping_factor = 101

    for start, what in ((heavier, "obs|vel|pos"), (wider, "obs|vel|pos"), (shaping, "reward")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, start=start)


def _on_goal_start(which):
    def start(vm):
        goal = vm.world.landmarks[0]
        for k in which:
            package = vm.scenario.packages[k]
            package.state.pos = goal.state.pos.clone() + 0.1 * (k + 1) * torch.tensor([0.5, -0.5])
    return start


@pytest.mark.parametrize("which,done", [((0, 1), True), ((1,), False)], ids=["all", "one"])
def test_packages_on_the_goal(which, done):
    """Packages moved onto the goal: VMAS's on-goal flags (observed), its reward (only the
    packages off the goal count), done when all are on it; our ``packages_on_goal`` and
    ``reached_goals``."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5, n_packages=2)
    _on_goal_start(which)(vm)
    ours = R.make_ours(ENV, 8, True, max_steps=5, n_packages=2)
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(8, 2)] * 4)
    our_out = ours.step({"agents": torch.zeros(8, 4, 2)})
    R.compare_outputs("on goal", vm, ours, vm_out, our_out, R.STEP_TOL, reward_tol=REWARD_TOL)
    obs = our_out[0]["agents"]
    for k in range(2):
        assert bool((obs[:, :, 4 + 7 * k + 6] == float(k in which)).all())
    assert torch.equal(vm_out[2], torch.full((8,), done))
    info = our_out[4]
    assert bool((info["packages_on_goal"] == len(which)).all())
    assert bool((info["reached_goals"] == float(done)).all()) and torch.equal(ours.world_flags()[0].cpu(),
                                                                              torch.full((8,), done))
    # the second step: an on-goal package's shaping change is left out of the reward
    R.copy_state(vm, ours, extra_state)
    acts = [torch.rand(8, 2) * 2 - 1 for _ in range(4)]
    vm_out = vm.step(acts)
    our_out = ours.step({"agents": torch.stack(acts, 1)})
    R.compare_outputs("on goal, step 2", vm, ours, vm_out, our_out, R.STEP_TOL, reward_tol=REWARD_TOL)


def test_reset_distribution_matches_vmas():
    """10 000 of our worlds' starts against 10 000 of VMAS's (its spawning redraws each world
    until it is free, so a batched reset has the law of ``reset_world_at(i)``): KS on agents',
    goal's and packages' coordinates and on distances between them; every spacing rule."""
    n = 10_000
    kwargs = dict(n_agents=3, n_packages=2)
    vm = R.make_vmas(SCENARIO, n, 0, True, **kwargs)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    ours.reset(seed=4)
    mine = ours.get_state()
    min_dist = float(np.hypot(0.075, 0.075)) + 0.15 + 0.01
    for state in (mine, theirs):
        p = state["pos"]
        state["goal_package"] = (p[:, 0] - p[:, 1]).norm(dim=-1)
        state["package_package"] = (p[:, 1] - p[:, 2]).norm(dim=-1)
        state["agent_agent"] = (p[:, 3] - p[:, 4]).norm(dim=-1)
        state["agent_goal"] = (p[:, 3] - p[:, 0]).norm(dim=-1)
        assert float(p.abs().max()) <= 1
        d = torch.cdist(p, p) + torch.eye(6) * 10
        assert float(d[:, 3:, 3:].min()) >= 0.06 and float(d[:, :3, :].min()) >= min_dist
    for key in ("goal_package", "package_package", "agent_agent", "agent_goal"):
        assert R.ks_statistic(mine[key].numpy(), theirs[key].numpy()) < R.ks_critical(n, n), key
    for b in range(6):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    assert not bool(mine["on_goal"].any())
    torch.testing.assert_close(mine["global_shaping"], (mine["pos"][:, 1:3] - mine["pos"][:, :1]).norm(dim=-1) * 100)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 2.0}, "n_agents"), ({"n_packages": 0}, "n_packages"),
    ({"package_width": -0.1}, "package_width"), ({"package_length": 0}, "package_length"),
    ({"package_mass": "heavy"}, "package_mass"), ({"max_steps": 0}, "max_steps"),
    ({"shaping_factor": 10}, "shaping_factor"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, OPTIONS):
        for continuous in (True, False):
            vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
            ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
            spec = ours.groups["agents"]
            assert spec.agents == tuple(a.name for a in vm.agents)
            assert spec.obs_dim == vm.observation_space[0].shape[0]
            if continuous:
                np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
            else:
                assert spec.action_space.n == vm.action_space[0].n == 9
            assert [ours.body_index(e.name) for e in vm.world.entities] == list(range(len(vm.world.entities)))
            assert ours.layout.x_semidim == vm.world.x_semidim and ours.layout.y_semidim == vm.world.y_semidim


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20, atol=2e-3, autoreset_mode="disabled")


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **OPTIONS)


def test_picture():
    env = war_envs.make(ENV, num_envs=1, seed=0, n_packages=2)
    env.reset()
    frame = env.render_frame(0, width=240, height=240)
    assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8
    red = (frame[..., 0] > 150) & (frame[..., 1] < 100) & (frame[..., 2] < 100)
    assert red.sum() > 20  # the packages
