"""WindFlocking-v0 against VMAS 1.5.2's ``wind_flocking`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state and whole free-running
episodes (continuous and discrete actions, default and non-default arguments, the velocity
controller on and off, agents pressed together), the big agent's wind cover, the reset against
VMAS's, random-policy returns against VMAS's, bad arguments and the shared API checks."""

import math

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "WindFlocking-v0", "wind_flocking"
INFO = ("dist_rew", "rot_rew", "pos_rew", "agent_wind_rew", "agent_vel_rew", "agent_energy_rew", "delta_vel_to_goal")
#: every shaping term on, every observation, a narrower cover, another wind and speed
OPTIONS = {"vel_shaping_factor": 2.0, "dist_shaping_factor": 0.5, "wind_shaping_factor": 3.0,
           "pos_shaping_factor": 1.0, "rot_shaping_factor": 1.5, "energy_shaping_factor": 0.2,
           "observe_rel_pos": True, "observe_rel_vel": True, "observe_pos": False, "wind": 3.0, "v_range": 0.7,
           "desired_vel": 0.4, "f_range": 50.0, "cover_angle_tolerance": 0.5, "horizon": 100}
CASES = {"default": {}, "force": {"use_controller": False}, "options": OPTIONS,
         "options_force": dict(OPTIONS, use_controller=False, cover_angle_tolerance=1.5)}


def extra_state(vm):
    """The scenario's own per-world state off VMAS's objects: the agents' gravity (the big one's
    wind), the controllers' errors and every shaping value."""
    agents, s = vm.world.agents, vm.scenario
    return {
        "gravity": torch.stack([a.gravity for a in agents], dim=1),
        "accum_errs": torch.stack([a.controller.accum_errs for a in agents], dim=1),
        "prev_err": torch.stack([a.controller.prev_err for a in agents], dim=1),
        "vel_shaping": torch.stack([a.vel_shaping for a in agents], dim=1),
        "energy_shaping": torch.stack([a.energy_shaping for a in agents], dim=1),
        "wind_shaping": torch.stack([a.wind_shaping for a in agents], dim=1),
        "distance_shaping": s.distance_shaping, "rot_shaping": s.rot_shaping, "pos_shaping": s.pos_shaping,
    }


def pressed(vm):
    """A contact-heavy start: the agents overlapping (centres 0.04 to 0.07 apart, less than the
    radii's 0.08) at random angles, driving into each other."""
    gen = torch.Generator().manual_seed(4)
    E = vm.num_envs
    big, small = vm.world.agents
    angle = torch.rand(E, generator=gen) * 2 * math.pi
    gap = 0.04 + 0.03 * torch.rand(E, generator=gen)
    small.state.pos = big.state.pos + torch.stack([torch.cos(angle), torch.sin(angle)], 1) * gap[:, None]
    big.state.vel = torch.stack([torch.cos(angle), torch.sin(angle)], 1) * 0.3
    small.state.vel = -big.state.vel


def spread(vm):
    """Every angle of the agents' line (big above, below and beside the small one), so the
    wind cover goes through its whole range, including full shelter."""
    gen = torch.Generator().manual_seed(6)
    E = vm.num_envs
    big, small = vm.world.agents
    angle = torch.linspace(-math.pi, math.pi, E)
    angle[0] = -math.pi / 2  # straight below: sheltered
    small.state.pos = torch.rand(E, 2, generator=gen) - 0.5
    big.state.pos = small.state.pos + torch.stack([torch.cos(angle), torch.sin(angle)], 1) * 0.8
    for a in (big, small):
        a.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.6


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_step_from_every_vmas_state(case, continuous):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous,
                                extra_state=extra_state, info_keys=INFO, compare_state=True, start=spread,
                                **CASES[case])


@pytest.mark.parametrize("case", ["default", "force"])
def test_one_step_pressed_together(case):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=20, extra_state=extra_state, info_keys=INFO,
                                compare_state=True, start=pressed, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_whole_episode(case, continuous):
    """Free-running 200-step episodes (VMAS's default horizon) from VMAS's own starts."""
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=200, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, **CASES[case])


