"""Crypto-v0 against mpe2 ``simple_crypto_v3``: full episodes from identical states (incl. goal
and key) with identical actions, silent (all-zero) communication, the reset distribution
(positions, goal and key), goal and key as state, spaces and argument checks."""

import numpy as np
import pytest
import torch

pytest.importorskip("mpe2")

import war_envs  # noqa: E402
from mpe2_reference import (compare_episode, copy_world_into_reference, make_reference,  # noqa: E402
                            to_reference_actions)
from mpe2_reset_sampling import (assert_agents_and_spaces_match, assert_same_continuous,  # noqa: E402
                                 assert_same_frequencies, our_resets, reference_resets)

ENV = "Crypto-v0"
TOL = {"float64": {"pos": 1e-8, "vel": 1e-8, "comm": 1e-8, "rew": 1e-8, "obs_rel": 2e-7},
       "float32": {"pos": 1e-4, "vel": 1e-4, "comm": 1e-6, "rew": 1e-4, "obs_rel": 1e-4}}
CASES = [{}, {"continuous_actions": True}, {"max_cycles": 40}]


def copy_goal_and_key(ours, raw, world):
    """Our goal and key into mpe2: every agent's goal_a is the goal landmark, Alice's key its
    code, Bob is drawn in the goal's code."""
    state = ours.get_state()
    goal, key = int(state["goal"][world]), int(state["key"][world])
    landmarks = raw.world.landmarks
    for agent in raw.world.agents:
        agent.goal_a = landmarks[goal]
    raw.world.agents[1].color = landmarks[goal].color
    raw.world.agents[2].key = landmarks[key].color


def assert_matches(report, precision):
    assert report["flags_equal"], report
    for key, tol in TOL[precision].items():
        assert report[key] <= tol, (key, report)


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_episodes_match_mpe2(kwargs, precision):
    for seed in (0, 7, 12):
        report = compare_episode(ENV, precision=precision, seed=seed, action_seed=seed + 1,
                                 copy_extra=copy_goal_and_key, **kwargs)
        assert report["steps"] == kwargs.get("max_cycles", 25)
        assert report["terminated_at"] is None
        assert_matches(report, precision)


