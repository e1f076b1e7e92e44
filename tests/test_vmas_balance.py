"""Balance-v0 against VMAS 1.5.2's ``balance`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, contact-heavy starts: a tilted, falling plank and a
crowd), the package on its goal and the plank on the floor, the reset distribution, bad
arguments and the shared API checks."""

import math

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Balance-v0", "balance"
GOAL, PACKAGE, LINE, FLOOR = range(4)
INFO = ("pos_rew", "ground_rew")
#: free-running episodes compare ``pos_rew`` through the reward (``ground_rew + pos_rew``, at
#: EPISODE_REWARD_TOL); ``ground_rew`` (0 or -10) exactly
EPISODE_INFO = ("ground_rew",)
#: The rewards are differences of shaping values 100 x the package's goal distance (up to about
#: 100 x 2.6, float32 ulp 1.5e-5 to 3.05e-5): one ulp of a shaping value is above STEP_TOL's
#: atol (measured: one ulp, 1.53e-5, from torch's FMA-contracted vector_norm, see
#: tests/test_vmas_passage.py).
REWARD_TOL = dict(rtol=1e-5, atol=2 * 3.05e-5)
#: Free-running episodes: the plank rests on the agents and the floor (stiff contacts, collision
#: force 500), which amplify ulp differences to ~1e-5 in positions over 100 steps (measured
#: 9e-6); the rewards are 100 x a difference of two such distances (measured 1.4e-4).
EPISODE_REWARD_TOL = dict(rtol=1e-4, atol=5e-4)
OPTIONS = {"n_agents": 5, "package_mass": 2, "random_package_pos_on_line": False}


def extra_state(vm):
    return {"global_shaping": vm.scenario.global_shaping}


def tilted(vm, scale: float = 1.0):
    """A contact-heavy start: the plank tilted (up to +-0.5 rad times ``scale``), spinning and
    falling, so it strikes the agents, the package rolls and ends hit the floor."""
    gen = torch.Generator().manual_seed(3)
    E = vm.num_envs
    line = vm.scenario.line
    line.state.rot = (torch.rand(E, 1, generator=gen) - 0.5) * scale
    line.state.ang_vel = (torch.rand(E, 1, generator=gen) - 0.5) * 2.0 * scale
    line.state.vel = torch.stack([0.2 * (torch.rand(E, generator=gen) - 0.5),
                                  -0.4 * scale * torch.rand(E, generator=gen)], 1)


def tilted_gently(vm):
    """``tilted`` at a fifth: the plank strikes the agents and bounces, but no agent is driven
    through it.  (An agent's centre crossing the plank makes VMAS's contact direction, the
    closest-point offset over its near-zero length, ill-conditioned: a 1e-7 difference of the
    step before becomes 3e-4, so free-running episodes through such a crossing cannot be
    compared; one step from VMAS's state still is, test_one_step_contact_heavy.)"""
    tilted(vm, 0.2)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=40,
                                info_keys=INFO, reward_tol=REWARD_TOL, **kwargs)


@pytest.mark.parametrize("start", [tilted, R.crowd], ids=["tilted", "crowd"])
def test_one_step_contact_heavy(start):
    R.one_step_from_every_state(ENV, SCENARIO, extra_state=extra_state, steps=30, start=start, info_keys=INFO,
                                reward_tol=REWARD_TOL)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=100, info_keys=EPISODE_INFO,
                    reward_tol=EPISODE_REWARD_TOL, **kwargs)


@pytest.mark.parametrize("start", [tilted_gently, R.crowd], ids=["tilted", "crowd"])
def test_whole_episode_contact_heavy(start):
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=60, start=start, info_keys=EPISODE_INFO,
                    reward_tol=EPISODE_REWARD_TOL, n_agents=4)


def test_comparison_bites():
    """A perturbed gravity, plank length or shaping factor on VMAS's side is caught."""
    def gravity(vm):
        vm.world._gravity = torch.tensor([0.0, -0.06])

    def longer(vm):
        tilted(vm)
        vm.scenario.line.shape._length = 0.85

    def shaping(vm):
        vm.scenario.shaping_factor = 101

    for start, what in ((gravity, "obs|vel|pos"), (longer, "obs|vel|pos|ang_vel|rot"), (shaping, "reward")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, start=start, info_keys=INFO)


def _step_both(vm, ours, n_agents):
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(vm.num_envs, 2)] * n_agents)
    our_out = ours.step({"agents": torch.zeros(vm.num_envs, n_agents, 2)})
    R.compare_outputs("step", vm, ours, vm_out, our_out, R.STEP_TOL, INFO, REWARD_TOL)
    return vm_out, our_out


def test_package_on_goal_ends_the_episode():
    """The goal moved under the package: VMAS's done, our termination and ``reached_goal``."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    sc = vm.scenario
    sc.package.goal.state.pos = sc.package.state.pos.clone() + torch.tensor([0.02, -0.01])
    sc.global_shaping = torch.linalg.vector_norm(sc.package.state.pos - sc.package.goal.state.pos, dim=1) * 100
    ours = R.make_ours(ENV, 8, True, max_steps=5)
    vm_out, our_out = _step_both(vm, ours, 3)
    assert bool(vm_out[2].all())
    info = our_out[4]
    assert bool(info["reached_goal"].all()) and not bool(info["fell"].any())
    assert bool(ours.world_flags()[0].all())


def test_plank_on_the_floor_is_penalized_and_ends_the_episode():
    """Half the worlds' planks tilted into the floor (positions are kept in |y| <= 1, the floor's
    top is at -1.03): -10 ground reward, VMAS's done, ``fell``."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    line = vm.scenario.line
    rot = line.state.rot.clone()
    rot[:4] = 0.3
    line.state.rot = rot
    ours = R.make_ours(ENV, 8, True, max_steps=5)
    vm_out, our_out = _step_both(vm, ours, 3)
    down = torch.arange(8) < 4
    assert torch.equal(vm_out[2], down)
    info = our_out[4]
    assert torch.equal(info["fell"].bool(), down) and torch.equal(ours.world_flags()[0].cpu(), down)
    assert bool((info["ground_rew"][:4] == -10).all()) and bool((info["ground_rew"][4:] == 0).all())