@pytest.mark.parametrize("case,start,steps", [
    ("default", spread, 100), ("force", spread, 100), ("options", spread, 80),
    ("default", pressed, 40), ("force", pressed, 100), ("options", pressed, 12),
], ids=["default-spread", "force-spread", "options-spread", "default-pressed", "force-pressed", "options-pressed"])
def test_whole_episode_from_hard_starts(case, start, steps):
    """Free-running episodes from every angle of the agents' line, and from the agents pressed
    together.  Agents that the controller keeps driving into each other (``pressed``) bump
    again and again, and every bump (contact stiffness 500) multiplies a difference several
    times: VMAS itself, run twice with the big agent's start moved by one float32 ulp, drifts
    apart by more than the episode tolerance after 48 steps (default arguments) and 14 steps
    (``OPTIONS``) from ``pressed`` (same actions; measured), and our last-ulp differences (exp /
    log in the contact force) grow the same way.  So those comparisons cover the horizon where
    a 1-ulp twin of VMAS still agrees; the one-step tests check every bump at the tight
    tolerance.  With ``OPTIONS``' narrower cover (tolerance 0.5, wind 3) the big agent's wind
    moves by up to 6 / distance per unit of the agents' relative position: in ``spread``'s
    world 0 the agents bump at step 70 (differences of 1e-7 in position grow to 2e-6 by step
    82) and come within 0.058 of each other at step 83, where that 2e-6 makes 1.3e-4 in the
    wind (measured), so that comparison stops at step 80."""
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=steps, extra_state=extra_state, info_keys=INFO,
                    compare_state=True, start=start, **CASES[case])


def test_the_comparisons_bite():
    """A different wind, controller gain, friction, shaping factor or cover on VMAS's side is
    caught."""
    def wind(vm):
        vm.scenario.set_wind(2.01)

    def gain(vm):
        for a in vm.world.agents:
            a.controller.ctrl_gain = 1.51

    def friction(vm):
        vm.world._linear_friction = 0.11

    def shaping(vm):
        vm.scenario.vel_shaping_factor = 1.01

    def cover(vm):
        vm.scenario.cover_angle_tolerance = 0.9

    physics = r"obs|pos|vel|state\['gravity'\]"
    for start, what in ((wind, physics), (gain, physics), (friction, physics),
                        (shaping, "reward|info"), (cover, r"state\['gravity'\]")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, num_envs=16, steps=30, extra_state=extra_state, info_keys=INFO,
                            compare_state=True, start=lambda vm, change=start: (spread(vm), change(vm)))


def test_the_wind_cover():
    """After a step the big agent's gravity is the wind times ``min((1 - cos θ) / tol, 1)``, θ
    the angle between the line from the small agent to the big one and straight down (read off
    the positions after the step), the small agent's the full wind; straight below, no wind."""
    for tol in (1.0, 0.5, 1.5):
        env = war_envs.make(ENV, num_envs=64, autoreset_mode="disabled", cover_angle_tolerance=tol, wind=2.0)
        env.reset(seed=0)
        state = env.get_state()
        angle = torch.linspace(-math.pi, math.pi, 64)
        angle[0] = -math.pi / 2
        state["pos"][:, 1] = 0.0
        state["pos"][:, 0] = torch.stack([torch.cos(angle), torch.sin(angle)], 1)
        env.set_state(state)
        env.step({"agents": torch.zeros(64, 2, 2)})
        after = env.get_state()
        line = after["pos"][:, 0].double() - after["pos"][:, 1].double()
        cos_theta = -line[:, 1] / line.norm(dim=-1)
        expected = -2.0 * torch.clamp((1 - cos_theta) / tol, max=1.0)
        torch.testing.assert_close(after["gravity"][:, 0, 1].double(), expected, rtol=0, atol=1e-5)
        assert bool((after["gravity"][:, :, 0] == 0).all()) and bool((after["gravity"][:, 1, 1] == -2).all())
        assert abs(float(after["gravity"][0, 0, 1])) < 1e-5  # sheltered
        if tol == 1.0:
            above = (angle > 0.05) & (angle < math.pi - 0.05)
            assert bool((after["gravity"][above, 0, 1] == -2).all())  # big above: full wind


def start_angles(state):
    """The start angle of the agents' line in each world (left agent to right agent, in
    [-pi/8, pi/8]) and whether the big agent is the left one."""
    p = state["pos"]
    line = p[:, 1] - p[:, 0]  # small - big
    left = line[:, 0] > 0  # the big agent on the left
    span = torch.where(left[:, None], line, -line)
    return torch.atan2(span[:, 1], span[:, 0]).numpy(), left


