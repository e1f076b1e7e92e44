"""The training benchmarks run end to end on tiny sizes (their figures are measured by hand:
tests never assert wall-clock times, only that the rows are complete and consistent)."""

import importlib.util
import json
import math
import pathlib

import pytest
import torch

torch.set_num_threads(1)
BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_speed_rows_and_breakdown(tmp_path, capsys):
    train_speed = load("train_speed")
    out = tmp_path / "speed.json"
    rows = train_speed.main(["--scenarios", "Spread-v0,Tag-v0", "--worlds", "16", "--updates", "2", "--warmup", "1",
                             "--set", "epochs=1", "--json", str(out)])
    assert [r["scenario"] for r in rows] == ["Spread-v0", "Tag-v0"]
    for r in rows:
        shares = [r[f"{p}_share"] for p in train_speed.PHASES]
        assert math.isclose(sum(shares), 1.0, rel_tol=1e-9) and all(s > 0 for s in shares)
        assert r["agent_steps_per_s"] == r["env_steps_per_s"] * r["agents_per_world"]
        assert r["updates"] == 2 and r["epochs"] == 1
        assert {"command", "date", "machine", "versions"} <= set(r)
    assert json.loads(out.read_text())[0]["worlds"] == 16
    assert "outside nets" in capsys.readouterr().out


def test_learning_table_over_seeds(tmp_path):
    learning = load("learning")
    rows = learning.main(["--preset", "smoke", "--seeds", "1,2", "--quick", "--out", str(tmp_path / "runs"),
                          "--json", str(tmp_path / "learning.json")])
    assert [r["seed"] for r in rows] == [1, 2]
    for r in rows:
        assert r["metric"] == "onpolicy_episode_reward" and math.isfinite(r["train_last5"])
        assert {"eval/greedy", "eval/random", "eval/greedy@onpolicy_init"} <= set(r)
    assert rows[0]["eval/greedy"] != rows[1]["eval/greedy"]   # different seeds, different runs
    assert rows[0]["greedy_over_random"] == rows[0]["eval/greedy"] - rows[0]["eval/random"]
    # another column: the runs tabulated again (--reuse) on the episode return
    again = learning.main(["--preset", "smoke", "--seeds", "1,2", "--quick", "--out", str(tmp_path / "runs"),
                           "--reuse", "--metric", "episode_return"])
    assert [r["metric"] for r in again] == ["episode_return"] * 2
    assert again[0]["eval/greedy"] == rows[0]["eval"]["greedy"]["episode_return"]
    with pytest.raises(SystemExit, match="--metric: 'nope' is not in"):
        learning.main(["--preset", "smoke", "--seeds", "1", "--quick", "--out", str(tmp_path / "runs"), "--reuse",
                       "--metric", "nope"])


def test_learning_set_takes_json_or_a_plain_string_and_refuses_unknown_fields():
    learning = load("learning")
    assert learning.parse_override("activation=relu") == ("activation", "relu")
    assert learning.parse_override('activation="relu"') == ("activation", "relu")
    assert learning.parse_override("lr=1e-3") == ("lr", 1e-3)
    assert learning.parse_override("anneal_lr=true") == ("anneal_lr", True)
    assert learning.parse_override('env_kwargs={"map_name": "2s3z"}') == ("env_kwargs", {"map_name": "2s3z"})
    for bad in ("learning_rate=1e-3", "lr"):
        with pytest.raises(SystemExit, match="TrainConfig field"):
            learning.parse_override(bad)


# --------------------------------------------------------------------------- war_real.py
# end to end on tiny sizes, and its --runs folder: a second call reads the kept runs instead of
# training them and prints the same table (computed from the kept rows either way)
WAR_REAL_ARGS = ["--seeds", "1", "--ratios", "2", "--resources", "shared", "--arms", "sync,war", "--worlds", "8",
                 "--steps", "800"]


