"""Data-parallel MAPPO (``war_train.learn.distributed``): 2 gloo ranks on CPU equal one process.

The ranks are spawned with ``torch.multiprocessing`` and join through the same torchrun
environment variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``) that ``torchrun`` sets; every spawned job runs in one pair of processes.
"""

import math
import os
import socket

import pytest
import torch
import torch.distributed
import torch.multiprocessing as mp

import war_envs
import war_train
from war_envs.war import CostProfile
from war_train.learn import distributed
from war_train.checkpoint import load_checkpoint
from war_train.rollout.envs import make_env

torch.set_num_threads(1)
pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="torch.distributed with gloo is needed")

# name -> (config overrides, updates of the first run, updates after resuming (0: no resume))
JOBS = {
    # 16 worlds (8 per rank), 2 epochs x 2 minibatches of (step, world) pairs
    "spread_mlp": (dict(num_minibatches=2, rollout_length=20), 1, 0),
    # 2 groups (each its own actor and critic), 4 minibatches
    "pp_mlp": (dict(scenario="PredatorPrey-v0", num_minibatches=4, rollout_length=20), 1, 0),
    # one actor shared by both groups (share_actor): its loss pools both groups' minibatches
    "pp_shared_actor": (dict(scenario="PredatorPrey-v0", share_actor=True, num_minibatches=4, rollout_length=20), 1, 0),
    # GRU, 4 worlds, 4 minibatches of one world each: every minibatch is empty on one rank
    "spread_gru": (dict(num_envs=4, use_gru=True, num_minibatches=4), 1, 0),
    # Box actions: the Gaussian's normal noise of all worlds drawn on every rank
    "spread_box": (dict(env_kwargs={"continuous_actions": True}, num_minibatches=2, rollout_length=20), 1, 0),
    # MultiDiscrete actions, runners leaving the game (masked losses and statistics)
    "tag_masked": (dict(scenario="Tag-v0", env_kwargs={"num_taggers": 1, "num_runners": 3, "grid_length": 2.0,
                                                        "episode_length": 10, "tagging_distance": 0.1},
                        num_minibatches=2, rollout_length=20), 1, 0),
    # 1 update, checkpoint (rank 0 gathers every rank's worlds), resume on 2 ranks for a 2nd
    "spread_resume": (dict(num_minibatches=3, rollout_length=20, checkpoint_every=1), 1, 2),
    # Relay-v0's commander decides by search on each rank's worlds; checkpoint, resume on 2 ranks
    "relay_planner": (dict(scenario="Relay-v0", env_kwargs={"num_sentries": 2}, planner="commander",
                           planner_simulations=4, planner_depth=2, num_minibatches=2, rollout_length=20,
                           checkpoint_every=1), 1, 2),
    # policy selection after each of 3 updates: rank 0 selects, the other ranks keep training's networks
    "spread_select": (dict(num_minibatches=2, rollout_length=20, select_every=1, select_episodes=30), 3, 0),
}
#: straggler modes, rank 1 slowed by a declared sleep per world-step (ms): name -> (overrides, first, resumed, ms)
STRAGGLER_JOBS = {
    "preempt": (dict(dist_straggler="preempt", dist_sync_frac=0.5, num_minibatches=2, rollout_length=20,
                     checkpoint_every=1), 2, 3, 2.0),
    "war": (dict(dist_straggler="war", num_minibatches=2, rollout_length=20, dist_rank_weights="balanced"), 3, 0, 2.0),
}
#: one PPO update (rollout + epochs of minibatch steps): parameters agree to this
UPDATE_TOL = 1e-6
#: after several updates: the ranks' forward passes run on E/K rows, whose float32 results may
#: differ from those on E rows in the last bit (BLAS kernels depend on the batch size), and Adam
#: (eps 1e-5) turns differences in near-zero gradient entries into update differences
RUN_TOL = 1e-5


def config(name, updates, jobs=None):
    kw = dict((jobs or {**JOBS, **STRAGGLER_JOBS})[name][0])
    E = kw.get("num_envs", 16)
    T = kw.get("rollout_length", 25)
    return war_train.preset_config("smoke", **kw, total_env_steps=E * T * updates)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def summary(result):
    return {"history": [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")}
                        for r in result.history],
            "params": {g: {k: v.detach().clone() for k, v in p.state_dict().items()}
                       for g, p in result.policies.items()},
            "selected": result.selected}


