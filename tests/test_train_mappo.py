"""The MAPPO trainer: it learns (smoke), runs are reproducible, and stop + resume is exact."""

import csv
import math

import pytest
import torch

import war_envs
import war_train
from war_train.checkpoint import load_checkpoint
from war_train.learn.policy import joint_state
from war_envs.scenarios.mpe.spread import onpolicy_step_reward
from war_train.rollout.metrics import EpisodeStats

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
    # env=None: train makes the config's env itself (the same worlds, the same run)
    assert strip_wall(war_train.train(None, cfg).history) == runs[0]


#: a small Tag-v0 where runners are tagged (and leave the game) within a rollout
SMALL_TAG = {"num_taggers": 1, "num_runners": 3, "grid_length": 2.0, "episode_length": 30, "tagging_distance": 0.1,
             "num_other_agents_observed": 2, "use_full_observation": False}
#: one variant per action space (and the recurrent and masked paths)
VARIANTS = {"mlp": {}, "gru": {"use_gru": True},
            "box": {"env_kwargs": {"continuous_actions": True}},
            "multidiscrete_masked": {"scenario": "Tag-v0", "env_kwargs": SMALL_TAG},
            "local_critic": {"scenario": "Tag-v0", "env_kwargs": SMALL_TAG, "critic_input": "local"},
            "gru_masked": {"scenario": "Tag-v0", "env_kwargs": SMALL_TAG, "use_gru": True},
            "frame_stack": {"scenario": "Tag-v0", "env_kwargs": SMALL_TAG, "frame_stack": 3, "critic_input": "local"},
            "planner": {"scenario": "Relay-v0", "env_kwargs": {"num_sentries": 2}, "planner": "commander",
                        "planner_simulations": 4, "planner_depth": 2}}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_stop_and_resume_is_exact(tmp_path, variant):
    # 4 updates, checkpoint every 2.  The interrupted run dies (exception) in update 3, after
    # its row was written but before the next checkpoint: resuming must drop that row, restart
    # from update 2's checkpoint and reproduce every number of the uninterrupted run.
    # (rollouts of 20 steps: episodes of 25 cross update boundaries)
    cfg = smoke(total_env_steps=16 * 20 * 4, rollout_length=20, checkpoint_every=2, num_minibatches=2,
                **VARIANTS[variant])
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
    for x, y in zip(strip_wall(full.history[2:]), strip_wall(resumed.history)):
        assert x.keys() == y.keys() and all(same(x[k], y[k]) for k in x), x
    ca, cb = load_checkpoint(tmp_path / "full"), load_checkpoint(tmp_path / "cut")
    for key in ("actors", "critics", "env_state", "obs"):
        for g in ca[key]:
            left, right = ca[key][g], cb[key][g]
            if isinstance(left, dict):
                assert all(torch.equal(left[k], right[k]) for k in left), (key, g)
            else:
                assert torch.equal(left, right), (key, g)
    assert torch.equal(ca["generator"], cb["generator"])
    if "planner" in ca:   # (the planner's stream: re-drawn futures and sampled actions)
        assert torch.equal(ca["planner"]["generator"], cb["planner"]["generator"])


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
    with pytest.raises(ValueError, match="critic_input"):
        war_train.TrainConfig(critic_input="global").validate()
    with pytest.raises(ValueError, match="critic_input.*use_gru"):
        war_train.TrainConfig(critic_input="local", use_gru=True).validate()



# ----------------------------------------------------------------------------- action spaces, masks
@pytest.mark.parametrize("variant", ["box", "multidiscrete_masked", "local_critic", "frame_stack"])
def test_every_action_space_trains_and_is_reproducible(variant):
    cfg = smoke(total_env_steps=16 * 25 * 2, **VARIANTS[variant])
    runs = []
    for _ in range(2):
        with make(cfg) as env:
            runs.append(war_train.train(env, cfg))
    for x, y in zip(strip_wall(runs[0].history), strip_wall(runs[1].history)):
        assert x.keys() == y.keys() and all(same(x[k], y[k]) for k in x), x
    row = runs[0].history[-1]
    for g in runs[0].policies:
        for d in ("policy_loss", "value_loss", "entropy", "approx_kl", "grad_norm_actor"):
            assert math.isfinite(row[f"{g}/{d}"]), (g, d)


def test_tag_logs_its_declared_metrics_and_masks_tagged_runners(tmp_path):
    cfg = smoke(scenario="Tag-v0", env_kwargs=SMALL_TAG, total_env_steps=16 * 30 * 2, rollout_length=30)
    seen = []
    import war_train.learn.step as learn_step

    real = learn_step.ppo_update

    def spy(policy, *args, **kw):
        seen.append(args[3].mask)   # the GroupBatch's mask
        return real(policy, *args, **kw)

    learn_step.ppo_update = spy
    try:
        with make(cfg) as env:
            result = war_train.train(env, cfg, run_dir=tmp_path)
    finally:
        learn_step.ppo_update = real
    header = (tmp_path / "metrics.csv").read_text().splitlines()[0].split(",")
    for col in ("tags", "runners_left", "survival", "episode_return/tagger", "episode_return/runner"):
        assert col in header
    row = result.history[-1]
    assert row["episodes"] == 16 * 2 or row["episodes"] >= 16     # 30-step episodes, 30-step rollouts
    masks = [m for m in seen if m is not None]
    assert len(masks) == 2 * 2                                    # both groups, both updates
    runner_masks = masks[1::2]
    assert all(not bool(m.all()) for m in runner_masks)          # some runners were out of the game
    assert all(bool(m.all()) for m in masks[0::2])               # taggers never leave


