"""The MAPPO trainer: it learns (smoke), runs are reproducible, and stop + resume is exact."""

import csv
import math

import pytest
import torch

import war_envs
import war_train
from war_train.checkpoint import load_checkpoint
from war_train.mappo import joint_state
from war_train.metrics import EpisodeStats, onpolicy_step_reward

torch.set_num_threads(1)


def smoke(**overrides):
    return war_train.preset_config("smoke", **overrides)


def make(cfg, **kw):
    return war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs, **kw)


def strip_wall(rows):
    return [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")} for r in rows]


def read_csv(path):
    with open(path, newline="") as f:
        return strip_wall(list(csv.DictReader(f)))


def same(a, b):
    """Equal, NaN == NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


# ----------------------------------------------------------------------------- learning smoke test
def test_learns_single_agent_spread_in_seconds():
    # one agent, one landmark: the return rises from ~-15 (random) within a few updates
    cfg = smoke(env_kwargs={"N": 1}, num_envs=32, epochs=5, lr=3e-3, critic_lr=3e-3,
                total_env_steps=32 * 25 * 10)
    with make(cfg) as env:
        result = war_train.train(env, cfg)
    returns = [r["episode_return"] for r in result.history]
    assert len(returns) == 10
    first, last = sum(returns[:2]) / 2, sum(returns[-3:]) / 3
    assert last > first + 3.0, returns
    for r in result.history:
        for key in ("agent/approx_kl", "agent/clipfrac", "agent/entropy", "agent/explained_variance",
                    "agent/value_loss", "agent/policy_loss", "agent/grad_norm_actor", "agent/grad_norm_critic"):
            assert math.isfinite(r[key]), key
    assert result.history[-1]["onpolicy_episode_reward"] > result.history[0]["onpolicy_episode_reward"]


# ----------------------------------------------------------------------------- determinism and resume
def test_same_seed_same_run_different_seed_different_run():
    cfg = smoke(total_env_steps=16 * 25 * 2)
    runs = []
    for seed in (cfg.seed, cfg.seed, cfg.seed + 1):
        c = smoke(total_env_steps=16 * 25 * 2, seed=seed)
        with make(c) as env:
            runs.append(strip_wall(war_train.train(env, c).history))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


@pytest.mark.parametrize("use_gru", [False, True], ids=["mlp", "gru"])
def test_stop_and_resume_is_exact(tmp_path, use_gru):
    # 4 updates, checkpoint every 2.  The interrupted run dies (exception) in update 3, after
    # its row was written but before the next checkpoint: resuming must drop that row, restart
    # from update 2's checkpoint and reproduce every number of the uninterrupted run.
    # (rollouts of 20 steps: episodes of 25 cross update boundaries)
    cfg = smoke(total_env_steps=16 * 20 * 4, rollout_length=20, checkpoint_every=2, use_gru=use_gru,
                num_minibatches=2)
    with make(cfg) as env:
        full = war_train.train(env, cfg, run_dir=tmp_path / "full")

    class Crash(Exception):
        pass

    def crash_at_3(row):
        if row["update"] == 3:
            raise Crash

    with make(cfg) as env, pytest.raises(Crash):
        war_train.train(env, cfg, crash_at_3, run_dir=tmp_path / "cut")
    assert len(read_csv(tmp_path / "cut" / "metrics.csv")) == 3
    assert load_checkpoint(tmp_path / "cut")["update"] == 2
    with make(cfg) as env:  # a fresh process would build a fresh env just like this
        resumed = war_train.train(env, cfg, run_dir=tmp_path / "cut", resume=tmp_path / "cut" / "checkpoint.pt")

    assert [r["update"] for r in resumed.history] == [3, 4]
    a, b = read_csv(tmp_path / "full" / "metrics.csv"), read_csv(tmp_path / "cut" / "metrics.csv")
    assert len(a) == len(b) == 4
    assert a == b  # every number but wall-clock, bit for bit (repr-formatted floats)
    assert strip_wall(full.history[2:]) == strip_wall(resumed.history)
    ca, cb = load_checkpoint(tmp_path / "full"), load_checkpoint(tmp_path / "cut")
    for key in ("actors", "critics", "env_state", "obs"):
        for g in ca[key]:
            left, right = ca[key][g], cb[key][g]
            if isinstance(left, dict):
                assert all(torch.equal(left[k], right[k]) for k in left), (key, g)
            else:
                assert torch.equal(left, right), (key, g)
    assert torch.equal(ca["generator"], cb["generator"])


def test_stop_from_progress_fn_then_resume(tmp_path):
    cfg = smoke(total_env_steps=16 * 25 * 3, checkpoint_every=0)
    with make(cfg) as env:
        full = war_train.train(env, cfg)
    with make(cfg) as env:
        first = war_train.train(env, cfg, lambda row: row["update"] < 1, run_dir=tmp_path)
    assert first.stopped_early and first.checkpoint is not None
    with make(cfg) as env:
        rest = war_train.train(env, cfg, run_dir=tmp_path, resume=tmp_path)
    assert strip_wall(first.history + rest.history) == strip_wall(full.history)


def test_checkpoint_is_weights_only_and_restores_env_observations(tmp_path):
    cfg = smoke(total_env_steps=16 * 25 * 2)
    with make(cfg) as env:
        war_train.train(env, cfg, run_dir=tmp_path)
    path = tmp_path / "checkpoint.pt"
    raw = torch.load(path, weights_only=True)  # plain containers and tensors only
    assert raw["update"] == 2 and raw["env"]["id"] == "Spread-v0"
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was moved into place
    with make(cfg) as env:
        env.reset()
        obs = env.set_state(raw["env_state"])
        for g, o in raw["obs"].items():
            assert torch.equal(obs[g], o)
        assert torch.equal(env.state(), joint_state(raw["obs"]))


def test_resume_rejects_a_different_config(tmp_path):
    cfg = smoke(total_env_steps=16 * 25)
    with make(cfg) as env:
        war_train.train(env, cfg, run_dir=tmp_path)
    other = smoke(total_env_steps=16 * 25 * 2, lr=1e-3)
    with make(other) as env, pytest.raises(ValueError, match="lr=0.0007"):
        war_train.train(env, other, resume=tmp_path)


# ----------------------------------------------------------------------------- several groups
def test_predator_prey_trains_both_groups(tmp_path):
    cfg = war_train.preset_config("predator_prey", num_envs=8, total_env_steps=8 * 25 * 2, epochs=1,
                                  tensorboard=False, progress=False, eval_episodes=0)
    with make(cfg) as env:
        result = war_train.train(env, cfg, run_dir=tmp_path)
    row = result.history[-1]
    assert set(result.policies) == {"adversary", "agent"}
    for g in ("adversary", "agent"):
        assert math.isfinite(row[f"{g}/approx_kl"]) and math.isfinite(row[f"episode_return/{g}"])
    assert 0.0 <= row["catch_rate"] <= 1.0
    header = (tmp_path / "metrics.csv").read_text().splitlines()[0].split(",")
    for col in ("env_steps", "agent_steps", "wall_s", "episode_return", "episode_return/adversary",
                "episode_return/agent", "catch_rate"):
        assert col in header


# ----------------------------------------------------------------------------- metrics
def test_joint_state_equals_env_state():
    with war_envs.make("PredatorPrey-v0", num_envs=3, seed=4) as env:
        obs = env.reset()
        assert torch.equal(joint_state(obs), env.state())


def test_onpolicy_reward_by_hand():
    d = torch.tensor([[0.1, 0.2, 0.3]])
    c = torch.tensor([[1, 1, 0]])
    # per agent -0.6 - (c_i + 1); summed over the 3 agents: -1.8 - 5
    assert onpolicy_step_reward(d, c).tolist() == pytest.approx([-6.8])


def test_onpolicy_metric_is_consistent_with_env_rewards():
    # mpe2 Spread, local_ratio 0.5: r_i = 0.5*(-sum d) + 0.5*(-collisions_i), so the team sum of
    # env rewards is half the on-policy shared reward plus N/2 (the self-collisions).
    with war_envs.make("Spread-v0", num_envs=64, seed=3) as env:
        env.reset()
        stats = EpisodeStats(env)
        gen = torch.Generator().manual_seed(0)
        for _ in range(25):
            obs, rew, term, trunc, info = env.step({"agent": torch.randint(0, 5, (64, 3), generator=gen)})
            team = rew["agent"].double().sum(-1)
            onp = onpolicy_step_reward(info["landmark_min_dist"], info["collisions"])
            assert torch.allclose(team, 0.5 * onp + 1.5, atol=1e-5)
            stats.step(rew, info, term["agent"][:, 0] | trunc["agent"][:, 0])
        ep = stats.pop()
    assert ep["onpolicy_episode_reward"].shape == (64,)
    assert torch.allclose(ep["onpolicy_episode_reward"], 2 * 3 * ep["episode_return"] - 75.0, atol=1e-3)


def test_config_errors_are_clear():
    with pytest.raises(ValueError, match="num_envs"):
        war_train.TrainConfig(num_envs=0).validate()
    with pytest.raises(ValueError, match="activation"):
        war_train.TrainConfig(activation="gelu").validate()
    with pytest.raises(ValueError, match="unknown config fields"):
        war_train.config_from_dict({"learning_rate": 1e-3})
    cfg = smoke()
    with war_envs.make("Spread-v0", num_envs=4) as env, pytest.raises(ValueError, match="num_envs"):
        war_train.train(env, cfg)
    with war_envs.make("Spread-v0", num_envs=16, autoreset_mode="next_step") as env, \
            pytest.raises(ValueError, match="SAME_STEP"):
        war_train.train(env, cfg)
    with war_envs.make("Spread-v0", num_envs=16, continuous_actions=True) as env, \
            pytest.raises(ValueError, match="Discrete"):
        war_train.train(env, cfg)