def _worker(rank, world_size, port, out_dir, jobs, straggler_jobs=None):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    results = {}
    with distributed.launch("cpu") as dist:
        assert isinstance(dist, distributed.DataParallel) and dist.world_size == world_size
        jobs = {**{k: (*v, 0.0) for k, v in jobs.items()}, **(straggler_jobs or {})}
        for name, (_, first, resumed, slow_ms) in jobs.items():
            run_dir = os.path.join(out_dir, name)
            dist.step_cost = CostProfile(per_decision_ms=slow_ms, mode="sleep") if rank == 1 and slow_ms else None
            seen = len(dist.history)
            cfg = config(name, first, jobs)
            with make_env(cfg, dist) as env:
                assert env.num_envs == cfg.num_envs // world_size
                res = war_train.train(env, cfg, run_dir=run_dir)
            rows = list(res.history)
            if resumed:
                cfg = config(name, resumed, jobs)
                with make_env(cfg, dist) as env:
                    res = war_train.train(env, cfg, run_dir=run_dir, resume=run_dir)
                rows += res.history
            res.history = rows  # the first run's rows, then the resumed run's
            results[name] = summary(res)
            results[name]["rollouts"] = dist.history[seen:]
    torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    mp.spawn(_worker, args=(2, free_port(), str(out), JOBS, STRAGGLER_JOBS), nprocs=2, join=True)
    return out, [torch.load(out / f"rank{r}.pt", weights_only=False) for r in range(2)]


def single(name, updates, run_dir=None, resume=None, jobs=None):
    cfg = config(name, updates, jobs)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
        return war_train.train(env, cfg, run_dir=run_dir, resume=resume)


def assert_rows_close(a, b):
    assert len(a) == len(b)
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys()
        for k in ra:
            x, y = ra[k], rb[k]
            if isinstance(x, float) and math.isnan(x):
                assert math.isnan(y), k
            elif k.endswith("grad_norm_actor") or k.endswith("grad_norm_critic"):
                assert y == pytest.approx(x, rel=1e-4, abs=1e-6), k
            else:
                assert y == pytest.approx(x, rel=1e-5, abs=1e-6), k


def max_param_diff(a, b):
    return max(float((a[g][k] - b[g][k]).abs().max()) for g in a for k in a[g])


def test_rank0_selects_the_networks_one_process_selects(two_ranks):
    _, ranks = two_ranks
    ref = single("spread_select", 3)
    last = summary(single("spread_select", 3, jobs={"spread_select": (dict(JOBS["spread_select"][0], select_every=0),
                                                                      3, 0)}))
    assert ref.selected["update"] != 3   # (else the selected and the last networks would be the same)
    got = ranks[0]["spread_select"]
    assert got["selected"]["update"] == ref.selected["update"]
    assert got["selected"]["score"] == pytest.approx(ref.selected["score"], rel=1e-3)
    assert max_param_diff(summary(ref)["params"], got["params"]) <= RUN_TOL
    # rank 1 does not select: its result is the last update's networks
    assert ranks[1]["spread_select"]["selected"] is None
    assert max_param_diff(last["params"], ranks[1]["spread_select"]["params"]) <= RUN_TOL


@pytest.mark.parametrize("name", ["spread_mlp", "pp_mlp", "pp_shared_actor", "spread_gru", "spread_box",
                                  "tag_masked"])
def test_two_ranks_make_the_parameter_update_of_one_process(two_ranks, name):
    _, ranks = two_ranks
    _, updates, _ = JOBS[name]
    ref = summary(single(name, updates))
    for r in ranks:  # every rank holds the same parameters: those of one process with all the worlds
        assert max_param_diff(ref["params"], r[name]["params"]) <= UPDATE_TOL
        assert_rows_close(ref["history"], r[name]["history"])
    assert ranks[0][name]["history"][-1]["env_steps"] == config(name, updates).num_envs * config(name, updates).rollout_length * updates


def test_rank0_writes_one_checkpoint_of_all_worlds_and_resume_is_exact(two_ranks, tmp_path):
    out, ranks = two_ranks
    run = out / "spread_resume"
    # one set of outputs, written by rank 0
    files = sorted(p.name for p in run.iterdir() if not p.name.startswith("."))
    assert files == ["checkpoint.pt", "config.json", "metrics.csv"]
    lines = (run / "metrics.csv").read_text().strip().splitlines()
    assert len(lines) == 1 + 2  # header + one row per update (first run + resumed run)
    ckpt = load_checkpoint(run)
    assert ckpt["distributed"]["world_size"] == 2
    assert ckpt["starts"].shape[0] == ckpt["env"]["num_envs"] == 16
    # 2 ranks x (1 update, checkpoint, resume, 1 update) == one process x 2 updates
    ref = single("spread_resume", 2, run_dir=tmp_path / "one")
    assert max_param_diff(summary(ref)["params"], ranks[0]["spread_resume"]["params"]) <= RUN_TOL
    one = load_checkpoint(tmp_path / "one")
    for k in one["env_state"]:
        assert torch.equal(one["env_state"][k], ckpt["env_state"][k]), k
    for g in one["obs"]:
        assert torch.equal(one["obs"][g], ckpt["obs"][g])
    assert torch.equal(one["generator"], ckpt["generator"])
    # the 2-rank checkpoint resumes in one process too (the same worlds, the same generator)
    first = load_checkpoint(run)  # written after update 2; resume a copy for a 3rd update in one process
    three = single("spread_resume", 3, run_dir=tmp_path / "one")
    cont = single("spread_resume", 3, run_dir=run, resume=run)
    assert first["update"] == 2
    assert max_param_diff(summary(three)["params"], summary(cont)["params"]) <= RUN_TOL


