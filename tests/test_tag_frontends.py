"""Tag-v0 behind the standard APIs: PettingZoo (parallel_api_test, api_test, agents leaving when
tagged, full-episode determinism, MultiDiscrete bad input) and Gymnasium (check_env, make_vec
step for step against SyncVectorEnv in every autoreset mode)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode

pettingzoo = pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test  # noqa: E402

import war_envs  # noqa: E402
from test_gymnasium import _run_against_sync, _unexpected  # noqa: E402
from war_envs.frontends.pettingzoo import ParallelEnv, aec_env  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*(minimum|maximum) (observation|state) space value is.*infinity"),
    # api_test's hint for MultiDiscrete action spaces (WarpDrive's, kept on purpose)
    pytest.mark.filterwarnings("ignore:Action space for each agent probably should be"),
]

# runners get tagged (and leave) within a few dozen steps; some episodes end with no runner left
BUSY = dict(num_taggers=3, num_runners=5, grid_length=6.0, episode_length=30, tagging_distance=0.2,
            use_full_observation=False, num_other_agents_observed=3)
GYM_ID = "war_envs/Tag-v0"


def same(a, b) -> bool:
    return data_equivalence(a, b, exact=True)


def random_actions(env, rng):
    return {a: rng.integers(0, env.action_space(a).nvec) for a in env.agents}


def run_episodes(env, seed, episodes, action_seed=7):
    rng = np.random.default_rng(action_seed)
    record = []
    for e in range(episodes):
        obs, infos = env.reset(seed=seed if e == 0 else None)
        record.append((obs, infos, env.state()))
        while env.agents:
            out = env.step(random_actions(env, rng))
            record.append((*out, env.state(), list(env.agents)))
    return record


# ---------------------------------------------------------------------- PettingZoo
@pytest.mark.parametrize("kw", [BUSY, {}], ids=["busy-k-nearest", "defaults"])
def test_parallel_and_aec_api(kw):
    env = ParallelEnv("Tag-v0", **kw)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*max_cycles is fixed at construction.*")
        parallel_api_test(env, num_cycles=200)
    env.close()
    aec = aec_env("Tag-v0", **kw)
    api_test(aec, num_cycles=200)
    aec.close()


def test_seed_tests():
    seed_test(lambda: aec_env("Tag-v0", **BUSY), num_cycles=30)
    parallel_seed_test(lambda: ParallelEnv("Tag-v0", **BUSY), num_cycles=30)


def test_tagged_runners_are_reported_once_then_removed():
    env = ParallelEnv("Tag-v0", **BUSY)
    rng = np.random.default_rng(0)
    left_early = 0
    for episode in range(4):
        env.reset(seed=episode)
        assert env.agents == env.possible_agents
        while env.agents:
            live = list(env.agents)
            obs, rew, term, trunc, infos = env.step(random_actions(env, rng))
            assert set(obs) == set(rew) == set(term) == set(trunc) == set(infos) == set(live)
            done = {a for a in live if term[a] or trunc[a]}
            assert env.agents == [a for a in live if a not in done]
            if env.agents:  # someone left while the game goes on: a tagged runner
                for a in done:
                    assert a.startswith("runner_") and term[a] and not trunc[a]
                    assert infos[a]["tags"] == 1 and rew[a] == -1.0
                    left_early += 1
            for a in env.agents:
                assert env.observation_space(a).contains(obs[a])
    assert left_early >= 3


def test_full_episode_determinism():
    a = run_episodes(ParallelEnv("Tag-v0", **BUSY), seed=11, episodes=3)
    b = run_episodes(ParallelEnv("Tag-v0", **BUSY), seed=11, episodes=3)
    assert same(a, b)
    c = run_episodes(ParallelEnv("Tag-v0", **BUSY), seed=12, episodes=1)
    assert not same(a[0][0], c[0][0])


def test_multi_discrete_bad_actions_leave_env_unchanged():
    a, b = ParallelEnv("Tag-v0", seed=0, **BUSY), ParallelEnv("Tag-v0", seed=0, **BUSY)
    a.reset(seed=4)
    b.reset(seed=4)
    good = {agent: np.array([1, 2]) for agent in a.agents}
    cases = [
        ({**good, "runner_0": np.array([11, 0])}, ValueError, r"actions\['runner_0'\]\[0\].*Discrete\(11\).*11"),
        ({**good, "runner_1": np.array([0, -1])}, ValueError, r"actions\['runner_1'\]\[1\].*-1"),
        ({**good, "tagger_0": np.array([1, 2, 3])}, ValueError, r"actions\['tagger_0'\].*shape \(2,\)"),
        ({**good, "tagger_0": 3}, ValueError, r"actions\['tagger_0'\].*shape"),
        ({**good, "tagger_1": np.array([0.5, 1.0])}, TypeError, r"actions\['tagger_1'\].*integer"),
        ({**good, "tagger_1": None}, TypeError, r"actions\['tagger_1'\].*None"),
        ({k: x for k, x in good.items() if k != "runner_4"}, ValueError, r"missing \['runner_4'\]"),
    ]
    for bad, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            a.step(bad)
    lists = {agent: [1, 2] for agent in a.agents}  # lists and int32 arrays are accepted too
    assert same(a.step(lists), b.step({k: np.array(x, np.int32) for k, x in lists.items()}))


def test_registry_entry_points_and_max_cycles_alias():
    par = pettingzoo.make("parallel", "war_envs/Tag-v0", num_runners=3)
    assert isinstance(par, ParallelEnv) and par.possible_agents == ["tagger_0", "runner_0", "runner_1", "runner_2"]
    assert par.max_cycles == 100
    assert isinstance(war_envs.env("Tag-v0").unwrapped, ParallelEnv)


# ---------------------------------------------------------------------- Gymnasium
def test_check_env():
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        for kw in ({}, BUSY):
            env = gym.make(GYM_ID, **kw)
            check_env(env.unwrapped)
            check_env(env)
            env.close()
    assert not _unexpected(records), _unexpected(records)


def test_joint_env_reports_alive_and_sums_rewards():
    env = gym.make(GYM_ID, **BUSY)
    obs, _ = env.reset(seed=1)
    env.action_space.seed(0)
    gone = 0
    for _ in range(BUSY["episode_length"]):
        obs, reward, term, trunc, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        assert info["alive"].dtype == np.bool_ and info["alive"].shape == (8,) and info["alive"][:3].all()
        assert reward == sum(info["rewards"].values())
        gone = max(gone, int((~info["alive"]).sum()))
        if term or trunc:
            break
    assert gone >= 1


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_make_vec_matches_sync_vector_env(mode):
    seen = _run_against_sync(GYM_ID, mode, steps=70, seed=2, **BUSY)
    assert seen["done"] >= 3 and seen["terminated"] >= 1  # all runners tagged in some episodes


def test_make_vec_max_episode_steps_sets_episode_length():
    envs = gym.make_vec(GYM_ID, num_envs=2, max_episode_steps=7)
    assert envs.batched.episode_length == 7
    with pytest.raises(ValueError, match="max_episode_steps.*episode_length"):
        gym.make_vec(GYM_ID, num_envs=2, max_episode_steps=7, episode_length=9)
    # the game itself is that long (time feature, end-of-game reward): SyncVectorEnv's twin is
    # gym.make(id, episode_length=k), not a TimeLimit
    seen = _run_against_sync(GYM_ID, AutoresetMode.SAME_STEP, steps=20, episode_length=6)
    assert seen["done"] >= 6


def test_vector_bad_multi_discrete_actions():
    envs = gym.make_vec(GYM_ID, num_envs=3, num_runners=2)
    envs.reset(seed=0)
    good = {a: np.zeros((3, 2), np.int64) for a in envs.unwrapped.agents}
    with pytest.raises(ValueError, match=r"actions\['runner_1'\].*got 11 in component 0.*at world 2"):
        envs.step({**good, "runner_1": np.array([[0, 0], [0, 0], [11, 0]])})
    with pytest.raises(ValueError, match=r"actions\['tagger_0'\].*expected shape \(3, 2\)"):
        envs.step({**good, "tagger_0": np.zeros(3, np.int64)})
    envs.step(good)
