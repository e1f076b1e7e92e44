"""How SMAX-v0 episodes of trained policies end: won, lost (every ally dead) or drawn (the time
limit with allies and enemies alive, e.g. a greedy policy waiting where no enemy looks), for
greedy and sampled play, on the evaluation stream of each run's seed (the worlds ``eval.json``
plays, which no run trains on).

    python benchmarks/smax_outcomes.py runs/learning/smax__seed1 runs/learning/smax__seed5 \\
        --episodes 500 --json benchmarks/results/smax_3m_outcomes.json

Each argument is a run folder (its ``checkpoint.pt``); ``--label`` names the group of runs in
the table and the results file (e.g. the preset's settings).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402


def outcomes(run: Path, episodes: int, last: bool = False) -> dict:
    from war_train.checkpoint import load_checkpoint
    from war_train.run.evaluate import run_episodes
    from war_train.learn.policy import load_policies
    from war_train.run.selection import selected_networks

    ckpt = load_checkpoint(run / "checkpoint.pt")
    policies, cfg, _ = load_policies(ckpt, last=last)
    if cfg.scenario != "SMAX-v0":
        raise SystemExit(f"{run}: a {cfg.scenario} run; this script reads SMAX-v0 runs")
    out = {"run": str(run), "seed": cfg.seed, "map_name": cfg.env_kwargs.get("map_name", "3m"),
           "selected": selected_networks(ckpt, last)}   # None: the last update's networks
    for mode in ("greedy", "sample"):
        s = run_episodes(cfg.scenario, cfg.env_kwargs, policies, episodes, cfg.seed, {g: mode for g in policies})
        won = s["won"] > 0
        lost = ~won & (s["allies_left"] == 0)
        drawn = ~won & ~lost
        out[mode] = {"won": float(won.double().mean()), "lost": float(lost.double().mean()),
                     "drawn": float(drawn.double().mean()),
                     "drawn_untouched": float((drawn & (s["damage_dealt"] == 0)).double().mean()),
                     "mean_length": float(s["episode_length"].double().mean())}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run folders (checkpoint.pt)")
    p.add_argument("--episodes", type=int, default=500)
    p.add_argument("--label", default="", help="what the runs are (the settings they share)")
    p.add_argument("--last", action="store_true", help="the last update's networks, not those a run selected "
                                                       "(select_every)")
    p.add_argument("--json", type=Path, help="append the rows to this results file")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rows = []
    print(f"{'run':<40} {'mode':<7} {'won':>6} {'lost':>6} {'drawn':>6} {'(no damage)':>11}")
    for run in args.runs:
        r = {"label": args.label, **outcomes(run, args.episodes, args.last)}
        rows.append(r)
        for mode in ("greedy", "sample"):
            o = r[mode]
            print(f"{str(run)[-40:]:<40} {mode:<7} {o['won']:>6.3f} {o['lost']:>6.3f} {o['drawn']:>6.3f} "
                  f"{o['drawn_untouched']:>11.3f}")
    if args.json is not None:
        import json

        old = json.loads(args.json.read_text()) if args.json.is_file() else []
        meta = _results.metadata(__file__, argv)
        _results.write(args.json, old + [{**meta, **r} for r in rows], {})
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
