"""End-to-end training throughput of war_train's MAPPO, with a breakdown of where the time goes.

For each scenario and world count, ``war_train.train`` runs the scenario's default preset
(``war_train.presets``) with ``num_envs`` set, for ``--warmup`` + ``--updates`` updates, with
``profile=True``: every update's seconds are split into

==========  ===========================================================================
env         ``env.step`` (the Warp kernels: physics, rewards, resets, observations)
policy      the rollout's network forward passes and sampling (actors, critics, V(final state))
learn       the PPO update (epochs x minibatches: forward, backward, Adam), value normalizer
other       the rest: GAE inputs, non-finite checks, episode statistics' host transfer, logging
==========  ===========================================================================

and the table prints end-to-end env-steps/s and agent-steps/s (PPO updates included) over the
measured updates, the share of each phase, and the share of time *outside the networks' math*
(env + other).  Throughputs are medians of the per-update rates; the warm-up updates (kernel
compilation, allocator warm-up) are not measured.  Runs are in-process, one after another.

Usage
-----
    python benchmarks/train_speed.py                       # Spread-v0 and Tag-v0, several world counts
    python benchmarks/train_speed.py --quick               # one small size each (about a minute)
    python benchmarks/train_speed.py --scenarios Spread-v0 --worlds 1024 --updates 10 --json out.json
    python benchmarks/train_speed.py --device cuda:0 --preset Tag-v0=tag_warpdrive --worlds 100,2000

``--json PATH`` writes the rows as a JSON list of records (with the command, package versions,
machine and date in every record).  On CUDA, profiling synchronizes at each phase boundary, so
the breakdown costs a little throughput there.

**Before / after a change**: ``--baseline-tree DIR`` (a checkout of another commit, e.g.
``git worktree add /tmp/before <rev>``) also times that tree's trainer on every configuration:
both trees run in fresh subprocesses, alternately (``--repeats`` times each), each timing
whole updates from ``progress_fn`` with profiling off (so any version of ``war_train.train``
can be timed), and the table adds the median env-steps/s of both and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

DEFAULT_WORLDS = {"Spread-v0": [256, 1024, 4096], "Tag-v0": [64, 256, 1024]}
QUICK_WORLDS = {"Spread-v0": [1024], "Tag-v0": [256]}
PHASES = ("env", "policy", "learn", "other")


def measure(scenario: str, preset: str, worlds: int, updates: int, warmup: int, device: str, threads: int,
            overrides: dict) -> dict:
    """One configuration: train ``warmup + updates`` updates, return the measured row."""
    import war_envs
    from war_train.run.loop import train
    from war_train.presets import preset_config

    base = preset_config(preset, num_envs=worlds, device=device, torch_threads=threads, **overrides)
    cfg = preset_config(preset, num_envs=worlds, device=device, torch_threads=threads, progress=False,
                        tensorboard=False, eval_episodes=0, gif=False, profile=True,
                        total_env_steps=base.batch_env_steps * (warmup + updates), **overrides)
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, device=cfg.device,
                        precision=cfg.precision, **cfg.env_kwargs)
    try:
        t0 = time.perf_counter()
        history = train(env, cfg).history
        total_s = time.perf_counter() - t0
        agents = sum(s.n_agents for s in env.groups.values())
    finally:
        env.close()
    rows = history[warmup:]
    update_s = [sum(r[f"time/{p}_s"] for p in PHASES) for r in rows]
    phase_s = {p: sum(r[f"time/{p}_s"] for r in rows) for p in PHASES}
    measured = sum(phase_s.values())
    rate = statistics.median(cfg.batch_env_steps / s for s in update_s)
    return {
        "scenario": scenario, "preset": preset, "device": device, "worlds": worlds, "agents_per_world": agents,
        "rollout_length": cfg.rollout_length, "epochs": cfg.epochs, "num_minibatches": cfg.num_minibatches,
        "torch_threads": threads, "updates": len(rows), "warmup_updates": warmup,
        "update_s": statistics.median(update_s), "env_steps_per_s": rate, "agent_steps_per_s": rate * agents,
        **{f"{p}_share": phase_s[p] / measured for p in PHASES},
        **{f"{p}_s_per_update": phase_s[p] / len(rows) for p in PHASES},
        "outside_networks_share": (phase_s["env"] + phase_s["other"]) / measured,
        "total_s": total_s,
    }


def wallclock(tree: str, preset: str, worlds: int, updates: int, warmup: int, device: str, threads: int,
              overrides: dict) -> float:
    """Median env-steps/s of whole updates of the trainer in checkout ``tree`` (a subprocess)."""
    import subprocess

    job = json.dumps({"tree": tree, "preset": preset, "worlds": worlds, "updates": updates, "warmup": warmup,
                      "device": device, "threads": threads, "overrides": overrides})
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--_wallclock", job], check=True,
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    return float(out.stdout.strip().splitlines()[-1])


def _wallclock_worker(job: dict) -> None:
    sys.path.insert(0, job["tree"])
    import war_envs
    try:
        from war_train.run.loop import train
    except ImportError:   # (a tree from before war_train's rooms)
        from war_train.loop import train
    from war_train.presets import preset_config

    kw = dict(num_envs=job["worlds"], device=job["device"], torch_threads=job["threads"], **job["overrides"])
    base = preset_config(job["preset"], **kw)
    cfg = preset_config(job["preset"], progress=False, tensorboard=False, eval_episodes=0, gif=False,
                        total_env_steps=base.batch_env_steps * (job["warmup"] + job["updates"]), **kw)
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, device=cfg.device, **cfg.env_kwargs)
    stamps = []
    train(env, cfg, lambda row: stamps.append(time.perf_counter()))
    gaps = [b - a for a, b in zip(stamps[job["warmup"] - 1:], stamps[job["warmup"]:])]
    print(statistics.median(cfg.batch_env_steps / g for g in gaps))


def si(x: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.0f}"


def print_table(rows: list[dict]) -> None:
    head = ["scenario", "worlds", "agents", "env-steps/s", "agent-steps/s", "update s", "env", "policy",
            "learn", "other", "outside nets"]
    table = [[r["scenario"], str(r["worlds"]), str(r["agents_per_world"]), si(r["env_steps_per_s"]),
              si(r["agent_steps_per_s"]), f"{r['update_s']:.3f}",
              *(f"{100 * r[f'{p}_share']:.1f}%" for p in PHASES), f"{100 * r['outside_networks_share']:.1f}%"]
             for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for t in table:
        print("  ".join(c.rjust(w) for c, w in zip(t, widths)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", default="Spread-v0,Tag-v0", help="comma list of scenario ids")
    p.add_argument("--worlds", help="comma list of world counts for every scenario (default: per scenario)")
    p.add_argument("--preset", action="append", default=[], metavar="ID=PRESET",
                   help="preset of a scenario (default: its default preset), e.g. Tag-v0=tag_warpdrive")
    p.add_argument("--updates", type=int, default=8, help="measured updates per configuration")
    p.add_argument("--warmup", type=int, default=2, help="updates run before measuring")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                   help="override a config field for every run, e.g. --set epochs=5")
    p.add_argument("--quick", action="store_true", help="one size per scenario, 4 measured updates")
    p.add_argument("--json", metavar="PATH", help="also write the rows as a JSON list of records")
    p.add_argument("--baseline-tree", metavar="DIR", help="also time the trainer of this checkout (before/after)")
    p.add_argument("--repeats", type=int, default=3, help="with --baseline-tree: alternating runs per tree")
    p.add_argument("--_wallclock", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    if args._wallclock:
        _wallclock_worker(json.loads(args._wallclock))
        return []
    from war_train.presets import DEFAULT_PRESETS

    presets = dict(item.split("=", 1) for item in args.preset)
    overrides = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    updates = 4 if args.quick else args.updates
    meta = _results.metadata("train_speed.py", argv)
    rows = []
    for scenario in args.scenarios.split(","):
        preset = presets.get(scenario, DEFAULT_PRESETS.get(scenario, scenario))
        sizes = ([int(w) for w in args.worlds.split(",")] if args.worlds else
                 (QUICK_WORLDS if args.quick else DEFAULT_WORLDS).get(scenario, [256]))
        for worlds in sizes:
            print(f"[train_speed] {scenario} ({preset}), {worlds} worlds, {args.warmup}+{updates} updates ...",
                  file=sys.stderr, flush=True)
            row = measure(scenario, preset, worlds, updates, args.warmup, args.device, args.threads, overrides)
            if args.baseline_tree:
                here = str(Path(__file__).resolve().parents[1])
                rates = {"before": [], "after": []}
                for _ in range(args.repeats):
                    for name, tree in (("before", args.baseline_tree), ("after", here)):
                        rates[name].append(wallclock(tree, preset, worlds, updates, args.warmup, args.device,
                                                     args.threads, overrides))
                row.update({"baseline_tree": args.baseline_tree, "before_env_steps_per_s": rates["before"],
                            "after_env_steps_per_s": rates["after"],
                            "after_over_before": statistics.median(rates["after"]) / statistics.median(rates["before"])})
            rows.append({**row, **meta})
    print_table(rows)
    if args.baseline_tree:
        print("\nbefore / after (whole updates, profiling off, median of alternating runs):")
        for r in rows:
            print(f"  {r['scenario']:10s} {r['worlds']:6d} worlds: before {si(statistics.median(r['before_env_steps_per_s']))}"
                  f" env-steps/s, after {si(statistics.median(r['after_env_steps_per_s']))}: x{r['after_over_before']:.3f}")
    if args.json:
        _results.write(args.json, rows, meta)
        print(f"wrote {args.json}", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main()
