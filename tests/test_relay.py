"""Relay-v0: physics, observations, reward and goal schedule against a numpy recomputation from
get_state over full episodes (discrete and continuous actions, float32 and float64); the goal
switches at the state's scheduled times, reproducibly; muting zeroes what the sentries hear and
nothing else; state round trips; PettingZoo's and Gymnasium's checkers; argument errors."""

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

import war_envs

ENV = "Relay-v0"
DT, KEEP = 0.1, 0.75  # mpe2's dt and 1 - damping
SENTRY_ACCEL = 3.0
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.float64)


def numpy_state(env) -> dict:
    return {k: v.double().numpy().copy() if v.is_floating_point() else v.numpy().copy()
            for k, v in env.get_state().items()}


def goal_at(st: dict, t: np.ndarray) -> np.ndarray:
    """The goal of step t from the schedule: goal_sequence[#{m : switch_time[m] <= t}]."""
    count = (st["switch_time"] <= t[:, None]).sum(1)
    return st["goal_sequence"][np.arange(len(t)), count]


def expected_obs(st: dict, L: int, mute: bool) -> tuple[np.ndarray, np.ndarray]:
    goal = goal_at(st, st["t"])
    lm = st["landmark_pos"]
    E = len(goal)
    commander = np.concatenate([np.eye(L)[goal], lm.reshape(E, -1)], 1)
    pos, vel = st["agent_pos"][:, 1:], st["agent_vel"][:, 1:]
    rel = (lm[:, None] - pos[:, :, None]).reshape(E, pos.shape[1], -1)
    heard = np.zeros((E, pos.shape[1], L)) if mute else np.repeat(st["agent_comm"][:, None, 0], pos.shape[1], 1)
    return commander, np.concatenate([vel, pos, rel, heard], -1)


def random_actions(env, rng, continuous):
    E, S, L = env.num_envs, env.num_sentries, env.num_landmarks
    if continuous:
        return {"commander": rng.random((E, 1, L), dtype=np.float32), "sentry": rng.random((E, S, 5), dtype=np.float32)}
    return {"commander": rng.integers(0, L, (E, 1)), "sentry": rng.integers(0, 5, (E, S))}


