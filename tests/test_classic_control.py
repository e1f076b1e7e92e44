"""The classic control scenarios (``war_envs.scenarios.classic``): the declared interface and
Gymnasium's spaces, conformance (``war_envs.testing.check_all``), bad input, precision,
determinism, snapshots and rendering.  Their rules against Gymnasium itself:
``tests/test_classic_reference.py``."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
import torch

import war_envs
import war_envs.testing as wt

IDS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"]
#: Gymnasium's registered episode lengths
MAX_STEPS = {"CartPole-v1": 500, "Acrobot-v1": 500, "MountainCar-v0": 200, "MountainCarContinuous-v0": 999,
             "Pendulum-v1": 200}
CONTINUOUS = ["MountainCarContinuous-v0", "Pendulum-v1"]


def gym_env(env_id: str, **kwargs):
    return gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_spaces_and_declarations_are_gymnasiums(env_id):
    reference = gym_env(env_id)
    with war_envs.make(env_id, num_envs=3, seed=0) as env:
        assert list(env.groups) == ["agent"] and env.agents == ["agent_0"]
        spec = env.groups["agent"]
        assert spec.observation_space == reference.observation_space
        assert spec.observation_space.dtype == np.float32
        assert spec.action_space == reference.action_space
        assert env.metadata["render_fps"] == reference.metadata["render_fps"]
        assert env.episode_length_kwarg == "max_episode_steps"
        assert env.max_cycles == env.max_episode_steps == MAX_STEPS[env_id] == reference.spec.max_episode_steps
        obs = env.reset()
        assert obs["agent"].shape == (3, 1, reference.observation_space.shape[0])
        reference.reset(seed=0)
        assert env.get_state()["state"].shape == (3, len(reference.unwrapped.state))
        shape = (3, 1) if isinstance(spec.action_space, gym.spaces.Discrete) else (3, 1, 1)
        _, rew, term, trunc, _ = env.step(wt.random_actions(env, torch.Generator().manual_seed(0)))
        assert env._action_view.shape == shape
        assert rew["agent"].shape == term["agent"].shape == trunc["agent"].shape == (3, 1)
    with war_envs.make(env_id, num_envs=1, max_episode_steps=7) as env:
        assert env.max_cycles == 7


@pytest.mark.parametrize("env_id", IDS)
def test_check_all(env_id):
    wt.check_all(env_id)


@pytest.mark.parametrize("env_id", IDS)
def test_float32_and_float64_worlds_share_their_starts(env_id):
    """Both precisions draw the same numbers: float32 starts are float64 starts rounded (one
    process holding both kinds of worlds)."""
    a = war_envs.make(env_id, num_envs=64, seed=3)
    b = war_envs.make(env_id, num_envs=64, seed=3, precision="float64")
    a.reset()
    b.reset()
    sa, sb = a.get_state()["state"], b.get_state()["state"]
    assert sa.dtype == torch.float32 and sb.dtype == torch.float64
    torch.testing.assert_close(sa.double(), sb, rtol=1e-6, atol=1e-7)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        actions = wt.random_actions(a, gen)
        oa, ra, _, _, _ = a.step(actions)
        ob, rb, _, _, _ = b.step(actions)
        assert ra["agent"].dtype == torch.float32 and rb["agent"].dtype == torch.float64
        torch.testing.assert_close(oa["agent"], ob["agent"], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("env_id", IDS)
def test_clone_worlds_and_threads_replay_exactly(env_id):
    env = war_envs.make(env_id, num_envs=6, seed=1, precision="float64")
    env.reset()
    gen = torch.Generator().manual_seed(2)
    for _ in range(3):
        env.step(wt.random_actions(env, gen))
    env.clone_worlds([0, 1, 2], [3, 4, 5])
    shards = war_envs.make(env_id, num_envs=6, seed=1, precision="float64", num_threads=3)
    shards.reset()
    shards.set_state(env.get_state())
    for _ in range(40):
        actions = wt.random_actions(env, gen)
        actions = {"agent": torch.cat([actions["agent"][:3]] * 2)}
        out = env.step(actions)
        again = shards.step(actions)
        for a, b in zip(out[:4], again[:4]):
            assert torch.equal(a["agent"], b["agent"])
        for part in out[:4]:
            assert torch.equal(part["agent"][:3], part["agent"][3:])


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, error, text", [
    ({"low": 0.1, "high": -0.1}, ValueError, "low, high: expected low <= high"),
    ({"low": "a"}, TypeError, "low: expected a float"),
    ({"high": float("nan")}, ValueError, "high: expected a finite float"),
    ({"kinematics_integrator": "rk4"}, ValueError, "kinematics_integrator: expected one of"),
    ({"sutton_barto_reward": 1}, TypeError, "sutton_barto_reward: expected a bool"),
    ({"max_episode_steps": 0}, ValueError, "max_episode_steps: expected an int >= 1"),
    ({"max_cycles": 10}, TypeError, "unknown keyword argument"),
])
def test_cartpole_arguments_are_checked(kwargs, error, text):
    with pytest.raises(error, match=text):
        war_envs.make("CartPole-v1", **kwargs)


@pytest.mark.parametrize("env_id, kwargs, error, text", [
    ("Acrobot-v1", {"book_or_nips": "paper"}, ValueError, "book_or_nips: expected one of"),
    ("Acrobot-v1", {"dt": 0.0}, ValueError, "dt: expected a float > 0"),
    ("Acrobot-v1", {"low": 1.0, "high": 0.5}, ValueError, "low, high: expected low <= high"),
    ("MountainCar-v0", {"goal_velocity": "fast"}, TypeError, "goal_velocity: expected a float"),
    ("MountainCar-v0", {"high": float("inf")}, ValueError, "high: expected a finite float"),
    ("MountainCarContinuous-v0", {"low": -0.3, "high": -0.5}, ValueError, "low, high: expected low <= high"),
    ("MountainCarContinuous-v0", {"strict_actions": "yes"}, TypeError, "strict_actions: expected a bool"),
    ("Pendulum-v1", {"g": None}, TypeError, "g: expected a float"),
    ("Pendulum-v1", {"x_init": float("nan")}, ValueError, "x_init: expected a finite float"),
    ("Pendulum-v1", {"y_init": [1.0]}, TypeError, "y_init: expected a float"),
    ("Pendulum-v1", {"low": 0.1}, TypeError, "unknown keyword argument"),
])
def test_task_arguments_are_checked(env_id, kwargs, error, text):
    with pytest.raises(error, match=text):
        war_envs.make(env_id, **kwargs)


# ----------------------------------------------------------------------------- continuous actions
@pytest.mark.parametrize("env_id", CONTINUOUS)
def test_out_of_range_box_actions_are_clipped_as_gymnasium_does(env_id):
    """The validated step takes finite values outside the Box (``clips_actions``): the
    dynamics see them clipped (MountainCarContinuous's reward costs the value given)."""
    high = float(gym_env(env_id).action_space.high[0])
    wide = war_envs.make(env_id, num_envs=2, seed=0, precision="float64")
    clipped = war_envs.make(env_id, num_envs=2, seed=0, precision="float64")
    assert wide.clips_actions and not war_envs.make(env_id, strict_actions=True).clips_actions
    wide.reset()
    clipped.reset()
    given = torch.tensor([[[3.5 * high]], [[-1e30]]])
    _, rew, _, _, _ = wide.step({"agent": given})
    _, rew_c, _, _, _ = clipped.step({"agent": given.clamp(-high, high)})
    assert torch.equal(wide.get_state()["state"], clipped.get_state()["state"])
    if env_id == "MountainCarContinuous-v0":
        cost = 0.1 * given[:, 0, 0].double() ** 2
        torch.testing.assert_close(rew["agent"][:, 0], rew_c["agent"][:, 0] + 0.1 * high**2 - cost)
    else:
        assert torch.equal(rew["agent"], rew_c["agent"])
    one = war_envs.make(env_id, num_envs=1, seed=0)  # the small-batch (Python) check takes them too
    one.reset()
    one.step({"agent": torch.tensor([[[7.0]]])})
    one.step({"agent": np.array([[[-7.0]]], dtype=np.float64)})


@pytest.mark.parametrize("num_envs", [1, 64])
@pytest.mark.parametrize("env_id", CONTINUOUS)
def test_bad_box_actions_get_one_clear_error(env_id, num_envs):
    high = float(gym_env(env_id).action_space.high[0])
    env = war_envs.make(env_id, num_envs=num_envs, seed=0)
    strict = war_envs.make(env_id, num_envs=num_envs, seed=0, strict_actions=True)
    env.reset()
    strict.reset()
    good = torch.zeros(num_envs, 1, 1)
    cases = [
        (env, float("nan"), ValueError, r"actions\['agent'\]: expected finite Box actions in .*, got NaN"),
        (env, float("inf"), ValueError,
         r"expected finite float32 Box actions \(values outside .* are clipped into it\), got inf"),
        (env, 1e39, ValueError, r"expected finite float32 Box actions .* got 1e\+39"),
        (strict, 1.5 * high, ValueError,
         rf"actions\['agent'\]: expected Box actions in \[{-high}, {high}\], got {1.5 * high}"),
        (strict, float("nan"), ValueError, "got NaN"),
    ]
    for target, value, error, text in cases:
        actions = good.double().clone()
        actions[-1, 0, 0] = value
        before = target.get_state()
        with pytest.raises(error, match=text):
            target.step({"agent": actions})
        for k, tensor in target.get_state().items():
            assert torch.equal(tensor, before[k]), (value, k)
    with pytest.raises(TypeError, match=r"actions\['agent'\]: expected a floating dtype"):
        env.step({"agent": good.long()})
    with pytest.raises(ValueError, match=r"actions\['agent'\]: expected shape"):
        env.step({"agent": good[:, 0]})


@pytest.mark.parametrize("env_id", CONTINUOUS)
def test_check_all_strict_actions(env_id):
    wt.check_bad_inputs(env_id, strict_actions=True)


# ----------------------------------------------------------------------------- the goal metric
@pytest.mark.parametrize("env_id", ["Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0"])
def test_reached_goal_is_the_terminated_flag(env_id):
    env = war_envs.make(env_id, num_envs=2, seed=0, precision="float64")
    assert [m.name for m in env.episode_metrics] == ["reached_goal"] and env.episode_metrics[0].reduce == "any"
    env.reset()
    near = {"Acrobot-v1": [3.1, 0.0, 0.0, 0.0], "MountainCar-v0": [0.49, 0.05],
            "MountainCarContinuous-v0": [0.44, 0.05]}[env_id]
    env.set_state({"state": torch.tensor([near, [0.0] * len(near)], dtype=torch.float64)})
    action = wt.random_actions(env, torch.Generator().manual_seed(0))
    if env_id == "MountainCarContinuous-v0":
        action = {"agent": torch.ones(2, 1, 1)}
    elif env_id == "MountainCar-v0":
        action = {"agent": torch.full((2, 1), 2)}
    _, _, term, _, info = env.step(action)
    assert term["agent"][:, 0].tolist() == [True, False]
    assert info["reached_goal"].tolist() == [1.0, 0.0]
    assert env.episode_metrics[0].step(info).tolist() == [1.0, 0.0]
    for env_id_without in ("CartPole-v1", "Pendulum-v1"):
        assert war_envs.make(env_id_without).episode_metrics == ()


@pytest.mark.parametrize("actions, error, text", [
    (torch.tensor([[2], [0]]), ValueError, r"actions\['agent'\]: expected Discrete\(2\) actions in \[0, 1\], got 2"),
    (torch.tensor([[-1], [0]]), ValueError, r"actions\['agent'\]: expected Discrete\(2\) actions in \[0, 1\], got -1"),
    (torch.tensor([[1.0], [0.0]]), TypeError, r"actions\['agent'\]: expected an integer dtype"),
    (torch.tensor([[True], [False]]), TypeError, r"actions\['agent'\]: expected an integer dtype"),
    (torch.tensor([1, 0]), ValueError, r"actions\['agent'\]: expected shape \(2, 1\), got \(2,\)"),
    ("left", TypeError, r"actions: expected a dict keyed by \['agent'\]"),
])
def test_bad_discrete_actions_get_one_clear_error(actions, error, text):
    env = war_envs.make("CartPole-v1", num_envs=2, seed=0)
    env.reset()
    before = env.get_state()
    with pytest.raises(error, match=text):
        env.step({"agent": actions} if not isinstance(actions, str) else actions)
    for k, value in env.get_state().items():
        assert torch.equal(value, before[k]), k


# ----------------------------------------------------------------------------- CartPole specifics
@pytest.mark.filterwarnings("ignore:.*already returned terminated = True")
@pytest.mark.parametrize("sutton_barto", [False, True])
def test_cartpole_steps_after_termination_are_gymnasiums(sutton_barto):
    """Autoreset DISABLED and no reset: Gymnasium's rewards for steps beyond termination."""
    env = war_envs.make("CartPole-v1", num_envs=1, precision="float64", autoreset_mode="disabled",
                        sutton_barto_reward=sutton_barto)
    reference = gym_env("CartPole-v1", sutton_barto_reward=sutton_barto).unwrapped
    reference.reset(seed=4)
    env.reset()
    env.set_state({"state": torch.from_numpy(reference.state)[None]})
    flags = []
    for t in range(40):
        _, rew, term, _, _ = env.step({"agent": torch.ones(1, 1, dtype=torch.int64)})
        _, r, te, _, _ = reference.step(1)
        assert float(rew["agent"]) == r and bool(term["agent"]) == te, t
        np.testing.assert_allclose(env.get_state()["state"][0].numpy(), reference.state, rtol=0, atol=1e-10)
        flags.append(te)
    assert sum(flags) > 3 and not flags[0]
    assert int(env.get_state()["steps_beyond_terminated"][0]) == reference.steps_beyond_terminated
    env.reset()
    assert int(env.get_state()["steps_beyond_terminated"][0]) == -1


# ----------------------------------------------------------------------------- rendering
def gym_frame(env_id: str, state) -> np.ndarray:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    pytest.importorskip("pygame")
    reference = gym_env(env_id, render_mode="rgb_array")
    reference.reset(seed=0)
    reference.unwrapped.state = np.asarray(state, dtype=np.float64)
    frame = reference.render()
    reference.close()
    return frame


def picture_distance(ours: np.ndarray, theirs: np.ndarray) -> float:
    """How far two pictures differ: the darkness (255 - colour) of each, blurred over 5 x 5
    pixels (Gymnasium's edges are anti-aliased, ours hard, and may fall a pixel apart), summed
    absolute difference over ``theirs``'s total darkness: ~0.05-0.15 for the same state drawn
    by both, above 1 for different states."""
    def blurred(img):
        d = np.pad(255.0 - img.astype(np.float64), ((2, 2), (2, 2), (0, 0)))
        h, w = img.shape[:2]
        return sum(d[dy:dy + h, dx:dx + w] for dy in range(5) for dx in range(5)) / 25
    a, b = blurred(ours), blurred(theirs)
    return float(np.abs(a - b).sum() / b.sum())


RENDER_STATES = {
    "CartPole-v1": [[0.5, 0.0, 0.15, 0.0], [-1.8, 0.3, -0.3, 1.0]],
    "Acrobot-v1": [[0.3, -0.5, 0.0, 0.0], [2.5, 1.0, 1.0, -2.0]],
    "MountainCar-v0": [[-0.5, 0.0], [0.3, 0.02]],
    "MountainCarContinuous-v0": [[-1.1, 0.0], [0.4, 0.01]],
    "Pendulum-v1": [[0.4, 0.0], [-2.5, 1.0]],
}


@pytest.mark.parametrize("env_id", IDS)
def test_render_frame_draws_gymnasiums_picture(env_id):
    env = war_envs.make(env_id, num_envs=2, precision="float64")
    env.reset()
    states = torch.tensor(RENDER_STATES[env_id], dtype=torch.float64)
    env.set_state({"state": states})
    for w, state in enumerate(RENDER_STATES[env_id]):
        ours, theirs = env.render_frame(w), gym_frame(env_id, state)
        assert ours.shape == theirs.shape and ours.dtype == np.uint8
        assert (theirs != 255).any(-1).mean() > 0.005
        assert picture_distance(ours, theirs) < 0.3, w
        assert picture_distance(env.render_frame(1 - w), theirs) > 0.6, w  # the other state's picture
    big = env.render_frame(0, width=300, height=300)
    assert big.shape == (300, 300, 3)
    with pytest.raises(ValueError, match="world: expected 0..1"):
        env.render_frame(2)
