"""JointPassageSize-v0 against VMAS 1.5.2's ``joint_passage_size`` in the same process
(tests/vmas_reference.py).

As in JointPassage-v0 (tests/test_vmas_joint_passage.py), VMAS's joints are stiff enough (joint
force 400, 5 substeps; 700 and 10 with the package) that one float32 ulp of the state moves
VMAS's own next step past float32 tolerances in the rod's angular velocity (a plain float32
comparison fails within 25 free steps, and over one step with the package), so the comparisons
are against VMAS's own one-ulp spread (``R.one_step_within_vmas_spread``,
``R.whole_episode_within_vmas_spread``): in every world, every output of ours (observations,
rewards, info, every body's state) within 15 times the distance between VMAS and its twin
(``FACTOR``), plus float32 tolerances.  One step: the twins are VMAS from the state moved by an
ulp (the rod's rotation; every position), ours measured at most 2.3x.  Free-running: the twin is
VMAS moved by an ulp before every step, with its constraint forces rounded an ulp differently
(``R.ulp_noisy_forces``), ours measured at most 2.9x (5.3x in the contact-heavy run with the
mass).  A wrong constant (joint force, rod mass, the big agent's radius, drag, collision reward)
puts ours 3 800x to 28 000x outside that band (``test_comparison_bites``).  The start distribution is compared with VMAS's resets (KS and
chi-square), and VMAS's passage centres and middle angle, which ours works out from the gap
boxes, against VMAS's own at its resets."""

import math

import numpy as np
import pytest
import torch
import vmas_reference as R

import war_envs
import war_envs.testing
from war_envs.scenarios.vmas import joint_passage as JP
from war_envs.scenarios.vmas import joint_passage_size as JPS

pytest.importorskip("vmas")

ENV, SCENARIO = "JointPassageSize-v0", "joint_passage_size"
INFO = ("pos_rew", "rot_rew", "collision_rew", "energy_rew", "passed")
OPTIONS = {"asym_package": True, "n_passages": 4, "fixed_passage": True, "collision_reward": -1.0,
           "energy_reward_coeff": 0.5, "use_vel_controller": True, "observe_joint_angle": True, "max_speed_1": 0.3,
           "random_goal_angle": True, "middle_angle_180": True, "mass_ratio": 3, "pos_shaping_factor": 2.0,
           "rot_shaping_factor": 0.5}
ROD = 0
SHAPING = ("pos_shaping_pre", "pos_shaping_post", "rot_shaping_pre")


def extra_state(vm):
    j, sc = vm.scenario.joint, vm.scenario
    return {**{k: getattr(j, k) for k in SHAPING}, "passed_mark": sc.passed.float(),
            "accum_errs": torch.stack([a.controller.accum_errs for a in vm.world.agents], 1),
            "prev_err": torch.stack([a.controller.prev_err for a in vm.world.agents], 1)}


def sync(twin, vm):
    """The twin's scenario state := VMAS's."""
    for key in SHAPING:
        setattr(twin.scenario.joint, key, getattr(vm.scenario.joint, key).clone())
    twin.scenario.passed = vm.scenario.passed.clone()
    for at, av in zip(twin.world.agents, vm.world.agents):
        at.controller.accum_errs = av.controller.accum_errs.clone()
        at.controller.prev_err = av.controller.prev_err.clone()


#: one-step twins: the rod's rotation an ulp up; every position an ulp up
TWINS = [lambda s: R.ulp_up(s, "rot", [ROD]), lambda s: R.ulp_up(s, "pos")]


def _twin_every_step(s):
    """The free-running twin's rounding: positions, velocities and the rod's rotation an ulp up."""
    return R.ulp_up(R.ulp_up(R.ulp_up(s, "rot", [ROD]), "pos"), "vel")


#: how far ours may be from VMAS, in units of VMAS's one-ulp twin's distance (plus STEP_TOL)
FACTOR = 15.0


def one_step(**kwargs):
    return R.one_step_within_vmas_spread(ENV, SCENARIO, twins=TWINS, sync=sync, extra_state=extra_state,
                                         info_keys=INFO, factor=FACTOR, **kwargs)