def torch_actions(actions):
    return {g: torch.from_numpy(a) for g, a in actions.items()}


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("mute", [False, True], ids=["heard", "muted"])
def test_full_episode_matches_numpy(precision, continuous, mute):
    """Every step of an episode: positions, velocities, communication, both groups'
    observations, the reward, the info and the flags, recomputed in numpy from the previous
    get_state and the actions."""
    E, L, S, T = 6, 8, 4, 40
    env = war_envs.make(ENV, num_envs=E, seed=11, precision=precision, num_sentries=S, continuous_actions=continuous,
                        mute_commander=mute, max_cycles=T, autoreset_mode="disabled")
    obs = env.reset()
    tol = 1e-12 if precision == "float64" else 1e-5
    rng = np.random.default_rng(3)
    st = numpy_state(env)
    com, sen = expected_obs(st, L, mute)
    np.testing.assert_allclose(obs["commander"][:, 0].numpy(), com, atol=1e-6)
    np.testing.assert_allclose(obs["sentry"].numpy(), sen, atol=1e-6)
    assert np.all(st["agent_comm"] == 0)
    for t in range(T):
        acts = random_actions(env, rng, continuous)
        obs, rew, term, trunc, info = env.step(torch_actions(acts))
        new = numpy_state(env)
        # physics: sentries pos += vel dt, vel = 0.75 vel + accel * u dt (no contacts, no cap)
        if continuous:
            a = acts["sentry"].astype(np.float32)
            u = np.stack([a[..., 2] - a[..., 1], a[..., 4] - a[..., 3]], -1).astype(np.float64)
            comm = acts["commander"][:, 0].astype(np.float64)
        else:
            u = MOVES[acts["sentry"]]
            comm = np.eye(L)[acts["commander"][:, 0]]
        pos = st["agent_pos"][:, 1:] + st["agent_vel"][:, 1:] * DT
        vel = st["agent_vel"][:, 1:] * KEEP + SENTRY_ACCEL * u * DT
        np.testing.assert_allclose(new["agent_pos"][:, 1:], pos, atol=tol)
        np.testing.assert_allclose(new["agent_vel"][:, 1:], vel, atol=tol)
        np.testing.assert_array_equal(new["agent_pos"][:, 0], 0.0)  # the commander never moves
        np.testing.assert_allclose(new["agent_comm"][:, 0], comm, atol=1e-7)
        np.testing.assert_array_equal(new["agent_comm"][:, 1:], 0.0)  # sentries are silent
        np.testing.assert_array_equal(new["landmark_pos"], st["landmark_pos"])
        # reward: minus the sentries' mean distance to the goal of step t, for every agent
        goal = goal_at(st, st["t"])
        d = np.linalg.norm(new["agent_pos"][:, 1:] - new["landmark_pos"][np.arange(E), goal][:, None], axis=-1)
        expected = -d.mean(1)
        np.testing.assert_allclose(rew["sentry"].double().numpy(), np.repeat(expected[:, None], S, 1), atol=tol)
        np.testing.assert_allclose(rew["commander"][:, 0].double().numpy(), expected, atol=tol)
        np.testing.assert_array_equal(info["goal"].numpy(), goal)
        np.testing.assert_allclose(info["goal_dist"].double().numpy(), -expected, atol=tol)
        np.testing.assert_allclose(info["on_goal"].double().numpy(), (d < 0.1).mean(1), atol=1e-7)
        switched = (goal != goal_at(st, st["t"] - 1)) & (st["t"] > 0)
        np.testing.assert_array_equal(info["goal_switched"].numpy(), switched.astype(np.int32))
        assert not term["sentry"].any()
        assert bool(trunc["sentry"].all()) == (t == T - 1) and bool(trunc["sentry"].any()) == (t == T - 1)
        np.testing.assert_array_equal(new["t"], t + 1)
        com, sen = expected_obs(new, L, mute)
        np.testing.assert_allclose(obs["commander"][:, 0].numpy(), com, atol=1e-6)
        np.testing.assert_allclose(obs["sentry"].numpy(), sen, atol=1e-6)
        st = new
    env.close()


