"""Learning curves of finished runs: one metric of every run's ``metrics.csv`` against env steps,
saved as a results file and drawn from it.

    python benchmarks/learning_curves.py --runs /work/learn_runs/smax --presets smax,smax_2s3z,smax_5m_vs_6m \\
        --json benchmarks/results/learning_smax_curves.json --png docs/images/smax_learning.png
    python benchmarks/learning_curves.py --plot benchmarks/results/learning_smax_curves.json --png out.png
    python benchmarks/learning_curves.py --runs runs/learning --presets smax --merge \
        --json benchmarks/results/learning_smax_curves.json --png docs/images/smax_learning.png   # 3m only

Runs are the folders ``<runs>/<preset>__seed<k>`` that ``benchmarks/learning.py`` writes; the
metric is each run's scenario's progress metric (SMAX: ``won``, the training episodes' win
rate per update), or ``--metric``.  The picture needs matplotlib.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402


def curves(runs: Path, presets: list[str], metric: str | None) -> list[dict]:
    from war_envs.registry import scenario_class

    out = []
    for preset in presets:
        for run in sorted(runs.glob(f"{preset}__seed*")):
            if not (run / "metrics.csv").is_file() or not (run / "eval.json").is_file():
                continue  # not finished
            config = json.loads((run / "config.json").read_text())
            key = metric or scenario_class(config["scenario"]).progress_metric
            with open(run / "metrics.csv", newline="") as f:
                rows = [r for r in csv.DictReader(f) if r.get(key) not in (None, "", "nan")]
            out.append({"preset": preset, "seed": int(run.name.rsplit("seed", 1)[1]), "scenario": config["scenario"],
                        "env_kwargs": config.get("env_kwargs", {}), "metric": key,
                        "env_steps": [int(r["env_steps"]) for r in rows],
                        "values": [float(r[key]) for r in rows]})
    return out


def plot(records: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    presets = list(dict.fromkeys(r["preset"] for r in records))
    fig, axes = plt.subplots(1, len(presets), figsize=(4.2 * len(presets), 3.2), squeeze=False)
    for ax, preset in zip(axes[0], presets):
        for r in (r for r in records if r["preset"] == preset):
            k = 10  # a running mean over 10 updates
            v = r["values"]
            smooth = [sum(v[max(0, i - k + 1):i + 1]) / len(v[max(0, i - k + 1):i + 1]) for i in range(len(v))]
            ax.plot([s / 1e6 for s in r["env_steps"]], smooth, label=f"seed {r['seed']}")
        first = next(r for r in records if r["preset"] == preset)
        ax.set_title(f"{first['scenario']} {first['env_kwargs'].get('map_name', '')} ({preset})", fontsize=9)
        ax.set_xlabel("env steps (M)")
        ax.set_ylabel(f"training {first['metric']} (mean of 10 updates)")
        ax.set_ylim(-0.02, 1.02) if first["metric"] == "won" else None
        ax.grid(alpha=0.3)
        many = sum(r["preset"] == preset for r in records) > 6   # (many seeds: a compact legend)
        ax.legend(fontsize=5 if many else 8, ncol=3 if many else 1, loc="lower right")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=Path, help="the folder benchmarks/learning.py wrote the runs to")
    p.add_argument("--presets", default="", help="comma-separated presets")
    p.add_argument("--metric", default=None, help="metrics.csv column (default: the progress metric)")
    p.add_argument("--json", type=Path, help="write the curves here")
    p.add_argument("--plot", type=Path, help="draw a curves file written before instead of reading runs")
    p.add_argument("--png", type=Path, help="draw the curves here")
    p.add_argument("--merge", action="store_true",
                   help="keep the curves of the other presets in the --json file (replace only --presets')")
    args = p.parse_args(argv)
    if args.plot is not None:
        records = json.loads(args.plot.read_text())
    else:
        if args.runs is None or not args.presets:
            p.error("--runs and --presets are needed unless --plot is given")
        records = curves(args.runs, [s for s in args.presets.split(",") if s], args.metric)
        if not records:
            p.error(f"no finished run of {args.presets} under {args.runs}")
        if args.merge:
            if args.json is None or not args.json.is_file():
                p.error("--merge needs an existing --json file")
            old = json.loads(args.json.read_text())   # (each record keeps its own command, date and machine)
            fresh = {r["preset"] for r in records}
            order = list(dict.fromkeys([r["preset"] for r in old] + [r["preset"] for r in records]))
            records = sorted([r for r in old if r["preset"] not in fresh] + records,
                             key=lambda r: (order.index(r["preset"]), r["seed"]))
        if args.json is not None:
            _results.write(args.json, records, _results.metadata(__file__, argv))
            print(f"wrote {args.json}")
    for r in records:
        print(f"{r['preset']:>16} seed {r['seed']}: {len(r['values'])} updates, last {r['metric']} {r['values'][-1]:.3f}")
    if args.png is not None:
        plot(records, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
