"""Recurrent (GRU) policies in the WAR mode (docs/war.md, "Recurrent policies"): a group's GRUs
step only at its decisions; what the collector stores (the states before each decision, episode
starts) is what its GRUs computed, across windows too, and the learner re-runs them over each
world's decisions from those states.  (``arm="sync"`` against lock-step, bit for bit:
tests/test_war_equivalence.py; stop and resume: tests/test_war_resume.py.)"""

import copy
import math

import pytest
import torch

import war_train
from war_train.run.loop import update
from war_train.rollout.collector import concat_workers
from war_train.config import WarConfig
from war_train.presets import ARTICLE_COSTS
from war_train.war.mode import WarMode
from war_train.rollout.sequences import Sequences, sequence_log_prob

torch.set_num_threads(1)


def config(**kw):
    # 13-step episodes across 8-step windows: macro-steps (and GRU states) carried between windows
    base = dict(scenario="Command-v0", num_envs=4, rollout_length=8, total_env_steps=4 * 8 * 3, epochs=1,
                env_kwargs={"max_cycles": 13}, use_gru=True)
    base.update(kw)
    return war_train.preset_config("smoke", **base)


def held_war(**kw):
    return WarConfig(**{"arm": "war", "costs": ARTICLE_COSTS, "jitter": 0.1, "env_time": False, **kw})


def decisions(b, e):
    """World ``e``'s transitions of ``b`` (``GroupTransitions``), in decision order."""
    return b.valid[:, e].nonzero().flatten().tolist()


@torch.no_grad()
def replay(policies, b, e, h_actor, h_critic):
    """The GRU steps of world ``e``'s decisions in ``b``, each under ``policies[its behaviour
    version]``, from the states ``h_actor [n, H]``, ``h_critic [H]``: checks each stored state,
    log-prob and value; returns the states after the last."""
    for t in decisions(b, e):
        policy = policies[int(b.version[t, e])]
        torch.testing.assert_close(b.actor_h[t, e], h_actor, atol=1e-5, rtol=0, msg=f"actor state, row {t}")
        torch.testing.assert_close(b.critic_h[t, e], h_critic, atol=1e-5, rtol=0, msg=f"critic state, row {t}")
        start = b.episode_start[t, e].reshape(1)
        out, h_actor = policy.forward_actor(b.obs[t, e][None], h_actor[None], start)
        logp = policy.dist.log_prob(out, b.actions[t, e][None], None)[0]
        values, h_critic = policy.value(b.state[t, e][None], b.obs[t, e][None], h_critic[None], start)
        torch.testing.assert_close(logp, b.logp[t, e], atol=1e-5, rtol=0, msg=f"log-prob, row {t}")
        torch.testing.assert_close(values[0], b.values[t, e], atol=1e-5, rtol=0, msg=f"value, row {t}")
        h_actor, h_critic = h_actor[0], h_critic[0]
    return h_actor, h_critic


