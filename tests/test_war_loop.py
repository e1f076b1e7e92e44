"""MAPPO on WAR batches: every arm of the harness trains, the diagnostics are logged, the CLI runs."""

import json
import math

import pytest
import torch

import war_train
from war_train.run.cli import main
from war_train.run.runlog import read_metrics
from war_train.config import WarConfig, war_config_from_dict
from war_train.presets import ARTICLE_COSTS
from war_train.run.loop import update
from war_train.war.mode import WarMode

torch.set_num_threads(1)


def config(**kw):
    base = dict(scenario="Command-v0", num_envs=10, total_env_steps=10 * 25 * 3, epochs=2)
    base.update(kw)
    return war_train.preset_config("smoke", **base)


def run(cfg, war, updates=None, env_time=False):
    trainer = WarMode(cfg, war)
    for c in trainer.collectors:
        c.env_time = env_time  # modelled time from the declared costs only: deterministic
    rows = [update(trainer) for _ in range(updates or cfg.num_updates)]
    trainer.close()
    return trainer, rows


def test_war_arm_on_the_article_case():
    trainer, rows = run(config(), WarConfig(arm="war", costs=ARTICLE_COSTS))
    r = rows[-1]
    assert r["interval/commander"] > 3 and r["interval/sentry"] == 1.0 and r["quota/commander"] == 3
    assert r["collect_s"] == pytest.approx(3.75)               # 75 x 50 ms on the commander's worker
    assert r["decisions_per_s/commander"] == pytest.approx(75 / 3.75)
    assert r["decisions_per_s/sentry"] == pytest.approx(2250 / 3.75)
    # one call per step for each lane: the commander's 75 decisions over 25 steps of 10 worlds with
    # staggered phases come as 25 calls of about 3 worlds (calls are counted, not decisions)
    assert r["calls_per_step/sentry"] == 1.0 and r["calls_per_step/commander"] == 1.0
    assert r["model_env_steps_per_s"] == pytest.approx(250 / 3.75)
    assert r["model_s"] == pytest.approx(sum(x["collect_s"] + x["learn_s"] for x in rows))
    # the batch is re-weighted to lock-step shares; windows = episodes here: nothing is carried over
    assert r["share/commander"] == pytest.approx(75 / 2325) and r["share/sentry"] == pytest.approx(2250 / 2325)
    assert r["staleness_max"] == 0.0 and r["dropped_frac"] == 0.0
    assert 0.5 < r["ess_frac"] < 1.0
    assert r["tau_ms/commander"] == pytest.approx(50.0) and r["tau_ms/sentry"] == pytest.approx(5.0)
    assert math.isfinite(r["commander/policy_loss"]) and math.isfinite(r["sentry/value_loss"])
    # the same run under the shared-device model: 75 x 50 ms + 2250 x 5 ms
    _, shared = run(config(), WarConfig(arm="war", costs=ARTICLE_COSTS, resource="shared"), updates=1)
    assert shared[0]["collect_s"] == pytest.approx(15.0)
    # 40-step episodes cross the 25-step windows: macro-steps carried over arrive one version late
    long = config(env_kwargs={"max_cycles": 40})
    _, carried = run(long, WarConfig(arm="war", costs=ARTICLE_COSTS), updates=2)
    assert 0 < carried[1]["staleness_mean"] < 0.05 and carried[1]["staleness_max"] == 1.0
    assert carried[1]["staleness_p95"] == 0.0 and carried[1]["dropped_frac"] == 0.0
    # max_lag = 0 drops them, and counts them
    _, strict = run(long, WarConfig(arm="war", costs=ARTICLE_COSTS, max_lag=0), updates=2)
    assert strict[1]["dropped_frac"] > 0 and strict[1]["staleness_max"] == 0.0


def test_sync_and_overlap_arms():
    _, sync = run(config(), WarConfig(arm="sync", costs=ARTICLE_COSTS))
    assert all(r["collect_s"] == pytest.approx(12.5) for r in sync)
    assert all(r["batch_s"] == pytest.approx(r["collect_s"] + r["learn_s"]) for r in sync)
    assert all(r["staleness_max"] == 0.0 and r["share/commander"] == pytest.approx(0.1) for r in sync)
    trainer, over = run(config(), WarConfig(arm="overlap", costs=ARTICLE_COSTS))
    # learning overlaps the next collection: the behaviour policy is one version behind
    assert over[0]["staleness_max"] == 0.0
    assert all(r["staleness_mean"] == 1.0 and r["staleness_max"] == 1.0 for r in over[1:])
    assert all(r["batch_s"] == pytest.approx(max(r["collect_s"], r["learn_s"])) for r in over)
    assert over[-1]["model_s"] == pytest.approx(12.5 + sum(r["batch_s"] for r in over))
    assert over[-1]["vtrace"] == 0.0 and over[-1]["ess_frac"] < 1.0


