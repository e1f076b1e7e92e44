"""Dropout-v0 against VMAS 1.5.2's ``dropout`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state and whole free-running episodes (continuous and discrete
actions, default and non-default arguments, starts around the goal so that it is reached and
eaten), VMAS's eaten flag compared after every step, the energy reward bit for bit (torch's
summation order), reaching the goal by hand, the reset distribution, random-policy return
statistics, bad arguments, the shared API checks and the picture (the eaten goal is not drawn)."""

import math

import numpy as np
import pytest
import torch
import vmas_reference as R

import war_envs
import war_envs.testing

pytest.importorskip("vmas")

ENV, SCENARIO = "Dropout-v0", "dropout"
INFO = ("pos_rew", "energy_rew")
OPTIONS = {"n_agents": 7, "energy_coeff": 0.5, "start_same_point": True}
MANY = {"n_agents": 12, "energy_coeff": 0.1}
CASES = {"default": {}, "options": OPTIONS, "many": MANY}


def extra_state(vm):
    """VMAS's goal ``eaten`` flag (an attribute of its landmark) as our ``eaten`` [E]."""
    return {"eaten": vm.world.landmarks[0].eaten.clone()}


def near_goal(vm, seed: int = 0):
    """Every agent within 0.25 of the goal with a random velocity, and the goal already eaten in
    a quarter of the worlds: agents reach it (alone or together) during the first steps, some
    where it is eaten already."""
    gen = torch.Generator().manual_seed(seed)
    goal = vm.world.landmarks[0]
    E = vm.num_envs
    for agent in vm.world.agents:
        agent.state.pos = goal.state.pos + (torch.rand(E, 2, generator=gen) - 0.5) * 0.5
        agent.state.vel = (torch.rand(E, 2, generator=gen) - 0.5) * 1.0
    goal.eaten = torch.rand(E, generator=gen) < 0.25


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_step_from_every_state(case, continuous):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=16, steps=40, continuous=continuous,
                                extra_state=extra_state, info_keys=INFO, compare_state=True, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_step_near_the_goal(case, continuous):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=32, steps=20, continuous=continuous, start=near_goal,
                                extra_state=extra_state, info_keys=INFO, compare_state=True, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_whole_episode(case, continuous):
    R.whole_episode(ENV, SCENARIO, num_envs=16, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, compare_state=True, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_whole_episode_near_the_goal(case, continuous):
    """Free-running episodes from ``near_goal``: the goal is reached and eaten in most worlds
    (VMAS's flags, compared every step)."""
    vm, _ = R.whole_episode(ENV, SCENARIO, num_envs=32, steps=60, continuous=continuous, start=near_goal,
                            extra_state=extra_state, info_keys=INFO, compare_state=True, **CASES[case])
    assert float(extra_state(vm)["eaten"].float().mean()) > 0.5


def _torch_sums_in_lanes_of_8() -> bool:
    """Whether this torch's float32 CPU ``sum(-1)`` of 12 values adds as the kernel assumes
    (the 8-lane vector path: the 4 values past the vector first, then the lanes in order)."""
    x = torch.rand(4096, 12, generator=torch.Generator().manual_seed(0)) * 3 - 0.5
    model = torch.zeros(4096)
    for j in range(8, 12):
        model = model + x[:, j]
    for j in range(8):
        model = model + x[:, j]
    return torch.equal(x.sum(-1), model)


@pytest.mark.parametrize("n_agents", [1, 3, 4, 7, 12, 40])
@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
def test_energy_reward_is_vmas_bit_for_bit(n_agents, continuous):
    """The energy reward ``energy_coeff * -sum(|u| / sqrt(2))`` bit for bit: the same float32
    norms and torch's order of summation over the agents (which is not left to right from 5
    agents on: the check can tell)."""
    if n_agents >= 8 and not _torch_sums_in_lanes_of_8():
        pytest.skip("this torch build sums float32 rows in another order")
    E = 256
    vm = R.make_vmas(SCENARIO, E, 0, continuous, max_steps=10, n_agents=n_agents)
    ours = R.make_ours(ENV, E, continuous, max_steps=10, n_agents=n_agents)
    gen = torch.Generator().manual_seed(3)
    for t in range(3):
        R.copy_state(vm, ours, extra_state)
        acts, our_acts = R.random_actions(vm, ours, gen)
        vm_out, our_out = vm.step(acts), ours.step(our_acts)
        theirs = torch.stack([i["energy_rew"] for i in vm_out[3]], dim=1)
        assert torch.equal(our_out[4]["energy_rew"], theirs), t
        assert torch.equal(our_out[1]["agents"], torch.stack(vm_out[1], dim=1)), t
    if continuous and n_agents in (7, 12, 40):
        terms = [torch.linalg.vector_norm(a.action.u, dim=-1) / math.sqrt(2) for a in vm.world.agents]
        left_to_right = torch.zeros(E)
        for term in terms:
            left_to_right = left_to_right + term
        assert not torch.equal(0.02 * -left_to_right, theirs[:, 0])


@pytest.mark.parametrize("kwargs", [{}, {"start_same_point": True, "energy_coeff": 0.1}], ids=["default", "same"])
def test_reaching_the_goal_by_hand(kwargs):
    """Agent 1 put on the goal at rest, the others still: the first step pays 1 (and nothing
    for energy), ends the episode (VMAS's done), eats the goal (observed); the next step pays 0
    and is still done; once the agent has left, not done, the goal still eaten."""
    E = 4
    vm = R.make_vmas(SCENARIO, E, 0, True, max_steps=10, **kwargs)
    goal = vm.world.landmarks[0]
    agent = vm.world.agents[1]
    agent.state.pos = goal.state.pos + torch.tensor([0.07, 0.0])  # nearer than 0.05 + 0.03
    ours = R.make_ours(ENV, E, True, max_steps=10, **kwargs)
    R.copy_state(vm, ours, extra_state)
    still = {"agents": torch.zeros(E, 4, 2)}
    away = torch.zeros(E, 4, 2)
    away[:, 1, 0] = 1.0
    expected = [(1.0, True, still), (0.0, True, still)] + [(None, None, {"agents": away})] * 4
    for t, (pos_rew, done, acts) in enumerate(expected):
        vm_acts = [acts["agents"][:, i] for i in range(4)]
        vm_out, our_out = vm.step(vm_acts), ours.step(acts)
        R.compare_outputs(f"by hand {t}", vm, ours, vm_out, our_out, R.STEP_TOL, INFO)
        R.compare_extra_state(f"by hand {t}", vm, ours, extra_state, R.STEP_TOL)
        obs, rew, term, _, info = our_out
        assert bool((obs["agents"][..., 6] == 1).all())  # eaten, for every agent
        if pos_rew is not None:
            assert bool((rew["agents"] == pos_rew).all()) and bool((info["pos_rew"] == pos_rew).all())
            assert bool((term["agents"] == done).all()) and bool((info["reached_goals"] == float(done)).all())
    assert not bool(vm_out[2].any()) and not bool(term["agents"].any())
    assert bool(ours.get_state()["eaten"].all())
    metrics = {m.name: m for m in type(ours).episode_metrics}
    assert bool((metrics["success"].step(info) == 0).all())


def test_comparison_bites():
    """A perturbed energy coefficient, goal radius or eaten flag on VMAS's side is caught."""
    def costlier(vm):
        vm.scenario.energy_coeff = 0.021

    def bigger_goal(vm):
        near_goal(vm)
        vm.world.landmarks[0].shape._radius = 0.035

    def forgetful(vm):
        near_goal(vm)
        original = vm.scenario.reward

        def reward(agent):
            vm.world.landmarks[0].eaten[:] = False
            return original(agent)
        vm.scenario.reward = reward

    for start, what in ((costlier, "reward"), (bigger_goal, "reward|done|obs"), (forgetful, "reward|obs|eaten")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, num_envs=32, steps=30, start=start, extra_state=extra_state,
                            info_keys=INFO, compare_state=True)


def _starts(n: int, **kwargs):
    theirs = R.vmas_state(R.make_vmas(SCENARIO, n, 5, True, **kwargs))
    ours = war_envs.make(ENV, num_envs=n, **kwargs)
    ours.reset(seed=5)
    return ours.get_state(), theirs


def test_reset_distribution_matches_vmas():
    """10 000 of our worlds' starts against 10 000 of VMAS's (its spawning redraws each world
    until it is free, so a batched reset has the law of one world's): KS on every body's x and y
    and on the agent-agent and agent-goal distances; every body 0.09 apart, in [-1, 1]²; at rest,
    nothing eaten."""
    n = 10_000
    mine, theirs = _starts(n)
    crit = R.ks_critical(n, n)
    for b in range(5):
        for k in range(2):
            stat = R.ks_statistic(mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy())
            assert stat < crit, (b, k, stat)
    for label, (i, j) in {"agent0-agent1": (1, 2), "agent3-goal": (4, 0), "agent0-goal": (1, 0)}.items():
        d_mine = (mine["pos"][:, i] - mine["pos"][:, j]).norm(dim=-1).numpy()
        d_theirs = (theirs["pos"][:, i] - theirs["pos"][:, j]).norm(dim=-1).numpy()
        assert R.ks_statistic(d_mine, d_theirs) < crit, label
    p = mine["pos"]
    assert float(p.abs().max()) <= 1
    d = torch.cdist(p, p) + torch.eye(5) * 10
    assert float(d.min()) >= 0.09 - 1e-6
    assert bool((mine["vel"] == 0).all()) and not bool(mine["eaten"].any())


def test_reset_distribution_from_the_same_point():
    """``start_same_point``: every agent at the origin, the goal uniform in [-1, 1]² outside the
    0.09 disc around it (KS on its x, y and distance from the origin against VMAS's)."""
    n = 10_000
    mine, theirs = _starts(n, start_same_point=True, n_agents=3)
    assert bool((mine["pos"][:, 1:] == 0).all()) and bool((theirs["pos"][:, 1:] == 0).all())
    crit = R.ks_critical(n, n)
    for k in range(2):
        assert R.ks_statistic(mine["pos"][:, 0, k].numpy(), theirs["pos"][:, 0, k].numpy()) < crit, k
    r_mine, r_theirs = mine["pos"][:, 0].norm(dim=-1), theirs["pos"][:, 0].norm(dim=-1)
    assert R.ks_statistic(r_mine.numpy(), r_theirs.numpy()) < crit
    assert float(r_mine.min()) >= 0.09 - 1e-6 and float(mine["pos"].abs().max()) <= 1


def test_reset_ks_bites():
    """The KS check tells a spawning box 10 % smaller apart."""
    n = 10_000
    mine, theirs = _starts(n)
    assert R.ks_statistic(0.9 * mine["pos"][:, 0, 0].numpy(), theirs["pos"][:, 0, 0].numpy()) > R.ks_critical(n, n)


def _random_policy(side: str, n: int, continuous: bool, seed: int, tweak=None, **kwargs):
    """Per world the return of one 100-step episode of uniform random actions (agent 0's: the
    reward is shared), its length (to VMAS's first done) and whether the goal was reached
    (``tweak(vm)``: a change to VMAS's env first)."""
    max_steps = 100
    if side == "vmas":
        env = R.make_vmas(SCENARIO, n, seed, continuous, max_steps=max_steps, **kwargs)
        if tweak is not None:
            tweak(env)
    else:
        env = war_envs.make(ENV, num_envs=n, seed=seed, continuous_actions=continuous, max_steps=max_steps,
                            autoreset_mode="disabled", **kwargs)
        env.reset()
    n_agents = kwargs.get("n_agents", 4)
    gen = torch.Generator().manual_seed(seed)
    ret = torch.zeros(n, dtype=torch.float64)
    length = torch.zeros(n, dtype=torch.float64)
    reached = torch.zeros(n, dtype=torch.float64)
    running = torch.ones(n, dtype=torch.bool)
    for _ in range(max_steps):
        if continuous:
            u = torch.rand(n, n_agents, 2, generator=gen) * 2 - 1
        else:
            u = torch.randint(0, 9, (n, n_agents), generator=gen)
        if side == "vmas":
            _, rew, done, info = env.step([u[:, i] for i in range(u.shape[1])])
            r, pos_rew = rew[0], info[0]["pos_rew"]
        else:
            _, rew, term, trunc, info = env.step({"agents": u})
            r, pos_rew = rew["agents"][:, 0], info["pos_rew"][:, 0]
            done = term["agents"][:, 0] | trunc["agents"][:, 0]
        ret += torch.where(running, r.double(), 0.0)
        reached += torch.where(running, pos_rew.double(), 0.0)
        length += running.double()
        running &= ~done.cpu()
    return {"return": ret.numpy(), "length": length.numpy(), "reached": reached.numpy()}


def _within_4_se(ours: dict, theirs: dict) -> dict:
    out = {}
    for key, a in ours.items():
        b = theirs[key]
        se = math.sqrt(a.var() / a.size + b.var() / b.size)
        out[key] = (abs(a.mean() - b.mean()) <= 4 * se + 1e-12, a.mean(), b.mean(), se)
    return out


STAT_CASES = {"default": {}, "same_point": {"start_same_point": True, "n_agents": 2, "energy_coeff": 0.05}}


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(STAT_CASES))
@pytest.mark.optimized_kernels
def test_random_policy_statistics_match_vmas(case, continuous):
    """4 000 random-policy episodes on each side (own starts, own random actions): the mean
    return, episode length and goal-reached rate within 4 standard errors of VMAS's."""
    n = 4000
    kwargs = STAT_CASES[case]
    theirs = _random_policy("vmas", n, continuous, 7, **kwargs)
    ours = _random_policy("ours", n, continuous, 8, **kwargs)
    assert 0.01 < theirs["reached"].mean() < 0.5  # the goal is reached now and then
    for key, (ok, mine, other, se) in _within_4_se(ours, theirs).items():
        assert ok, (key, mine, other, se)