def episode(factor=FACTOR, **kwargs):
    return R.whole_episode_within_vmas_spread(ENV, SCENARIO, twin_start=_twin_every_step, sync=sync,
                                              twin_forces=R.ulp_noisy_forces, extra_state=extra_state,
                                              info_keys=INFO, factor=factor, **kwargs)


def at_the_wall(vm):
    """A contact-heavy start: the rod upright with its top agent just under the wall at a uniform
    x (up to the side walls), moving up and sideways: the agents strike the wall's boxes and the
    side walls (the mass too with the package)."""
    gen = torch.Generator().manual_seed(5)
    E = vm.num_envs
    sc = vm.scenario
    half = sc.joint_length / 2
    x = (torch.rand(E, generator=gen) * 2 - 1) * 0.95
    y = -0.1 - sc.agent_radius_2 + 0.02 * torch.rand(E, generator=gen) - half
    vel = torch.stack([(torch.rand(E, generator=gen) - 0.5) * 0.8, 0.3 + 0.2 * torch.rand(E, generator=gen)], 1)
    sc.joint.landmark.state.pos = torch.stack([x, y], 1)
    sc.joint.landmark.state.rot = torch.full((E, 1), torch.pi / 2)
    for side, body in zip((-1, 1), vm.world.agents):
        body.state.pos = torch.stack([x, y + side * half], 1)
    bodies = [sc.joint.landmark] + vm.world.agents
    if sc.asym_package:
        sc.mass.state.pos = torch.stack([x, y + sc.mass_position * half], 1)
        bodies.append(sc.mass)
    for body in bodies:
        body.state.vel = vel.clone()


def _contacts(vm, steps=8):
    """How many worlds got a collision penalty within ``steps`` zero-action steps."""
    hit = torch.zeros(vm.num_envs)
    for _ in range(steps):
        out = vm.step([torch.zeros(vm.num_envs, 2)] * 2)
        hit += (out[3][0]["collision_rew"] < 0).float()
    return int((hit > 0).sum())


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    one_step(continuous=continuous, steps=25, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"asym_package": True}], ids=["default", "package"])
@pytest.mark.parametrize("start", [at_the_wall, R.crowd], ids=["wall", "crowd"])
def test_one_step_contact_heavy(start, kwargs):
    one_step(steps=20, start=start, collision_reward=-1.0, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    episode(continuous=continuous, steps=100, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"asym_package": True}], ids=["default", "package"])
def test_whole_episode_contact_heavy(kwargs):
    episode(steps=40, start=at_the_wall, collision_reward=-1.0, **kwargs)


def test_float64_worlds_follow_vmas():
    """A float64 world against VMAS (float32) within VMAS's own one-ulp spread."""
    one_step(steps=10, precision="float64")
    episode(steps=40, precision="float64", **OPTIONS)


def test_contact_heavy_start_does_what_it_says():
    """at_the_wall makes agent-box and wall contacts that VMAS penalises, in most worlds."""
    for kwargs in ({}, {"asym_package": True}):
        vm = R.make_vmas(SCENARIO, 16, 0, True, collision_reward=-1.0, **kwargs)
        at_the_wall(vm)
        assert _contacts(vm) >= 10, kwargs


