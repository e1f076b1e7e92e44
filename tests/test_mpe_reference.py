"""Full episodes against mpe2 from identical states with identical actions (docs/design.md, correctness references).

float64 worlds: positions, velocities and rewards within 1e-8, observations to float32
rounding.  float32 worlds (float32-representable starts): everything within 1e-3.
"""

import numpy as np
import pytest
import torch

import war_envs
from mpe2_reference import compare_episode

pytest.importorskip("mpe2")

SPREAD_CASES = [
    {},
    {"continuous_actions": True},
    {"N": 1},
    {"N": 2, "local_ratio": 0.0},
    {"N": 5, "local_ratio": 1.0},
    {"N": 4, "local_ratio": 0.3, "continuous_actions": True},
    {"num_agent_neighbors": 1},
    {"num_landmark_neighbors": 2},
    {"N": 5, "num_agent_neighbors": 2, "num_landmark_neighbors": 3},
    {"N": 3, "num_agent_neighbors": 4, "num_landmark_neighbors": 5},  # more slots than entities: padding
    {"max_cycles": 40},
]

PREDATOR_PREY_CASES = [
    {},
    {"continuous_actions": True},
    {"num_good": 2, "num_adversaries": 4, "num_obstacles": 3},
    {"num_good": 3, "num_adversaries": 1, "num_obstacles": 0},
    {"num_agent_neighbors": 2},
    {"num_landmark_neighbors": 1},
    {"num_good": 2, "num_adversaries": 2, "num_agent_neighbors": 5, "num_landmark_neighbors": 4},
    {"continuous_actions": True, "num_agent_neighbors": 2, "num_landmark_neighbors": 1},
]

TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-3, "vel": 1e-3, "rew": 1e-3, "obs_rel": 1e-3}}


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", SPREAD_CASES, ids=str)
def test_spread_matches_mpe2(kwargs, precision):
    for seed in (0, 7):
        report = compare_episode("Spread-v0", precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", PREDATOR_PREY_CASES, ids=str)
def test_predator_prey_matches_mpe2(kwargs, precision):
    for seed in (0, 7):
        report = compare_episode("PredatorPrey-v0", precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == 25
        assert_matches(report, precision)


def crowded_start(env_id, precision, rng, **kwargs):
    """Every agent within a few radii of the origin: many contacts from the first step."""
    env = war_envs.make(env_id, num_envs=1, precision=precision, **kwargs)
    env.reset(seed=0)
    state = env.get_state()
    n = state["agent_pos"].shape[1]
    pos = rng.uniform(-0.12, 0.12, (1, n, 2)).astype(np.float32)  # float32-representable
    state["agent_pos"] = torch.from_numpy(pos).to(state["agent_pos"].dtype)
    if state["landmark_pos"].shape[1]:
        lpos = rng.uniform(-0.2, 0.2, state["landmark_pos"].shape).astype(np.float32)
        state["landmark_pos"] = torch.from_numpy(lpos).to(state["landmark_pos"].dtype)
    env.close()
    return {k: state[k] for k in ("agent_pos", "landmark_pos")}


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("env_id,kwargs", [
    ("Spread-v0", {}), ("Spread-v0", {"N": 6, "continuous_actions": True}),
    ("PredatorPrey-v0", {}), ("PredatorPrey-v0", {"num_good": 3, "num_adversaries": 4, "num_obstacles": 3}),
], ids=str)
def test_contact_heavy_starts_match_mpe2(env_id, kwargs, precision):
    rng = np.random.default_rng(3)
    start = crowded_start(env_id, precision, rng, **kwargs)
    report = compare_episode(env_id, precision=precision, start_state=start, **kwargs)
    assert report["steps"] == 25
    assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_spread_terminate_on_success_matches_mpe2(precision):
    env = war_envs.make("Spread-v0", num_envs=1, precision=precision)
    env.reset(seed=0)
    landmarks = env.get_state()["landmark_pos"]
    env.close()
    # agents start 0.05 from their landmark: covered at once, so both end at step 1
    start = {"agent_pos": landmarks + 0.05, "landmark_pos": landmarks}
    report = compare_episode("Spread-v0", precision=precision, start_state=start, terminate_on_success=True,
                             continuous_actions=True)
    assert report["terminated_at"] is not None
    assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_predator_prey_terminate_on_success_matches_mpe2(precision):
    start = {"agent_pos": torch.tensor([[[0.0, 0.0], [0.5, 0.5], [-0.5, 0.5], [0.02, 0.0]]],
                                       dtype=torch.float64 if precision == "float64" else torch.float32)}
    report = compare_episode("PredatorPrey-v0", precision=precision, start_state=start, terminate_on_success=True)
    assert report["terminated_at"] is not None
    assert_matches(report, precision)


def test_mpe2_curriculum_api_is_a_no_op_upstream():
    """Documents the upstream bug our reference tests patch (see fix_reference_curriculum):
    if mpe2 fixes it, this fails and the patch can go."""
    from mpe2 import simple_spread_v3

    par = simple_spread_v3.parallel_env(curriculum=True)
    par.reset(seed=0)
    par.aec_env.unwrapped.set_curriculum_stage(1)
    assert par.aec_env.unwrapped.curriculum_stage == 0


@pytest.mark.parametrize("stage", [0, 1])
def test_spread_curriculum_stages_match_mpe2(stage):
    rng = np.random.default_rng(5)
    start = crowded_start("Spread-v0", "float64", rng)
    report = compare_episode("Spread-v0", precision="float64", start_state=start, curriculum=True, stage=stage)
    assert_matches(report, "float64")


@pytest.mark.parametrize("stage", [0, 1, 2])
def test_predator_prey_curriculum_stages_match_mpe2(stage):
    report = compare_episode("PredatorPrey-v0", precision="float64", curriculum=True, stage=stage)
    assert_matches(report, "float64")


def test_predator_prey_curriculum_scales_prey_at_reset():
    env = war_envs.make("PredatorPrey-v0", num_envs=2, curriculum=True)
    env.reset(seed=0)
    speed = env.get_state()["agent_max_speed"]
    assert torch.allclose(speed[:, 3], torch.tensor(1.3 * 0.5, dtype=speed.dtype))
    assert torch.allclose(speed[:, :3], torch.tensor(1.0, dtype=speed.dtype))
    env.set_curriculum_stage(2)
    # takes effect at the next reset of each world, as in mpe2
    assert torch.allclose(env.get_state()["agent_max_speed"][:, 3], torch.tensor(0.65, dtype=speed.dtype))
    env.reset(mask=torch.tensor([True, False]))
    speed = env.get_state()["agent_max_speed"][:, 3]
    assert speed[0].item() == pytest.approx(1.3) and speed[1].item() == pytest.approx(0.65)


def test_spread_curriculum_stage_zero_has_no_collision_penalty():
    env = war_envs.make("Spread-v0", num_envs=1, curriculum=True, local_ratio=1.0)
    env.reset(seed=0)
    env.set_state({"agent_pos": torch.tensor([[[0.0, 0.0], [0.01, 0.0], [0.0, 0.01]]])})
    _, rew, *_ = env.step({"agent": torch.zeros(1, 3, dtype=torch.int64)})
    assert torch.all(rew["agent"] == 0)
    env.advance_curriculum()
    env.set_state({"agent_pos": torch.tensor([[[0.5, 0.5], [0.51, 0.5], [0.5, 0.51]]]), "agent_vel": torch.zeros(1, 3, 2)})
    _, rew, *_ = env.step({"agent": torch.zeros(1, 3, dtype=torch.int64)})
    assert torch.all(rew["agent"] == -2)
    assert env.curriculum_stage == 1
    env.advance_curriculum()  # no-op at the last stage, like mpe2
    assert env.curriculum_stage == 1
    with pytest.raises(ValueError, match="stage"):
        env.set_curriculum_stage(2)