def test_masked_agents_contribute_no_gradient():
    # The same batch with the out-of-game agents' data replaced by garbage gives the same update.
    from war_train.learn import distributed
    from war_train.learn.policy import build_policies
    from war_train.learn.ppo import GroupBatch, ppo_update
    from war_train.learn.valuenorm import ValueNorm

    cfg = smoke(scenario="Tag-v0", env_kwargs=SMALL_TAG, num_minibatches=2, epochs=2)
    with make(cfg) as env:
        groups = dict(env.groups)
        state_dim = env.state_dim
    g = "runner"
    spec = groups[g]
    N, n = 40, spec.n_agents
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand(N, n, generator=gen) > 0.3
    batch = GroupBatch(obs=torch.randn(N, n, spec.obs_dim, generator=gen), state=torch.randn(N, state_dim, generator=gen),
                       actions=torch.stack([torch.randint(0, int(k), (N, n), generator=gen)
                                            for k in spec.action_space.nvec], -1), logp=-torch.rand(N, n, generator=gen) * 3,
                       values=torch.randn(N, n, generator=gen), returns=torch.randn(N, n, generator=gen),
                       advantages=torch.randn(N, n, generator=gen), values_denorm=torch.randn(N, n, generator=gen),
                       mask=mask)
    garbage = GroupBatch(**{**batch.__dict__})
    for name in ("logp", "values", "returns", "advantages", "values_denorm"):
        setattr(garbage, name, torch.where(mask, getattr(batch, name), torch.full_like(getattr(batch, name), 1e3)))
    garbage.actions = torch.where(mask[..., None], batch.actions, torch.zeros_like(batch.actions))

    def run(b):
        p = build_policies(groups, state_dim, cfg, "cpu")[g]
        a = torch.optim.Adam(p.actor.parameters(), lr=1e-3)
        c = torch.optim.Adam(p.critic.parameters(), lr=1e-3)
        diag = ppo_update(p, a, c, ValueNorm(0.99999), b, cfg=cfg, entropy_coef=0.01,
                          generator=torch.Generator().manual_seed(1), reducer=distributed.Local())
        return p, diag

    p1, d1 = run(batch)
    p2, d2 = run(garbage)
    for x, y in zip(p1.parameters(), p2.parameters()):
        torch.testing.assert_close(x, y, rtol=1e-6, atol=1e-7)
    assert d1 == pytest.approx(d2, rel=1e-5)


def test_frame_stack_holds_the_last_observations_and_restarts_with_episodes():
    from war_train.learn.policy import build_policies

    cfg = smoke(frame_stack=3)
    with make(cfg) as env:
        p = build_policies(dict(env.groups), env.state_dim, cfg, "cpu")["agent"]
    E, n, d = 2, 3, p.obs_dim
    h, _ = p.initial_hidden(E, "cpu")
    assert h.shape == (E, n, 3 * d) and not h.any()
    o = [torch.full((E, n, d), float(k + 1)) for k in range(3)]
    h = p.forward_actor(o[0], h, torch.tensor([True, True]))[1]
    h = p.forward_actor(o[1], h, torch.tensor([False, False]))[1]
    h = p.forward_actor(o[2], h, torch.tensor([False, True]))[1]   # world 1 starts a new episode here
    assert h[0].reshape(n, 3, d)[:, :, 0].tolist() == [[3.0, 2.0, 1.0]] * n
    assert h[1].reshape(n, 3, d)[:, :, 0].tolist() == [[3.0, 0.0, 0.0]] * n


def test_group_lr_scale_scales_each_groups_learning_rates():
    cfg = smoke(scenario="Tag-v0", env_kwargs=SMALL_TAG, group_lr_scale={"runner": 0.0})
    with make(cfg) as env:
        init = {g: [t.clone() for t in p.parameters()]
                for g, p in war_train.learn.policy.build_policies(dict(env.groups), env.state_dim, cfg, "cpu").items()}
        result = war_train.train(env, cfg)
    frozen = all(torch.equal(a, b) for a, b in zip(init["runner"], result.policies["runner"].parameters()))
    moved = any(not torch.equal(a, b) for a, b in zip(init["tagger"], result.policies["tagger"].parameters()))
    assert frozen and moved
    with pytest.raises(ValueError, match="group_lr_scale"):
        war_train.TrainConfig(group_lr_scale={"runner": -1}).validate()
    bad = smoke(scenario="Tag-v0", env_kwargs=SMALL_TAG, group_lr_scale={"runners": 0.5})
    with make(bad) as env, pytest.raises(ValueError, match=r"group_lr_scale: unknown groups \['runners'\]"):
        war_train.train(env, bad)
