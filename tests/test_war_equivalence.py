"""Degenerate equivalence (docs/war.md): with equal costs and no timeout, WAR batches, losses and
gradients are lock-step MAPPO's for the same seed.  Both modes collect with the one collector
(``war_train.rollout.collector``) and build their batches with ``war_train.rollout.batches``: these
tests hold it to one result under two schedules (lock-step's every-step schedule with its rows
written directly, WAR's through the pending decisions)."""

import pytest
import torch

import war_envs
import war_train
from war_train.learn import losses
from war_train.config import WarConfig
from war_train.run.loop import update
from war_train.war.mode import WarMode

torch.set_num_threads(1)
EQUAL = {"commander": {"per_decision_ms": 5.0}, "sentry": {"per_decision_ms": 5.0}}


def config(**kw):
    # 10-step episodes: truncations (with their V(final state) bootstrap) fall inside the rollouts
    base = dict(scenario="Command-v0", env_kwargs={"max_cycles": 10}, num_envs=6, total_env_steps=6 * 25 * 3,
                epochs=2, num_minibatches=3)
    base.update(kw)
    return war_train.preset_config("smoke", **base)


def captures(monkeypatch):
    """What the advantages (SMDP GAE, valid rows) and the PPO losses see, in call order: the one
    batch builder both modes use (``war_train.rollout.batches``)."""
    caps, smdp_gae, policy_loss, value_loss = [], losses.smdp_gae, losses.policy_loss, losses.value_loss

    def gae_spy(rewards, values, next_values, k, term, trunc, gamma, lam, valid):
        out = smdp_gae(rewards, values, next_values, k, term, trunc, gamma, lam, valid=valid)
        keep = valid[..., 0]
        term = torch.broadcast_to(term, rewards.shape)
        caps.append({"rewards": rewards[keep], "values": values[keep], "k": k[keep],
                     "next_values": torch.where(term, 0.0, next_values)[keep],   # (x 0 after a termination)
                     "advantages": out[0][keep], "returns": out[1][keep], "losses": []})
        return out

    def pg_spy(*args):
        out = policy_loss(*args)
        caps[-1]["losses"].append(float(out[0].detach()))
        return out

    def v_spy(*args):
        out = value_loss(*args)
        caps[-1]["losses"].append(float(out.detach()))
        return out

    monkeypatch.setattr(losses, "smdp_gae", gae_spy)
    monkeypatch.setattr(losses, "policy_loss", pg_spy)
    monkeypatch.setattr(losses, "value_loss", v_spy)
    return caps


def mappo_run(cfg, monkeypatch):
    """war_train.train (lock-step), recording what its advantages and PPO losses see."""
    seen = captures(monkeypatch)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
        result = war_train.train(env, cfg)
    monkeypatch.undo()
    return result, seen


def strip(rows, extra=()):
    skip = {"wall_s", "env_steps_per_s", *extra}
    return [{k: v for k, v in r.items() if k not in skip} for r in rows]


