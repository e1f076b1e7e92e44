"""WorldComm-v0 against mpe2's simple_world_comm_v3: full episodes from identical states with
identical actions (random starts and hand-made ones that exercise forests, food, contacts and
the boundary), the forest visibility rules, the reset distribution, the checks of
``war_envs.testing`` and argument validation."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
import war_envs.testing as wt  # noqa: E402
from mpe2_reference import compare_episode, copy_world_into_reference, make_reference  # noqa: E402

ENV_ID = "WorldComm-v0"

CASES = [
    {},
    {"continuous_actions": True},
    {"num_adversaries": 1, "num_good": 3, "num_obstacles": 0, "num_forests": 0},  # the leader alone
    {"num_adversaries": 2, "num_good": 1, "num_obstacles": 2, "num_food": 1, "num_forests": 3},
    {"num_adversaries": 3, "num_good": 4, "num_food": 3, "continuous_actions": True},
    {"max_cycles": 40},
]

TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "comm": 0.0, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "comm": 0.0, "rew": 1e-4, "obs_rel": 1e-4}}

# default layout: leader 0, adversaries 1-3, good agents 4-5; obstacle 0, food 1-2, forests 3-4
FOREST_LANDMARKS = [[-0.7, -0.7], [0.9, -0.5], [0.21, -0.6], [0.0, 0.0], [0.6, 0.6]]
FOREST_AGENTS = [[-0.5, -0.2],   # leader, outside every forest
                 [0.05, 0.0],    # adversary_0 in forest 0, touching agent_0
                 [0.6, 0.55],    # adversary_1 in forest 1
                 [-0.3, 0.3],    # adversary_2 outside
                 [-0.02, 0.05],  # agent_0 in forest 0
                 [0.2, -0.6]]    # agent_1 outside, on food 1


def forest_start(dtype):
    return {"agent_pos": torch.tensor([FOREST_AGENTS], dtype=dtype),
            "landmark_pos": torch.tensor([FOREST_LANDMARKS], dtype=dtype),
            "agent_vel": torch.zeros(1, 6, 2, dtype=dtype)}


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 11):
        report = compare_episode(ENV_ID, precision=precision, seed=seed, action_seed=seed + 1, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert_matches(report, precision)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("continuous", [False, True])
def test_forest_food_contact_and_boundary_episodes_match_mpe2(precision, continuous):
    dtype = torch.float64 if precision == "float64" else torch.float32
    start = forest_start(dtype)
    for seed in range(3):
        report = compare_episode(ENV_ID, precision=precision, start_state=start, action_seed=seed,
                                 continuous_actions=continuous)
        assert_matches(report, precision)
    # good agents on and past the boundary (bound's three pieces), adversaries around them
    start["agent_pos"] = torch.tensor([[[0.9, 0.9], [1.0, 0.93], [-0.95, -1.2], [0.2, 0.2],
                                        [0.95, 0.92], [-0.93, -1.25]]], dtype=dtype)
    report = compare_episode(ENV_ID, precision=precision, start_state=start, continuous_actions=continuous)
    assert_matches(report, precision)


def test_forest_visibility_matches_mpe2():
    env = war_envs.make(ENV_ID, num_envs=1, seed=0, precision="float64")
    env.reset()
    obs = env.set_state(forest_start(torch.float64))
    par, raw = make_reference(ENV_ID)
    copy_world_into_reference(env, raw)
    for g, spec in env.groups.items():
        for k, name in enumerate(spec.agents):
            np.testing.assert_array_equal(obs[g][0, k].numpy(), raw.observe(name), err_msg=name)

    def other_slots(row, i):
        """The other-agent position slots of agent i's row: {j: (x, y)}."""
        start = 4 + 2 * 5
        others = [j for j in range(6) if j != i]
        return {j: row[start + 2 * s:start + 2 * s + 2] for s, j in enumerate(others)}

    def seen(row, i):
        return {j for j, xy in other_slots(row, i).items() if np.any(xy != 0)}

    assert seen(obs["leadadversary"][0, 0].numpy(), 0) == {1, 2, 3, 4, 5}  # the leader sees everyone
    assert seen(obs["adversary"][0, 0].numpy(), 1) == {4}  # in forest 0: only who shares it
    assert seen(obs["adversary"][0, 1].numpy(), 2) == set()  # alone in forest 1
    assert seen(obs["adversary"][0, 2].numpy(), 3) == {0, 5}  # outside: only the others outside
    assert seen(obs["agent"][0, 0].numpy(), 4) == {1}
    assert seen(obs["agent"][0, 1].numpy(), 5) == {0, 3}
    # in_forest flags: adversary rows [.., good_vel(4), in_forest(2), comm(4)], good rows [.., in_forest(2), vel(2)]
    assert obs["adversary"][0, 0, 28:30].tolist() == [1.0, -1.0]
    assert obs["adversary"][0, 1, 28:30].tolist() == [-1.0, 1.0]
    assert obs["agent"][0, 0, 24:26].tolist() == [1.0, -1.0]
    assert obs["agent"][0, 1, 24:26].tolist() == [-1.0, -1.0]
    # one no-op step from rest: positions unchanged, so the contact and the food are counted
    zero = {g: torch.zeros(1, spec.n_agents, dtype=torch.int64) for g, spec in env.groups.items()}
    zero["leadadversary"][0, 0] = 5 * 2  # no move, say symbol 2
    obs, rew, *_, info = env.step(zero)
    assert info["collisions"][0].tolist() == [0, 1, 0, 0, 1, 0]
    assert info["food_eaten"][0].tolist() == [0, 0, 0, 0, 0, 1]
    for g in ("leadadversary", "adversary"):
        assert obs[g][0, :, -4:].tolist() == [[0.0, 0.0, 1.0, 0.0]] * obs[g].shape[1]  # the leader's message
    env.close()
    par.close()


