"""``TrainConfig.bootstrap_truncation``: a time-limit truncation bootstraps the return with
V(final state) (the default) or ends it as a termination does (JaxMARL's MAPPO; SMAX's draws).
GAE by hand on a rollout with a truncation inside it, the flag reaching the GAE of a real run,
and clear errors for non-bool flags.  (The WAR mode's lock-step arm with it is in
``tests/test_war_equivalence.py``.)"""

from types import SimpleNamespace

import pytest
import torch

import war_envs
import war_train
from war_train.learn import losses
from war_train.rollout.batches import group_batch
from war_train.config import TrainConfig

IDENTITY = SimpleNamespace(denormalize=lambda v: v)


def window():
    """One world, one agent, 3 steps (a lock-step window: every macro-step one step long); step 1
    truncates its episode with V(final state) = 10; V after the window is 4."""
    col = lambda *xs, dtype=torch.float32: torch.tensor(xs, dtype=dtype).reshape(3, 1, 1)   # noqa: E731 (T, E, n)
    world = lambda *xs, dtype: torch.tensor(xs, dtype=dtype).reshape(3, 1)   # noqa: E731 (T, E)
    return SimpleNamespace(rewards=col(1.0, 2.0, 3.0), values=col(0.5, 0.5, 0.5), next_values=col(0.5, 10.0, 4.0),
                           terminated=col(False, False, False, dtype=torch.bool),
                           truncated=col(False, True, False, dtype=torch.bool), k=world(1, 1, 1, dtype=torch.long),
                           valid=world(True, True, True, dtype=torch.bool), draft=world(False, False, False,
                                                                                          dtype=torch.bool),
                           obs=torch.zeros(3, 1, 1, 2), actions=torch.zeros(3, 1, 1, dtype=torch.long),
                           logp=col(0.0, 0.0, 0.0), state=torch.zeros(3, 1, 4))


@pytest.mark.parametrize("bootstrap,expected", [
    # delta_2 = 3 + 0.9*4 - 0.5 = 6.1; delta_1 = 2 + 0.9*10 - 0.5 = 10.5 (trace cut);
    # delta_0 = 1 + 0.9*0.5 - 0.5 = 0.95, A_0 = 0.95 + 0.9*10.5 = 10.4
    (True, [10.4, 10.5, 6.1]),
    # the truncation ends the return: delta_1 = 2 - 0.5 = 1.5, A_0 = 0.95 + 0.9*1.5 = 2.3
    (False, [2.3, 1.5, 6.1]),
])
def test_gae_by_hand(bootstrap, expected):
    b = window()
    policy = SimpleNamespace(recurrent=False, local_critic=True)
    batch, ratio, vtrace = group_batch(policy, IDENTITY, b, b.valid, torch.zeros(3, 1, dtype=torch.long), gamma=0.9,
                                       lam=1.0, bootstrap_truncation=bootstrap, rollout=True)
    assert ratio is None and not vtrace and batch.shape == (3, 1)
    assert torch.allclose(batch.advantages.flatten(), torch.tensor(expected), atol=1e-6)
    assert torch.allclose(batch.returns.flatten(), torch.tensor(expected) + 0.5, atol=1e-6)


def test_a_real_run_ends_returns_at_truncations(monkeypatch):
    """Command-v0 with 10-step episodes: every truncation reaches GAE as a termination (and
    nothing else changes: the same rewards and truncation flags), and the run trains otherwise."""
    seen, gae = {}, losses.smdp_gae

    def record(rewards, values, next_values, k, terminated, truncated, gamma, lam, valid=None):
        seen.setdefault(flag, []).append((terminated.clone(), truncated.clone(), rewards.clone()))
        return gae(rewards, values, next_values, k, terminated, truncated, gamma, lam, valid=valid)

    monkeypatch.setattr(losses, "smdp_gae", record)
    runs = {}
    for flag in (True, False):
        cfg = war_train.preset_config("smoke", scenario="Command-v0", env_kwargs={"max_cycles": 10}, num_envs=4,
                                      total_env_steps=4 * 25 * 2, bootstrap_truncation=flag)
        with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
            runs[flag] = war_train.train(env, cfg)
    (term_t, trunc_t, rew_t), (term_f, trunc_f, rew_f) = seen[True][0], seen[False][0]
    assert bool(trunc_t.any()) and not bool(term_t.any())   # Command-v0's episodes only truncate
    assert torch.equal(trunc_t, trunc_f) and torch.equal(rew_t, rew_f)   # the same first rollout
    assert torch.equal(term_f, term_t | trunc_t)
    trained = [(x, y) for g, p in runs[True].policies.items()
               for x, y in zip(p.state_dict().values(), runs[False].policies[g].state_dict().values())]
    assert any(not torch.equal(x, y) for x, y in trained)   # different targets, different networks


@pytest.mark.parametrize("field,value", [("bootstrap_truncation", "no"), ("bootstrap_truncation", 0),
                                         ("anneal_lr", 1), ("use_gru", None)])
def test_flags_must_be_bools(field, value):
    with pytest.raises(ValueError, match=f"{field}: expected True or False, got {value!r}"):
        TrainConfig(**{field: value}).validate()
