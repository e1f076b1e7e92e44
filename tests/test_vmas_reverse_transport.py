"""ReverseTransport-v0 against VMAS 1.5.2's ``reverse_transport`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state, whole free-running episodes
(continuous and discrete actions, default and non-default arguments, contact-heavy starts: agents
pressed against the package's walls from inside, into its corners, against its walls from
outside, and a crowd), the package on the goal (VMAS's float32 overlap threshold), the reset
distribution, the returns of a random and a goal-seeking policy (statistics against VMAS's), bad
arguments and the shared API checks."""

import numpy as np
import pytest
import torch
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "ReverseTransport-v0", "reverse_transport"
#: The rewards are differences of shaping values 100 x the package's goal distance (up to about
#: 100 x 2.9, float32 ulp 3.05e-5); one ulp of a shaping value is above STEP_TOL's atol (see
#: tests/test_vmas_transport.py).
REWARD_TOL = {"rtol": 1e-5, "atol": 4 * 3.05e-5}
OPTIONS = {"n_agents": 6, "package_width": 0.3, "package_length": 0.5, "package_mass": 5}
WALLS = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def extra_state(vm):
    return {"global_shaping": vm.scenario.package.global_shaping}


def _half(vm):
    shape = vm.scenario.package.shape
    return torch.tensor([shape.length / 2, shape.width / 2])


def pressing(vm):
    """Agent i pressed against wall ``i % 4`` of the package from inside (0.005 into it, at a
    random place along it), moving into it; the package moving at random."""
    gen = torch.Generator().manual_seed(2)
    package, E, half = vm.scenario.package, vm.num_envs, _half(vm)
    package.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 0.2
    for i, agent in enumerate(vm.world.agents):
        direction = WALLS[i % 4]
        along = (torch.rand(E, 1, generator=gen) - 0.5) * 1.6 * (half.flip(0) - 0.03) * direction.flip(0).abs()
        agent.state.pos = package.state.pos + direction * (half - 0.03 + 0.005) + along
        agent.state.vel = direction.expand(E, 2) * 0.5 * torch.rand(E, 1, generator=gen)


def corners(vm):
    """Agent i in corner ``i % 4`` of the package (0.004 into both walls; every other agent
    jittered a little, the others exactly on the corner's diagonal, so agents sharing a corner
    overlap), moving into it."""
    gen = torch.Generator().manual_seed(3)
    package, E, half = vm.scenario.package, vm.num_envs, _half(vm)
    signs = torch.tensor([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    for i, agent in enumerate(vm.world.agents):
        s = signs[i % 4]
        jitter = (torch.rand(E, 2, generator=gen) - 0.5) * 0.01 * (i % 2)
        agent.state.pos = package.state.pos + s * (half - 0.03 + 0.004) + jitter
        agent.state.vel = s * 0.4 * torch.rand(E, 1, generator=gen)


def outside(vm):
    """Half the agents pressed against the package's walls from outside (0.005 into them),
    moving into them; the others inside as VMAS spawned them."""
    gen = torch.Generator().manual_seed(4)
    package, E, half = vm.scenario.package, vm.num_envs, _half(vm)
    for i, agent in enumerate(vm.world.agents):
        if i % 2:
            continue
        direction = WALLS[i % 4]
        along = (torch.rand(E, 1, generator=gen) - 0.5) * 2 * half.flip(0) * direction.flip(0).abs()
        agent.state.pos = package.state.pos + direction * (half + 0.03 - 0.005) + along
        agent.state.vel = -direction.expand(E, 2) * 0.5 * torch.rand(E, 1, generator=gen)


STARTS = [pressing, corners, outside, R.crowd]
START_IDS = ["pressing", "corners", "outside", "crowd"]


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=40,
                                reward_tol=REWARD_TOL, compare_state=True, **kwargs)


@pytest.mark.parametrize("start", STARTS, ids=START_IDS)
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_contact_heavy(start, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, extra_state=extra_state, steps=30, start=start,
                                reward_tol=REWARD_TOL, **kwargs)


def vmas_twin_horizon(kwargs, continuous: bool, steps: int, seed: int = 0) -> int:
    """How many steps VMAS's own episode (``whole_episode``'s: its start, its random actions)
    and a twin of it, every agent's start moved by one float32 ulp, stay within the episode
    tolerance (``steps`` if they do to the end)."""
    vm = R.make_vmas(SCENARIO, 8, seed, continuous, max_steps=steps, **kwargs)
    twin = R.make_vmas(SCENARIO, 8, seed, continuous, max_steps=steps, **kwargs)
    state = R.vmas_state(vm)
    state["pos"][:, 2:] = torch.from_numpy(np.nextafter(state["pos"][:, 2:].numpy(), np.float32(10)))
    R.set_vmas_state(twin, state)
    twin.scenario.package.global_shaping = vm.scenario.package.global_shaping.clone()
    ours = R.make_ours(ENV, 8, continuous, max_steps=steps, **kwargs)  # (random_actions' groups)
    gen = torch.Generator().manual_seed(seed + 1)
    for t in range(steps):
        acts, _ = R.random_actions(vm, ours, gen)
        vm.step(acts)
        twin.step(acts)
        a, b = R.vmas_state(vm), R.vmas_state(twin)
        if not all(torch.allclose(a[k], b[k], **R.EPISODE_TOL) for k in ("pos", "vel")):
            return t
    return steps


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    """100 free-running steps, or as many as VMAS's own 1-ulp twin stays within the episode
    tolerance (``vmas_twin_horizon``): six agents in a light package (OPTIONS) are chaotic, VMAS
    itself drifting apart from a 1-ulp twin after 33 (discrete) / 51 (continuous) steps
    (measured; ours follows VMAS longer), and our last-ulp differences (exp / log1p in the
    contact force) grow the same way.  Every step is checked at the tight tolerance by the
    one-step tests."""
    steps = vmas_twin_horizon(kwargs, continuous, 100)
    assert steps >= 30 and (steps == 100 or kwargs)
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=steps,
                    compare_state=True, **kwargs)