def test_only_the_last_body_is_checked_against_the_walls():
    """VMAS's wall loop sees its body loop's last body only (``agent_1``, the mass with the
    package): ``agent_0`` pressed into a side wall is not penalised, ``agent_1`` is; ours the
    same, from the same states."""
    for pressed, penalised in ((0, False), (1, True)):
        vm = R.make_vmas(SCENARIO, 4, 0, True, collision_reward=-1.0)
        agents = vm.world.agents
        rod = vm.scenario.joint.landmark
        x = 1 + JP.AGENT_RADIUS - agents[pressed].shape.radius  # touching the right wall
        agents[pressed].state.pos = torch.tensor([[x, -0.5]] * 4)
        agents[1 - pressed].state.pos = torch.tensor([[x - vm.scenario.joint_length, -0.5]] * 4)
        rod.state.pos = (agents[0].state.pos + agents[1].state.pos) / 2
        rod.state.rot = torch.full((4, 1), 0.0 if pressed == 1 else torch.pi)
        for body in agents + [rod]:
            body.state.vel = torch.tensor([[0.3, 0.0]] * 4)  # into the wall
        ours = R.make_ours(ENV, 4, True, collision_reward=-1.0)
        R.copy_state(vm, ours, extra_state)
        theirs = vm.step([torch.zeros(4, 2)] * 2)[3][0]["collision_rew"]
        mine = ours.step({"agents": torch.zeros(4, 2, 2)})[4]["collision_rew"][:, 0]
        assert bool((theirs < 0).all()) == penalised and bool((theirs == 0).all()) != penalised
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)


def test_comparison_bites():
    """A wrong joint force, rod mass, big agent's radius, drag or collision reward on VMAS's side
    puts ours far outside VMAS's one-ulp band, and the checked comparison fails."""
    def joint_force(vm):
        vm.world._joint_force = 450

    def rod_mass(vm):
        vm.scenario.joint.landmark.mass = 1.2

    def big_radius(vm):
        at_the_wall(vm)
        vm.world.agents[1].shape._radius = 0.11

    def drag(vm):
        vm.world._drag = 0.26

    def penalty(vm):
        at_the_wall(vm)
        vm.scenario.collision_reward = -1.1

    for start, kwargs in ((joint_force, {}), (rod_mass, {}), (big_radius, {}), (drag, {}),
                          (penalty, {"collision_reward": -1.0})):
        ratio = episode(steps=30, start=start, check=False, **kwargs)
        assert max(ratio.values()) > 1.5 * FACTOR, (start.__name__, ratio)
        with pytest.raises(AssertionError, match="JointPassageSize-v0 step"):
            episode(steps=30, start=start, **kwargs)


def _parts(state, goal_body):
    p, rot = state["pos"], state["rot"]
    return {"rod_x": p[:, ROD, 0], "rod_y": p[:, ROD, 1], "goal_x": p[:, goal_body, 0], "goal_y": p[:, goal_body, 1],
            "goal_rot": rot[:, goal_body]}


def _centres(pos, first_box):
    """VMAS's big_passage_pos, small_passage_pos, pass_center and middle_angle as ours works them
    out from the gap boxes (float32)."""
    big = (pos[:, first_box] + pos[:, first_box + 1]) / 2
    small = pos[:, first_box + 2]
    middle = torch.where(small[:, 0] > big[:, 0], torch.tensor(torch.pi), torch.tensor(0.0))
    return big, small, (big + small) / 2, middle


@pytest.mark.parametrize("kwargs", [{}, {"asym_package": True, "random_goal_angle": True, "fixed_passage": True,
                                         "n_passages": 4, "middle_angle_180": True, "pos_shaping_factor": 2.0}],
                         ids=["default", "options"])
