"""Flocking-v0 against VMAS 1.5.2's ``flocking`` in the same process (tests/vmas_reference.py):
one step from every recorded VMAS state and whole free-running episodes (continuous and discrete
actions, default and non-default arguments, a crowded start), the scripted target, the reset
distribution, bad arguments and the shared API checks."""

import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing
import vmas_reference as R

pytest.importorskip("vmas")

ENV, SCENARIO = "Flocking-v0", "flocking"
INFO = ("agent_collision_rew", "agent_distance_rew")
OPTIONS = dict(n_agents=3, n_obstacles=2, n_lidar_rays=8, collision_reward=-0.5, dist_shaping_factor=2.0,
               min_dist_between_entities=0.3)


def extra_state(vm):
    return {"distance_shaping": torch.stack([a.distance_shaping for a in vm.agents], dim=1)}


def near_obstacles(vm):
    """A contact- and lidar-heavy start: every agent next to an obstacle (within the lidar's
    0.2, some overlapping it), the target among them, random velocities."""
    gen = torch.Generator().manual_seed(3)
    obstacles = vm.world.landmarks
    for i, agent in enumerate(vm.agents):
        centre = obstacles[i % len(obstacles)].state.pos
        agent.state.pos = centre + (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.4
        agent.state.vel = (torch.rand(vm.num_envs, 2, generator=gen) - 0.5) * 0.5
    target = vm.world.agents[0]
    target.state.pos = vm.agents[0].state.pos + 0.08
    target.state.vel = torch.rand(vm.num_envs, 2, generator=gen) - 0.5


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_one_step_from_every_vmas_state(kwargs, continuous):
    R.one_step_from_every_state(ENV, SCENARIO, num_envs=8, steps=30, continuous=continuous, extra_state=extra_state,
                                info_keys=INFO, start=near_obstacles, **kwargs)


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kwargs", [{}, OPTIONS], ids=["default", "options"])
def test_whole_crowded_episodes(kwargs, continuous):
    """Free-running 100-step episodes from VMAS's starts squeezed together (agents, target and
    obstacles overlap: contact forces, lidar hits and collision rewards from the first step)."""
    R.whole_episode(ENV, SCENARIO, num_envs=8, steps=100, continuous=continuous, extra_state=extra_state,
                    info_keys=INFO, start=R.crowd, **kwargs)


def test_whole_episode_near_obstacles():
    R.whole_episode(ENV, SCENARIO, num_envs=8, steps=100, extra_state=extra_state, info_keys=INFO,
                    start=near_obstacles)


def test_the_comparisons_bite():
    """A different collision reward, or a target that does not follow its script, is caught."""
    with pytest.raises(AssertionError, match="reward"):
        vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=30)
        R.crowd(vm)
        ours = R.make_ours(ENV, 8, True, max_steps=30, collision_reward=-0.2)
        R.copy_state(vm, ours, extra_state)
        gen = torch.Generator().manual_seed(1)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL, INFO)
    with pytest.raises(AssertionError, match="pos|vel|obs"):
        vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=30)
        vm.world.agents[0]._action_script = lambda agent, world: setattr(
            agent.action, "u", torch.zeros(world.batch_dim, 2))
        ours = R.make_ours(ENV, 8, True, max_steps=30)
        R.copy_state(vm, ours, extra_state)
        gen = torch.Generator().manual_seed(1)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL, INFO)


def test_the_target_circles():
    """The target (VMAS's scripted first agent) starts at (0, -1) at rest, is pushed by
    (cos(t/30), sin(t/30)) (so its velocity turns anticlockwise) and is no policy agent."""
    env = war_envs.make(ENV, num_envs=2, seed=0, max_steps=200)
    env.reset()
    target = env.body_index("target")
    assert target == 5 and env.groups["agents"].agents == ("agent_0", "agent_1", "agent_2", "agent_3")
    state = env.get_state()
    assert torch.equal(state["pos"][:, target], torch.tensor([[0.0, -1.0]] * 2))
    angles = []
    for _ in range(60):
        env.step({"agents": torch.zeros(2, 4, 2)})
        vel = env.get_state()["vel"][0, target]
        angles.append(float(torch.atan2(vel[1], vel[0])))
    assert np.all(np.diff(np.unwrap(angles))[5:] > 0)


