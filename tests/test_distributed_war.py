"""WAR modes under torchrun (``war_train.war.mode`` with ``war_train.learn.distributed.DataParallel``):
2 gloo ranks on CPU, each stepping its half of the worlds with its own WAR workers.

- The update: every rank collects a round of its worlds, and the all-reduced PPO update (one
  minibatch per epoch) equals the update one process computes on the union of both ranks'
  transitions with the same starting parameters (advantage normalization, value normalizer,
  group-balancing weights and gradients over the whole batch).
- Runs: parameters stay equal on every rank (GRU policies and masked SMAX included), rank 0
  writes one checkpoint holding every rank's workers, a stop-and-resume on 2 ranks is the
  uninterrupted run bit for bit, and DD-PPO preemption across ranks shortens the slow rank's
  windows.
"""

import math
import os
import socket

import pytest
import torch
import torch.distributed
import torch.multiprocessing as mp

import war_train
from war_envs.war import CostProfile
from war_train.learn import distributed
from war_train.checkpoint import load_checkpoint
from war_train.learn.step import Batches, learn
from war_train.learn.ppo import GroupBatch, Learner
from war_train.config import WarConfig
from war_train.presets import ARTICLE_COSTS
from war_train.war.mode import WarMode

torch.set_num_threads(1)
pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="torch.distributed with gloo is needed")

#: the scenario of the WAR tests: a commander that is slow to decide, 9 sentries
BASE = dict(scenario="Command-v0", num_envs=8, rollout_length=8, epochs=2, num_minibatches=1, checkpoint_every=0,
            gif=False, eval_episodes=0, env_kwargs={"max_cycles": 13})
#: name -> (config overrides, WAR config, updates of the first run, updates after resuming, rank 1's sleep per world-step in ms)
RUNS = {
    "war": (dict(), WarConfig(arm="war", costs=ARTICLE_COSTS, jitter=0.1), 2, 0, 0.0),
    "war_resume": (dict(checkpoint_every=1), WarConfig(arm="war", costs=ARTICLE_COSTS, jitter=0.1), 1, 1, 0.0),
    "gru": (dict(use_gru=True, num_minibatches=2), WarConfig(arm="war", costs=ARTICLE_COSTS), 2, 0, 0.0),
    "overlap": (dict(num_minibatches=2), WarConfig(arm="overlap", costs=ARTICLE_COSTS), 2, 0, 0.0),
    "smax": (dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}, num_minibatches=2),
             WarConfig(arm="sync"), 2, 0, 0.0),
    "preempt": (dict(dist_straggler="preempt", dist_sync_frac=0.5, rollout_length=20),
                WarConfig(arm="sync", costs=ARTICLE_COSTS), 3, 0, 3.0),
}
#: two ranks' float32 forward passes over half the rows each may differ from one pass over all of
#: them in the last bit; one update's parameters agree to this
UPDATE_TOL = 1e-6


def config(name: str, updates: int, table=RUNS):
    kw = {**BASE, **table[name][0]}
    return war_train.preset_config("smoke", **kw, total_env_steps=kw["num_envs"] * kw["rollout_length"] * updates)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def params(policies) -> dict:
    return {g: {k: v.detach().clone() for k, v in p.state_dict().items()} for g, p in policies.items()}


def max_param_diff(a, b) -> float:
    return max(float((a[g][k] - b[g][k]).abs().max()) for g in a for k in a[g])


def _one_update(dist) -> dict:
    """One WAR round and update on this rank: the batches it learned from, its parameters before and after."""
    cfg = config("war", 1)
    mode = WarMode(cfg, RUNS["war"][1], dist=dist)
    try:
        before = params(mode.policies)
        mode.update_idx = 1
        batches = mode.batches(mode.collect())
        learn(mode.learner, batches, cfg.schedule(1), dist, cfg=cfg, fail=mode.fail)
        return {"before": before, "after": params(mode.policies), "weights": batches.weights,
                "batches": {g: {k: v for k, v in vars(b).items()} for g, b in batches.groups.items()},
                "worlds": (mode.worlds.start, mode.worlds.stop)}
    finally:
        mode.close()


