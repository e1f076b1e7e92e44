"""The SMAX results table: per map, war-train's greedy win rate over seeds beside the published
baselines' (JaxMARL's MAPPO and IPPO at 1e7 env steps).

It reads the learning results file of each map (``benchmarks/learning.py --preset <the map's
preset> --json benchmarks/results/learning_smax_<map>.json``: one record per seed, its greedy
win rate over 500 evaluation episodes on worlds no run trains or selects on) and writes one
record per map: the seeds, the greedy win rate's median and range, the env steps and wall-clock
per run, the anchors and whether the median reaches the better of them (within 2 points, since
the anchors are read off plots).

    python benchmarks/smax_table.py --json benchmarks/results/learning_smax_table.json

The anchors (``ANCHORS``): final test win rates at 1e7 env steps as published for JaxMARL's
recurrent MAPPO / IPPO baselines (128 envs x 128 steps) and redrawn in Mava's SMAX benchmark
page; read off plots, so approximate.  3m, smacv2_5_units and smacv2_10_units have none there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
#: the maps people report, in the table's order
MAPS = ("3m", "2s3z", "3s5z", "5m_vs_6m", "3s_vs_5z", "6h_vs_8z", "10m_vs_11m", "27m_vs_30m", "3s5z_vs_3s6z",
        "smacv2_5_units", "smacv2_10_units")
#: map -> (MAPPO, IPPO) final win rates at 1e7 env steps (JaxMARL's baselines, read off plots)
ANCHORS = {"2s3z": (1.00, 0.90), "3s5z": (0.70, 0.55), "3s_vs_5z": (0.00, 0.60), "3s5z_vs_3s6z": (0.35, 0.02),
           "5m_vs_6m": (0.05, 0.12), "6h_vs_8z": (0.20, 0.95), "10m_vs_11m": (0.40, 0.28),
           "27m_vs_30m": (0.15, 0.10)}
#: how far below the better anchor a median may fall and still reach it (anchors read off plots)
SLACK = 0.02


def map_record(map_name: str, records: list[dict]) -> dict:
    """One map's row from its learning results (one record per seed)."""
    from war_train.presets import preset_overrides

    settings = {**preset_overrides(records[0]["preset"]), **records[0].get("overrides", {})}
    greedy = [r["eval/greedy"] for r in records]
    med = statistics.median(greedy)
    mappo, ippo = ANCHORS.get(map_name, (None, None))
    better = None if mappo is None else max(mappo, ippo)
    return {"map_name": map_name, "preset": records[0]["preset"], "overrides": records[0].get("overrides", {}),
            "restarts": settings.get("restarts", 0),   # (more than 0: up to that many more runs per seed)
            "seeds": [r["seed"] for r in records], "greedy": greedy, "greedy_median": med,
            "greedy_min": min(greedy), "greedy_max": max(greedy),
            "sampled_median": statistics.median(r["eval/sample"] for r in records),
            "env_steps": [r["env_steps"] for r in records], "wall_s": [r["wall_s"] for r in records],
            "anchor_mappo": mappo, "anchor_ippo": ippo, "anchor_better": better,
            "reaches_anchor": None if better is None else bool(med >= better - SLACK),
            "machine": records[0].get("machine"), "source": records[0].get("command")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", type=Path, default=RESULTS, help="where learning_smax_<map>.json are")
    p.add_argument("--json", type=Path, help="write the table's records here")
    args = p.parse_args(argv)
    rows, missing = [], []
    for map_name in MAPS:
        path = args.results / f"learning_smax_{map_name}.json"
        if not path.exists():
            missing.append(map_name)
            continue
        rows.append(map_record(map_name, json.loads(path.read_text())))
    print(f"{'map':<16} {'seeds':>5} {'restarts':>8} {'greedy median':>13} {'range':>15} {'anchor MAPPO/IPPO':>18} "
          f"{'reaches':>8}")
    for r in rows:
        anchor = "-" if r["anchor_better"] is None else f"{r['anchor_mappo']:.0%} / {r['anchor_ippo']:.0%}"
        reach = "-" if r["reaches_anchor"] is None else ("yes" if r["reaches_anchor"] else "no")
        print(f"{r['map_name']:<16} {len(r['seeds']):>5} {r['restarts']:>8} {r['greedy_median']:>13.1%} "
              f"{r['greedy_min']:>6.1%}-{r['greedy_max']:<7.1%} {anchor:>18} {reach:>8}")
    if missing:
        print(f"no results yet: {', '.join(missing)}")
    if args.json:
        from war_train.presets import default_preset

        missing = [dict(zip(("map_name", "preset", "anchor_mappo", "anchor_ippo"),
                            (m, default_preset("SMAX-v0", {"map_name": m}), *ANCHORS.get(m, (None, None)))))
                   for m in missing]
        _results.write(args.json, {"maps": rows, "missing": missing, "slack": SLACK}, _results.metadata(__file__, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