def test_light_package_is_chaotic_in_vmas_itself():
    """The reason for ``test_whole_episode``'s horizon: VMAS run twice from starts one ulp apart
    leaves the episode tolerance within 100 steps with OPTIONS, not with the defaults."""
    assert vmas_twin_horizon(OPTIONS, False, 100) < 100
    assert vmas_twin_horizon({}, True, 100) == 100


@pytest.mark.parametrize("start", STARTS, ids=START_IDS)
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_episode_contact_heavy(start, kwargs):
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=60, start=start, **kwargs)


def test_contacts_push_the_package():
    """The starts do make contacts: VMAS's package is pushed (from inside and from outside) and
    its agents are pushed back by the walls; ours with them (the episode is compared)."""
    for start in (pressing, outside):
        vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=1)
        start(vm)
        before = vm.scenario.package.state.vel.clone()
        vm.step([torch.zeros(8, 2)] * 4)
        assert float((vm.scenario.package.state.vel - before * 0.75).norm(dim=1).min()) > 1e-4, start.__name__
    vm, _ = R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=10, start=pressing)
    half = _half(vm)
    offsets = torch.stack([a.state.pos - vm.scenario.package.state.pos for a in vm.world.agents], 1)
    assert bool((offsets.abs() < half).all())  # the walls keep the agents inside


def test_comparison_bites():
    """A perturbed package mass, box size, collision force or shaping factor on VMAS's side is
    caught."""
    def heavier(vm):
        pressing(vm)
        vm.scenario.package.mass = 55

    def wider(vm):
        pressing(vm)
        vm.scenario.package.shape._width = 0.61

    def stiffer(vm):
        pressing(vm)
        vm.world._collision_force = 501

    def shaping(vm):
        pressing(vm)
        vm.scenario.shaping_factor = 101

    for start, what in ((heavier, "obs|vel|pos"), (wider, "obs|vel|pos"), (stiffer, "obs|vel|pos"),
                        (shaping, "reward")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, start=start)