def test_reset_matches_vmas():
    """10 000 of our starts against 10 000 of VMAS's per-world resets (``reset_world_at(i)``):
    KS on the start angle, the same share of worlds with the big agent on the left; exactly
    VMAS's arithmetic for the rest (the agents 1 apart, symmetric about the origin, at rest,
    the controllers cleared, full wind, the shaping values VMAS's formulas give)."""
    n = 10_000
    vm = R.make_vmas(SCENARIO, n, 0, True, **OPTIONS)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    theirs = R.vmas_state(vm)
    theirs.update(extra_state(vm))
    ours = war_envs.make(ENV, num_envs=n, **OPTIONS)
    ours.reset(seed=5)
    mine = ours.get_state()
    angles = {}
    for name, st in (("ours", mine), ("VMAS", theirs)):
        p = st["pos"]
        assert bool((p[:, 0] == -p[:, 1]).all()), name
        line = p[:, 1] - p[:, 0]
        angles[name], left = start_angles(st)
        assert float(np.abs(angles[name]).max()) <= math.pi / 8 + 1e-6, name
        frac = float(left.double().mean())
        assert abs(frac - 0.5) < 4 * math.sqrt(0.25 / n), (name, frac)
        assert bool((st["vel"] == 0).all()) and bool((st["accum_errs"] == 0).all())
        assert bool((st["prev_err"] == 0).all()) and bool((st["energy_shaping"] == 0).all())
        assert bool((st["gravity"][:, :, 1] == -3.0).all()) and bool((st["gravity"][:, :, 0] == 0).all())
        torch.testing.assert_close(st["wind_shaping"], torch.full((n, 2), 9.0), rtol=0, atol=0)
        torch.testing.assert_close(st["vel_shaping"], torch.full((n, 2), 0.8), rtol=0, atol=0)
        distance = torch.linalg.vector_norm(line, dim=-1)
        torch.testing.assert_close(distance, torch.ones(n), rtol=0, atol=5e-7)
        torch.testing.assert_close(st["distance_shaping"], (distance - 1).abs() * 0.5, rtol=0, atol=0)
        torch.testing.assert_close(st["pos_shaping"], (torch.maximum(p[:, 0, 1], p[:, 1, 1]) - 10.0).abs(),
                                   rtol=0, atol=0)
        rot = torch.atan2(-line[:, 1], -line[:, 0]) % torch.pi
        rot = torch.minimum(rot.abs(), torch.minimum((rot + torch.pi).abs(), (rot - torch.pi).abs())) * 1.5
        torch.testing.assert_close(st["rot_shaping"], rot, rtol=0, atol=2e-6)
    assert R.ks_statistic(angles["ours"], angles["VMAS"]) < R.ks_critical(n, n)
    assert float(np.std(angles["ours"])) > 0.1  # the worlds differ


def test_reset_ks_bites():
    """The reset's KS test rejects a start angle from a slightly wider range."""
    n = 10_000
    ours = war_envs.make(ENV, num_envs=n)
    ours.reset(seed=5)
    mine, _ = start_angles(ours.get_state())
    wider = np.random.default_rng(0).uniform(-math.pi / 7, math.pi / 7, n)
    assert R.ks_statistic(wider, mine) > R.ks_critical(n, n)


def _vmas_returns(n, steps, seed, **kwargs):
    """Per-world returns (agent 0's; the reward is shared) of ``steps`` steps of uniform random
    actions from VMAS's per-world starts, and the last step's mean ``delta_vel_to_goal``."""
    vm = R.make_vmas(SCENARIO, n, seed, True, max_steps=steps, **kwargs)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    gen = torch.Generator().manual_seed(seed + 1)
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(steps):
        acts = [(torch.rand(n, 2, generator=gen) * 2 - 1) * float(vm.action_space[i].high[0]) for i in range(2)]
        _, rew, _, infos = vm.step(acts)
        total += rew[0].double()
    delta = torch.stack([i["delta_vel_to_goal"] for i in infos], 1).double().mean(-1)
    return total.numpy(), delta.numpy()


def _our_returns(n, steps, seed, **kwargs):
    env = war_envs.make(ENV, num_envs=n, max_steps=steps, autoreset_mode="disabled", **kwargs)
    env.reset(seed=seed)
    high = float(env.groups["agents"].action_space.high[0])
    gen = torch.Generator().manual_seed(seed + 7)
    total = torch.zeros(n, dtype=torch.float64)
    for _ in range(steps):
        _, rew, _, _, info = env.step({"agents": (torch.rand(n, 2, 2, generator=gen) * 2 - 1) * high})
        total += rew["agents"][:, 0].double()
    return total.numpy(), info["delta_vel_to_goal"].double().mean(-1).numpy()


def _agree(a, b, k=4.0):
    """Means and standard deviations of two samples equal within ``k`` standard errors."""
    se_mean = math.sqrt(a.var() / len(a) + b.var() / len(b))
    se_std = math.sqrt(a.var() / (2 * len(a)) + b.var() / (2 * len(b)))
    return abs(a.mean() - b.mean()) <= k * se_mean and abs(a.std() - b.std()) <= k * se_std


