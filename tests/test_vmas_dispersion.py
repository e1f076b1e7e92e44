"""Dispersion-v0 against VMAS 1.5.2's ``dispersion`` in the same process
(tests/vmas_reference.py): one step from every recorded VMAS state, whole free-running episodes
(continuous and discrete actions, default and non-default arguments, food piled at the agents'
start so that several agents share a piece), VMAS's eaten flags compared after every step, the
end of the episode when all is eaten, the reset distribution, bad arguments, the shared API
checks and the picture (eaten food is not drawn)."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Dispersion-v0", "dispersion"
OPTIONS = {"n_agents": 3, "n_food": 6, "share_reward": True, "penalise_by_time": True, "food_radius": 0.1,
           "pos_range": 0.5}
PER_AGENT = {"n_agents": 5, "n_food": 3, "penalise_by_time": True, "food_radius": 0.08}


def extra_state(vm):
    """VMAS's per-food ``eaten`` flags (attributes of its landmarks) as our ``eaten`` [E, n_food]."""
    return {"eaten": torch.stack([food.eaten for food in vm.world.landmarks], dim=1)}


def piled(vm):
    """The food pulled close to the origin, where every agent starts: several agents on a piece
    at once (the 1 / n shares) and pieces eaten on the same step."""
    for food in vm.world.landmarks:
        food.state.pos = food.state.pos * 0.08


def scattered_agents(vm):
    """Food near the origin, agents spread over it with random velocities."""
    piled(vm)
    gen = torch.Generator().manual_seed(1)
    for agent in vm.world.agents:
        agent.state.pos = (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.4
        agent.state.vel = (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.5


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, PER_AGENT], ids=["default", "shared", "per_agent"])
def test_one_step_from_every_state(continuous, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, continuous=continuous, steps=30, extra_state=extra_state,
                                compare_state=True, **kwargs)


@pytest.mark.parametrize("start", [piled, scattered_agents], ids=["piled", "scattered"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, PER_AGENT], ids=["default", "shared", "per_agent"])
def test_one_step_crowded_food(start, kwargs):
    R.one_step_from_every_state(ENV, SCENARIO, steps=15, start=start, extra_state=extra_state, compare_state=True,
                                **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS, PER_AGENT], ids=["default", "shared", "per_agent"])
def test_whole_episode(continuous, kwargs):
    R.whole_episode(ENV, SCENARIO, continuous=continuous, steps=100, extra_state=extra_state, compare_state=True,
                    **kwargs)


@pytest.mark.parametrize("start", [piled, scattered_agents], ids=["piled", "scattered"])
def test_whole_episode_crowded_food(start):
    vm, _ = R.whole_episode(ENV, SCENARIO, steps=60, start=start, extra_state=extra_state, compare_state=True,
                            **PER_AGENT)
    assert float(extra_state(vm)["eaten"].float().mean()) > 0.5


def test_shares_and_eating_by_hand():
    """Two agents on food 0, one on food 1, none on 2 and 3: per-agent rewards 1/2, 1/2, 1, 0;
    shared: 2 each; the flags and the fraction eaten; the eaten food pays nothing the next step
    (penalise_by_time: -0.01 instead of 0)."""
    for kwargs, first, second in (({}, [0.5, 0.5, 1.0, 0.0], [0.0] * 4),
                                  ({"share_reward": True}, [2.0] * 4, [0.0] * 4),
                                  ({"penalise_by_time": True}, [0.5, 0.5, 1.0, -0.01], [-0.01] * 4)):
        vm = R.make_vmas(SCENARIO, 2, 0, True, max_steps=5, **kwargs)
        food = vm.world.landmarks
        for k, p in enumerate(([0.5, 0.5], [-0.5, 0.5], [0.9, -0.9], [-0.9, -0.9])):
            food[k].state.pos = torch.tensor([p, p])
        for a, p in zip(vm.world.agents, ([0.5, 0.5], [0.52, 0.5], [-0.5, 0.5], [0.0, 0.0])):
            a.state.pos = torch.tensor([p, p])
        ours = R.make_ours(ENV, 2, True, max_steps=5, **kwargs)
        R.copy_state(vm, ours, extra_state)
        zero = {"agents": torch.zeros(2, 4, 2)}
        for expected in (first, second):
            vm_out = vm.step([torch.zeros(2, 2)] * 4)
            our_out = ours.step(zero)
            R.compare_outputs("by hand", vm, ours, vm_out, our_out, R.STEP_TOL)
            R.compare_extra_state("by hand", vm, ours, extra_state, R.STEP_TOL)
            torch.testing.assert_close(our_out[1]["agents"], torch.tensor([expected, expected]))
        assert ours.get_state()["eaten"].tolist() == [[True, True, False, False]] * 2
        torch.testing.assert_close(our_out[4]["food_eaten"], torch.tensor([0.5, 0.5]))
        assert not bool(ours.world_flags()[0].any())