def test_reset_distribution_matches_vmas(kwargs):
    """10 000 of our starts against 10 000 of VMAS's: KS on the rod's and goal's places (and
    the goal's angle where random), the rod upright with ``agent_1`` above in half the worlds,
    the rod at its agents' middle, the mass on it, everything below the wall or above it by the
    big agent's radius, the walls (and fixed wall boxes) exactly VMAS's, the shaping values
    VMAS's formulas of the start."""
    n = 10_000
    asym = kwargs.get("asym_package", False)
    goal_body, first_box = 1 + int(asym), 6 + int(asym)
    vm = R.make_vmas(SCENARIO, n, 0, True, **kwargs)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    ours.reset(seed=4)
    mine = ours.get_state()
    mp, tp = _parts(mine, goal_body), _parts(theirs, goal_body)
    for key in mp:
        if key == "goal_rot" and not kwargs.get("random_goal_angle", False):
            assert bool((mp[key] == torch.tensor(torch.pi)).all() and (tp[key] == torch.tensor(torch.pi)).all())
            continue
        assert R.ks_statistic(mp[key].numpy(), tp[key].numpy()) < R.ks_critical(n, n), key
    agents = len(ours.layout.bodies) - 2
    half = 0.26
    for state in (mine, theirs):
        p, rot = state["pos"], state["rot"]
        up = (rot[:, ROD] > 0).double().mean()
        assert abs(float(up) - 0.5) <= 4 * math.sqrt(0.25 / n)
        torch.testing.assert_close(rot[:, ROD].abs(), torch.full((n,), torch.pi / 2), rtol=0, atol=2e-7)
        torch.testing.assert_close(p[:, ROD], (p[:, agents] + p[:, agents + 1]) / 2, rtol=0, atol=0)
        d = p[:, agents + 1] - p[:, agents]
        torch.testing.assert_close(d[:, 1], 2 * half * torch.sign(rot[:, ROD]), rtol=0, atol=1e-6)
        if asym:
            torch.testing.assert_close(p[:, 1], p[:, ROD] + 0.75 * d / 2, rtol=0, atol=2e-6)
        assert float(p[:, agents:, 1].max()) <= -2 * JPS.BIG_RADIUS - 0.1 + 1e-6
        assert float(p[:, goal_body, 1].min()) >= 2 * JPS.BIG_RADIUS + 0.1 - 1e-6
    first_wall = goal_body + 1
    for key in ("pos", "rot"):
        torch.testing.assert_close(mine[key][:, first_wall:first_wall + 4], theirs[key][:, first_wall:first_wall + 4],
                                   rtol=0, atol=0)
    if kwargs.get("fixed_passage", False):
        torch.testing.assert_close(mine["pos"][:, first_box:agents], theirs["pos"][:, first_box:agents], rtol=0, atol=0)
    f = kwargs.get("pos_shaping_factor", 1.0)
    rod = mine["pos"][:, ROD]
    _, _, centre, middle = _centres(mine["pos"], first_box)
    torch.testing.assert_close(mine["pos_shaping_pre"], torch.linalg.vector_norm(rod - centre, dim=-1) * f,
                               rtol=0, atol=0)
    torch.testing.assert_close(mine["pos_shaping_post"],
                               torch.linalg.vector_norm(rod - mine["pos"][:, goal_body], dim=-1) * f, rtol=0, atol=0)
    if kwargs.get("middle_angle_180", False):  # the rod upright: a quarter turn from flat
        torch.testing.assert_close(mine["rot_shaping_pre"], torch.full((n,), torch.pi / 2), rtol=0, atol=1e-6)
    else:
        torch.testing.assert_close(mine["rot_shaping_pre"], -torch.cos(mine["rot"][:, ROD] - middle),
                                   rtol=0, atol=1e-6)


@pytest.mark.parametrize("n_passages", [3, 4])
def test_random_passage_map_matches_vmas(n_passages):
    """``fixed_passage=False``: the big gap's first slot and the small gap's side (chi-square
    against 3 000 of VMAS's starts), the gaps' boxes where VMAS puts them, every other box on a
    free slot in box order."""
    from scipy.stats import chi2_contingency

    n = 3000
    vm = R.make_vmas(SCENARIO, n, 0, True, n_passages=n_passages)
    ours = war_envs.make(ENV, num_envs=n, n_passages=n_passages)
    ours.reset(seed=1)
    slot_x = torch.tensor(JP.slot_x(JP.N_BOXES))

    def slots(p):
        return (p[:, 6:20, 0, None] == slot_x).float().argmax(-1)

    tables = []
    for s in (slots(ours.get_state()["pos"]), slots(R.vmas_state(vm)["pos"])):
        big, small = s[:, 0], s[:, 2]
        assert bool((s[:, 1] == big + 1).all())
        assert bool(((small == big + 4) | (small == big - 3)).all())
        if n_passages == 4:
            assert bool((s[:, 3] == small + torch.where(small > big, 1, -1)).all())
        assert bool((s.sort(dim=1).values == torch.arange(JP.N_BOXES)).all())  # every slot taken once
        assert bool((s[:, n_passages:].diff(dim=1) > 0).all())  # the other boxes in box order
        tables.append(np.bincount((big * 2 + (small > big)).numpy(), minlength=2 * JP.N_BOXES))
    table = np.stack(tables)
    seen = table.sum(0) > 0
    assert (table[0] > 0).tolist() == (table[1] > 0).tolist()
    assert chi2_contingency(table[:, seen]).pvalue > 1e-3


