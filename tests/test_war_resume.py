"""WAR runs stop and resume exactly: N updates straight equal K updates, a stop (progress_fn, a
signal, a crash after a periodic checkpoint) and a resume for the N-K others.

Costs are declared and paid on virtual clocks (``cost_mode="virtual"``), so every decision of the
schedule (who decides when, when a window ends, which DD-PPO worker is preempted) follows the
declared costs.  The modelled clocks also count the *measured* env-step and learning seconds, so
the columns derived from them (``TIMING``) differ from run to run, resumed or not; the costs are
chosen so that those few milliseconds never change an ordering of the workers' clocks.
"""

import json
import math
import signal

import pytest
import torch

import war_envs
import war_train
from war_train.checkpoint import load_checkpoint, save_checkpoint
from war_train.run.runlog import read_metrics
from war_train.config import WarConfig
from war_train.presets import ARTICLE_COSTS
from war_train.run.loop import update
from war_train.war.mode import WarMode

torch.set_num_threads(1)
N, K = 4, 2
#: metrics columns that measure time (wall clock, or modelled time including measured env/learn seconds)
TIMING = ("wall_s", "env_steps_per_s", "model_s", "collect_s", "learn_s", "batch_s", "env_s",
          "model_env_steps_per_s", "agent_transitions_per_s", "decisions_per_s/")
#: checkpoint entries that hold measured time (the workers' clocks, an in-flight round's durations)
TIMED_ENTRIES = ("wall_s", "model_s", "clock", "seconds", "clock_seconds", "env_seconds", "step_env_seconds",
                 "sha256")

ARMS = {
    # 13-step episodes across 8-step windows: macro-steps are carried from one window into the next;
    # jittered costs: the estimates and the plan change every update
    "war": WarConfig(arm="war", costs=ARTICLE_COSTS, jitter=0.1),   # (jittered costs: a random stream too)
    "war-draft": WarConfig(arm="war", costs=ARTICLE_COSTS, fill="draft"),
    "sync": WarConfig(arm="sync", costs=ARTICLE_COSTS),
    "overlap": WarConfig(arm="overlap", costs=ARTICLE_COSTS),
    # worker 1 is 1.3x slower (scaled 10x: its clock stays >= 100 ms from worker 0's at every step);
    # it is preempted once worker 0 is done
    "ddppo": WarConfig(arm="ddppo", costs=ARTICLE_COSTS, workers=2, straggler=1.3, cost_scale=10.0,
                       ddppo_sync_frac=0.5),
    # worker 1 is 1.5x slower (scaled 10x as above): worker 0 takes over some of its worlds; whether a
    # steal pays depends on the clocks, so they count only the declared costs (env_time=False: with
    # measured env seconds in them, a loaded machine can tip a steal decision between two runs)
    "steal": WarConfig(arm="steal", costs=ARTICLE_COSTS, workers=2, straggler=1.5, cost_scale=10.0, env_time=False),
}


def config(updates: int = N, **overrides):
    values = dict(scenario="Command-v0", num_envs=4, rollout_length=8, total_env_steps=4 * 8 * updates, epochs=1,
                  checkpoint_every=0, gif=False, eval_episodes=0, env_kwargs={"max_cycles": 13})
    values.update(overrides)
    return war_train.preset_config("smoke", **values)


def timing(column: str) -> bool:
    return column in TIMING or column.startswith("decisions_per_s/")