def test_a_planning_group_trains_data_parallel_and_resumes(two_ranks):
    out, ranks = two_ranks
    ckpt = load_checkpoint(out / "relay_planner")
    planners = ckpt["distributed"]["planners"]   # each rank's planner stream, kept apart
    assert len(planners) == 2 and not torch.equal(planners[0]["generator"], planners[1]["generator"])
    for r in ranks:   # the same networks on every rank: update 1, then update 2 after resuming
        assert [row["update"] for row in r["relay_planner"]["history"]] == [1, 2]
        assert max_param_diff(ranks[0]["relay_planner"]["params"], r["relay_planner"]["params"]) == 0


def check_straggler_rollouts(rollouts, rows, T, min_frac=0.25, cap=None):
    E = 8  # worlds per rank
    assert len(rollouts) == len(rows)
    for h, row in zip(rollouts, rows):
        steps = h["steps"]
        assert all(s >= math.ceil(min_frac * T) for s in steps), steps
        assert all(s <= (cap or T) for s in steps), steps
        # a preempted rank stopped short; a rank that was not preempted reached its target
        assert row["preempted"] == sum(h["preempted"])
        assert row["rollout_steps_min"] == min(steps) and row["rollout_steps_max"] == max(steps)
        assert row["share/rank0"] == pytest.approx(steps[0] / sum(steps))
        assert row["share/rank0"] + row["share/rank1"] == pytest.approx(1.0)
        assert row["share/agent"] == 1.0 and row["staleness_max"] == 0.0 and row["dropped_frac"] == 0.0
        assert 0 < row["ess_frac"] <= 1.0 + 1e-12
    env_steps = [E * sum(h["steps"]) for h in rollouts]
    assert [r["env_steps"] for r in rows] == [sum(env_steps[:i + 1]) for i in range(len(rows))]


def test_dd_ppo_preemption_across_ranks(two_ranks):
    out, ranks = two_ranks
    T = 20
    for r in ranks:  # both ranks log the same rows
        res = r["preempt"]
        # (the resumed run's rows follow the first run's)
        check_straggler_rollouts(res["rollouts"], res["history"], T)
        assert max(max(h["steps"]) for h in res["rollouts"]) == T  # someone always finishes its rollout
        for h in res["rollouts"]:  # 2 ranks, sync_frac 0.5: whoever is not done when the other finishes stops
            assert sum(h["preempted"]) <= 1
            assert h["steps"][h["preempted"].index(False)] == T
        assert all(row["ess_frac"] == 1.0 for row in res["history"])  # every sample weighs the same
    assert ranks[0]["preempt"]["params"].keys() == ranks[1]["preempt"]["params"].keys()
    assert max_param_diff(ranks[0]["preempt"]["params"], ranks[1]["preempt"]["params"]) == 0.0
    ckpt = load_checkpoint(out / "preempt")
    assert ckpt["update"] == 3 and len(ckpt["distributed"]["generators"]) == 2
    assert not torch.equal(*ckpt["distributed"]["generators"])  # ranks sample from their own streams
    rows = (out / "preempt" / "metrics.csv").read_text().strip().splitlines()
    assert len(rows) == 4 and "preempted" in rows[0].split(",")


def test_war_rank_quotas(two_ranks):
    _, ranks = two_ranks
    res = ranks[0]["war"]
    check_straggler_rollouts(res["rollouts"], res["history"], 20, cap=40)
    assert res["rollouts"][0]["steps"] == [20, 20]  # no cost measured yet: lock-step
    for h in res["rollouts"][1:]:  # measured: the quota follows the measured costs (rank 1 is slower)
        steps = h["steps"]
        assert steps[0] >= steps[1] or h["preempted"][1]
    for row in res["history"]:  # balanced weights: each rank carries half the weight
        assert row["ess_frac"] <= 1.0
    assert max_param_diff(ranks[0]["war"]["params"], ranks[1]["war"]["params"]) == 0.0