@pytest.mark.parametrize("n_passages", [3, 4])
def test_passage_centres_are_vmas_own(n_passages):
    """Ours works VMAS's ``big_passage_pos``, ``small_passage_pos``, ``pass_center`` and
    ``middle_angle`` out from the gap boxes' places: at VMAS's own resets (random passage maps,
    batched and of one world) those are exactly VMAS's."""
    vm = R.make_vmas(SCENARIO, 500, 0, True, n_passages=n_passages)
    for index in (None, 3, 7):
        if index is not None:
            vm.reset_at(index)
        sc = vm.scenario
        big, small, centre, middle = _centres(R.vmas_state(vm)["pos"], 6)
        torch.testing.assert_close(big, sc.big_passage_pos, rtol=0, atol=0)
        torch.testing.assert_close(small, sc.small_passage_pos, rtol=0, atol=0)
        torch.testing.assert_close(centre, sc.pass_center, rtol=0, atol=0)
        torch.testing.assert_close(middle, sc.middle_angle[:, 0], rtol=0, atol=0)
        assert 0 < int((middle > 0).sum()) < 500


def test_done_is_per_world():
    """A rod on its goal pose ends its own world's episode only, as VMAS's with one world; VMAS's
    batched ``done()`` also needs every other world's rod on its goal's position (not
    reproduced)."""
    E = 4
    ours = R.make_ours(ENV, E, True)
    ours.reset(seed=0)
    state = ours.get_state()
    p, rot = state["pos"], state["rot"]
    agents, goal_body = p.shape[1] - 2, 1
    goal, angle = p[0, goal_body].clone(), rot[0, goal_body].clone()
    d = 0.26 * torch.stack([torch.cos(angle), torch.sin(angle)])
    p[0, agents], p[0, agents + 1], p[0, ROD], rot[0, ROD] = goal - d, goal + d, goal, angle
    state["vel"].zero_()
    state["ang_vel"].zero_()
    ours.set_state(state)
    ours.step({"agents": torch.zeros(E, 2, 2)})
    assert ours.world_flags()[0].tolist() == [True, False, False, False]
    bodies = ("pos", "vel", "rot", "ang_vel")
    for worlds, done in ((1, [True]), (E, [False] * E)):
        vm = R.make_vmas(SCENARIO, worlds, 0, True)
        R.set_vmas_state(vm, {k: state[k][:worlds] for k in bodies})
        assert vm.step([torch.zeros(worlds, 2)] * 2)[2].tolist() == done


def _random_policy(step, reward_of, E, T, gen):
    ret = torch.zeros(E, dtype=torch.float64)
    for _ in range(T):
        u = torch.rand(E, 2, 2, generator=gen) * 2 - 1
        ret += reward_of(step(u)).double()
    return ret.numpy()


@pytest.mark.parametrize("kwargs", [{"collision_reward": -0.1},
                                    {"asym_package": True, "energy_reward_coeff": 0.1, "collision_reward": -0.1}],
                         ids=["default", "package"])