def _at_rest(vm, package_pos, goal_pos):
    """Package and goal at the given places (one row per world), the package axis-aligned and
    at rest, the agents at rest inside it, apart."""
    package, goal = vm.scenario.package, vm.world.landmarks[0]
    package.state.pos = package_pos.clone()
    package.state.vel = torch.zeros_like(package_pos)
    goal.state.pos = goal_pos.clone()
    for i, agent in enumerate(vm.world.agents):
        agent.state.pos = package_pos + torch.tensor([0.1 * (i % 2) - 0.05, 0.1 * (i // 2) - 0.05])
        agent.state.vel = torch.zeros_like(package_pos)


def test_on_goal_uses_vmas_float32_threshold():
    """VMAS's ``is_overlapping`` compares the goal's distance to the box with ``0.09 +
    LINE_MIN_DIST`` summed in Python floats and rounded to float32 (0.096666664), one ulp below
    the float32 sum (0.09666667).  A goal at exactly 0.096666664 from the wall is off the goal
    in VMAS (and here), one float below it is on: done, the reward and ``reached_goals`` follow."""
    f = np.float32
    edge = f(0.3) + f(0.09 + 4 / 6e2)  # the goal's x, its distance to the +x wall exactly 0.096666664
    assert f(edge - f(0.3)) == f(0.09 + 4 / 6e2) < f(0.09) + f(4 / 6e2)
    inside = np.nextafter(edge, f(0))
    vm = R.make_vmas(SCENARIO, 2, 0, True, max_steps=5)
    goal_pos = torch.tensor([[float(edge), 0.0], [float(inside), 0.0]])
    _at_rest(vm, torch.zeros(2, 2), goal_pos)
    ours = R.make_ours(ENV, 2, True, max_steps=5)
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(2, 2)] * 4)
    our_out = ours.step({"agents": torch.zeros(2, 4, 2)})
    R.compare_outputs("threshold", vm, ours, vm_out, our_out, R.STEP_TOL, reward_tol=REWARD_TOL)
    assert vm_out[2].tolist() == [False, True]
    assert our_out[4]["reached_goals"].tolist() == [0.0, 1.0]
    assert ours.get_state()["pos"][:, 1].abs().max() == 0  # the package did not move


def test_package_on_the_goal():
    """The package moved onto the goal in half the worlds: VMAS's done there, its reward 0 there
    (the shaping value still updated, so the next step's reward off the goal counts from it);
    our ``reached_goals`` and ``dist_to_goal``; then free steps."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=20)
    on = torch.arange(8) % 2 == 0
    goal = vm.world.landmarks[0]
    package = vm.scenario.package
    package.state.pos = torch.where(on[:, None], goal.state.pos + torch.tensor([0.2, -0.1]), package.state.pos)
    ours = R.make_ours(ENV, 8, True, max_steps=20)
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(8, 2)] * 4)
    our_out = ours.step({"agents": torch.zeros(8, 4, 2)})
    R.compare_outputs("on goal", vm, ours, vm_out, our_out, R.STEP_TOL, reward_tol=REWARD_TOL)
    assert torch.equal(vm_out[2], on)
    assert bool((our_out[1]["agents"][on] == 0).all())
    assert torch.equal(our_out[4]["reached_goals"], on.float())
    dist = (package.state.pos - goal.state.pos).norm(dim=1)
    torch.testing.assert_close(our_out[4]["dist_to_goal"], dist)
    R.compare_extra_state("on goal", vm, ours, extra_state, R.STEP_TOL)
    gen = torch.Generator().manual_seed(5)
    for t in range(10):
        acts, ours_acts = R.random_actions(vm, ours, gen)
        vm_out = vm.step(acts)
        our_out = ours.step(ours_acts)
        R.compare_outputs(f"on goal, step {t}", vm, ours, vm_out, our_out, R.EPISODE_TOL)


def test_reset_distribution_matches_vmas():
    """10 000 of our worlds' starts against 10 000 of VMAS's: KS on the package's and the goal's
    coordinates, every agent's offset from the package, and distances; the bounds; the shaping
    value."""
    n = 10_000
    kwargs = {"n_agents": 3, "package_length": 0.5, "package_width": 0.3}
    vm = R.make_vmas(SCENARIO, n, 0, True, **kwargs)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    ours.reset(seed=4)
    mine = ours.get_state()
    for state in (mine, theirs):
        p = state["pos"]
        state["offset"] = p[:, 2:] - p[:, 1:2]
        state["package_goal"] = (p[:, 1] - p[:, 0]).norm(dim=-1)
        state["agent_agent"] = (p[:, 2] - p[:, 3]).norm(dim=-1)
        assert float(p[:, :2].abs().max()) <= 1
        # (offsets recomputed from float32 positions: within an ulp of the bounds)
        assert float(state["offset"][..., 0].abs().max()) <= 0.22 + 1e-6
        assert float(state["offset"][..., 1].abs().max()) <= 0.12 + 1e-6
        assert float(state["offset"][..., 0].abs().max()) > 0.219 and float(state["offset"][..., 1].abs().max()) > 0.119
        for key in ("vel", "rot", "ang_vel"):
            assert not bool(state[key].any())
    for key in ("package_goal", "agent_agent"):
        assert R.ks_statistic(mine[key].numpy(), theirs[key].numpy()) < R.ks_critical(n, n), key
    for k in range(2):
        for b in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
        for i in range(3):
            a, c = mine["offset"][:, i, k].numpy(), theirs["offset"][:, i, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (i, k)
    torch.testing.assert_close(mine["global_shaping"], (mine["pos"][:, 1] - mine["pos"][:, 0]).norm(dim=-1) * 100)
    torch.testing.assert_close(vm.scenario.package.global_shaping, theirs["package_goal"] * 100)
    # the comparison bites: a package drawn in [-0.9, 0.9]² instead is caught
    shrunk = mine["pos"][:, 1, 0].numpy() * 0.9
    assert R.ks_statistic(shrunk, theirs["pos"][:, 1, 0].numpy()) > R.ks_critical(n, n)


def _goal_seeking(obs: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A noisy policy that pushes towards the goal: ``0.6`` times the unit vector from the package
    to the goal (observation ``[8:10]`` is package - goal) plus U(-0.4, 0.4)² noise."""
    to_goal = -obs[..., 8:10]
    to_goal = to_goal / to_goal.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    return 0.6 * to_goal + (torch.rand(to_goal.shape, generator=gen) - 0.5) * 0.8


def _episode_returns(env, n: int, steps: int, policy: str, continuous: bool, seed: int, vmas_side: bool):
    """Per world of ``env`` (VMAS's, or ours: ``vmas_side``): the sum of rewards up to and
    including the first done (VMAS's ``done()``, not the horizon) under ``policy`` ("random":
    uniform over the action space; "goal": ``_goal_seeking``), and whether a done came."""
    gen = torch.Generator().manual_seed(seed)
    total, done_seen = torch.zeros(n, dtype=torch.float64), torch.zeros(n, dtype=torch.bool)
    if vmas_side:
        obs = torch.stack(env.reset(), dim=1)
        n_agents, n_actions = len(env.agents), env.action_space[0].n if not continuous else None
    else:
        obs = env.reset(seed=seed)["agents"]
        n_agents, n_actions = obs.shape[1], env.groups["agents"].action_space.n if not continuous else None
    for _ in range(steps):
        if policy == "random":
            acts = (torch.rand(n, n_agents, 2, generator=gen) * 2 - 1 if continuous
                    else torch.randint(0, n_actions, (n, n_agents), generator=gen))
        else:
            acts = _goal_seeking(obs, gen)
        if vmas_side:
            out = env.step(list(acts.unbind(1)))
            obs, rew, done = torch.stack(out[0], dim=1), out[1][0], env.scenario.done().clone()
        else:
            out = env.step({"agents": acts})
            obs, rew, done = out[0]["agents"], out[1]["agents"][:, 0], env.world_flags()[0]
        total += torch.where(done_seen, 0.0, rew.double())
        done_seen |= done
    return total, done_seen


def _compare_returns(mine, mine_done, theirs, theirs_done, n):
    se = float(np.sqrt(float(theirs.var()) / n + float(mine.var()) / n))
    assert abs(float(mine.mean() - theirs.mean())) < 4.5 * se, ("mean return", float(mine.mean()),
                                                                 float(theirs.mean()), se)
    p, q = float(mine_done.double().mean()), float(theirs_done.double().mean())
    assert abs(p - q) < 4.5 * np.sqrt((p * (1 - p) + q * (1 - q)) / n), ("success rate", p, q)
    # the spread (a standard deviation's relative standard error here: ~2-5 %) and the whole law
    assert abs(float(mine.std()) / float(theirs.std()) - 1) < 0.15, ("std", float(mine.std()), float(theirs.std()))
    assert R.ks_statistic(mine.numpy(), theirs.numpy()) < R.ks_critical(n, n), "returns' KS"


POLICIES = [("random", True, {}), ("random", False, OPTIONS), ("goal", True, {}), ("goal", True, OPTIONS)]


@pytest.mark.parametrize("policy,continuous,kwargs", POLICIES,
                         ids=["random-continuous", "random-discrete-options", "goal", "goal-options"])
@pytest.mark.optimized_kernels
def test_policy_returns_match_vmas(policy, continuous, kwargs):
    """2 000 episodes of 100 steps on each side (independent starts and random numbers, plain
    VMAS with its batch gate), a uniform random policy or a noisy goal-seeking one: the mean
    return (up to the first done) and the success rate agree within 4.5 combined standard errors,
    the returns' spread within 15 % and their law by a KS test."""
    n, steps = 2000, 100
    vm = R.make_vmas(SCENARIO, n, 7, continuous, gated=True, max_steps=steps, **kwargs)
    ours = R.make_ours(ENV, n, continuous, max_steps=steps, **kwargs)
    theirs, theirs_done = _episode_returns(vm, n, steps, policy, continuous, 9, True)
    mine, mine_done = _episode_returns(ours, n, steps, policy, continuous, 10, False)
    assert 0 < float(theirs_done.double().mean()) < 1
    if policy == "goal":  # the package does get pushed towards the goal (random: mean return ~0)
        assert float(theirs.mean()) > 3
    _compare_returns(mine, mine_done, theirs, theirs_done, n)


@pytest.mark.optimized_kernels
def test_return_comparison_bites():
    """The goal-seeking comparison catches a 10 % heavier package on our side."""
    n, steps = 2000, 100
    vm = R.make_vmas(SCENARIO, n, 7, True, gated=True, max_steps=steps)
    ours = R.make_ours(ENV, n, True, max_steps=steps, package_mass=55)
    theirs, theirs_done = _episode_returns(vm, n, steps, "goal", True, 9, True)
    mine, mine_done = _episode_returns(ours, n, steps, "goal", True, 10, False)
    with pytest.raises(AssertionError):
        _compare_returns(mine, mine_done, theirs, theirs_done, n)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 2.0}, "n_agents"),
    ({"package_width": -0.1}, "package_width"), ({"package_length": 0}, "package_length"),
    ({"package_length": 0.05}, "package_length"), ({"package_width": 0.059}, "package_width"),
    ({"package_mass": "heavy"}, "package_mass"), ({"package_mass": 0}, "package_mass"),
    ({"max_steps": 0}, "max_steps"), ({"n_packages": 2}, "n_packages"), ({"shaping_factor": 10}, "shaping_factor"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_smallest_package_as_vmas():
    """A package exactly 0.06 wide and long (the smallest VMAS spawns in: every agent at its
    centre) is accepted, as VMAS accepts it, and runs as VMAS's."""
    kwargs = {"package_width": 0.06, "package_length": 0.06, "n_agents": 2}
    vm = R.make_vmas(SCENARIO, 4, 0, True, **kwargs)
    state = R.vmas_state(vm)
    torch.testing.assert_close(state["pos"][:, 2], state["pos"][:, 1], rtol=0, atol=0)
    env = war_envs.make(ENV, num_envs=4, seed=0, **kwargs)
    env.reset()
    pos = env.get_state()["pos"]
    assert torch.equal(pos[:, 2], pos[:, 1]) and torch.equal(pos[:, 3], pos[:, 1])
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, num_envs=4, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, OPTIONS):
        for continuous in (True, False):
            vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
            ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
            spec = ours.groups["agents"]
            assert spec.agents == tuple(a.name for a in vm.agents)
            assert spec.obs_dim == vm.observation_space[0].shape[0] == 10
            if continuous:
                np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
            else:
                assert spec.action_space.n == vm.action_space[0].n == 9
            assert [ours.body_index(e.name) for e in vm.world.entities] == list(range(len(vm.world.entities)))
            lay, world = ours.layout, vm.world
            assert (lay.substeps, lay.collision_force, lay.contact_margin, lay.dt, lay.drag) == (
                world._substeps, world._collision_force, world._contact_margin, world._dt, world._drag)
            assert lay.x_semidim is world.x_semidim is None and lay.y_semidim is world.y_semidim is None
            for body, entity in zip(lay.bodies, world.entities):
                assert (body.movable, body.rotatable, body.collide, body.mass) == (
                    entity.movable, entity.rotatable, entity.collide, entity.mass), body.name
            package = world.landmarks[1]
            assert lay.bodies[1].hollow is package.shape.hollow is True
            assert (lay.bodies[1].length, lay.bodies[1].width) == (package.shape.length, package.shape.width)


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
    assert red.sum() > 20  # the package's outline