def same(a, b) -> bool:
    """Bitwise equality of checkpoint entries (tensors, nested dicts/lists, floats with NaN)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and bool(
            torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                                  and torch.equal(a.nan_to_num(), b.nan_to_num())))
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(
            same(a[k], b[k]) for k in a if k not in TIMED_ENTRIES)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def assert_same_run(ref_dir, run_dir) -> None:
    ref, got = read_metrics(ref_dir / "metrics.csv"), read_metrics(run_dir / "metrics.csv")
    assert [r["update"] for r in got] == list(range(1, N + 1))
    for r, g in zip(ref, got):
        for c in r:
            if not timing(c):
                assert r[c] == g[c] or (math.isnan(r[c]) and math.isnan(g[c])), (r["update"], c, r[c], g[c])
    assert (ref_dir / "staleness.jsonl").read_text() == (run_dir / "staleness.jsonl").read_text()
    a, b = load_checkpoint(ref_dir), load_checkpoint(run_dir)
    assert a["update"] == b["update"] == N
    assert set(a) == set(b)
    for key in a:   # networks, optimizers, generators, worlds, carried fragments, estimates, schedule...
        if key not in TIMED_ENTRIES and key != "config":   # (checkpoint_every, total_env_steps may change)
            assert same(a[key], b[key]), key


_straight = {}


def straight(arm: str, tmp_path_factory):
    """The uninterrupted run of ``arm`` (one per module)."""
    if arm not in _straight:
        run_dir = tmp_path_factory.mktemp(f"straight-{arm}")
        res = war_train.train(None, config(), run_dir=run_dir, war=ARMS[arm])
        assert not res.stopped_early and len(res.history) == N
        _straight[arm] = run_dir
    return _straight[arm]


@pytest.mark.parametrize("arm", list(ARMS))
def test_stop_and_resume_is_exact(tmp_path, tmp_path_factory, arm):
    ref = straight(arm, tmp_path_factory)
    run_dir = tmp_path / "run"
    first = war_train.train(None, config(), lambda row: row["update"] < K, run_dir=run_dir, war=ARMS[arm])
    assert first.stopped_early and len(first.history) == K and load_checkpoint(run_dir)["update"] == K
    rest = war_train.train(None, config(), run_dir=run_dir, resume=run_dir, war=ARMS[arm])
    assert [r["update"] for r in rest.history] == list(range(K + 1, N + 1))
    assert_same_run(ref, run_dir)
    ckpt = load_checkpoint(run_dir)
    if arm == "war":      # what made it hard: macro-steps still running at the checkpoint
        assert any(bool(w["war"]["macro"]["commander"]["active"].any()) for w in ckpt["workers"])
    if arm == "overlap":  # and a round collected but not yet learned
        assert ckpt["in_flight"] is not None
    if arm == "ddppo":
        assert all(r["preempted"] == 1 for r in read_metrics(run_dir / "metrics.csv"))


def test_sigterm_then_resume_is_exact(tmp_path, tmp_path_factory):
    ref = straight("war", tmp_path_factory)

    def send(row):
        if row["update"] == K:
            signal.raise_signal(signal.SIGTERM)   # caught: the update finishes, a checkpoint is written
    res = war_train.train(None, config(), send, run_dir=tmp_path, war=ARMS["war"])
    assert res.interrupted_by == signal.SIGTERM and res.checkpoint == tmp_path / "checkpoint.pt"
    war_train.train(None, config(), run_dir=tmp_path, resume=res.checkpoint, war=ARMS["war"])
    assert_same_run(ref, tmp_path)


def test_a_crash_after_a_periodic_checkpoint_resumes_exactly(tmp_path, tmp_path_factory):
    ref = straight("war", tmp_path_factory)

    def crash(row):
        if row["update"] == K + 1:               # its row is written, the checkpoint is update K's
            raise RuntimeError("killed")
    with pytest.raises(RuntimeError, match="killed"):
        war_train.train(None, config(checkpoint_every=K), crash, run_dir=tmp_path, war=ARMS["war"])
    assert load_checkpoint(tmp_path)["update"] == K
    assert len(read_metrics(tmp_path / "metrics.csv")) == K + 1
    war_train.train(None, config(checkpoint_every=K), run_dir=tmp_path, resume=tmp_path, war=ARMS["war"])
    assert_same_run(ref, tmp_path)   # (the rows after the checkpoint were dropped and redone)


def test_a_resumed_run_may_run_longer(tmp_path, tmp_path_factory):
    ref = straight("sync", tmp_path_factory)
    war_train.train(None, config(updates=K), run_dir=tmp_path, war=ARMS["sync"])   # finished, at K updates
    war_train.train(None, config(), run_dir=tmp_path, resume=tmp_path, war=ARMS["sync"])
    assert_same_run(ref, tmp_path)


def test_measured_costs_resume_from_the_saved_estimates(tmp_path):
    """cost_mode=real: timings differ on resume, but the cost estimates and the schedule planned
    from them continue from the checkpoint's."""
    war = WarConfig(arm="war", cost_mode="real", resource="shared")
    war_train.train(None, config(updates=K), run_dir=tmp_path, war=war)
    ckpt = load_checkpoint(tmp_path)
    assert all(m["count"] > 0 for m in ckpt["cost_models"].values())
    trainer = WarMode(config(), war)
    try:
        trainer.load_state_dict(ckpt)
        assert {lane: m.state_dict() for lane, m in trainer.cost_models.items()} == ckpt["cost_models"]
        assert all(c.schedule.interval == ckpt["schedule"]["interval"] for c in trainer.collectors)
        assert trainer.update_idx == K and trainer.env_steps == ckpt["env_steps"]
        row = update(trainer)
        assert row["update"] == K + 1 and row["env_steps"] == ckpt["env_steps"] + 4 * 8
    finally:
        trainer.close()


