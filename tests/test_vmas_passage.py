"""Passage-v0 against VMAS 1.5.2's ``passage`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state, whole free-running episodes (continuous and discrete
actions, default and non-default arguments, a crowd against the wall), the reset distribution,
bad arguments and the shared API checks."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Passage-v0", "passage"
N_AGENTS, N_BOXES = 5, 20
#: The rewards are differences of shaping values 100 x goal distance (up to 100 x 2.83 = 283,
#: float32 ulp 3.05e-5).  VMAS's distance is torch's vector_norm, which on this CPU build is
#: sqrt(fma(y, y, x * x)) (the FMA contraction of ATen's scalar tail); ours rounds x * x + y * y
#: twice, one ulp apart in ~20 % of cases, so one agent's reward can differ by an ulp of its
#: shaping and the shared reward (a sum over the 5 agents) by 5: measured 1 and 2 ulps.  The
#: positions, velocities and observations keep the tight tolerance.
REWARD_TOL = dict(rtol=1e-5, atol=5 * 3.05e-5)


def extra_state(vm):
    return {"global_shaping": torch.stack([a.global_shaping for a in vm.world.agents], dim=1)}


def at_the_wall(vm):
    """A contact-heavy start: the formation pushed up against the wall (the boxes' bottom edge is
    at y = -0.1), agents overlapping boxes and each other, moving up."""
    gen = torch.Generator().manual_seed(2)
    for agent in vm.world.agents:
        pos = agent.state.pos.clone()
        pos[:, 1] = -0.1 + 0.06 * (torch.rand(vm.num_envs, generator=gen) - 0.5)
        pos[:, 0] = pos[:, 0] * 0.3
        agent.state.pos = pos
        agent.state.vel = torch.stack([0.2 * (torch.rand(vm.num_envs, generator=gen) - 0.5),
                                       torch.full((vm.num_envs,), 0.3)], dim=1)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"n_passages": 3, "shared_reward": True}], ids=["default", "options"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=40,
                                reward_tol=REWARD_TOL, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"n_passages": 2, "shared_reward": True}], ids=["default", "options"])
def test_one_step_at_the_wall(kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, extra_state=extra_state, steps=30, start=at_the_wall,
                                reward_tol=REWARD_TOL, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"n_passages": 4, "shared_reward": True}], ids=["default", "options"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, extra_state=extra_state, steps=100, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"shared_reward": True, "n_passages": 20}], ids=["default", "options"])
def test_whole_episode_at_the_wall(kwargs):
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=60, start=at_the_wall, **kwargs)


def test_whole_episode_crowd():
    R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=60, start=R.crowd, shared_reward=True)


def test_comparison_bites():
    """A perturbed shaping factor or box size on VMAS's side is caught."""
    def shaping(vm):
        vm.scenario.shaping_factor = 101

    def wider_boxes(vm):
        at_the_wall(vm)
        for box in vm.world.landmarks[N_AGENTS:]:
            box.shape._width = 0.21

    for start, what in ((shaping, "reward"), (wider_boxes, "obs|vel|pos|reward")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, extra_state=extra_state, steps=20, start=start)


def test_goals_reached_end_the_episode():
    """Agents put next to their goals (within half their radius) at rest: VMAS's done, our
    termination and ``reached_goals``."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    for agent in vm.world.agents:
        agent.state.pos = agent.goal.state.pos.clone() + 0.005
        agent.state.vel = torch.zeros_like(agent.state.vel)
        agent.global_shaping = torch.linalg.vector_norm(agent.state.pos - agent.goal.state.pos, dim=1) * 100
    ours = R.make_ours(ENV, 8, True, max_steps=5)
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(8, 2)] * N_AGENTS)
    our_out = ours.step({"agents": torch.zeros(8, N_AGENTS, 2)})
    R.compare_outputs("on goals", vm, ours, vm_out, our_out, R.STEP_TOL, reward_tol=REWARD_TOL)
    assert bool(vm_out[2].all())
    assert bool(our_out[4]["reached_goals"].all()) and bool(ours.world_flags()[0].all())


def _slots(pos: torch.Tensor, centre: torch.Tensor, spacing: float = 0.1) -> torch.Tensor:
    """Each body's formation slot (0: +x, 1: +y, 2: -x, 3: -y, 4: centre) from its offset."""
    off = torch.round((pos - centre[:, None]) / spacing).long()
    codes = {(1, 0): 0, (0, 1): 1, (-1, 0): 2, (0, -1): 3, (0, 0): 4}
    return torch.tensor([[codes[tuple(o)] for o in row.tolist()] for row in off])