# ----------------------------------------------------------------------------- no processes needed
def test_local_context_is_the_identity():
    ctx = distributed.current()
    assert isinstance(ctx, distributed.Local) and not ctx.active and ctx.is_main
    assert ctx.worlds(12) == range(12)
    x = torch.randn(5, 3)
    assert torch.equal(ctx.normalize_advantages(x), war_train.learn.losses.normalize_advantages(x))


def test_torchrun_env_detection(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    assert distributed.torchrun_env() is None
    assert isinstance(distributed.init_from_env(), distributed.Local)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="RANK"):
        distributed.torchrun_env()
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    with pytest.raises(ValueError, match="RANK=2"):
        distributed.torchrun_env()
    monkeypatch.setenv("RANK", "1")
    assert distributed.torchrun_env() == {"rank": 1, "world_size": 2, "local_rank": 0,
                                          "master_addr": "127.0.0.1", "master_port": 29500}
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    assert isinstance(distributed.init_from_env(), distributed.Local)  # one rank: no process group


def test_preemption_rule_is_dd_ppos():
    due = distributed.preemption_due
    # 0.6 of 4 ranks -> 3 must have finished; at least 25 % of 20 steps -> 5
    assert not due(2, 4, 0.6, 10, 20, 0.25)
    assert due(3, 4, 0.6, 5, 20, 0.25)
    assert not due(3, 4, 0.6, 4, 20, 0.25)
    # 2 ranks: 0.6 needs both (never preempts); 0.5 needs one
    assert not due(1, 2, 0.6, 19, 20, 0.25)
    assert due(1, 2, 0.5, 5, 20, 0.25)


def test_rank_quotas_follow_speed_and_are_scale_invariant():
    q = distributed.rank_quotas([1e-3, 3e-3], [8, 8], 20, min_frac=0.25)
    assert q == [30, 10]  # 3x faster rank: 3/4 of the 2 x 8 x 20 world-steps
    assert distributed.rank_quotas([5.0, 15.0], [8, 8], 20, min_frac=0.25) == q
    assert distributed.rank_quotas([1e-3, 1e-3], [8, 8], 20, min_frac=0.25) == [20, 20]
    # clamped to [min_frac T, 2 T]
    assert distributed.rank_quotas([1e-3, 1.0], [8, 8], 20, min_frac=0.25) == [40, 5]


def test_rank_weights():
    assert distributed.rank_weights([300, 100], [8, 8], "samples") == [1.0, 1.0]
    w = distributed.rank_weights([300, 100], [8, 8], "balanced")
    assert 300 * w[0] == pytest.approx(100 * w[1])  # each rank carries its lock-step half


def test_uneven_split_is_a_clear_error(monkeypatch):
    class Fake(distributed.DataParallel):
        def __init__(self):  # no process group needed for worlds()
            self.rank, self.world_size = 1, 3

    with pytest.raises(ValueError, match="num_envs: 16 worlds cannot be split evenly over 3 ranks"):
        Fake().worlds(16)
    assert Fake().worlds(12) == range(4, 8)


def test_straggler_checkpoint_needs_the_same_world_size():
    class Fake(distributed.DataParallel):
        def __init__(self, rank, world_size, mode):
            self.rank, self.world_size, self.mode = rank, world_size, mode
            self.lo, self.hi = rank * 2, rank * 2 + 2

    ckpt = {"env_state": {"p": torch.arange(4)}, "obs": {}, "starts": torch.arange(4), "actor_h": {},
            "critic_h": {}, "episode_stats": {"returns": torch.arange(4), "sums": {}},
            "generator": torch.zeros(3), "distributed": {"world_size": 2, "generators": [torch.ones(3), torch.full((3,), 2.0)]}}
    mine = Fake(1, 2, "preempt").local_checkpoint(ckpt)
    assert torch.equal(mine["starts"], torch.tensor([2, 3])) and torch.equal(mine["generator"], torch.full((3,), 2.0))
    assert torch.equal(Fake(1, 2, "off").local_checkpoint(ckpt)["generator"], torch.zeros(3))  # shared stream
    with pytest.raises(ValueError, match="world size"):
        Fake(1, 3, "war").local_checkpoint(ckpt)


def test_config_validates_distributed_fields():
    with pytest.raises(ValueError, match="dist_straggler"):
        war_train.preset_config("smoke", dist_straggler="fast")
    with pytest.raises(ValueError, match="dist_sync_frac"):
        war_train.preset_config("smoke", dist_sync_frac=0.0)
    with pytest.raises(ValueError, match="dist_rank_weights"):
        war_train.preset_config("smoke", dist_rank_weights="x")