@pytest.mark.optimized_kernels
def test_random_policy_returns_match_vmas(kwargs):
    """A uniformly random policy's 100-step return (500 episodes, plain VMAS with its batch gate)
    within 4 standard errors."""
    E, T = 500, 100
    vm = R.make_vmas(SCENARIO, E, 7, True, gated=True, max_steps=T, **kwargs)
    theirs = _random_policy(lambda u: vm.step([u[:, 0], u[:, 1]]), lambda out: out[1][0], E, T,
                            torch.Generator().manual_seed(11))
    ours = war_envs.make(ENV, num_envs=E, autoreset_mode="disabled", max_steps=T, **kwargs)
    ours.reset(seed=12)
    mine = _random_policy(lambda u: ours.step({"agents": u}), lambda out: out[1]["agents"][:, 0], E, T,
                          torch.Generator().manual_seed(13))
    se = math.sqrt(mine.var() / E + theirs.var() / E)
    assert se > 0 and abs(mine.mean() - theirs.mean()) <= 4 * se, (mine.mean(), theirs.mean(), se)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_passages": 2}, "n_passages"), ({"n_passages": 5}, "n_passages"), ({"n_passages": 3.0}, "n_passages"),
    ({"fixed_passage": 1}, "fixed_passage"), ({"joint_length": -1.0}, "joint_length"),
    ({"mass_position": 1.5}, "mass_position"), ({"mass_ratio": 0.0}, "mass_ratio"),
    ({"joint_angle_obs_noise": 0.1}, "joint_angle_obs_noise"), ({"obs_noise": -1.0}, "obs_noise"),
    ({"use_vel_controller": "yes"}, "use_vel_controller"), ({"middle_angle_180": 1}, "middle_angle_180"),
    ({"random_start_angle": None}, "random_start_angle"), ({"max_speed_1": -1.0}, "max_speed_1"),
    ({"use_controller": True}, "use_controller"), ({"all_passed_rot": True}, "all_passed_rot"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_bodies_and_pairs_match_vmas():
    for kwargs in ({}, {"n_passages": 4, "observe_joint_angle": True}, {"asym_package": True, "fixed_passage": True}):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        assert [b.collide for b in ours.layout.bodies] == [e.collide for e in vm.world.entities]
        assert [b.radius for b in ours.layout.agents] == [a.shape.radius for a in vm.world.agents]
        w, ents = vm.world, vm.world.entities
        theirs = sorted((a, b) for a in range(len(ents)) for b in range(a + 1, len(ents))
                        if w._joints.get(frozenset({ents[a].name, ents[b].name})) is None
                        and R._collides_without_batch_gate(w, ents[a], ents[b]))
        assert sorted(tuple(sorted((a, b))) for a, b, _ in ours.layout.contact_pairs()) == theirs
        assert len(ours.joint_constraints) == len(w._joints)
        lay = ours.layout
        assert (lay.substeps, lay.joint_force, lay.collision_force, lay.drag) == (
            w._substeps, w._joint_force, w._collision_force, w._drag)


def test_observation_noise():
    vm = R.make_vmas(SCENARIO, 8, 0, True)
    ours = R.make_ours(ENV, 8, True, obs_noise=0.05)
    R.copy_state(vm, ours, extra_state)
    R.check_observation_noise(vm, ours, 0.05)


def test_joint_angle_noise_is_in_the_observation_only():
    """``joint_angle_obs_noise``: the observed rod angle is the rod's plus N(0, sigma²) (KS
    against the normal law), fresh for each agent; the rod itself is not moved."""
    sigma, E = 0.1, 500
    ours = war_envs.make(ENV, num_envs=E, observe_joint_angle=True, joint_angle_obs_noise=sigma)
    obs = ours.reset(seed=0)["agents"]
    rot = ours.get_state()["rot"][:, ROD]
    seen = torch.atan2(obs[:, :, 13], obs[:, :, 12])
    noise = torch.remainder(seen - rot[:, None] + torch.pi, 2 * torch.pi) - torch.pi
    ref = np.random.default_rng(0).normal(0.0, sigma, noise.numel())
    assert R.ks_statistic(noise.flatten().numpy(), ref) < R.ks_critical(noise.numel(), len(ref))
    assert float((noise[:, 0] != noise[:, 1]).float().mean()) > 0.99
    clean = war_envs.make(ENV, num_envs=E, observe_joint_angle=True)
    clean.reset(seed=0)
    torch.testing.assert_close(clean.get_state()["rot"], ours.get_state()["rot"], rtol=0, atol=0)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **OPTIONS)