def _chi2_same(a: np.ndarray, b: np.ndarray, k: int) -> None:
    """Two samples of a k-valued variable have the same law (chi-square, level 1e-3)."""
    from scipy.stats import chi2_contingency

    table = np.stack([np.bincount(a, minlength=k), np.bincount(b, minlength=k)])
    assert chi2_contingency(table).pvalue > 1e-3, table


def test_reset_distribution_matches_vmas():
    """10 000 of our worlds' starts against 10 000 of VMAS's per-world resets (``reset_world_at(i)``):
    KS on the formations' centres, chi-square on which slot each agent takes (its goal the same
    slot) and where each box goes; the boxes exactly on VMAS's wall slots."""
    n = 10_000
    vm = R.make_vmas(SCENARIO, n, 0, True, n_passages=3)
    for i in range(n):
        vm.scenario.reset_world_at(i)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, n_passages=3)
    ours.reset(seed=4)
    mine = ours.get_state()
    L = N_AGENTS + N_BOXES
    for state in (mine, theirs):
        goals, agents = state["pos"][:, :N_AGENTS], state["pos"][:, L:]
        state["agent_centre"], state["goal_centre"] = agents.mean(1), goals.mean(1)
        state["agent_slot"] = _slots(agents, state["agent_centre"])
        state["goal_slot"] = _slots(goals, state["goal_centre"])
        state["box_slot"] = torch.round((state["pos"][:, N_AGENTS:L, 0] + 1 + 0.03333 - 0.103 / 2) / 0.103).long()
    for key in ("agent_centre", "goal_centre"):
        for k in range(2):
            a, c = mine[key][:, k].numpy(), theirs[key][:, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (key, k)
    for state in (mine, theirs):
        assert torch.equal(state["agent_slot"], state["goal_slot"])
        assert torch.equal(torch.sort(state["agent_slot"], 1).values, torch.arange(5).expand(n, 5))
        assert torch.equal(torch.sort(state["box_slot"], 1).values, torch.arange(N_BOXES).expand(n, N_BOXES))
    for k in range(N_AGENTS):
        _chi2_same(mine["agent_slot"][:, k].numpy(), theirs["agent_slot"][:, k].numpy(), 5)
    for k in (0, 1, 2, 7):  # the gaps and a wall box
        _chi2_same(mine["box_slot"][:, k].numpy(), theirs["box_slot"][:, k].numpy(), N_BOXES)
    # the boxes lie exactly on VMAS's float32 slots; the agents and goals on VMAS's float32 offsets
    slots = torch.sort(theirs["pos"][0, N_AGENTS:L, 0]).values
    torch.testing.assert_close(torch.sort(mine["pos"][:, N_AGENTS:L, 0], 1).values, slots.expand(n, N_BOXES),
                               rtol=0, atol=0)
    assert bool((mine["pos"][:, N_AGENTS:L, 1] == 0).all())
    torch.testing.assert_close(mine["global_shaping"],
                               torch.linalg.vector_norm(mine["pos"][:, L:] - mine["pos"][:, :N_AGENTS], dim=-1) * 100)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_passages": 0}, "n_passages"), ({"n_passages": 21}, "n_passages"), ({"n_passages": 2.0}, "n_passages"),
    ({"shared_reward": 1}, "shared_reward"), ({"max_steps": -3}, "max_steps"),
    ({"continuous_actions": "no"}, "continuous_actions"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, {"n_passages": 5}):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert ours.groups["agents"].agents == tuple(a.name for a in vm.agents)
        assert ours.groups["agents"].obs_dim == vm.observation_space[0].shape[0]
        np.testing.assert_array_equal(ours.groups["agents"].action_space.high, vm.action_space[0].high)
        assert ours.body_index("passage 0") == N_AGENTS and ours.body_index("agent_0") == N_AGENTS + N_BOXES


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 20, n_passages=2)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, n_passages=4, shared_reward=True, continuous_actions=False, pettingzoo=False,
                               gymnasium=False)


def test_picture_leaves_the_gaps_out():
    """The gap boxes are not drawn (VMAS's ``is_rendering``): more gaps, less red wall."""
    red = []
    for n in (1, 10):
        env = war_envs.make(ENV, num_envs=1, seed=0, n_passages=n)
        env.reset()
        frame = env.render_frame(0, width=240, height=240)
        assert frame.shape == (240, 240, 3) and frame.dtype == np.uint8
        red.append(int(((frame[..., 0] > 150) & (frame[..., 1] < 100)).sum()))
    assert red[1] < 0.6 * red[0]