def test_ddppo_arm_preempts_a_straggling_worker():
    war = WarConfig(arm="ddppo", costs=ARTICLE_COSTS, workers=2, straggler=3.0, ddppo_sync_frac=0.5)
    _, rows = run(config(), war, updates=2)
    for r in rows:
        # worker 0 finishes 25 steps in 25 x 250 ms; the slow one has 8.3 steps by then and stops after 9
        assert r["preempted"] == 1 and r["window_steps"] == 25
        assert r["collect_s"] == pytest.approx(9 * 0.75)
    with pytest.raises(ValueError, match="workers"):
        WarConfig(arm="ddppo").validate()


def test_draft_fill_and_vtrace():
    war = WarConfig(arm="war", costs=ARTICLE_COSTS, fill="draft", draft_costs={"commander": {"per_decision_ms": 5}})
    trainer, rows = run(config(), war)
    assert "commander/draft" in trainer.lanes
    r = rows[-1]
    assert r["share/commander"] == pytest.approx(0.1)             # a commander transition every step
    assert r["draft_frac"] == pytest.approx(175 / 2500)           # 175 of its 250 from the draft
    assert r["decisions_per_s/commander/draft"] > 0 and r["collect_s"] == pytest.approx(3.75)
    assert r["ess_frac"] < 1.0
    _, vt = run(config(), WarConfig(arm="war", costs=ARTICLE_COSTS, vtrace="always"), updates=2)
    assert vt[-1]["vtrace"] == 1.0 and math.isfinite(vt[-1]["commander/value_loss"])


def test_replanning_from_measured_costs():
    # no declared cost: the real policy-call times feed the cost models, the plan follows them
    trainer, rows = run(config(scenario="Spread-v0", num_envs=8), WarConfig(arm="war"), updates=2)
    assert rows[-1]["tau_ms/agent"] > 0 and rows[-1]["interval/agent"] == 1.0
    assert rows[-1]["collect_s"] > 0


def test_war_config_validation():
    with pytest.raises(ValueError, match="arm"):
        WarConfig(arm="async").validate()
    with pytest.raises(ValueError, match="costs"):
        WarConfig(costs={"commander": {"ms": 3}}).validate()
    with pytest.raises(ValueError, match="unknown WAR config"):
        war_config_from_dict({"quota": 3})
    with pytest.raises(ValueError, match="fill"):   # (draft policies are feed-forward)
        WarMode(config(use_gru=True), WarConfig(fill="draft"))
    with pytest.raises(ValueError, match="unknown groups"):
        WarMode(config(), WarConfig(costs={"scout": {"per_decision_ms": 1}}))


def test_war_mode_writes_metrics_and_staleness(tmp_path):
    res = war_train.train(None, config(), run_dir=tmp_path, war=WarConfig(costs=ARTICLE_COSTS))
    rows = read_metrics(tmp_path / "metrics.csv")
    assert [r["env_steps"] for r in rows] == [250, 500, 750]
    for key in ("model_s", "collect_s", "decisions_per_s/commander", "share/sentry", "ess", "staleness_p95",
                "dropped_frac", "agent_transitions_per_s", "model_env_steps_per_s", "episode_return"):
        assert key in rows[0], key
    hist = [json.loads(line) for line in (tmp_path / "staleness.jsonl").read_text().splitlines()]
    assert hist[-1]["hist"]["0"] > 0
    assert res.checkpoint.is_file()


def test_war_is_a_mode_of_train(tmp_path):
    """``war_train.train(env, config, war=...)``: the lock-step run loop around the WAR mode: a given
    env is used as the one worker, ``progress_fn`` stops the run after a checkpoint, TensorBoard
    events are written, and the run resumes from its folder to the end."""
    pytest.importorskip("tensorboard")
    import war_envs

    cfg = config(tensorboard=True)
    war = WarConfig(costs=ARTICLE_COSTS)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed) as env:
        first = war_train.train(env, cfg, lambda row: row["update"] < 2, run_dir=tmp_path, war=war)
        assert first.stopped_early and [r["update"] for r in first.history] == [1, 2]
        assert first.checkpoint == tmp_path / "checkpoint.pt" and first.checkpoint.is_file()
        assert any((tmp_path / "tb").iterdir())
        with pytest.raises(ValueError, match="envs: expected 2 worker envs, got 1"):
            war_train.train(env, cfg, war=WarConfig(costs=ARTICLE_COSTS, workers=2))
    rest = war_train.train(None, cfg, run_dir=tmp_path, resume=tmp_path, war=war)
    assert [r["update"] for r in rest.history] == [3] and not rest.stopped_early
    assert [r["update"] for r in read_metrics(tmp_path / "metrics.csv")] == [1, 2, 3]