def test_all_eaten_ends_the_episode():
    """Every food under an agent: VMAS's done, our termination and ``all_eaten``, and the
    episode metrics (the fraction eaten, success)."""
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=5)
    for agent, food in zip(vm.world.agents, vm.world.landmarks):
        agent.state.pos = food.state.pos.clone() + 0.01
    ours = R.make_ours(ENV, 8, True, max_steps=5)
    R.copy_state(vm, ours, extra_state)
    vm_out = vm.step([torch.zeros(8, 2)] * 4)
    our_out = ours.step({"agents": torch.zeros(8, 4, 2)})
    R.compare_outputs("all eaten", vm, ours, vm_out, our_out, R.STEP_TOL)
    assert bool(vm_out[2].all()) and bool(ours.world_flags()[0].all())
    assert bool((our_out[4]["all_eaten"] == 1).all()) and bool((our_out[4]["food_eaten"] == 1).all())
    metrics = {m.name: m for m in type(ours).episode_metrics}
    assert bool((metrics["success"].step(our_out[4]) == 1).all())
    assert bool((metrics["food_eaten"].step(our_out[4]) == 1).all())


def test_comparison_bites():
    """A perturbed food radius, pos_range or sharing on VMAS's side is caught."""
    def bigger_food(vm):
        piled(vm)
        for food in vm.world.landmarks:
            food.shape._radius = 0.06

    def shared(vm):
        piled(vm)
        vm.scenario.share_reward = True

    def smaller_world(vm):
        vm.world._x_semidim = 0.2
        vm.world._y_semidim = 0.2

    for start, what in ((bigger_food, "reward|obs|eaten"), (shared, "reward"), (smaller_world, "obs|pos|vel")):
        with pytest.raises(AssertionError, match=what):
            R.whole_episode(ENV, SCENARIO, steps=30, start=start, extra_state=extra_state, compare_state=True)


def test_reset_distribution_matches_vmas():
    """20 000 of our worlds' starts against 20 000 of VMAS's (KS on every food's x and y, within
    ``pos_range``); every agent at the origin at rest, nothing eaten."""
    n = 20_000
    vm = R.make_vmas(SCENARIO, n, 0, True, n_food=3, pos_range=0.7)
    theirs = R.vmas_state(vm)
    ours = war_envs.make(ENV, num_envs=n, n_food=3, pos_range=0.7)
    ours.reset(seed=5)
    mine = ours.get_state()
    for b in range(3):
        for k in range(2):
            a, c = mine["pos"][:, b, k].numpy(), theirs["pos"][:, b, k].numpy()
            assert R.ks_statistic(a, c) < R.ks_critical(n, n), (b, k)
    assert float(mine["pos"][:, :3].abs().max()) <= np.float32(0.7)
    assert bool((mine["pos"][:, 3:] == 0).all()) and bool((mine["vel"] == 0).all())
    assert not bool(mine["eaten"].any()) and tuple(mine["eaten"].shape) == (n, 3)
    assert torch.equal(mine["eaten"], extra_state(vm)["eaten"])


def test_reset_clears_eaten():
    """An autoreset world starts again with all the food back."""
    env = war_envs.make(ENV, num_envs=4, max_steps=3, seed=0)
    env.reset()
    state = env.get_state()
    state["eaten"][:] = True
    env.set_state(state)
    for _ in range(3):
        env.step({"agents": torch.zeros(4, 4, 2)})
    assert not bool(env.get_state()["eaten"].any())


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_agents": 1.5}, "n_agents"), ({"n_food": 0}, "n_food"),
    ({"n_food": "3"}, "n_food"), ({"share_reward": 1}, "share_reward"), ({"penalise_by_time": "yes"},
                                                                          "penalise_by_time"),
    ({"food_radius": 0}, "food_radius"), ({"food_radius": float("inf")}, "food_radius"),
    ({"pos_range": -1}, "pos_range"), ({"max_steps": 0}, "max_steps"), ({"penalise_by_tim": True}, "penalise_by_tim"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


@pytest.mark.parametrize("continuous", [True, False])
def test_spaces_and_names_match_vmas(continuous):
    for kwargs in ({}, OPTIONS, {"n_agents": 2}):
        vm = R.make_vmas(SCENARIO, 1, 0, continuous, **kwargs)
        ours = war_envs.make(ENV, continuous_actions=continuous, **kwargs)
        spec = ours.groups["agents"]
        assert spec.agents == tuple(a.name for a in vm.agents)
        assert spec.obs_dim == vm.observation_space[0].shape[0]
        if continuous:
            np.testing.assert_array_equal(spec.action_space.high, vm.action_space[0].high)
        else:
            assert spec.action_space.n == vm.action_space[0].n == 9
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        assert ours.contact_pairs == []  # nothing collides


def test_float64_worlds_follow_float32():
    R.float64_follows_float32(ENV, 30)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, n_agents=2, n_food=5, share_reward=True, penalise_by_time=True,
                               continuous_actions=False, pettingzoo=False, gymnasium=False)


def test_picture_leaves_eaten_food_out():
    """Eaten food is not drawn (VMAS's ``is_rendering`` off once eaten): less green once eaten."""
    env = war_envs.make(ENV, num_envs=1, seed=0, n_food=6, food_radius=0.1)
    env.reset()

    def green(frame):
        return int(((frame[..., 1] > 150) & (frame[..., 0] < 100) & (frame[..., 2] < 100)).sum())

    before = env.render_frame(0, width=240, height=240)
    assert before.shape == (240, 240, 3) and before.dtype == np.uint8
    state = env.get_state()
    state["eaten"][0, :3] = True
    env.set_state(state)
    after = env.render_frame(0, width=240, height=240)
    assert env.bodies_drawn(0)[:6] == [False] * 3 + [True] * 3
    assert 0 < green(after) < 0.75 * green(before)
