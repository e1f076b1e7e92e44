"""Formation-v0 against mpe2 ``simple_formation_v1``: full episodes from identical states with
identical actions, the exact assignment (scipy's matching, ties included), the reset
distribution, spaces and argument checks."""

import math

import numpy as np
import pytest
import torch
import warp as wp

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import compare_episode  # noqa: E402
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 our_resets, reference_resets)
from war_envs.scenarios.mpe.assignment import linear_sum_assignment  # noqa: E402

ENV = "Formation-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"N": 1}, {"N": 2}, {"N": 7, "continuous_actions": True},
         {"N": 10}, {"max_cycles": 40}]


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


def circle_start(n, dtype, radius=0.5, jitter=0.0, far=None):
    """Agents on the target circle around a landmark at (0.1, -0.2) (agent order shuffled), or
    ``far``: agents far outside, so clipped distances appear."""
    rng = np.random.default_rng(n)
    landmark = np.array([0.1, -0.2])
    angles = 0.3 + 2 * math.pi * np.arange(n) / n
    pos = landmark + radius * np.stack([np.cos(angles), np.sin(angles)], -1)
    pos = pos[rng.permutation(n)] + jitter * rng.standard_normal((n, 2))
    if far is not None:
        pos = pos * far
    return {"agent_pos": torch.tensor(pos[None], dtype=dtype),
            "landmark_pos": torch.tensor(landmark[None, None], dtype=dtype)}


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("continuous", [False, True])
def test_terminate_on_success_matches_mpe2(precision, continuous):
    dtype = torch.float64 if precision == "float64" else torch.float32
    # agents on the circle: every assigned distance ~0 after the first step (positions move
    # with the start velocity, zero), so both end at step 1
    report = compare_episode(ENV, precision=precision, start_state=circle_start(4, dtype),
                             terminate_on_success=True, continuous_actions=continuous)
    assert report["terminated_at"] == 1
    assert_matches(report, precision)
    # near the circle but not within 0.05 of it: no early end
    report = compare_episode(ENV, precision=precision, start_state=circle_start(4, dtype, radius=0.6),
                             terminate_on_success=True, continuous_actions=continuous)
    assert report["terminated_at"] is None and report["steps"] == 25
    assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_far_agents_clipped_distances_match_mpe2(precision):
    # agents 3-6 units out: assigned distances above 2 are clipped in the mean
    dtype = torch.float64 if precision == "float64" else torch.float32
    for n in (3, 6):
        report = compare_episode(ENV, precision=precision, N=n, start_state=circle_start(n, dtype, far=8.0))
        assert_matches(report, precision)


# ------------------------------------------------------------------ the assignment itself
@wp.struct
class _LSA:
    dt: wp.float64
    lsa_cost: wp.array3d(dtype=wp.float64)
    lsa_u: wp.array2d(dtype=wp.float64)
    lsa_v: wp.array2d(dtype=wp.float64)
    lsa_spc: wp.array2d(dtype=wp.float64)
    lsa_path: wp.array2d(dtype=wp.int32)
    lsa_col4row: wp.array2d(dtype=wp.int32)
    lsa_row4col: wp.array2d(dtype=wp.int32)
    lsa_sr: wp.array2d(dtype=wp.int32)
    lsa_sc: wp.array2d(dtype=wp.int32)
    lsa_remaining: wp.array2d(dtype=wp.int32)


@wp.kernel
def _solve(w: _LSA):
    linear_sum_assignment(w, wp.tid())


def warp_assignment(costs: np.ndarray) -> np.ndarray:
    b, n, _ = costs.shape
    w = _LSA()
    w.dt = 0.1
    w.lsa_cost = wp.array(costs, dtype=wp.float64)
    for name in ("lsa_u", "lsa_v", "lsa_spc"):
        setattr(w, name, wp.zeros((b, n), dtype=wp.float64))
    for name in ("lsa_path", "lsa_col4row", "lsa_row4col", "lsa_sr", "lsa_sc", "lsa_remaining"):
        setattr(w, name, wp.zeros((b, n), dtype=wp.int32))
    wp.launch(_solve, dim=b, inputs=[w])
    return w.lsa_col4row.numpy()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 12])