def test_war_real_keeps_its_runs_and_reads_them_back(tmp_path, capsys):
    war_real = load("war_real")
    runs = tmp_path / "runs"
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert war_real.main([*WAR_REAL_ARGS, "--runs", str(runs), "--json", str(first)]) == 0
    out1 = capsys.readouterr().out
    kept = sorted(p.name for p in runs.iterdir())
    assert kept == ["calibration.json", "sync_shared_r2_s1.json", "war_shared_r2_s1.json"]
    run = json.loads((runs / "war_shared_r2_s1.json").read_text())
    assert (run["worlds"], run["env_steps"], run["arm"]) == (8, 800, "war") and len(run["rows"]) == 4
    assert war_real.main([*WAR_REAL_ARGS, "--runs", str(runs), "--json", str(second)]) == 0
    out2 = capsys.readouterr().out
    assert out2.count("(kept)") == 2 and "(kept)" not in out1
    table = lambda out: out[out.index("ratio |"):out.index("wrote ")]  # noqa: E731
    assert table(out1) == table(out2)

    def strip(path):  # (as JSON text: NaN never equals itself)
        recs = json.loads(path.read_text())
        return json.dumps([{k: v for k, v in r.items() if k not in ("command", "date")} for r in recs], sort_keys=True)

    assert strip(first) == strip(second)
    # --kept-only: the table of what is kept, a seed never trained left out (nothing trains)
    third = tmp_path / "third.json"
    args = [a if a != "1" else "1,2" for a in WAR_REAL_ARGS]   # (--seeds 1 -> 1,2)
    assert war_real.main([*args, "--runs", str(runs), "--kept-only", "--json", str(third)]) == 0
    out3 = capsys.readouterr().out
    assert out3.count("(kept)") == 2 and out3.count("(left out)") == 2
    assert sorted(p.name for p in runs.iterdir()) == kept and strip(third) == strip(first)
    with pytest.raises(SystemExit):
        war_real.parse_args([*WAR_REAL_ARGS, "--kept-only"])   # (needs --runs)


def test_war_real_trains_a_kept_run_of_other_sizes_again(tmp_path):
    war_real = load("war_real")
    args = war_real.parse_args([*WAR_REAL_ARGS, "--runs", str(tmp_path)])
    path, run = war_real._kept_run(args, "sync", "shared", 2.0, 1, 128)
    assert run is None and path.endswith("sync_shared_r2_s1.json")
    pathlib.Path(path).write_text(json.dumps({"worlds": 8, "env_steps": 800, "width": 128, "rows": []}))
    assert war_real._kept_run(args, "sync", "shared", 2.0, 1, 128)[1] is not None
    for width, steps in ((192, 800), (128, 1600)):
        args.steps = steps
        assert war_real._kept_run(args, "sync", "shared", 2.0, 1, width)[1] is None


@pytest.mark.parametrize("bad", [["--arms", "war"], ["--arms", "sync,nope"]])
def test_war_real_refuses_bad_arms(bad):
    war_real = load("war_real")
    with pytest.raises(SystemExit):
        war_real.parse_args([*WAR_REAL_ARGS, *bad])


def test_war_parallelism_measures_both_lanes_alone_and_together(tmp_path, capsys):
    bench = load("war_parallelism")
    out = tmp_path / "par.json"
    assert bench.main(["--widths", "64", "--worlds", "8", "--repeats", "3", "--json", str(out)]) == 0
    (rec,) = json.loads(out.read_text())
    assert rec["width"] == 64 and rec["serial_s"] == pytest.approx(rec["commander_s"] + rec["sentry_s"])
    assert rec["speedup"] == pytest.approx(rec["serial_s"] / rec["both_s"])
    assert rec["ideal_speedup"] == pytest.approx(rec["serial_s"] / max(rec["commander_s"], rec["sentry_s"]))
    assert all(math.isfinite(rec[k]) and rec[k] > 0 for k in ("commander_s", "sentry_s", "both_s"))
    assert "overlap efficiency" in capsys.readouterr().out


