"""Learning results over seeds: train a preset with several seeds and tabulate each run's
evaluation (``eval.json``) and its last logged training figures.

Each seed is a complete ``war-train train`` run (its own process, one torch thread; ``--jobs``
at a time), written under ``--out``; a seed whose folder holds a checkpoint but no evaluation (an
interrupted run) is continued exactly from its last checkpoint (``war-train train --resume``),
after checking its settings are this command's; a seed whose run fails or is interrupted (its
``war-train`` exits non-zero: SIGTERM gives 143) stops the command, later seeds are not started
(they would be tabulated against an unfinished one).  The table has one row per seed and a median row; with
``--json PATH`` the rows (and every run's full evaluation) are written as a JSON list of
records with the command, versions, machine and date.

    python benchmarks/learning.py --preset spread --seeds 1,2,3
    python benchmarks/learning.py --preset spread_continuous --seeds 1,2,3 --json benchmarks/results/learning_spread_continuous.json
    python benchmarks/learning.py --preset tag --seeds 1,2,3 --set total_env_steps=3000000
    python benchmarks/learning.py --preset smoke --seeds 1 --quick          # seconds: checks the script

Columns: the preset's progress metric (the scenario's ``progress_metric``: Spread's on-policy
reward, Tag's tags per episode) averaged over the last 5 logged updates, then for every
evaluation entry (greedy / sample / random, each group greedy against random others, the
scenario's evaluation variants) that metric's mean over the evaluation episodes; each record
also holds ``greedy_over_random`` (the greedy evaluation less the random policy's).
``--metric NAME`` tabulates another evaluation entry instead (JointPassage-v0's success, the
goal pose to 0.01, stays rare; its ``episode_return`` is the column that shows the learning).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)


def run_seed(preset: str, seed: int, out: Path, overrides: dict) -> Path:
    """One ``war-train train`` run; returns its folder."""
    from war_train.presets import preset_config

    run_dir = out / f"{preset}__seed{seed}"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if (run_dir / "checkpoint.pt").exists() and not (run_dir / "eval.json").exists():
        # an interrupted run (its own settings, checked): continued exactly from its last checkpoint
        check_reused(run_dir, preset, seed, overrides)
        with open(out / f"{preset}__seed{seed}.log", "a") as log:
            subprocess.run([sys.executable, "-m", "war_train.run.cli", "train", "--resume", str(run_dir),
                            "--no-progress", "--torch-threads", "1"], check=True, stdout=log,
                           stderr=subprocess.STDOUT, env=env)
        return run_dir
    scenario = preset_config(preset).scenario
    cmd = [sys.executable, "-m", "war_train.run.cli", "train", scenario, "--preset", preset, "--seed", str(seed),
           "--run-dir", str(run_dir), "--no-progress", "--torch-threads", "1"]
    for key, value in overrides.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            cmd.append(flag if value else "--no-" + key.replace("_", "-"))
        elif isinstance(value, (dict, list)):
            cmd += [flag, json.dumps(value)]
        else:
            cmd += [flag, str(value)]
    with open(out / f"{preset}__seed{seed}.log", "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
    return run_dir


def check_reused(run_dir: Path, preset: str, seed: int, overrides: dict) -> None:
    """``--reuse`` and resuming: the run's config must be the one this command would train."""
    from war_train.config import config_from_dict, config_to_dict
    from war_train.presets import preset_config

    want = config_to_dict(preset_config(preset, seed=seed, **{k: v for k, v in overrides.items()}))
    have = config_to_dict(config_from_dict(json.loads((run_dir / "config.json").read_text())))
    ignore = {"progress", "torch_threads", "out"}
    if not want.get("restarts") and not have.get("restarts"):
        ignore.add("restart_below")   # (without restarts it decides nothing)
    diff = sorted(k for k in want if k not in ignore and want[k] != have.get(k))
    if diff:
        raise SystemExit(f"{run_dir} was trained with other settings ({diff}); delete it to train it again")