@pytest.mark.parametrize("case", ["default", "force", "options_force"])
def test_random_policy_returns_match_vmas(case):
    """2 000 episodes of 60 steps of uniform random actions on each side, from each side's own
    starts and random numbers: the returns' mean and spread and the last step's
    ``delta_vel_to_goal`` agree within 4 standard errors."""
    n, steps = 2000, 60
    kwargs = CASES[case]
    theirs = _vmas_returns(n, steps, 0, **kwargs)
    mine = _our_returns(n, steps, 0, **kwargs)
    for a, b in zip(mine, theirs):
        assert _agree(a, b), (a.mean(), a.std(), b.mean(), b.std())


@pytest.mark.parametrize("case,change", [("default", {"desired_vel": 0.4}),
                                         ("options_force", {"cover_angle_tolerance": 0.8})])
def test_random_policy_statistics_bite(case, change):
    """The same statistics tell another desired velocity or wind cover apart.  (Random actions
    swamp the wind itself: the controller makes up for it, and random forces up to ``f_range``
    dwarf it, so a 10% weaker wind moves the mean return by under 1.5 standard errors.)"""
    n, steps = 2000, 60
    theirs = _vmas_returns(n, steps, 0, **CASES[case])
    mine = _our_returns(n, steps, 0, **dict(CASES[case], **change))
    assert not all(_agree(a, b) for a, b in zip(mine, theirs))


def test_every_episode_starts_in_the_full_wind():
    """Our one deliberate change to VMAS's dynamics: a reset gives the big agent the full wind
    again (VMAS keeps the last episode's), so an episode depends only on its start and actions."""
    env = war_envs.make(ENV, num_envs=4, max_steps=5)
    env.reset(seed=1)
    state = env.get_state()
    state["pos"][:, 0] = torch.tensor([0.0, -1.0])  # big straight below small: sheltered
    state["pos"][:, 1] = torch.tensor([0.0, 0.0])
    env.set_state(state)
    env.step({"agents": torch.zeros(4, 2, 2)})
    assert bool((env.get_state()["gravity"][:, 0, 1].abs() < 1e-3).all())
    env.reset(seed=1)
    assert bool((env.get_state()["gravity"][:, :, 1] == -2).all())


@pytest.mark.parametrize("kwargs,match", [
    ({"vel_shaping_factor": float("nan")}, "vel_shaping_factor"),
    ({"dist_shaping_factor": "1"}, "dist_shaping_factor"), ({"wind_shaping_factor": None}, "wind_shaping_factor"),
    ({"pos_shaping_factor": float("inf")}, "pos_shaping_factor"),
    ({"rot_shaping_factor": True}, "rot_shaping_factor"), ({"energy_shaping_factor": [0]}, "energy_shaping_factor"),
    ({"observe_rel_pos": 1}, "observe_rel_pos"), ({"observe_rel_vel": "yes"}, "observe_rel_vel"),
    ({"observe_pos": None}, "observe_pos"), ({"use_controller": 0}, "use_controller"), ({"wind": "2"}, "wind"),
    ({"v_range": 0}, "v_range"), ({"v_range": -0.5}, "v_range"), ({"desired_vel": float("nan")}, "desired_vel"),
    ({"f_range": 0}, "f_range"), ({"cover_angle_tolerance": 0}, "cover_angle_tolerance"),
    ({"cover_angle_tolerance": -1}, "cover_angle_tolerance"), ({"horizon": 0}, "horizon"),
    ({"horizon": 2.5}, "horizon"), ({"max_steps": 0}, "max_steps"), ({"n_agents": 3}, "n_agents"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_and_names_match_vmas(continuous):
    for kwargs in ({}, {"use_controller": False}, OPTIONS, {"observe_pos": False}, {"observe_rel_vel": True}):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents) == ("agent_0", "agent_1")
        assert [b.radius for b in ours.layout.bodies] == [a.shape.radius for a in vm.world.agents]
        for i in range(2):
            assert spec.obs_dim == vm.observation_space[i].shape[0]
            if continuous:
                np.testing.assert_array_equal(spec.action_space.high, vm.action_space[i].high)
            else:
                assert spec.action_space.n == vm.action_space[i].n == 9
    assert war_envs.make(ENV).groups["agents"].action_space.high.tolist() == [0.5, 0.5]
    assert war_envs.make(ENV, use_controller=False).groups["agents"].action_space.high.tolist() == [100, 100]


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 40, state_keys=("pos", "vel", "gravity"), autoreset_mode="disabled",
                              observe_rel_pos=True, observe_rel_vel=True, rot_shaping_factor=1.0,
                              energy_shaping_factor=0.1)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, use_controller=False, observe_pos=False,
                               observe_rel_pos=True, observe_rel_vel=True, pettingzoo=False, gymnasium=False)
    # short episodes: world slicing across autoresets (every episode starts in the full wind)
    war_envs.testing.check_determinism_and_world_slicing(ENV, max_steps=15)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 2  # the agents on white