def test_a_held_action_arm_stores_what_its_grus_computed():
    trainer = WarMode(config(), held_war())
    rounds, collect = [], trainer.collect
    trainer.collect = lambda: rounds.append(collect()) or rounds[-1]
    try:
        assert trainer.schedule.interval["commander"] > 1 and trainer.schedule.interval["sentry"] == 1
        before = copy.deepcopy(trainer.policies)
        row = update(trainer)
        assert all(math.isfinite(row[f"{g}/policy_loss"]) for g in trainer.groups)
        second = trainer.collect()   # (its carried macro-steps were decided by the policies `before`)
        w1, w2 = concat_workers(rounds[0].windows), concat_workers(second.windows)
        carried = 0
        for g, p in trainer.policies.items():
            b1, b2 = w1[g], w2[g]
            # a slow group decides seldom: its sequences are shorter than the window
            assert (g != "commander") or int(b1.valid.sum(0).max()) < b1.valid.shape[0]
            for e in range(trainer.cfg.num_envs):
                assert bool(b1.episode_start[decisions(b1, e)[0], e])   # the first decision resets the GRUs
                h = replay({0: before[g]}, b1, e, torch.zeros_like(b1.actor_h[0, e]),
                           torch.zeros_like(b1.critic_h[0, e]))
                # window 2 continues each world's GRU states where window 1 left them (a macro-step
                # carried over was decided in window 1: version 0; the others are version 1)
                versions = b2.version[decisions(b2, e), e].tolist()
                assert versions == sorted(versions) and set(versions) <= {0, 1}
                carried += versions.count(0)
                replay({0: before[g], 1: p}, b2, e, *h)
            # the learner's sequences: each world's decisions in order, from the stored states
            seq = Sequences(b2.valid)
            batch = trainer.batches(second).groups[g]
            assert (batch.mask is None) == seq.full
            assert batch.recurrent and batch.obs.shape[0] == seq.length == int(b2.valid.sum(0).max())
            for e in range(trainer.cfg.num_envs):
                rows2 = decisions(b2, e)
                torch.testing.assert_close(batch.actor_h0[e], b2.actor_h[rows2[0], e], atol=0, rtol=0)
                torch.testing.assert_close(batch.critic_h0[e], b2.critic_h[rows2[0], e], atol=0, rtol=0)
                assert torch.equal(batch.starts[:len(rows2), e], b2.episode_start[rows2, e])
                assert torch.equal(batch.obs[:len(rows2), e], b2.obs[rows2, e])
                if batch.mask is not None:
                    assert bool(batch.mask[:len(rows2), e].all()) and not bool(batch.mask[len(rows2):, e].any())
            # the current actor's log-probs over the sequences: the behaviour's in the worlds where it
            # took every decision (elsewhere the GRU re-runs a carried decision with new weights)
            fresh = b2.valid & ((b2.version == 1) | ~b2.valid).all(0)
            assert bool(fresh.any())
            cur = sequence_log_prob(p, b2, seq, masked=False)
            torch.testing.assert_close(cur[fresh], b2.logp[fresh], atol=1e-5, rtol=0)
        assert carried > 0
    finally:
        trainer.close()


@pytest.mark.parametrize("war", [held_war(), held_war(arm="overlap"), held_war(vtrace="always", max_lag=0)],
                         ids=["war", "overlap", "vtrace-max-lag"])
def test_held_action_arms_train_grus(war):
    """Carried fragments (one version late: importance ratios from the re-run GRUs), an overlapped
    round (every transition one version late), V-trace with stale transitions dropped (masked
    out of the sequences they sit in)."""
    trainer = WarMode(config(total_env_steps=4 * 8 * 4), war)
    try:
        rows = [update(trainer) for _ in range(trainer.cfg.num_updates)]
    finally:
        trainer.close()
    for g in trainer.groups:
        for k in ("policy_loss", "value_loss", "entropy", "grad_norm_actor"):
            assert all(math.isfinite(r[f"{g}/{k}"]) for r in rows), (g, k)
    assert rows[-1]["staleness_max"] == (0.0 if war.max_lag == 0 else 1.0)
    if war.max_lag == 0:
        assert rows[-1]["dropped_frac"] > 0
    assert 0 < rows[-1]["ess_frac"] <= 1.0


def test_sequences_pack_each_worlds_decisions_in_order():
    valid = torch.tensor([[1, 0, 1], [0, 0, 1], [1, 0, 0], [1, 0, 1]], dtype=torch.bool)
    x = torch.arange(12.0).reshape(4, 3)
    seq = Sequences(valid)
    assert seq.length == 3
    packed = seq.pack(x, fill=-1)
    assert packed.tolist() == [[0, -1, 2], [6, -1, 5], [9, -1, 11]]
    assert torch.equal(seq.unpack(packed), torch.where(valid, x, 0.0))
    full = torch.ones(2, 3, dtype=torch.bool)
    assert torch.equal(Sequences(full).pack(x[:2]), x[:2])



def test_stolen_worlds_carry_their_gru_states():
    """Work stealing moves worlds between collectors mid-window: their GRU states move with them
    (every stored state is still what the world's own GRU computed)."""
    war = WarConfig(arm="steal", costs=ARTICLE_COSTS, workers=2, straggler=1.5, env_time=False)
    trainer = WarMode(config(num_envs=10, rollout_length=25, total_env_steps=10 * 25, env_kwargs={}), war)
    try:
        rnd = trainer.collect()
        assert rnd.moves
        for g, b in concat_workers(rnd.windows).items():
            for e in range(trainer.cfg.num_envs):
                replay({0: trainer.policies[g]}, b, e, torch.zeros_like(b.actor_h[0, e]),
                       torch.zeros_like(b.critic_h[0, e]))
    finally:
        trainer.close()