@pytest.mark.optimized_kernels
def test_random_policy_statistics_bite():
    """A 10 % larger energy coefficient, or a goal of radius 0.08 on VMAS's side, is told apart."""
    n = 4000
    ours = _random_policy("ours", n, True, 8)
    costlier = _random_policy("ours", n, True, 8, energy_coeff=0.022)
    theirs = _random_policy("vmas", n, True, 7)
    assert _within_4_se(ours, theirs)["return"][0] and not _within_4_se(costlier, theirs)["return"][0]

    def bigger_goal(vm):
        vm.world.landmarks[0].shape._radius = 0.08

    bigger = _random_policy("vmas", n, True, 7, tweak=bigger_goal)
    assert not _within_4_se(ours, bigger)["reached"][0]


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 2.0}, "n_agents"), ({"n_agents": 700}, "n_agents"),
    ({"energy_coeff": float("nan")}, "energy_coeff"), ({"energy_coeff": "0.02"}, "energy_coeff"),
    ({"start_same_point": 1}, "start_same_point"), ({"max_steps": 0}, "max_steps"),
    ({"continuous_actions": "yes"}, "continuous_actions"), ({"start_same_pt": True}, "start_same_pt"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_many_agents_from_the_same_point():
    """Without spawning room to check, ``start_same_point`` takes as many agents as asked."""
    env = war_envs.make(ENV, num_envs=2, n_agents=700, start_same_point=True)
    env.reset()
    assert bool((env.get_state()["pos"][:, 1:] == 0).all())


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_and_names_match_vmas(continuous):
    for kwargs in ({}, OPTIONS, {"n_agents": 1}):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0] == 7
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        assert [b.radius for b in ours.layout.bodies] == [e.shape.radius for e in vm.world.entities]
        assert ours.contact_pairs == []  # nothing collides
        assert ours.layout.x_semidim is vm.world.x_semidim is None


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 30, autoreset_mode="disabled")


def test_reset_clears_eaten():
    """An autoreset world starts again with the goal back."""
    env = war_envs.make(ENV, num_envs=4, max_steps=3, seed=0)
    env.reset()
    state = env.get_state()
    state["eaten"][:] = True
    env.set_state(state)
    for _ in range(3):
        env.step({"agents": torch.zeros(4, 4, 2)})
    assert not bool(env.get_state()["eaten"].any())


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, pettingzoo=False, gymnasium=False, **OPTIONS)


def test_picture_leaves_the_eaten_goal_out():
    env = war_envs.make(ENV, num_envs=1, seed=0)
    env.reset()

    def green(frame):
        return int(((frame[..., 1] > 150) & (frame[..., 0] < 100) & (frame[..., 2] < 100)).sum())

    before = env.render_frame(0, width=240, height=240)
    assert before.shape == (240, 240, 3) and before.dtype == np.uint8 and green(before) > 0
    state = env.get_state()
    state["eaten"][0] = True
    env.set_state(state)
    assert env.bodies_drawn(0) == [False] + [True] * 4
    assert green(env.render_frame(0, width=240, height=240)) == 0