def test_assignment_is_scipys_matching_ties_included(n):
    """Our kernel returns exactly scipy's matching: on small-integer matrices (ties everywhere,
    where tie-breaking decides), on constant ones and on random real ones."""
    from scipy.optimize import linear_sum_assignment as scipy_lsa

    rng = np.random.default_rng(n)
    costs = np.concatenate([rng.integers(0, 3, (400, n, n)).astype(np.float64),
                            np.full((2, n, n), 1.5),
                            rng.random((200, n, n)) * 4.0])
    ours = warp_assignment(costs)
    for c, mine in zip(costs, ours):
        rows, cols = scipy_lsa(c)
        assert np.array_equal(rows, np.arange(n))
        assert np.array_equal(cols, mine), (c, cols, mine)


def test_tied_assignments_give_mpe2s_clipped_reward():
    """Two optimal matchings of equal total but different clipped means: the reward is mpe2's."""
    from mpe2 import simple_formation_v1

    env = war_envs.make(ENV, num_envs=1, N=2, precision="float64")
    env.reset(seed=0)
    # landmark at the origin, both agents on the +x axis at 1.5 and 2: the targets are
    # (0.5, 0) and (-0.5, ~0), both matchings total 3.5 exactly, their clipped means differ
    # (-(1 + 2) / 2 vs -(2 + 1.5) / 2)
    start = {"agent_pos": torch.tensor([[[1.5, 0.0], [2.0, 0.0]]], dtype=torch.float64),
             "landmark_pos": torch.zeros(1, 1, 2, dtype=torch.float64)}
    env.set_state(start)
    _, rew, *_ = env.step({"agent": torch.zeros(1, 2, dtype=torch.int64)})
    par = simple_formation_v1.parallel_env(N=2)
    par.reset(seed=0)
    raw = par.aec_env.unwrapped
    for a, p in zip(raw.world.agents, start["agent_pos"][0].numpy()):
        a.state.p_pos = p.copy()
        a.state.p_vel = np.zeros(2)
    raw.world.landmarks[0].state.p_pos = np.zeros(2)
    _, r_rew, *_ = par.step({"agent_0": 0, "agent_1": 0})
    assert float(rew["agent"][0, 0]) == pytest.approx(r_rew["agent_0"], abs=1e-12)
    assert float(rew["agent"][0, 1]) == pytest.approx(r_rew["agent_1"], abs=1e-12)
    assert r_rew["agent_0"] in (pytest.approx(-1.5), pytest.approx(-1.75))
    env.close()
    par.close()


# ------------------------------------------------------------------ reset, spaces, arguments
def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)
    assert_agents_and_spaces_match(ENV, N=6)


def test_reset_distribution_matches_mpe2():
    n = 3000
    ours = our_resets(ENV, n)
    ref = reference_resets(ENV, n, lambda raw: {
        "agent_pos": np.array([a.state.p_pos for a in raw.world.agents]),
        "landmark_pos": np.array([lm.state.p_pos for lm in raw.world.landmarks])})
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    assert np.all(ours["agent_vel"] == 0)


def test_info_and_reward_agree():
    env = war_envs.make(ENV, num_envs=4, seed=3, precision="float64")
    env.reset()
    _, rew, _, _, info = env.step({"agent": torch.zeros(4, 4, dtype=torch.int64)})
    d = info["assigned_dist"]
    assert torch.allclose(-d.clamp(0, 2).mean(-1), rew["agent"][:, 0])
    assert torch.all(rew["agent"] == rew["agent"][:, :1])
    env.close()


@pytest.mark.parametrize("kwargs,name", [
    ({"N": 0}, "N"), ({"N": 2.5}, "N"), ({"N": True}, "N"), ({"max_cycles": 0}, "max_cycles"),
    ({"curriculum": True}, "curriculum"), ({"num_agent_neighbors": 2}, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, "num_landmark_neighbors"),
    ({"terminate_on_success": 1}, "terminate_on_success"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV, **kwargs)