@pytest.mark.parametrize("random_pos", [True, False])
def test_reset_distribution_matches_vmas(random_pos):
    """10 000 of our worlds' starts against 10 000 of VMAS's (its starts are independent per
    world, so one batched reset has the law of ``reset_world_at(i)``): KS on the goal, the
    plank's x and the package's place on it; everything else exactly VMAS's float32 arithmetic."""
    n = 10_000
    vm = R.make_vmas(SCENARIO, n, 0, True, n_agents=4, random_package_pos_on_line=random_pos)
    theirs = R.vmas_state(vm)
    theirs["global_shaping"] = vm.scenario.global_shaping
    ours = war_envs.make(ENV, num_envs=n, n_agents=4, random_package_pos_on_line=random_pos)
    ours.reset(seed=4)
    mine = ours.get_state()
    for state in (mine, theirs):
        p = state["pos"]
        state["goal_x"], state["goal_y"] = p[:, GOAL, 0], p[:, GOAL, 1]
        state["line_x"] = p[:, LINE, 0]
        state["package_dx"] = p[:, PACKAGE, 0] - p[:, LINE, 0]
    keys = ("goal_x", "goal_y", "line_x") + (("package_dx",) if random_pos else ())
    for key in keys:
        a, c = mine[key].numpy(), theirs[key].numpy()
        assert R.ks_statistic(a, c) < R.ks_critical(n, n), key
    assert float(mine["goal_x"].min()) >= -1 and float(mine["goal_x"].max()) < 1
    assert float(mine["goal_y"].min()) >= 0 and float(mine["goal_y"].max()) < 1
    assert float(mine["line_x"].abs().max()) <= 0.6 and float(mine["package_dx"].abs().max()) <= 0.35 + 1e-6
    if not random_pos:
        assert bool((mine["package_dx"] == 0).all())
    # the deterministic parts, bit for bit VMAS's float32 sums (VMAS's own starts satisfy them too)
    span = 0.8 - 0.03
    offsets = torch.tensor([-span / 2 + i * span / 3 for i in range(4)], dtype=torch.float32)
    for state in (mine, theirs):
        line = state["pos"][:, LINE]
        torch.testing.assert_close(state["pos"][:, 4:, 0], line[:, None, 0] + offsets, rtol=0, atol=0)
        for b in [LINE, FLOOR] + list(range(4, 8)):
            torch.testing.assert_close(state["pos"][:, b, 1], theirs["pos"][:, b, 1], rtol=0, atol=0)
        assert bool((state["pos"][:, FLOOR, 0] == 0).all())
    torch.testing.assert_close(mine["pos"][:, PACKAGE, 1], theirs["pos"][:, PACKAGE, 1], rtol=0, atol=0)
    assert bool((mine["rot"] == 0).all()) and bool((mine["vel"] == 0).all())
    torch.testing.assert_close(mine["global_shaping"], torch.linalg.vector_norm(
        mine["pos"][:, PACKAGE] - mine["pos"][:, GOAL], dim=-1) * 100)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 1}, "n_agents"), ({"n_agents": 2.5}, "n_agents"), ({"package_mass": 0}, "package_mass"),
    ({"package_mass": "5"}, "package_mass"), ({"random_package_pos_on_line": 1}, "random_package_pos_on_line"),
    ({"max_steps": 0}, "max_steps"), ({"line_length": 1.0}, "line_length"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, {"n_agents": 6}):
        for continuous in (True, False):
            vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
            ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
            spec = ours.groups["agents"]
            assert spec.agents == tuple(a.name for a in vm.agents)
            assert spec.obs_dim == vm.observation_space[0].shape[0] == 16
            if continuous:
                np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
            else:
                assert spec.action_space.n == vm.action_space[0].n == 9
            assert [ours.body_index(e.name) for e in vm.world.entities] == list(range(len(vm.world.entities)))


def test_rotation_observation_is_torch_remainder():
    """The plank's rotation is observed as torch's ``rot % pi`` (negative angles wrap up)."""
    env = war_envs.make(ENV, num_envs=6, max_steps=5, autoreset_mode="disabled")
    env.reset(seed=0)
    state = env.get_state()
    rots = torch.tensor([-4.0, -math.pi, -0.3, 0.0, 1.0, 7.5])
    state["rot"][:, LINE] = rots.to(state["rot"].dtype)
    env.set_state(state)
    obs = env.step({"agents": torch.zeros(6, 3, 2)})[0]["agents"]
    after = env.get_state()["rot"][:, LINE]
    torch.testing.assert_close(obs[:, 0, 15], (after.float() % torch.pi), rtol=0, atol=0)


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20, atol=2e-3, autoreset_mode="disabled")


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **OPTIONS)


def test_picture():
    env = war_envs.make(ENV, num_envs=1, seed=0)
    env.reset()
    frame = env.render_frame(0, width=240, height=240)
    assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8
    red = (frame[..., 0] > 150) & (frame[..., 1] < 100) & (frame[..., 2] < 100)
    assert red.sum() > 10  # the package