def test_resume_refuses_another_run_naming_the_file(tmp_path, capsys):
    war_train.train(None, config(updates=K), run_dir=tmp_path, war=ARMS["war"])
    path = tmp_path / "checkpoint.pt"
    with pytest.raises(ValueError, match=rf"resume: '{path}' was trained with a different WAR config: "
                                         r"arm='war' \(now 'sync'\)"):
        war_train.train(None, config(), resume=tmp_path, war=ARMS["sync"])
    with pytest.raises(ValueError, match=rf"'{path}' was trained with a different config: hidden_size=64 \(now 32\)"):
        war_train.train(None, config(hidden_size=32), resume=path, war=ARMS["war"])
    with pytest.raises(ValueError, match=rf"'{path}' was trained with a different config: .*"
                                         r"scenario='Command-v0' \(now 'Spread-v0'\)"):
        war_train.train(None, config(scenario="Spread-v0", env_kwargs={}), resume=path, war=WarConfig(arm="sync"))
    old = load_checkpoint(path)   # a WAR run's final checkpoint from before WAR runs resumed: networks only
    for key in ("workers", "cost_models", "schedule"):
        del old[key]
    save_checkpoint(tmp_path / "old.pt", old)
    with pytest.raises(ValueError, match=r"'.*old.pt' holds networks only \(no workers, cost_models, schedule\)"):
        war_train.train(None, config(), resume=tmp_path / "old.pt", war=ARMS["war"])
    # a WAR checkpoint is not a lock-step one, and the other way round
    cfg = config()
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
        with pytest.raises(ValueError, match="is a WAR run's checkpoint .arm 'war'."):
            war_train.train(env, cfg, resume=path)
        mappo_dir = tmp_path / "mappo"
        war_train.train(env, config(updates=1), run_dir=mappo_dir)
    with pytest.raises(ValueError, match=rf"'{mappo_dir / 'checkpoint.pt'}' is a lock-step MAPPO run's checkpoint"):
        war_train.train(None, config(), resume=mappo_dir, war=ARMS["war"])
    from war_train.run.cli import main

    assert main(["train", "--resume", str(mappo_dir), "--arm", "sync"]) == 2
    assert "is a lock-step MAPPO run's checkpoint; resume it without --war" in capsys.readouterr().err


def test_the_cli_resumes_a_war_run_with_its_own_war_config(tmp_path, capsys):
    from war_train.run.cli import main

    run_dir = tmp_path / "run"
    args = ["train", "Command-v0", "--arm", "overlap", "--preset", "smoke", "--num-envs", "4", "--rollout-length",
            "8", "--epochs", "1", "--no-gif", "--eval-episodes", "0", "--env-kwargs", '{"max_cycles": 13}',
            "--run-dir", str(run_dir)]
    assert main(args + ["--total-steps", str(4 * 8 * K)]) == 0
    assert main(["train", "--resume", str(run_dir), "--total-steps", str(4 * 8 * N)]) == 0
    assert json.loads((run_dir / "war_config.json").read_text())["arm"] == "overlap"
    assert [r["update"] for r in read_metrics(run_dir / "metrics.csv")] == list(range(1, N + 1))
    assert load_checkpoint(run_dir)["update"] == N
    capsys.readouterr()
    assert main(["train", "--resume", str(run_dir), "--arm", "sync"]) == 2
    err = capsys.readouterr().err
    assert "different WAR config: arm='overlap' (now 'sync')" in err and str(run_dir) in err


@pytest.mark.parametrize("variant", ["frames-local-critic", "smax-masks", "smax-world-critic", "gru", "planner",
                                     "planner-draft", "planner-overlap"])
def test_stop_and_resume_is_exact_with_every_feature(tmp_path, variant):
    """Frame stacks and local critics (Command-v0, the commander holding), SMAX-v0 self-play
    with action masks and dead units (a slow ally holding; also with world-state critics), GRUs (their states carried with
    the macro-steps from one window into the next, and in the checkpoint) and a planning commander
    (Relay-v0): a WAR run stopped and resumed equals the straight one."""
    if variant == "gru":
        kw = dict(use_gru=True)
        war = ARMS["war"]
    elif variant.startswith("planner"):   # Relay-v0's commander decides by search (its stream in the checkpoint);
        # with a draft guessing between its decisions (distilled from the search's actions); overlapped
        kw = dict(scenario="Relay-v0", env_kwargs={"num_sentries": 2, "max_cycles": 13}, planner="commander",
                  planner_simulations=4, planner_depth=2)
        war = WarConfig(arm="overlap" if variant == "planner-overlap" else "war",
                        costs={"commander": {"per_decision_ms": 50.0}, "sentry": {"per_decision_ms": 5.0}},
                        fill="draft" if variant == "planner-draft" else "hold")
    elif variant.startswith("smax"):
        kw = dict(scenario="SMAX-v0", env_kwargs={"map_name": "3m", "enemy": "self_play"},
                  critic_input="world" if variant == "smax-world-critic" else "state")
        war = WarConfig(arm="war", costs={"ally": {"per_decision_ms": 50.0}, "enemy": {"per_decision_ms": 5.0}})
    else:
        kw = dict(frame_stack=2, critic_input="local")
        war = ARMS["war"]
    ref = tmp_path / "straight"
    war_train.train(None, config(**kw), run_dir=ref, war=war)
    run_dir = tmp_path / "run"
    first = war_train.train(None, config(**kw), lambda row: row["update"] < K, run_dir=run_dir, war=war)
    assert first.stopped_early
    war_train.train(None, config(**kw), run_dir=run_dir, resume=run_dir, war=war)
    assert_same_run(ref, run_dir)