def test_cli_trains_command_with_war(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert main(["train", "Command-v0", "--war", "--arm", "war", "--preset", "smoke", "--num-envs", "10",
                 "--total-steps", "500", "--eval-episodes", "4", "--no-gif", "--run-dir", str(run_dir),
                 "--war-resource", "shared"]) == 0
    for name in ("metrics.csv", "war_curve.png", "learning_curve.png", "eval.json", "checkpoint.pt",
                 "war_config.json", "staleness.jsonl"):
        assert (run_dir / name).is_file(), name
    assert json.loads((run_dir / "war_config.json").read_text())["resource"] == "shared"
    assert set(json.loads((run_dir / "eval.json").read_text())["results"]) >= {"greedy", "sample", "random"}
    assert main(["train", "Command-v0", "--arm", "ddppo", "--print-config"]) == 2  # needs >= 2 workers
    assert "workers" in capsys.readouterr().err


@pytest.mark.slow
def test_war_speed_benchmark_smoke(tmp_path, capsys):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "war_speed.py"
    spec = importlib.util.spec_from_file_location("war_speed", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "rows.json"
    assert bench.main(["--ratios", "10", "--batches", "1", "--repeats", "1", "--learn-updates", "1",
                       "--worlds-per-worker", "10", "--no-real", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    war = next(r for r in rows if r["arm"] == "war" and r["resource"] == "parallel")
    shared = next(r for r in rows if r["arm"] == "war" and r["resource"] == "shared")
    ddppo = next(r for r in rows if r["arm"] == "ddppo" and r["resource"] == "parallel")
    assert war["speedup"] == pytest.approx(10 / 3, rel=0.02)       # env time is the only difference
    assert shared["speedup"] == pytest.approx(23.75 / 15, rel=0.02)
    assert 1.0 < ddppo["speedup"] < war["speedup"]
    assert "speedup" in capsys.readouterr().out


def test_a_real_cost_draft_guesses_between_the_commanders_decisions():
    """fill=draft under cost_mode=real: the named group's draft is built before any cost is
    measured and acts once the measured plan makes the commander hold."""
    cfg = config(group_network={"commander": {"hidden_size": 512, "num_layers": 3}}, total_env_steps=10 * 25 * 4)
    trainer = WarMode(cfg, WarConfig(arm="war", cost_mode="real", fill="draft", draft_groups=["commander"]))
    assert list(trainer.drafts) == ["commander"]
    rows = [update(trainer) for _ in range(4)]
    trainer.close()
    assert rows[0]["draft_frac"] == 0.0 and max(r["draft_frac"] for r in rows[1:]) > 0


def test_real_costs_with_a_wide_commander_on_its_own_lane():
    """cost_mode=real: nothing declared, the wall clock, the commander's (wide) policy and the
    sentries' on threads of their own; the measured costs drive the plan."""
    cfg = config(group_network={"commander": {"hidden_size": 256, "num_layers": 3}})
    trainer = WarMode(cfg, WarConfig(arm="war", cost_mode="real", resource="parallel"))
    assert trainer.policies["commander"].actor.head.in_features == 256
    assert trainer.policies["sentry"].actor.head.in_features == cfg.hidden_size
    assert all(c._lane_pools for c in trainer.collectors)
    rows = [update(trainer) for _ in range(2)]
    trainer.close()
    for r in rows:
        assert r["collect_s"] > 0 and r["tau_ms/commander"] > 0 and r["tau_ms/sentry"] > 0
        assert math.isfinite(r["commander/policy_loss"])
    with pytest.raises(ValueError, match="cost_mode=real measures every policy call"):
        WarConfig(cost_mode="real", costs=ARTICLE_COSTS).validate()
    with pytest.raises(ValueError, match="draft_groups: with cost_mode='real'"):
        WarConfig(cost_mode="real", fill="draft").validate()   # (no schedule to read them from yet)
    with pytest.raises(ValueError, match="lane_cpus: unknown lanes"):
        WarMode(config(), WarConfig(cost_mode="real", lane_cpus={"nobody": [0]}))
    with pytest.raises(ValueError, match="group_network: unknown groups"):
        WarMode(config(group_network={"nobody": {"hidden_size": 8}}), WarConfig())
    with pytest.raises(ValueError, match="group_network: expected"):
        config(group_network={"commander": {"width": 8}})