@pytest.mark.parametrize("arm", ["war", "sync"])
def test_equal_costs_reproduce_lockstep_mappo(arm, monkeypatch):
    cfg = config()
    ref, seen = mappo_run(cfg, monkeypatch)

    trainer = WarMode(cfg, WarConfig(arm=arm, costs=EQUAL))
    assert set(trainer.schedule.interval.values()) == {1.0}    # equal costs: everyone decides every step
    caps = captures(monkeypatch)
    rows = [update(trainer) for _ in range(cfg.num_updates)]
    monkeypatch.undo()
    trainer.close()

    # batches: the same transitions, values, bootstraps, advantages and returns (group by group),
    # every one a one-step macro-step
    assert len(caps) == len(seen) == 2 * cfg.num_updates
    for mine, theirs in zip(caps, seen):
        assert bool((mine["k"] == 1).all()) and bool((theirs["k"] == 1).all())
        for key in ("rewards", "values", "next_values", "advantages", "returns"):
            assert torch.equal(mine[key], theirs[key]), key
    # losses, minibatch by minibatch (policy then value), and gradient norms in the logged rows
    assert [x for c in caps for x in c["losses"]] == [x for c in seen for x in c["losses"]]
    war_only = {k for k in rows[0] if k not in ref.history[0]}
    assert strip(ref.history) == strip(rows, war_only)
    # gradients: the same parameters after every Adam step
    for g, p in ref.policies.items():
        for (name, x), y in zip(p.state_dict().items(), trainer.policies[g].state_dict().values()):
            assert torch.equal(x, y), f"{g}.{name}"
    # and the WAR diagnostics of a lock-step batch
    assert rows[-1]["ess_frac"] == 1.0 and rows[-1]["staleness_max"] == 0.0 and rows[-1]["dropped_frac"] == 0.0
    assert rows[-1]["share/commander"] == pytest.approx(0.1)


def test_war_mode_matches_lockstep_history():
    """``train``'s WAR mode with equal costs logs lock-step MAPPO's rows (the same run loop)."""
    cfg = config(total_env_steps=6 * 25 * 2)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
        ref = war_train.train(env, cfg)
    res = war_train.train(None, cfg, war=WarConfig(costs=EQUAL))
    war_only = {k for k in res.history[0] if k not in ref.history[0]}
    assert strip(ref.history) == strip(res.history, war_only)


WAR_VARIANTS = {
    # Box actions: the collector stores the Gaussian's sample, the env gets it squashed into the box
    "box": dict(scenario="Spread-v0", env_kwargs={"continuous_actions": True, "max_cycles": 10}),
    # local critics: every bootstrap (window end, truncation) evaluates the agents' observations
    "local-critic": dict(scenario="Spread-v0", env_kwargs={"max_cycles": 10}, critic_input="local"),
    # frame stacks: the collector pushes every step's observations, episode starts zero them
    "frames": dict(scenario="Spread-v0", env_kwargs={"max_cycles": 10}, frame_stack=3),
    "frames-local-critic": dict(scenario="Spread-v0", env_kwargs={"max_cycles": 10}, frame_stack=2,
                                critic_input="local"),
    # action masks: sampled from, stored with each decision and applied in the PPO ratio
    "masks": dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}),
    # MultiDiscrete heads, and tagged runners leaving the game (masked out of the losses)
    "multidiscrete": dict(scenario="Tag-v0", env_kwargs={"num_taggers": 2, "num_runners": 3, "episode_length": 10}),
    # GRUs (centralized state critics): every group decides every step, so its GRUs step as lock-step's
    "gru": dict(use_gru=True),
    # GRUs with action masks and dead units (SMAX)
    "gru-masks": dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}, use_gru=True),
    # truncations ending the return as terminations do (bootstrap_truncation=False)
    "no-truncation-bootstrap": dict(bootstrap_truncation=False),
}


@pytest.mark.parametrize("variant", sorted(WAR_VARIANTS))
def test_war_sync_is_lockstep_for_every_feature(variant):
    """The WAR mode's lock-step arm trains what lock-step training does, row for row and bit for
    bit, with Box and MultiDiscrete actions, local critics, frame stacks, GRUs, action masks and
    agents leaving the game (SMAX's dead units, Tag's tagged runners)."""
    cfg = config(**WAR_VARIANTS[variant], total_env_steps=6 * 25 * 3)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
        ref = war_train.train(env, cfg)
    res = war_train.train(None, cfg, war=WarConfig(arm="sync"))
    war_only = {k for k in res.history[0] if k not in ref.history[0]}
    assert strip(ref.history) == strip(res.history, war_only)
    for g, p in ref.policies.items():
        for (name, x), y in zip(p.state_dict().items(), res.policies[g].state_dict().values()):
            assert torch.equal(x, y), f"{g}.{name}"