def test_float64_worlds_follow_float32_vmas():
    vm = R.make_vmas(SCENARIO, 8, 0, True, max_steps=40)
    near_obstacles(vm)
    ours = war_envs.make(ENV, num_envs=8, autoreset_mode="disabled", precision="float64", max_steps=40)
    gen = torch.Generator().manual_seed(1)
    for t in range(20):
        R.copy_state(vm, ours, extra_state)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        R.compare_outputs(f"float64 step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.STEP_TOL, INFO)


def _starts(n, ours: bool, **kwargs):
    if ours:
        env = war_envs.make(ENV, num_envs=n, seed=5, **kwargs)
        env.reset()
        return env.get_state()["pos"].numpy(), env.get_state()["distance_shaping"].numpy()
    vm = R.make_vmas(SCENARIO, n, 5, True, **kwargs)
    return R.vmas_state(vm)["pos"].numpy(), extra_state(vm)["distance_shaping"].numpy()


@pytest.mark.parametrize("kwargs", [{}, dict(n_agents=2, n_obstacles=8, min_dist_between_entities=0.4)],
                         ids=["default", "tight"])
def test_reset_distribution_matches_vmas(kwargs):
    """5 000 starts each: every body's x and y, the shaping values and the distance of agent 0 to
    the nearest obstacle have the same distributions (two-sample KS at level 1e-3); the target
    always starts at (0, -1) and the bodies at least min_dist_between_entities apart."""
    n = 5_000
    (ours, s_ours), (theirs, s_theirs) = _starts(n, True, **kwargs), _starts(n, False, **kwargs)
    crit = R.ks_critical(n, n)
    n_obs = kwargs.get("n_obstacles", 5)
    for b in range(ours.shape[1]):
        for axis in (0, 1):
            if b == n_obs:
                assert np.all(ours[:, b] == [0.0, -1.0]) and np.all(theirs[:, b] == [0.0, -1.0])
                continue
            stat = R.ks_statistic(ours[:, b, axis], theirs[:, b, axis])
            assert stat < crit, f"body {b} axis {axis}: KS {stat:.4f} >= {crit:.4f}"
    for k in range(s_ours.shape[1]):
        assert R.ks_statistic(s_ours[:, k], s_theirs[:, k]) < crit
    d = [np.linalg.norm(p[:, :n_obs] - p[:, n_obs + 1, None], axis=-1).min(-1) for p in (ours, theirs)]
    assert R.ks_statistic(*d) < crit
    gaps = np.linalg.norm(ours[:, :, None] - ours[:, None], axis=-1) + 9 * np.eye(ours.shape[1])
    assert gaps.min() >= kwargs.get("min_dist_between_entities", 0.15) - 1e-6


def test_spaces_and_names_match_vmas():
    for kwargs in ({}, OPTIONS):
        vm = R.make_vmas(SCENARIO, 1, 0, True, **kwargs)
        ours = war_envs.make(ENV, **kwargs)
        assert ours.groups["agents"].agents == tuple(a.name for a in vm.agents)
        assert [b.name for b in ours.layout.bodies] == [e.name for e in vm.world.entities]
        np.testing.assert_array_equal(ours.groups["agents"].action_space.high, vm.action_space[0].high)
        assert ours.groups["agents"].obs_dim == vm.observation_space[0].shape[0]
    assert war_envs.make(ENV, continuous_actions=False).groups["agents"].action_space.n == 9


@pytest.mark.parametrize("kwargs,match", [
    ({"n_agents": 0}, "n_agents"), ({"n_obstacles": -1}, "n_obstacles"), ({"n_agents": 1.5}, "n_agents"),
    ({"min_dist_between_entities": -0.1}, "min_dist_between_entities"),
    ({"min_dist_between_entities": 1.5, "n_agents": 10}, "min_dist_between_entities"),
    ({"n_lidar_rays": 0}, "n_lidar_rays"), ({"collision_reward": float("nan")}, "collision_reward"),
    ({"dist_shaping_factor": "x"}, "dist_shaping_factor"), ({"max_steps": 0}, "max_steps"),
    ({"unknown_kwarg": 1}, "unknown_kwarg"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_check_all():
    war_envs.testing.check_all(ENV)
    war_envs.testing.check_all(ENV, continuous_actions=False, n_agents=2, n_obstacles=0, pettingzoo=False,
                               gymnasium=False)


def test_picture():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=300, height=200)
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4  # obstacles, target, agents, rays on white