def summarize_run(run_dir: Path, seed: int, metric: str | None = None) -> dict:
    """One seed's row: ``metric`` (default: the scenario's progress metric) over its last 5 logged
    updates and in every evaluation entry, and ``greedy_over_random``: the greedy evaluation's
    value less the random policy's (the margin a preset learns by)."""
    import csv

    from war_train.config import config_from_dict
    from war_envs.registry import scenario_class

    cfg = config_from_dict(json.loads((run_dir / "config.json").read_text()))
    key = metric or scenario_class(cfg.scenario).progress_metric
    with open(run_dir / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    logged = [float(r[key]) for r in rows if r.get(key) not in (None, "", "nan")][-5:]
    report = json.loads((run_dir / "eval.json").read_text())
    row = {"seed": seed, "scenario": cfg.scenario, "env_kwargs": dict(cfg.env_kwargs), "metric": key,
           "env_steps": int(rows[-1]["env_steps"]),
           "wall_s": float(rows[-1]["wall_s"]), "train_last5": statistics.mean(logged) if logged else math.nan}
    row.update({f"eval/{mode}": r.get(key, math.nan) for mode, r in report["results"].items()})
    if key not in report["results"].get("greedy", {}):
        raise SystemExit(f"--metric: {key!r} is not in {run_dir / 'eval.json'} "
                         f"(it has {sorted(report['results'].get('greedy', {}))})")
    row["greedy_over_random"] = row.get("eval/greedy", math.nan) - row.get("eval/random", math.nan)
    row["selected"] = report.get("selected")   # (select_every: which update's networks were evaluated)
    restarts = run_dir / "restarts.json"
    if restarts.exists():   # (restarts: the run trained every restart; the table counts them all)
        trained = json.loads(restarts.read_text())["restarts"]
        ends = []
        for r in trained:
            with open(run_dir / r["dir"] / "metrics.csv", newline="") as f:
                ends.append(list(csv.DictReader(f))[-1])
        row.update(restarts_trained=len(trained), env_steps=sum(int(e["env_steps"]) for e in ends),
                   wall_s=sum(float(e["wall_s"]) for e in ends))
    row["eval"] = report["results"]
    return row


def print_table(rows: list[dict]) -> None:
    cols = ["seed", "train_last5"] + [k for k in rows[0] if k.startswith("eval/")] + ["wall_s"]
    med = {c: statistics.median(r[c] for r in rows) for c in cols[1:]}
    print(f"{rows[0]['scenario']}: {rows[0]['metric']} ({rows[0]['env_steps']:,} env steps per seed)")
    print("  ".join(f"{c:>14s}" for c in cols))
    for r in rows + [{"seed": "median", **med}]:
        print("  ".join(f"{r[c]:>14.2f}" if isinstance(r[c], float) else f"{str(r[c]):>14s}" for c in cols))


def parse_override(item: str) -> tuple[str, object]:
    """``--set FIELD=VALUE``: VALUE as JSON (numbers, true/false, objects), else the plain string
    (``--set activation=relu``); the field is checked against ``TrainConfig``."""
    from war_train.config import TrainConfig

    field, sep, text = item.partition("=")
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    if not sep or field not in names:
        raise SystemExit(f"--set: expected FIELD=VALUE with FIELD a TrainConfig field, got {item!r}")
    try:
        return field, json.loads(text)
    except json.JSONDecodeError:
        return field, text


def main(argv=None) -> list[dict]:
    import war_train.config  # noqa: F401  (imported before the worker threads: two first imports would race)

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", required=True)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--jobs", type=int, default=2, help="runs at a time")
    p.add_argument("--out", default="runs/learning", help="where the runs are written")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override a config field (VALUE as JSON, else a string)")
    p.add_argument("--quick", action="store_true", help="a few updates per seed (checks the script)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--metric", help="the column (an evaluation entry, e.g. episode_return; default: the "
                                     "scenario's progress metric)")
    p.add_argument("--reuse", action="store_true",
                   help="tabulate a seed's finished run in --out (its eval.json and config.json, which must "
                        "match the preset and --set) instead of training it again")
    args = p.parse_args(argv)
    overrides = dict(parse_override(item) for item in args.set)
    if args.quick:
        overrides.setdefault("total_env_steps", 16 * 25 * 2)
        overrides.setdefault("eval_episodes", 8)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    failed = threading.Event()   # a seed failed or was interrupted: start no other

    def run(seed: int) -> Path:
        run_dir = out / f"{args.preset}__seed{seed}"
        if args.reuse and (run_dir / "eval.json").exists():
            check_reused(run_dir, args.preset, seed, overrides)
            return run_dir
        if failed.is_set():
            raise SystemExit(f"seed {seed} not started: an earlier seed failed or was interrupted")
        try:
            return run_seed(args.preset, seed, out, overrides)
        except BaseException:
            failed.set()
            raise

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        dirs = list(pool.map(run, seeds))
    rows = [summarize_run(d, s, args.metric) for d, s in zip(dirs, seeds)]
    print_table(rows)
    if args.json:
        meta = {**_results.metadata("learning.py", argv), "preset": args.preset, "overrides": overrides}
        _results.write(args.json, rows, meta)
        print(f"wrote {args.json}", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main()