def test_spaces_and_agents_match_mpe2():
    for kwargs in ({}, {"continuous_actions": True}, {"num_adversaries": 1, "num_good": 1, "num_forests": 0}):
        env = war_envs.make(ENV_ID, num_envs=1, **kwargs)
        par, _ = make_reference(ENV_ID, **kwargs)
        assert list(env.agents) == par.possible_agents
        na = kwargs.get("num_adversaries", 4)
        assert list(env.groups) == ["leadadversary"] + (["adversary"] if na > 1 else []) + ["agent"]
        for spec in env.groups.values():
            for name in spec.agents:
                assert spec.action_space == par.action_space(name), name
                assert spec.obs_dim == par.observation_space(name).shape[0], name
        env.close()
        par.close()
    env = war_envs.make(ENV_ID, num_envs=1)
    assert env.groups["leadadversary"].action_space.n == 20
    assert env.groups["adversary"].obs_dim == 34 and env.groups["agent"].obs_dim == 28
    env.close()


def test_reset_distribution_matches_mpe2():
    draws = 2000
    env = war_envs.make(ENV_ID, num_envs=draws, seed=5, precision="float64")
    env.reset()
    s = env.get_state()
    ours_agents = s["agent_pos"].numpy().reshape(-1)
    ours_landmarks = s["landmark_pos"].numpy().reshape(-1)
    assert not s["agent_vel"].any() and not s["agent_comm"].any()
    env.close()
    par, raw = make_reference(ENV_ID)
    ref_agents, ref_landmarks = [], []
    for k in range(draws):
        par.reset(seed=k)
        ref_agents.extend(a.state.p_pos for a in raw.world.agents)
        ref_landmarks.extend(lm.state.p_pos for lm in raw.world.landmarks)
    par.close()
    ref_agents, ref_landmarks = np.asarray(ref_agents).reshape(-1), np.asarray(ref_landmarks).reshape(-1)
    # agents U[-1, 1), obstacles / food / forests U[-0.9, 0.9) in both
    for ours, ref, edge in ((ours_agents, ref_agents, 1.0), (ours_landmarks, ref_landmarks, 0.9)):
        assert abs(ours.mean() - ref.mean()) < 0.04 and abs(ours.mean()) < 0.03
        assert abs(ours.std() - ref.std()) < 0.02 and abs(ours.std() - edge / np.sqrt(3)) < 0.015
        assert -edge <= ours.min() < -edge + 0.01 and edge - 0.01 < ours.max() < edge
        assert -edge <= ref.min() < -edge + 0.01 and edge - 0.01 < ref.max() < edge


def test_check_all():
    wt.check_all(ENV_ID, max_cycles=8)


def test_check_all_without_the_adversary_group():
    wt.check_all(ENV_ID, max_cycles=8, num_adversaries=1, num_good=1, num_forests=0)


@pytest.mark.parametrize("kwargs,name", [
    ({"num_good": 0}, "num_good"), ({"num_adversaries": 0}, "num_adversaries"),
    ({"num_obstacles": -1}, "num_obstacles"), ({"num_food": 0}, "num_food"), ({"num_forests": -1}, "num_forests"),
    ({"max_cycles": 0}, "max_cycles"), ({"curriculum": True}, "curriculum"),
    ({"terminate_on_success": True}, "terminate_on_success"), ({"num_agent_neighbors": 1}, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, "num_landmark_neighbors"), ({"continuous_actions": 1.5}, "continuous_actions"),
    ({"num_good": 2.5}, "num_good"),
], ids=str)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        war_envs.make(ENV_ID, num_envs=1, **kwargs)
