"""Line-v0 against mpe2 ``simple_line_v1``: full episodes from identical states with identical
actions, the target points as state, the reset distribution (incl. the 5° rotation rule),
spaces and argument checks."""

import math

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import compare_episode  # noqa: E402
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 assert_same_frequencies, ks_distance, our_resets,
                                 reference_resets)

ENV = "Line-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"N": 1}, {"N": 2}, {"N": 7, "continuous_actions": True},
         {"N": 10}, {"max_cycles": 40}]


def copy_targets(ours, raw, world):
    """Our reset's target points into mpe2's scenario (its _expected_positions)."""
    targets = ours.get_state()["target_pos"][world].double().numpy()
    raw.scenario._expected_positions = [t.copy() for t in targets]


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1,
                                 copy_extra=copy_targets, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


def targets_start(n, dtype, offset=0.0, far=1.0):
    """Agents on (or ``offset`` beside) the target points of a hand-made line, in shuffled
    order; ``far`` scales the agents out so clipped distances appear."""
    rng = np.random.default_rng(n)
    l0 = np.array([0.1, -0.2])
    direction = np.array([math.cos(2.0), math.sin(2.0)])
    sep = 1.25 / (n - 1) if n > 1 else 0.0
    targets = l0 + (np.arange(n) * sep)[:, None] * direction
    agents = (targets[rng.permutation(n)] + offset) * far
    landmarks = np.stack([l0, l0 + 1.25 * direction])
    return {"agent_pos": torch.tensor(agents[None], dtype=dtype),
            "landmark_pos": torch.tensor(landmarks[None], dtype=dtype),
            "target_pos": torch.tensor(targets[None], dtype=dtype)}


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("continuous", [False, True])
def test_terminate_on_success_matches_mpe2(precision, continuous):
    dtype = torch.float64 if precision == "float64" else torch.float32
    report = compare_episode(ENV, precision=precision, start_state=targets_start(4, dtype), copy_extra=copy_targets,
                             terminate_on_success=True, continuous_actions=continuous)
    assert report["terminated_at"] == 1
    assert_matches(report, precision)
    report = compare_episode(ENV, precision=precision, start_state=targets_start(4, dtype, offset=0.08),
                             copy_extra=copy_targets, terminate_on_success=True, continuous_actions=continuous)
    assert report["terminated_at"] is None and report["steps"] == 25
    assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_set_target_pos_and_far_agents_match_mpe2(precision):
    """set_state of the target points changes the reward as in mpe2 (targets of a line other
    than the reset's), with agents far out (clipped distances)."""
    dtype = torch.float64 if precision == "float64" else torch.float32
    for n in (3, 6):
        report = compare_episode(ENV, precision=precision, N=n, start_state=targets_start(n, dtype, far=5.0),
                                 copy_extra=copy_targets)
        assert_matches(report, precision)


def test_set_target_pos_moves_the_reward():
    env = war_envs.make(ENV, num_envs=1, N=3, precision="float64")
    env.reset(seed=0)
    state = targets_start(3, torch.float64)
    env.set_state(state)
    _, rew, _, _, info = env.step({"agent": torch.zeros(1, 3, dtype=torch.int64)})
    assert float(rew["agent"][0, 0]) == pytest.approx(0.0, abs=1e-12)
    env.set_state({"target_pos": state["target_pos"] + 0.3, "agent_pos": state["agent_pos"],
                   "agent_vel": torch.zeros(1, 3, 2, dtype=torch.float64)})
    _, rew, _, _, info = env.step({"agent": torch.zeros(1, 3, dtype=torch.int64)})
    assert float(rew["agent"][0, 0]) == pytest.approx(-0.3 * math.sqrt(2), abs=1e-12)
    env.close()


# ------------------------------------------------------------------ reset, spaces, arguments
def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)
    assert_agents_and_spaces_match(ENV, N=1)


@pytest.mark.parametrize("n_agents", [4, 1])
def test_reset_distribution_matches_mpe2(n_agents):
    n = 3000
    ours = our_resets(ENV, n, N=n_agents)
    ref = reference_resets(ENV, n, lambda raw: {
        "agent_pos": np.array([a.state.p_pos for a in raw.world.agents]),
        "landmark_pos": np.array([lm.state.p_pos for lm in raw.world.landmarks]),
        "target_pos": np.array(raw.scenario._expected_positions)}, N=n_agents)
    for key in ("agent_pos", "landmark_pos", "target_pos"):
        assert ours[key].shape == ref[key].shape, key
        assert_same_continuous(ours[key], ref[key], key)
    # the line's direction (the 5° turns bias it away from the corners' blind spots)
    for s in (ours, ref):
        d = s["landmark_pos"][:, 1] - s["landmark_pos"][:, 0]
        assert np.allclose(np.hypot(d[:, 0], d[:, 1]), 1.25)
        assert np.all(np.abs(s["landmark_pos"][:, 1]) < 1.0)
        s["angle"] = np.arctan2(d[:, 1], d[:, 0])[:, None]
    # (its tails near ±π are sparse: the KS distance only, no range check)
    assert ks_distance(ours["angle"], ref["angle"]) < 2.0 * 1.63 * math.sqrt(2 / n)
    # mpe2 turns a direction that leaves the square by 5° steps (it does not redraw it): the
    # share of lines whose direction 5° back would have left the square is the same
    for s in (ours, ref):
        back = s["angle"][:, 0] - math.radians(5)
        end = s["landmark_pos"][:, 0] + 1.25 * np.stack([np.cos(back), np.sin(back)], -1)
        s["turned"] = (~np.all(np.abs(end) < 1.0, -1)).astype(np.int64)
    assert 0.05 < ref["turned"].mean() < 0.95
    assert_same_frequencies(ours["turned"], ref["turned"], [0, 1], "turned")
    # target points on the segment, evenly spaced from landmark 0
    if n_agents > 1:
        assert np.allclose(ours["target_pos"][:, 0], ours["landmark_pos"][:, 0])
        assert np.allclose(ours["target_pos"][:, -1], ours["landmark_pos"][:, 1])
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
    ({"continuous_actions": "yes"}, "continuous_actions"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV, **kwargs)
