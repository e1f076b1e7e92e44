"""Navigation-v0 against VMAS 1.5.2's ``navigation`` itself (tests/vmas_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vmas_reference as R
import war_envs

INFO = ("pos_rew", "final_rew", "agent_collisions")


def shaping(vm) -> dict:
    return {"pos_shaping": torch.stack([a.pos_shaping for a in vm.world.agents], dim=1)}


CASES = {
    "default": {},
    "all_goals_unshared": dict(observe_all_goals=True, shared_rew=False, n_agents=3, n_lidar_rays=8),
    "bounded_shared_goal": dict(enforce_bounds=True, collisions=False, agents_with_same_goal=2, n_agents=3,
                                world_spawning_x=0.6, world_spawning_y=0.8),
    "split_goals": dict(split_goals=True, agents_with_same_goal=2, collisions=False, final_reward=0.5),
}


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_step_from_every_vmas_state(case, continuous):
    R.one_step_from_every_state("Navigation-v0", "navigation", num_envs=16, steps=40, continuous=continuous,
                                extra_state=shaping, info_keys=INFO, **CASES[case])


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "discrete"])
@pytest.mark.parametrize("case", ["default", "all_goals_unshared", "bounded_shared_goal"])
def test_whole_crowded_episodes(case, continuous):
    """Free-running 100-step episodes from VMAS's starts squeezed together (agents overlap:
    contact forces, lidar hits and collision penalties from the first step)."""
    R.whole_episode("Navigation-v0", "navigation", num_envs=16, steps=100, continuous=continuous,
                    extra_state=shaping, info_keys=INFO, start=R.crowd, **CASES[case])


def test_the_comparison_bites():
    """A different collision penalty on our side is caught (so the replays above can fail)."""
    with pytest.raises(AssertionError, match="reward"):
        vm = R.make_vmas("navigation", 16, 0, True, max_steps=30)
        R.crowd(vm)
        ours = R.make_ours("Navigation-v0", 16, True, max_steps=30, agent_collision_penalty=-0.5)
        R.copy_state(vm, ours, shaping)
        gen = torch.Generator().manual_seed(1)
        for t in range(30):
            acts, ours_acts = R.random_actions(vm, ours, gen)
            R.compare_outputs(f"step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.EPISODE_TOL, INFO)


def test_float64_worlds_follow_float32_vmas():
    """Float64 worlds (VMAS itself runs float32 only) stay within float32 rounding of VMAS for
    one step from each of its states."""
    vm = R.make_vmas("navigation", 16, 0, True, max_steps=40)
    ours = war_envs.make("Navigation-v0", num_envs=16, autoreset_mode="disabled", precision="float64", max_steps=40)
    gen = torch.Generator().manual_seed(1)
    for t in range(20):
        R.copy_state(vm, ours, shaping)
        acts, ours_acts = R.random_actions(vm, ours, gen)
        R.compare_outputs(f"float64 step {t}", vm, ours, vm.step(acts), ours.step(ours_acts), R.STEP_TOL, INFO)


def _our_starts(n_worlds: int, **kwargs):
    env = war_envs.make("Navigation-v0", num_envs=n_worlds, seed=5, **kwargs)
    env.reset()
    state = env.get_state()
    return state["pos"].numpy()


def _vmas_starts(n_worlds: int, **kwargs):
    vm = R.make_vmas("navigation", n_worlds, 5, True, **kwargs)
    return R.vmas_state(vm)["pos"].numpy()


@pytest.mark.parametrize("kwargs", [{}, dict(n_agents=3, world_spawning_x=0.5, agent_radius=0.15)],
                         ids=["default", "tight"])
def test_reset_distribution_matches_vmas(kwargs):
    """10 000 starts each: every body's x and y, and the distances of agent 0 to agent 1 and to
    its goal, have the same distributions (two-sample KS at level 1e-3)."""
    n = 10_000
    ours, theirs = _our_starts(n, **kwargs), _vmas_starts(n, **kwargs)
    na = kwargs.get("n_agents", 4)
    crit = R.ks_critical(n, n)
    for b in range(ours.shape[1]):
        for axis in (0, 1):
            stat = R.ks_statistic(ours[:, b, axis], theirs[:, b, axis])
            assert stat < crit, f"body {b} axis {axis}: KS {stat:.4f} >= {crit:.4f}"
    for label, (i, j) in {"agent0-agent1": (na, na + 1), "agent0-goal0": (na, 0)}.items():
        d_ours = np.linalg.norm(ours[:, i] - ours[:, j], axis=-1)
        d_theirs = np.linalg.norm(theirs[:, i] - theirs[:, j], axis=-1)
        stat = R.ks_statistic(d_ours, d_theirs)
        assert stat < crit, f"{label} distance: KS {stat:.4f} >= {crit:.4f}"
        # VMAS's spawn rule itself: bodies start at least min_dist apart
        assert d_ours.min() >= 2 * kwargs.get("agent_radius", 0.1) + 0.05 - 1e-6


def test_reset_ks_bites():
    """The KS check tells a different spawning box apart."""
    n = 10_000
    ours, theirs = _our_starts(n, world_spawning_x=0.9), _vmas_starts(n)
    assert R.ks_statistic(ours[:, 4, 0], theirs[:, 4, 0]) > R.ks_critical(n, n)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_agents=0), "n_agents"),
    (dict(agents_with_same_goal=5), "agents_with_same_goal"),
    (dict(agents_with_same_goal=2), "collisions=False"),
    (dict(split_goals=True, collisions=False), "split_goals"),
    (dict(lidar_range=0.0), "lidar_range"),
    (dict(agent_radius=-1), "agent_radius"),
    (dict(n_lidar_rays=0), "n_lidar_rays"),
    (dict(final_reward=float("nan")), "final_reward"),
    (dict(max_steps=0), "max_steps"),
    (dict(unknown_kwarg=1), "unknown_kwarg"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        war_envs.make("Navigation-v0", num_envs=2, **kwargs)


def test_conformance_checks():
    import war_envs.testing as wt

    wt.check_all("Navigation-v0")
    wt.check_all("Navigation-v0", continuous_actions=False, n_agents=2)


def test_picture_draws_bodies_and_rays():
    env = war_envs.make("Navigation-v0", num_envs=2, seed=0)
    env.reset()
    frame = env.render_frame(1, width=200, height=160)
    assert frame.shape == (160, 200, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 4  # agents, goals, rays on white
    no_lidar = war_envs.make("Navigation-v0", num_envs=1, seed=0, collisions=False)
    no_lidar.reset()
    assert not np.array_equal(no_lidar.render_frame(0, width=200, height=160)[..., 0] < 200,
                              frame[..., 0] < 200)