def _worker(rank, world_size, port, out_dir):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    results = {}
    with distributed.launch("cpu") as dist:
        results["update"] = _one_update(dist)
        for name, (_, war, first, resumed, slow_ms) in RUNS.items():
            dist.step_cost = CostProfile(per_decision_ms=slow_ms, mode="sleep") if rank == 1 and slow_ms else None
            run_dir = os.path.join(out_dir, name)
            seen = len(dist.history)
            res = war_train.train(None, config(name, first), run_dir=run_dir, war=war)
            rows = list(res.history)
            if resumed:
                res = war_train.train(None, config(name, first + resumed), run_dir=run_dir, resume=run_dir, war=war)
                rows += res.history
            results[name] = {"history": rows, "params": params(res.policies), "rollouts": dist.history[seen:]}
        dist.step_cost = None
        # the uninterrupted run that war_resume stopped and resumed
        res = war_train.train(None, config("war_resume", 2), run_dir=os.path.join(out_dir, "war_straight"),
                              war=RUNS["war_resume"][1])
        results["war_straight"] = {"history": res.history, "params": params(res.policies)}
    torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist_war")
    mp.spawn(_worker, args=(2, free_port(), str(out)), nprocs=2, join=True)
    return out, [torch.load(out / f"rank{r}.pt", weights_only=False) for r in range(2)]


def test_two_rank_war_update_is_the_one_process_update_of_both_ranks_transitions(two_ranks):
    _, ranks = two_ranks
    r0, r1 = ranks[0]["update"], ranks[1]["update"]
    assert r0["worlds"] == (0, 4) and r1["worlds"] == (4, 8)
    assert max_param_diff(r0["before"], r1["before"]) == 0.0     # the networks start equal on every rank
    assert r0["weights"] == r1["weights"]                        # group weights of the whole batch
    for g in r0["batches"]:   # each rank learned from its own, different transitions
        assert not torch.equal(r0["batches"][g]["obs"][:1], r1["batches"][g]["obs"][:1])
    # one process: the same starting parameters, the union of the ranks' transitions
    cfg = config("war", 1)
    mode = WarMode(cfg, RUNS["war"][1])
    try:
        learner = mode.learner
        assert max_param_diff(params(learner.policies), r0["before"]) == 0.0
        union = {g: GroupBatch(**{k: (None if v is None else torch.cat([v, r1["batches"][g][k]]))
                                  for k, v in b.items()}) for g, b in r0["batches"].items()}
        learn(learner, Batches(union, weights=r0["weights"]), cfg.schedule(1), distributed.Local(), cfg=cfg,
              fail=mode.fail)
        one = params(learner.policies)
    finally:
        mode.close()
    assert max_param_diff(one, r0["before"]) > 1e-4               # the update moved the parameters
    for r in (r0, r1):
        assert max_param_diff(one, r["after"]) <= UPDATE_TOL


@pytest.mark.parametrize("name", ["war", "gru", "overlap", "smax", "preempt"])
def test_every_rank_holds_the_same_parameters_and_logs_the_whole_run(two_ranks, name):
    out, ranks = two_ranks
    cfg = config(name, RUNS[name][2])
    for r in ranks:
        assert max_param_diff(ranks[0][name]["params"], r[name]["params"]) == 0.0
        rows = r[name]["history"]
        assert len(rows) == RUNS[name][2]
        assert all(math.isfinite(row["model_s"]) and row["transitions"] > 0 for row in rows)
    rows = ranks[0][name]["history"]
    if cfg.dist_straggler == "off":   # every rank collects the configured windows: env steps of all worlds
        assert [row["env_steps"] for row in rows] == [cfg.num_envs * cfg.rollout_length * (i + 1)
                                                      for i in range(len(rows))]
    assert rows == [{k: v for k, v in row.items()} for row in ranks[1][name]["history"]] or name == "preempt" or \
        all(a["env_steps"] == b["env_steps"] for a, b in zip(rows, ranks[1][name]["history"]))
    files = sorted(p.name for p in (out / name).iterdir())
    assert "metrics.csv" in files and "war_config.json" in files