def test_smax_outcomes_splits_every_episode_and_appends(tmp_path, capsys):
    from war_train.config import TrainConfig
    from war_train.run.loop import train

    smax_outcomes = load("smax_outcomes")
    run = tmp_path / "run"
    cfg = TrainConfig(scenario="SMAX-v0", env_kwargs={"map_name": "3m"}, num_envs=8, rollout_length=8,
                      total_env_steps=128, epochs=1, eval_episodes=0, gif=False, tensorboard=False, progress=False)
    train(None, cfg, run_dir=run)
    out = tmp_path / "outcomes.json"
    for label in ("first", "second"):
        assert smax_outcomes.main([str(run), "--episodes", "12", "--label", label, "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["label"] for r in rows] == ["first", "second"]
    for r in rows:
        assert r["seed"] == 1 and r["map_name"] == "3m" and {"command", "date", "machine"} <= set(r)
        for mode in ("greedy", "sample"):
            o = r[mode]
            assert math.isclose(o["won"] + o["lost"] + o["drawn"], 1.0, rel_tol=1e-12)
            assert 0.0 <= o["drawn_untouched"] <= o["drawn"] and 1 <= o["mean_length"] <= 101
    assert rows[0]["greedy"] == rows[1]["greedy"]   # the same evaluation worlds and policy
    assert "drawn" in capsys.readouterr().out
    spread = tmp_path / "spread"
    train(None, TrainConfig(scenario="Spread-v0", num_envs=4, rollout_length=5, total_env_steps=20, epochs=1,
                            eval_episodes=0, gif=False, tensorboard=False, progress=False), run_dir=spread)
    with pytest.raises(SystemExit, match="Spread-v0 run"):
        smax_outcomes.main([str(spread), "--episodes", "2"])


def test_learning_continues_an_interrupted_seed_from_its_checkpoint(tmp_path):
    """A seed folder with a checkpoint but no eval.json is resumed (its settings checked), not
    trained again: here the last checkpoint, so the evaluation is the finished run's, exactly."""
    learning = load("learning")
    argv = ["--preset", "smoke", "--seeds", "1", "--quick", "--out", str(tmp_path / "runs")]
    first = learning.main(argv)[0]
    run = tmp_path / "runs" / "smoke__seed1"
    (run / "eval.json").unlink()
    metrics = (run / "metrics.csv").read_text()
    again = learning.main(argv)[0]
    assert (run / "metrics.csv").read_text() == metrics   # no update trained again
    assert again["eval"] == first["eval"] and again["env_steps"] == first["env_steps"]
    (run / "eval.json").unlink()
    with pytest.raises(SystemExit, match="other settings"):
        learning.main([*argv, "--set", "lr=1e-4"])


def test_learning_starts_no_seed_after_one_fails(tmp_path):
    """A seed whose war-train exits non-zero (here: a preset override war-train refuses; SIGTERM
    is another, exit 143) stops the command: the seeds after it are not started."""
    import subprocess

    learning = load("learning")
    out = tmp_path / "runs"
    with pytest.raises(subprocess.CalledProcessError):
        learning.main(["--preset", "smoke", "--seeds", "1,2", "--jobs", "1", "--quick", "--out", str(out),
                       "--set", "num_envs=0"])
    assert (out / "smoke__seed1.log").exists() and not (out / "smoke__seed2.log").exists()


def test_smax_table_reads_each_maps_results_and_compares_with_the_anchors(tmp_path, capsys):
    """``smax_table.py`` over a results folder: one row per map with a learning file (median
    and range over its seeds, the anchors, reached or not within SLACK), the others listed with
    their preset and anchors."""
    table = load("smax_table")
    records = [{"preset": "smax_3s5z", "seed": s, "eval/greedy": g, "eval/sample": g, "env_steps": 10, "wall_s": 1.0,
                "command": "learning.py"} for s, g in ((1, 0.60), (2, 0.69), (3, 0.95))]
    (tmp_path / "learning_smax_3s5z.json").write_text(json.dumps(records))
    (tmp_path / "learning_smax_3s_vs_5z.json").write_text(json.dumps(
        [{**records[0], "preset": "smax_3s_vs_5z", "eval/greedy": 0.57}]))
    table.main(["--results", str(tmp_path), "--json", str(tmp_path / "table.json")])
    report = json.loads((tmp_path / "table.json").read_text())
    rows = {r["map_name"]: r for r in report["maps"]}
    assert set(rows) == {"3s5z", "3s_vs_5z"}
    assert rows["3s5z"]["greedy_median"] == 0.69 and rows["3s5z"]["greedy_min"] == 0.60
    assert rows["3s5z"]["reaches_anchor"] is True          # 69 % against 70 % (MAPPO), within 2 points
    assert rows["3s_vs_5z"]["reaches_anchor"] is False     # 57 % against 60 % (IPPO)
    missing = {m["map_name"]: m for m in report["missing"]}
    assert missing["6h_vs_8z"]["preset"] == "smax_6h_vs_8z" and missing["6h_vs_8z"]["anchor_ippo"] == 0.95
    assert "3m" in missing and missing["3m"]["anchor_mappo"] is None
