"""Data-parallel MAPPO with a slow rank: synchronous all-reduce vs DD-PPO preemption vs WAR quotas.

Every arm trains ``war_train`` MAPPO on Spread-v0 for the same number of updates, its ranks
spawned here as processes that join a gloo process group through the torchrun environment
variables (``RANK``, ``WORLD_SIZE``, ...), exactly as under ``torchrun``:

==================  ======  ======================================================================
arm                 ranks   what happens when rank 1 is 3x slower per world-step than rank 0
==================  ======  ======================================================================
1 rank              1       one process with all E worlds at rank 0's speed (the fast machine alone)
sync                2       ``dist_straggler="off"``: every update waits for the slow rank's T steps
preempt             2       DD-PPO: the slow rank stops once ``ceil(sync_frac·K)`` ranks have
                            finished and it has collected >= 25 % (``sync_frac`` 0.5: with K = 2,
                            DD-PPO's 0.6 needs both ranks, i.e. never preempts — the full run
                            shows that row too)
war                 2       WAR quotas at rank level: per-rank cost per world-step measured online,
                            the batch of E·T world-steps split in proportion to speed (fast rank
                            ~1.5 T steps, slow ~0.5 T), preemption as a backstop
==================  ======  ======================================================================

The slow rank is simulated with a declared ``war_envs.war.CostProfile`` spent before each of a
rank's env steps: ``per_decision_ms`` per world (rank 0: ``--cost-ms``, rank 1: 3x that), in
``"sleep"`` mode (the rank waits, as for a slower remote device; the 2 shared CPU cores stay
free for the real work).  The same update count for every arm: the env steps per update differ
under preemption.  Reported per arm: env-steps/s over the timed updates (the first update, with
start-up, is excluded), the speedup over ``sync``, rank 0's idle share (time waiting for the
other rank at the end of collection / training wall time), mean rollout steps per rank,
preempted rollouts, and the data share / ESS columns of the run's metrics.

    python benchmarks/dist_straggler.py            # 32 worlds x 25 steps, 10 updates per arm, 5 arms
    python benchmarks/dist_straggler.py --quick    # 6 updates per arm, 4 arms: about 1.5 minutes
    python benchmarks/dist_straggler.py --json out.json
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time

import torch
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

ARMS = {  # name -> (ranks, config overrides)
    "1 rank": (1, {}),
    "sync": (2, {"dist_straggler": "off"}),
    "preempt 0.6": (2, {"dist_straggler": "preempt", "dist_sync_frac": 0.6}),
    "preempt": (2, {"dist_straggler": "preempt", "dist_sync_frac": 0.5}),
    "war": (2, {"dist_straggler": "war"}),
}
QUICK_ARMS = ("1 rank", "sync", "preempt", "war")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, cfg_dict: dict, cost_ms: list[float], out: str) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    torch.set_num_threads(1)
    import torch.distributed as tdist

    from war_envs.war import CostProfile
    from war_train.learn import distributed
    from war_train.config import config_from_dict
    from war_train.run.loop import train
    from war_train.rollout.envs import make_env

    cost = CostProfile(per_decision_ms=cost_ms[rank], mode="sleep")
    if world_size == 1:  # one rank: a process group of one, so that the declared cost is spent as well
        store = tdist.TCPStore("127.0.0.1", port, 1, True)
        tdist.init_process_group("gloo", store=store, rank=0, world_size=1)
        ctx = distributed.DataParallel(0, 1, store=tdist.PrefixStore("war_train/", store), step_cost=cost)
    else:
        ctx = distributed.init_from_env("cpu", step_cost=cost)
    cfg = config_from_dict(cfg_dict)
    rows = []
    with make_env(cfg, ctx) as env:
        train(env, cfg, lambda row: rows.append(row), dist=ctx)
    torch.save({"rows": rows if rank == 0 else None, "timings": ctx.timings, "history": ctx.history},
               os.path.join(out, f"rank{rank}.pt"))
    tdist.destroy_process_group()


def run_arm(name: str, args, cfg_base: dict) -> dict:
    ranks, overrides = ARMS[name]
    cfg = dict(cfg_base, **overrides)
    cost = [args.cost_ms, args.cost_ms * args.slowdown][:ranks]
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        mp.spawn(_worker, args=(ranks, _free_port(), cfg, cost, out), nprocs=ranks, join=True)
        total_s = time.perf_counter() - t0
        res = [torch.load(os.path.join(out, f"rank{r}.pt"), weights_only=False) for r in range(ranks)]
    rows = res[0]["rows"]
    timed = rows[1:]  # the first update carries start-up (kernel loading, first calls)
    steps = rows[-1]["env_steps"] - rows[0]["env_steps"]
    seconds = rows[-1]["wall_s"] - rows[0]["wall_s"]
    hist = res[0]["history"][1:]
    wait0 = sum(h["wait_s"] for h in hist)
    per_rank_steps = [sum(h["steps"][r] for h in hist) / max(1, len(hist)) for r in range(ranks)]
    rec = {"arm": name, "ranks": ranks, "updates": len(rows), "timed_updates": len(timed),
           "env_steps": steps, "seconds": seconds, "env_steps_per_s": steps / seconds,
           "rank0_idle_frac": wait0 / seconds if seconds > 0 else float("nan"),
           "rollout_steps": per_rank_steps, "preempted_rollouts": sum(sum(h["preempted"]) for h in hist),
           "cost_ms_per_world_step": cost, "process_s": total_s,
           "final_episode_return": rows[-1]["episode_return"]}
    if "ess_frac" in rows[-1]:
        rec["share_rank0"] = sum(r["share/rank0"] for r in timed) / len(timed)
        rec["ess_frac"] = sum(r["ess_frac"] for r in timed) / len(timed)
    return rec


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="6 updates per arm, arms: 1 rank, sync, preempt, war")
    p.add_argument("--json", metavar="PATH", help="also write the rows as a JSON list")
    p.add_argument("--num-envs", type=int, default=32, help="worlds in total (split over the ranks)")
    p.add_argument("--rollout-length", type=int, default=25)
    p.add_argument("--updates", type=int, default=None, help="updates per arm (default 10, quick 6)")
    p.add_argument("--cost-ms", type=float, default=1.0, help="rank 0's declared cost per world-step (ms)")
    p.add_argument("--slowdown", type=float, default=3.0, help="rank 1's cost / rank 0's")
    p.add_argument("--arms", help="comma-separated subset of " + ", ".join(ARMS))
    args = p.parse_args(argv)
    updates = args.updates or (6 if args.quick else 10)
    arms = args.arms.split(",") if args.arms else list(QUICK_ARMS if args.quick else ARMS)
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        p.error(f"--arms: unknown {unknown}; expected from {list(ARMS)}")

    from war_train.config import config_to_dict
    from war_train.presets import preset_config

    cfg = preset_config("smoke", num_envs=args.num_envs, rollout_length=args.rollout_length,
                        total_env_steps=args.num_envs * args.rollout_length * updates, epochs=2,
                        num_minibatches=2, checkpoint_every=0, progress=False, tensorboard=False)
    base = config_to_dict(cfg)
    print(f"Spread-v0, {args.num_envs} worlds x {args.rollout_length} steps per update, {updates} updates per arm; "
          f"declared cost per world-step: rank 0 {args.cost_ms} ms, rank 1 {args.cost_ms * args.slowdown:g} ms "
          f"(sleep); gloo on CPU", flush=True)
    recs = []
    for name in arms:
        rec = run_arm(name, args, base)
        recs.append(rec)
        print(f"  {name:<12} {rec['env_steps_per_s']:>9,.0f} env-steps/s  ({rec['process_s']:.0f} s)", flush=True)
    sync = next((r for r in recs if r["arm"] == "sync"), None)
    for r in recs:
        r["speedup_vs_sync"] = r["env_steps_per_s"] / sync["env_steps_per_s"] if sync else float("nan")
    print()
    head = (f"{'arm':<12} {'ranks':>5} {'env-steps/s':>12} {'vs sync':>8} {'rank0 idle':>11} "
            f"{'steps/rollout (r0, r1)':>23} {'preempted':>10} {'share r0':>9} {'ESS frac':>9}")
    print(head)
    print("-" * len(head))
    for r in recs:
        steps = ", ".join(f"{s:.1f}" for s in r["rollout_steps"])
        share = f"{r['share_rank0']:.2f}" if "share_rank0" in r else "-"
        ess = f"{r['ess_frac']:.2f}" if "ess_frac" in r else "-"
        print(f"{r['arm']:<12} {r['ranks']:>5} {r['env_steps_per_s']:>12,.0f} {r['speedup_vs_sync']:>7.2f}x "
              f"{100 * r['rank0_idle_frac']:>10.0f}% {steps:>23} {r['preempted_rollouts']:>10} {share:>9} {ess:>9}")
    if sync:
        best = max((r for r in recs if r["ranks"] > 1 and r["arm"] != "sync"), key=lambda r: r["speedup_vs_sync"],
                   default=None)
        if best:
            print(f"\nspeedup over plain synchronous all-reduce with rank 1 slowed {args.slowdown:g}x: "
                  + ", ".join(f"{r['arm']} {r['speedup_vs_sync']:.2f}x" for r in recs
                              if r["ranks"] > 1 and r["arm"] != "sync"))
    if args.json:
        _results.write(args.json, recs, _results.metadata("dist_straggler.py", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