def test_reset_draws_the_ring_the_spawn_and_a_schedule_within_its_bounds():
    E, L = 400, 8
    env = war_envs.make(ENV, num_envs=E, seed=0, precision="float64", max_cycles=60, min_goal_steps=7,
                        max_goal_steps=13, max_goal_jump=3)
    env.reset()
    st = numpy_state(env)
    lm = st["landmark_pos"]
    np.testing.assert_allclose(np.linalg.norm(lm, axis=-1), 1.0, atol=1e-12)
    angle = np.arctan2(lm[..., 1], lm[..., 0])
    step = (np.diff(angle, axis=1) + 2 * math.pi) % (2 * math.pi)
    np.testing.assert_allclose(step, 2 * math.pi / L, atol=1e-9)  # equally spaced, in index order
    start = angle[:, 0] % (2 * math.pi)
    assert np.histogram(start, bins=4, range=(0, 2 * math.pi))[0].min() > E / 4 * 0.7  # rotation ~ U[0, 2π)
    sentries = st["agent_pos"][:, 1:]
    assert np.abs(sentries).max() < 0.25 and np.abs(sentries).max() > 0.24
    np.testing.assert_array_equal(st["agent_pos"][:, 0], 0.0)
    times, seq = st["switch_time"], st["goal_sequence"]
    assert times.shape == (E, 60 // 7) and seq.shape == (E, 60 // 7 + 1)
    holds = np.diff(np.concatenate([np.zeros((E, 1), int), times], 1), axis=1)
    assert holds.min() == 7 and holds.max() == 13  # U{min..max}, both ends reached
    jumps = (np.diff(seq, axis=1) + L) % L
    jumps = np.where(jumps > L // 2, jumps - L, jumps)
    assert set(np.unique(jumps)) == {-3, -2, -1, 1, 2, 3}
    assert np.bincount(seq[:, 0], minlength=L).min() > E / L * 0.6  # first goal ~ U{0..L-1}
    env.close()


def test_goal_switches_at_the_scheduled_times_and_is_reproducible():
    def episode(seed):
        env = war_envs.make(ENV, num_envs=5, seed=seed, max_cycles=50)
        env.reset()
        st = numpy_state(env)
        goals, switched = [], []
        for t in range(50):
            _, _, _, _, info = env.step({"commander": torch.zeros(5, 1, dtype=torch.long),
                                         "sentry": torch.zeros(5, 9, dtype=torch.long)})
            goals.append(info["goal"].numpy().copy())
            switched.append(info["goal_switched"].numpy().copy())
        next_schedule = numpy_state(env)["switch_time"]  # SAME_STEP autoreset: the next episode's
        env.close()
        return st, np.stack(goals, 1), np.stack(switched, 1), next_schedule

    st, goals, switched, following = episode(4)
    for e in range(5):
        times = st["switch_time"][e]
        expected = [st["goal_sequence"][e][(times <= t).sum()] for t in range(50)]
        np.testing.assert_array_equal(goals[e], expected)
        np.testing.assert_array_equal(np.flatnonzero(switched[e]), times[times < 50])
        assert np.all(goals[e][times[times < 50]] != goals[e][times[times < 50] - 1])
    assert switched.sum(1).min() >= 2  # 50 steps, holds of at most 20
    again = episode(4)
    for a, b in zip((st["switch_time"], st["goal_sequence"], goals, following), (again[0]["switch_time"],
                                                                                 again[0]["goal_sequence"],
                                                                                 again[1], again[3])):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(st["switch_time"], following)  # a new schedule every episode
    assert not np.array_equal(st["switch_time"], episode(5)[0]["switch_time"])


def test_muting_zeroes_what_the_sentries_hear_and_changes_nothing_else():
    envs = [war_envs.make(ENV, num_envs=4, seed=2, mute_commander=m) for m in (False, True)]
    outs = [env.reset() for env in envs]
    rng = np.random.default_rng(0)
    L = envs[0].num_landmarks
    heard_any = False
    for t in range(60):  # past an autoreset
        acts = torch_actions(random_actions(envs[0], rng, False))
        outs = [env.step(acts) for env in envs]
        (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) = outs
        s1, s2 = envs[0].get_state(), envs[1].get_state()
        assert s1.keys() == s2.keys()
        for k in s1:
            assert torch.equal(s1[k], s2[k]), k
        assert torch.equal(o1["commander"], o2["commander"])
        assert torch.equal(o1["sentry"][..., :-L], o2["sentry"][..., :-L])
        assert torch.all(o2["sentry"][..., -L:] == 0)
        heard_any |= bool(o1["sentry"][..., -L:].any())
        for a, b in ((r1, r2), (te1, te2), (tr1, tr2)):
            assert all(torch.equal(a[g], b[g]) for g in a)
        for k in ("goal", "goal_dist", "on_goal", "goal_switched"):
            assert torch.equal(i1[k], i2[k]), k
    assert heard_any
    for env in envs:
        env.close()


def test_state_round_trip_and_clone_replay_the_episode():
    env = war_envs.make(ENV, num_envs=3, seed=9, precision="float64")
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(7):
        env.step(torch_actions(random_actions(env, rng, False)))
    saved = env.get_state()
    acts = [torch_actions(random_actions(env, rng, False)) for _ in range(60)]

    def play():
        return [(out[1]["sentry"].clone(), out[4]["goal"].clone(), out[0]["sentry"].clone())
                for out in (env.step(a) for a in acts)]

    first = play()
    env.set_state(saved)
    for a, b in zip(first, play()):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    # a changed schedule changes the goal the commander sees, at once
    schedule = dict(saved)
    schedule["goal_sequence"] = (saved["goal_sequence"] + 1) % env.num_landmarks
    obs = env.set_state(schedule)
    goal = torch.as_tensor(env.current_goal())
    assert torch.equal(obs["commander"][:, 0, :8].argmax(-1), goal)
    assert torch.equal(goal, (torch.as_tensor(state_goal(saved)) + 1) % 8)
    # clone world 0 onto 1 and 2: identical actions then give identical worlds
    env.clone_worlds([0, 0], [1, 2])
    moves = torch.from_numpy(rng.integers(0, 5, (1, 9))).repeat(3, 1)
    same = {"commander": torch.zeros(3, 1, dtype=torch.long), "sentry": moves}
    for _ in range(50):
        obs, rew, *_ = env.step(same)
        assert torch.equal(obs["sentry"][0], obs["sentry"][1]) and torch.equal(obs["sentry"][0], obs["sentry"][2])
    with pytest.raises(ValueError, match="goal_sequence"):
        env.set_state({"goal_sequence": torch.full_like(saved["goal_sequence"], 8)})
    env.close()


def state_goal(state) -> np.ndarray:
    """The goal of the step about to be taken in a get_state() snapshot."""
    st = {k: v.numpy() for k, v in state.items()}
    return goal_at(st, st["t"])


def test_float32_and_float64_worlds_agree():
    runs = []
    for precision in ("float32", "float64"):
        env = war_envs.make(ENV, num_envs=4, seed=6, precision=precision)
        env.reset()
        rng = np.random.default_rng(2)
        rows = []
        for _ in range(50):
            _, rew, _, _, info = env.step(torch_actions(random_actions(env, rng, False)))
            rows.append((rew["sentry"][:, 0].double().clone(), info["goal"].clone()))
        runs.append(rows)
        env.close()
    for (r32, g32), (r64, g64) in zip(*runs):
        assert torch.equal(g32, g64)
        torch.testing.assert_close(r32, r64, rtol=1e-4, atol=1e-5)


def test_spaces_metrics_variants_and_render():
    env = war_envs.make(ENV, num_envs=2, seed=0)
    assert list(env.groups) == ["commander", "sentry"]
    assert env.groups["commander"].agents == ("commander_0",)
    assert env.groups["sentry"].agents == tuple(f"sentry_{i}" for i in range(9))
    assert env.groups["commander"].obs_dim == 24 and env.groups["sentry"].obs_dim == 28
    assert env.groups["commander"].action_space == gym.spaces.Discrete(8)
    assert env.groups["sentry"].action_space == gym.spaces.Discrete(5)
    assert [m.name for m in env.episode_metrics] == ["goal_dist", "on_goal", "goal_switches"]
    assert env.progress_metric == "goal_dist"
    assert type(env).evaluation_variants({}) == {"muted": {"mute_commander": True}}
    assert type(env).evaluation_variants({"mute_commander": True}) == {}
    env.reset()
    assert env.render_frame(1).shape == (700, 700, 3)
    env.close()
    cont = war_envs.make(ENV, num_landmarks=5, max_goal_jump=2, continuous_actions=True)
    assert cont.groups["commander"].action_space.shape == (5,) and cont.groups["sentry"].action_space.shape == (5,)
    cont.close()


@pytest.mark.parametrize("kwargs,match", [
    ({"num_sentries": 0}, "num_sentries"),
    ({"num_landmarks": 2}, "num_landmarks"),
    ({"min_goal_steps": 0}, "min_goal_steps"),
    ({"min_goal_steps": 12, "max_goal_steps": 11}, "max_goal_steps"),
    ({"max_goal_jump": 4}, "max_goal_jump"),
    ({"max_goal_jump": 0}, "max_goal_jump"),
    ({"mute_commander": 1}, "mute_commander"),
    ({"curriculum": True}, "curriculum"),
    ({"terminate_on_success": True}, "terminate_on_success"),
    ({"num_agent_neighbors": 2}, "num_agent_neighbors"),
    ({"max_cycles": 0}, "max_cycles"),
])
def test_bad_arguments_name_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        war_envs.make(ENV, **kwargs)


def test_pettingzoo_parallel_api_and_gymnasium_check_env():
    pytest.importorskip("pettingzoo")
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import parallel_api_test

    with warnings.catch_warnings():
        for text in ("infinity", "different observation space sizes", "different shapes", "max_cycles is fixed",
                     "different from the unwrapped version"):
            warnings.filterwarnings("ignore", message=f".*{text}.*")
        par = war_envs.parallel_env(ENV, max_cycles=20)
        parallel_api_test(par, num_cycles=100)
        par.close()
        env = gym.make(f"war_envs/{ENV}", max_cycles=20)
        check_env(env.unwrapped, skip_render_check=True)
        env.close()
