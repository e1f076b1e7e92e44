"""How parallel the parallel resource model really is on this machine.

``benchmarks/war_real.py``'s parallel model runs the commander's and the sentries' policy calls
(``BehaviourPolicy.act``: actor, sampling, critic, over one worker's worlds) on two lane threads, each
pinned to its own core, as ``war_train.rollout.collector.Collector(lane_threads=...)`` does — torch's kernels
release the GIL, so the two calls can overlap.  This measures by how much: per commander width,
the median seconds of the commander's call alone (``a``), the sentries' call alone (``b``), and
both submitted at once to the pinned lane threads (``both``).  Reported: the serial time
``a + b``, ``both``, the speedup ``(a + b) / both`` beside the ideal ``(a + b) / max(a, b)``,
and the overlap efficiency ``(a + b - both) / min(a, b)`` (1: the shorter call is hidden
completely; 0: the calls ran one after the other).  Widths: 256 (the two calls cost about the
same, where overlap matters most) and the ``war_real`` commander widths of ``--runs``'
calibration (1:10: 1 270).

    python benchmarks/war_parallelism.py --json benchmarks/results/war_parallelism.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worlds", type=int, default=128, help="worlds per call (war_real's default: 128)")
    p.add_argument("--widths", default=None,
                   help="commander widths (default: 256 and the widths in --calibration)")
    p.add_argument("--calibration", default="benchmarks/results/war_real_runs/calibration.json",
                   help="war_real's calibration.json (its commander widths per ratio)")
    p.add_argument("--repeats", type=int, default=40)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats: expected >= 3")
    if args.widths is None:
        widths = {256: "about 1:1"}
        if os.path.exists(args.calibration):
            with open(args.calibration) as f:
                cal = json.load(f)
            widths.update({int(w): f"1:{float(r):g} (war_real)" for r, w in cal["widths"].items()})
        args.widths = widths
    else:
        args.widths = {int(w): "" for w in args.widths.split(",")}
    args.meta = _results.metadata("war_parallelism.py", argv)
    return args


def measure(width: int, worlds: int, repeats: int, cpus: list[int]) -> dict:
    import torch

    import war_envs
    import war_train
    from war_train.rollout.collector import _pin_thread
    from war_train.learn.policy import build_policies
    from war_train.rollout.collector import BehaviourPolicy

    cfg = war_train.preset_config("relay", num_envs=worlds, torch_threads=1,
                                  group_network={"commander": {"hidden_size": width, "num_layers": 2}})
    with war_envs.make("Relay-v0", num_envs=worlds, seed=0) as env:
        obs, state = env.reset(seed=0), env.state()
        gens = {g: torch.Generator().manual_seed(i) for i, g in enumerate(env.groups)}
        policy = BehaviourPolicy(build_policies(env.groups, env.state_dim, cfg, "cpu"), torch.Generator(), lane_gens=gens)
    lanes = {"commander": [cpus[0]], "sentry": [cpus[-1]]}
    pools = {g: concurrent.futures.ThreadPoolExecutor(max_workers=1, initializer=_pin_thread, initargs=(c,))
             for g, c in lanes.items()}
    try:
        def call(group):
            return pools[group].submit(policy.act, group, obs[group], state)

        for g in lanes:   # warm-up
            for _ in range(3):
                call(g).result()
        times = {"commander": [], "sentry": [], "both": []}
        for _ in range(repeats):   # interleaved: the three measurements see the same machine
            for key in times:
                t0 = time.perf_counter()
                futures = [call(g) for g in (lanes if key == "both" else [key])]
                for f in futures:
                    f.result()
                times[key].append(time.perf_counter() - t0)
    finally:
        for pool in pools.values():
            pool.shutdown()
    a, b, both = (statistics.median(times[k]) for k in ("commander", "sentry", "both"))
    return {"width": width, "commander_s": a, "sentry_s": b, "both_s": both, "serial_s": a + b,
            "speedup": (a + b) / both, "ideal_speedup": (a + b) / max(a, b),
            "overlap_efficiency": (a + b - both) / min(a, b)}


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("war_parallelism: needs 2 CPUs (one per lane)")
    records = []
    for width, note in args.widths.items():
        r = measure(width, args.worlds, args.repeats, cpus)
        r.update({"worlds": args.worlds, "repeats": args.repeats, "note": note, "cpus": [cpus[0], cpus[-1]]})
        records.append(r)
    print(f"Relay-v0 policy calls over {args.worlds} worlds on two pinned lane threads (CPUs {cpus[0]}, {cpus[-1]}), "
          f"medians of {args.repeats}; measured wall-clock")
    head = ["commander width", "ratio", "commander alone", "sentries alone", "serial (sum)", "both at once",
            "speedup", "ideal", "overlap efficiency"]
    print(" | ".join(head))
    for r in records:
        print(" | ".join([str(r["width"]), r["note"], f"{1e3 * r['commander_s']:.2f} ms", f"{1e3 * r['sentry_s']:.2f} ms",
                          f"{1e3 * r['serial_s']:.2f} ms", f"{1e3 * r['both_s']:.2f} ms", f"{r['speedup']:.2f}x",
                          f"{r['ideal_speedup']:.2f}x", f"{r['overlap_efficiency']:.2f}"]))
    if args.json:
        _results.write(args.json, records, args.meta)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