@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.parametrize("goal,key", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_every_goal_and_key_matches_mpe2(goal, key, continuous):
    start = {"goal": torch.tensor([goal], dtype=torch.int32), "key": torch.tensor([key], dtype=torch.int32)}
    report = compare_episode(ENV, precision="float64", seed=2 * goal + key, start_state=start,
                             copy_extra=copy_goal_and_key, continuous_actions=continuous)
    assert_matches(report, "float64")


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_silent_agents_earn_and_cost_nothing_as_in_mpe2(precision):
    """An all-zero communication state drops that agent's term (mpe2's ``(c == 0).all()``)."""
    ours = war_envs.make(ENV, num_envs=1, seed=4, precision=precision, continuous_actions=True,
                         autoreset_mode="disabled")
    par, raw = make_reference(ENV, continuous_actions=True)
    ours.reset()
    copy_world_into_reference(ours, raw, copy_extra=copy_goal_and_key)
    rng = np.random.default_rng(0)
    zero = np.zeros((1, 1, 4), np.float32)
    silent = [(True, False), (False, True), (True, True), (False, False)] * 3
    tol = 1e-12 if precision == "float64" else 1e-5
    for eve_silent, bob_silent in silent:
        step = {"eve": zero if eve_silent else rng.random((1, 1, 4), dtype=np.float32),
                "bob": zero if bob_silent else rng.random((1, 1, 4), dtype=np.float32),
                "alice": rng.random((1, 1, 4), dtype=np.float32)}
        obs, rew, _, _, _ = ours.step({g: torch.from_numpy(a) for g, a in step.items()})
        r_obs, r_rew, _, _, _ = par.step(to_reference_actions(ours, step))
        for g in ("eve", "bob", "alice"):
            assert abs(float(rew[g][0, 0]) - r_rew[f"{g}_0"]) < tol, (g, eve_silent, bob_silent)
            assert np.allclose(obs[g][0, 0].numpy(), r_obs[f"{g}_0"], atol=1e-7)
        if eve_silent:
            assert float(rew["eve"][0, 0]) == 0.0
    ours.close()
    par.close()


def test_setting_goal_and_key_changes_what_agents_see_as_in_mpe2():
    env = war_envs.make(ENV, num_envs=2, seed=0, precision="float64")
    env.reset()
    env.step({"eve": torch.tensor([[1], [2]]), "bob": torch.tensor([[0], [3]]), "alice": torch.tensor([[2], [1]])})
    par, raw = make_reference(ENV)
    for goal, key in ((0, 1), (1, 1), (1, 0), (0, 0)):
        obs = env.set_state({"goal": torch.tensor([goal, goal], dtype=torch.int32),
                             "key": torch.tensor([key, key], dtype=torch.int32)})
        copy_world_into_reference(env, raw, world=1, copy_extra=copy_goal_and_key)
        for g in ("eve", "bob", "alice"):
            assert np.array_equal(obs[g][1, 0].numpy(), raw.observe(f"{g}_0")), (g, goal, key)
        code = np.eye(4, dtype=np.float32)
        assert np.array_equal(obs["alice"][1, 0].numpy(), np.concatenate([code[goal], code[key]]))
        assert np.array_equal(obs["bob"][1, 0, :4].numpy(), code[key])
        assert np.array_equal(obs["eve"][1, 0].numpy(), code[1])  # Alice said word 1 in world 1
        assert np.allclose(env._entity_colors(1)[1], raw.world.agents[1].color[:3])
    for bad in ({"goal": torch.tensor([2, 0], dtype=torch.int32)}, {"key": torch.tensor([0, -1], dtype=torch.int32)}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            env.set_state(bad)
    assert env.render_frame(1).shape == (700, 700, 3)
    env.close()
    par.close()


def test_agents_and_spaces_match_mpe2():
    assert_agents_and_spaces_match(ENV)
    assert_agents_and_spaces_match(ENV, continuous_actions=True)


def test_reset_distribution_matches_mpe2():
    n = 3000
    ours = our_resets(ENV, n)

    def read(raw):
        agents, landmarks = raw.world.agents, raw.world.landmarks
        codes = [tuple(lm.color) for lm in landmarks]
        return {"agent_pos": np.array([a.state.p_pos for a in agents]),
                "landmark_pos": np.array([lm.state.p_pos for lm in landmarks]),
                "goal": np.array(landmarks.index(agents[0].goal_a)),
                "key": np.array(codes.index(tuple(agents[2].key)))}

    ref = reference_resets(ENV, n, read)
    for key in ("agent_pos", "landmark_pos"):
        assert ours[key].shape == ref[key].shape
        assert_same_continuous(ours[key], ref[key], key)
    for key in ("goal", "key"):
        assert ours[key].shape == (n,)
        assert_same_frequencies(ours[key], ref[key], [0, 1], key)
    assert_same_frequencies(2 * ours["goal"] + ours["key"], 2 * ref["goal"] + ref["key"], [0, 1, 2, 3], "pair")
    assert np.all(ours["agent_vel"] == 0) and np.all(ours["agent_comm"] == 0)


def test_nobody_moves_and_info_reports_decoding():
    env = war_envs.make(ENV, num_envs=6, seed=1, precision="float64")
    env.reset()
    start = env.get_state()["agent_pos"].clone()
    goal = env.get_state()["goal"].long()
    for word in range(4):
        say = torch.full((6, 1), word)
        _, rew, _, _, info = env.step({"eve": say, "bob": say, "alice": say})
        assert torch.equal(env.get_state()["agent_pos"], start)
        hit = (goal == word).to(info["bob_decodes"].dtype)
        assert torch.equal(info["bob_decodes"], hit) and torch.equal(info["eve_decodes"], hit)
        # Eve and Bob said the same word: Alice and Bob's terms cancel
        assert torch.all(rew["bob"] == 0) and torch.equal(rew["alice"], rew["bob"])
        assert torch.equal(rew["eve"][:, 0], torch.where(goal == word, 0.0, -2.0).double())
    env.close()


@pytest.mark.parametrize("kwargs,error,name", [
    ({"max_cycles": 0}, ValueError, "max_cycles"),
    ({"continuous_actions": "no"}, TypeError, "continuous_actions"),
    ({"curriculum": True}, ValueError, "curriculum"),
    ({"terminate_on_success": True}, ValueError, "terminate_on_success"),
    ({"num_agent_neighbors": 2}, ValueError, "num_agent_neighbors"),
    ({"num_landmark_neighbors": 1}, ValueError, "num_landmark_neighbors"),
    ({"local_ratio": 0.5}, TypeError, "local_ratio"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        war_envs.make(ENV, num_envs=1, **kwargs)