def test_dd_ppo_preemption_across_ranks_shortens_the_slow_ranks_windows(two_ranks):
    _, ranks = two_ranks
    T, E = 20, 4
    rollouts, rows = ranks[0]["preempt"]["rollouts"], ranks[0]["preempt"]["history"]
    assert len(rollouts) == len(rows) == 3
    for h, row in zip(rollouts, rows):
        assert all(s >= math.ceil(0.25 * T) for s in h["steps"]) and max(h["steps"]) == T
        assert row["rollout_steps_min"] == min(h["steps"]) and row["rollout_steps_max"] == T
        assert row["preempted"] == sum(h["preempted"])
        assert row["share/rank0"] + row["share/rank1"] == pytest.approx(1.0)
    assert any(h["preempted"][1] for h in rollouts)   # rank 1 sleeps 3 ms a world-step: it is stopped early
    env_steps = [E * sum(h["steps"]) for h in rollouts]
    assert [r["env_steps"] for r in rows] == [sum(env_steps[:i + 1]) for i in range(len(rows))]


def test_rank0_writes_one_checkpoint_of_every_rank_and_resume_is_exact(two_ranks, tmp_path):
    out, ranks = two_ranks
    ckpt = load_checkpoint(out / "war_resume")
    assert ckpt["update"] == 2 and ckpt["distributed"]["world_size"] == 2
    assert len(ckpt["distributed"]["other_ranks"]) == 1
    # each rank's workers hold their own worlds (rank 1's are the run's worlds 4..7)
    mine, other = ckpt["workers"][0]["env_state"], ckpt["distributed"]["other_ranks"][0]["workers"][0]["env_state"]
    assert any(not torch.equal(mine[k], other[k]) for k in mine)
    for r in ranks:   # stopped after update 1 and resumed == 2 updates straight, bit for bit
        assert max_param_diff(r["war_resume"]["params"], r["war_straight"]["params"]) == 0.0
        timing = ("wall_s", "env_steps_per_s", "model_s", "collect_s", "learn_s", "batch_s", "env_s",
                  "model_env_steps_per_s", "agent_transitions_per_s")
        for a, b in zip(r["war_resume"]["history"], r["war_straight"]["history"]):
            for k in a:
                if k in timing or k.startswith("decisions_per_s/") or k.startswith("tau_ms/"):
                    continue
                assert a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])), k
    # a WAR checkpoint of 2 ranks does not resume in one process (its workers are per rank)
    with pytest.raises(ValueError, match="written by a WAR run on 2 rank"):
        war_train.train(None, config("war_resume", 3), run_dir=tmp_path / "one", resume=out / "war_resume",
                        war=RUNS["war_resume"][1])


class _TwoRanks(distributed.Local):
    """What ``WarMode``'s set-up checks read of a torchrun rank (no process group needed)."""
    active = True
    world_size = 2


@pytest.mark.parametrize("cfg_kw, war_kw, match", [
    ({}, dict(arm="war", costs=ARTICLE_COSTS, fill="draft"), "not data parallel"),
    (dict(dist_straggler="preempt"), dict(arm="ddppo", workers=2), "one worker per rank"),
    (dict(dist_straggler="war"), dict(arm="steal", workers=2), "one worker per rank"),
])
def test_war_options_that_are_not_data_parallel_are_refused_under_torchrun(cfg_kw, war_kw, match):
    cfg = config("war", 1, {"war": (cfg_kw,)})
    with pytest.raises(ValueError, match=match):
        WarMode(cfg, WarConfig(**war_kw), dist=_TwoRanks())
