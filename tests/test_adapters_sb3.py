"""Stable-Baselines3: the native ``SB3VecEnv`` (agents as envs, one batched step per
``step_wait``) checked against the batch API and under SB3's wrappers, PPO learning on Spread,
sb3-contrib's MaskablePPO, and the SuperSuit path on the PettingZoo ParallelEnv."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize  # noqa: E402

import war_envs  # noqa: E402
from war_train.adapters.sb3 import SB3VecEnv  # noqa: E402

E = 4


def rand_actions(venv, rng):
    if hasattr(venv.action_space, "n"):
        return rng.integers(0, venv.action_space.n, venv.num_envs)
    return rng.random((venv.num_envs, *venv.action_space.shape), dtype=np.float32)


# ---------------------------------------------------------------------- VecEnv contract
@pytest.mark.parametrize("kw", [{}, {"continuous_actions": True}], ids=["discrete", "continuous"])
def test_vecenv_contract(kw):
    """What SB3's rollout code relies on (DummyVecEnv's conventions), step by step for two
    episodes: shapes, dtypes, spaces, copies, infos."""
    venv = SB3VecEnv("Spread-v0", num_envs=E, seed=0, **kw)
    assert isinstance(venv, VecEnv) and venv.num_envs == E * 3
    assert venv.observation_space.shape == (18,) and venv.observation_space.dtype == np.float32
    obs = venv.reset()
    assert obs.shape == (E * 3, 18) and obs.dtype == np.float32
    assert all(venv.observation_space.contains(o) for o in obs)
    assert venv.reset_infos == [{}] * venv.num_envs
    rng = np.random.default_rng(0)
    kept = obs.copy()
    for t in range(1, 51):
        new_obs, rew, done, infos = venv.step(rand_actions(venv, rng))
        np.testing.assert_array_equal(obs, kept)  # the previous batch was a copy, untouched
        assert new_obs.shape == (E * 3, 18) and new_obs.dtype == np.float32
        assert rew.shape == (E * 3,) and rew.dtype == np.float32
        assert done.shape == (E * 3,) and done.dtype == np.bool_
        assert isinstance(infos, list) and len(infos) == venv.num_envs
        assert all(isinstance(i, dict) and "TimeLimit.truncated" in i for i in infos)
        assert done.all() == (t % 25 == 0) and done.any() == (t % 25 == 0)
        for i in np.flatnonzero(done):
            term_obs = infos[i]["terminal_observation"]
            assert term_obs.shape == (18,) and term_obs.dtype == np.float32
            assert infos[i]["TimeLimit.truncated"] is True  # MPE episodes end by time limit only
        assert not any("terminal_observation" in infos[i] for i in np.flatnonzero(~done))
        obs, kept = new_obs, new_obs.copy()
    venv.close()


def test_matches_batch_api_and_terminal_observation():
    """Flattening is world-major; rewards, flags, obs and terminal obs equal the batch API's."""
    venv = SB3VecEnv("Spread-v0", num_envs=E, seed=3)
    ref = war_envs.make("Spread-v0", num_envs=E, seed=3)
    obs = venv.reset()
    ref_obs = ref.reset()["agent"]
    np.testing.assert_array_equal(obs, ref_obs.reshape(E * 3, -1).numpy())
    rng = np.random.default_rng(1)
    for _ in range(30):
        a = rng.integers(0, 5, E * 3)
        obs, rew, done, infos = venv.step(a)
        r_obs, r_rew, r_term, r_trunc, r_info = ref.step({"agent": torch.from_numpy(a.reshape(E, 3))})
        np.testing.assert_array_equal(obs, r_obs["agent"].reshape(E * 3, -1).numpy())
        np.testing.assert_array_equal(rew, r_rew["agent"].reshape(-1).numpy())
        np.testing.assert_array_equal(done, (r_term["agent"] | r_trunc["agent"]).reshape(-1).numpy())
        for i in np.flatnonzero(done):
            np.testing.assert_array_equal(infos[i]["terminal_observation"],
                                          r_info["final_obs"]["agent"][i // 3, i % 3].numpy())


def test_seed_makes_resets_reproducible():
    a, b = SB3VecEnv("Spread-v0", num_envs=E), SB3VecEnv("Spread-v0", num_envs=E)
    seeds = a.seed(11)
    assert seeds == [11 + i // 3 for i in range(E * 3)]
    b.seed(11)
    np.testing.assert_array_equal(a.reset(), b.reset())
    a.seed(12)
    assert not np.array_equal(a.reset(), b.reset())
    # world w of seed s equals world 0 of seed s + w
    c = SB3VecEnv("Spread-v0", num_envs=1)
    c.seed(11 + 2)
    b.seed(11)
    np.testing.assert_array_equal(b.reset()[6:9], c.reset())


def test_predator_prey_needs_padding():
    with pytest.raises(ValueError, match="pad_observations=True"):
        SB3VecEnv("PredatorPrey-v0", num_envs=2)
    venv = SB3VecEnv("PredatorPrey-v0", num_envs=2, seed=0, pad_observations=True)
    assert venv.num_envs == 8 and venv.observation_space.shape == (16,)
    obs = venv.reset()
    ref = war_envs.make("PredatorPrey-v0", num_envs=2, seed=0).reset()
    np.testing.assert_array_equal(obs.reshape(2, 4, 16)[:, 3, :14], ref["agent"][:, 0].numpy())
    assert (obs.reshape(2, 4, 16)[:, 3, 14:] == 0).all()
    assert venv.get_attr("group") == ["adversary"] * 3 + ["agent"] + ["adversary"] * 3 + ["agent"]


def test_bad_actions_raise_and_leave_the_env_untouched():
    venv = SB3VecEnv("Spread-v0", num_envs=E, seed=0)
    venv.reset()
    before = venv.env.get_state()
    for bad, err in [(np.zeros(E * 3 + 1, dtype=np.int64), ValueError),
                     (np.zeros((E, 3), dtype=np.int64), ValueError),
                     (np.full(E * 3, 5), ValueError),
                     (np.full(E * 3, -1), ValueError),
                     (np.zeros(E * 3, dtype=np.float32), TypeError),
                     ("left", TypeError)]:
        with pytest.raises(err):
            venv.step(bad)
    after = venv.env.get_state()
    assert all(torch.equal(before[k], after[k]) for k in before)
    cont = SB3VecEnv("Spread-v0", num_envs=E, seed=0, continuous_actions=True)
    cont.reset()
    nan = np.full((E * 3, 5), 0.5, dtype=np.float32)
    nan[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cont.step(nan)


def test_attributes_methods_and_masks():
    venv = SB3VecEnv("Spread-v0", num_envs=2, seed=0)
    venv.reset()
    assert venv.get_attr("agent") == ["agent_0", "agent_1", "agent_2"] * 2
    assert venv.get_attr("world", indices=[0, 3, 5]) == [0, 1, 1]
    assert venv.get_attr("max_cycles") == [25] * 6
    assert venv.has_attr("action_masks") and not venv.has_attr("no_such_attribute")
    masks = venv.env_method("action_masks")
    assert len(masks) == 6 and all(m.shape == (5,) and m.dtype == np.bool_ and m.all() for m in masks)
    assert venv.env_is_wrapped(VecMonitor) == [False] * 6
    venv.set_attr("some_flag", 3)
    assert venv.get_attr("some_flag", indices=[1]) == [3]
    with pytest.raises(ValueError, match="every sub-env"):
        venv.set_attr("some_flag", 4, indices=[0])
    with pytest.raises(ValueError, match="autoreset_mode=SAME_STEP"):
        SB3VecEnv(war_envs.make("Spread-v0", autoreset_mode="next_step"))


def test_vecmonitor_episode_statistics_and_vecnormalize():
    venv = SB3VecEnv("Spread-v0", num_envs=E, seed=5)
    mon = VecMonitor(venv)
    mon.reset()
    rng = np.random.default_rng(2)
    totals = np.zeros(E * 3, dtype=np.float64)
    for t in range(25):
        _, rew, done, infos = mon.step(rand_actions(venv, rng))
        totals += rew
    assert done.all()
    for i, info in enumerate(infos):
        assert info["episode"]["l"] == 25
        assert info["episode"]["r"] == pytest.approx(totals[i], rel=1e-5)
    norm = VecNormalize(VecMonitor(SB3VecEnv("Spread-v0", num_envs=E, seed=5)), gamma=0.95)
    obs = norm.reset()
    for _ in range(26):
        obs, rew, done, infos = norm.step(rand_actions(venv, rng))
        assert np.isfinite(obs).all() and np.isfinite(rew).all()
        if done.any():
            raw = infos[0]["terminal_observation"]
            assert raw.shape == (18,) and np.abs(raw).max() <= norm.clip_obs


# ---------------------------------------------------------------------- learning
class _Returns(BaseCallback):
    def __init__(self):
        super().__init__()
        self.returns: list[float] = []

    def _on_rollout_end(self) -> None:
        if self.model.ep_info_buffer:
            self.returns.append(float(np.mean([e["r"] for e in self.model.ep_info_buffer])))

    def _on_step(self) -> bool:
        return True


def _ppo_returns(total_steps: int, num_envs: int = 64) -> list[float]:
    torch.manual_seed(0)
    venv = VecMonitor(SB3VecEnv("Spread-v0", num_envs=num_envs, seed=0))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=1024, n_epochs=4, learning_rate=1e-3,
                gamma=0.95, seed=0, policy_kwargs=dict(net_arch=[64, 64]), device="cpu")
    cb = _Returns()
    model.learn(total_steps, callback=cb)
    venv.close()
    return cb.returns


def test_ppo_learns_spread_through_native_vecenv():
    """~10 s: the per-agent episode return of the last rollouts beats the first ones (random
    policy ≈ −25.5, after 200k agent-steps ≈ −20.5 with these settings)."""
    returns = _ppo_returns(200_000)
    first, last = np.mean(returns[:3]), np.mean(returns[-3:])
    assert last > first + 2.0, f"return did not rise: {first:.2f} -> {last:.2f} ({np.round(returns, 1)})"


@pytest.mark.slow
def test_ppo_learns_spread_longer():
    returns = _ppo_returns(2_000_000, num_envs=128)
    first, last = np.mean(returns[:3]), np.mean(returns[-3:])
    assert last > first + 5.0, f"return did not rise enough: {first:.2f} -> {last:.2f}"


def test_maskable_ppo_runs():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    venv = SB3VecEnv("Spread-v0", num_envs=4, seed=0)
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=96, n_epochs=1, seed=0,
                                    device="cpu")
    model.learn(2 * 16 * venv.num_envs)
    assert model.num_timesteps == 2 * 16 * venv.num_envs


# ---------------------------------------------------------------------- SuperSuit path
@pytest.mark.filterwarnings("ignore:The `render_mode` attribute is not defined")
def test_supersuit_path_steps_and_trains():
    """The standard PettingZoo -> SuperSuit -> SB3 recipe works on our ParallelEnv.  Known
    SuperSuit limits (docs/integrations.md): no seed() (so PPO(seed=...) fails), no
    TimeLimit.truncated, a Python loop over worlds."""
    ss = pytest.importorskip("supersuit")
    vec = ss.pettingzoo_env_to_vec_env_v1(war_envs.parallel_env("Spread-v0", seed=0))
    venv = VecMonitor(ss.concat_vec_envs_v1(vec, 2, num_cpus=0, base_class="stable_baselines3"))
    assert venv.num_envs == 6
    obs = venv.reset()
    assert obs.shape == (6, 18) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    for t in range(25):
        obs, rew, done, infos = venv.step(rng.integers(0, 5, 6))
    assert done.all() and all("terminal_observation" in i and i["episode"]["l"] == 25 for i in infos)
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=48, n_epochs=1, device="cpu")
    model.learn(16 * 6)
    assert model.num_timesteps == 16 * 6


def test_tag_multidiscrete_and_agents_that_leave():
    """Tag-v0: MultiDiscrete actions; a runner tagged mid-episode keeps its sub-env running
    (no done) until the world ends, then reports terminated (no time-limit bootstrap)."""
    venv = SB3VecEnv("Tag-v0", num_envs=2, seed=0, episode_length=6)
    A = venv.num_agents  # 1 tagger + 10 runners
    assert venv.action_space == venv.env.groups["runner"].action_space
    venv.reset()
    state = venv.env.get_state()
    state["agent_pos"][0, 1] = state["agent_pos"][0, 0]  # runner_0 of world 0 on top of the tagger
    venv.env.set_state({"agent_pos": state["agent_pos"]})
    noop = np.zeros((venv.num_envs, 2), dtype=np.int64)
    obs, rew, done, infos = venv.step(noop)
    assert rew[1] < 0  # runner_0 was tagged ...
    assert not done.any()  # ... but no sub-env ends while its world runs on
    for _ in range(5):
        obs, rew, done, infos = venv.step(noop)
    assert done.all()
    assert infos[1]["TimeLimit.truncated"] is False  # runner_0 of world 0 left: terminated
    assert infos[2]["TimeLimit.truncated"] is True and infos[A + 1]["TimeLimit.truncated"] is True
    assert venv.env_method("action_masks")[0].shape == (22,)
