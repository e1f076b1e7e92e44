"""WAR batch-time benchmark: lock-step sync vs DD-PPO preemption vs work stealing vs HTS-RL
overlap vs WAR on Command-v0, for the source article's case (1 commander at 50 ms + 9 sentries at 5 ms per
decision) and cost ratios 1:2, 1:5, 1:20, under both resource models.

What is measured
----------------
A *batch* is one round of collection: every rollout worker (``--workers`` x
``--worlds-per-worker`` worlds) collects a window of 25 env steps (one Command-v0 episode; the
article's B = 10 worlds x 25 steps x 10 agents = 2500 agent-transitions per worker).  The
commander costs ``ratio x 5 ms`` per decision, a sentry 5 ms.  The last worker is a straggler
(``--straggler``: its declared costs are 1.5x: a slower machine), which is what DD-PPO's
preemption and work stealing are for.

Resource models (per worker): ``parallel`` — each group on its own worker whose lanes evaluate
the group's agents in parallel (the article's per-agent parallel inference: a step waits for the
slowest group); ``shared`` — one device evaluates every decision in turn (costs add up).

Part A (modelled, virtual clock): batch time = declared inference under the resource model +
the *measured* ``env.step`` time, nothing else (the collector's own Python work and the real
policy forwards are not counted: the declared cost stands for the forward).  Median over
``--batches`` x ``--repeats`` batches.  The timing rounds use a uniform random policy (actions do
not change the schedule or the costs); sync's and WAR's shared-device times re-price the very
rounds collected under the parallel model (same decisions, ``WindowBatch.recost``), DD-PPO and
stealing get a run per model (when they preempt or move worlds depends on the clock).  The data
columns (per-group share of the batch, Kish ESS of the group-balancing x importance weights,
staleness in policy versions, dropped fraction, agent-transitions) and the learning time come
from real MAPPO updates (``--learn-updates``) of each arm.
``end-to-end`` adds the measured learning time: collect + learn, or max(collect, learn) for
overlap (learning on the previous batch runs during this collection; its collection *is*
sync's).  DD-PPO (Wijmans et al. 2020): once 60 % of the workers are done, workers that have
done >= 25 % of their window stop.  ``steal``: a worker done early takes over worlds of the
straggler (``war_train.war.rounds``: env state, carried fragments and episode statistics
move to a guest env on the thief); its batch is sync's, nothing dropped; ``stolen`` counts the
worlds moved per batch, ``move ms`` the *measured* copy time of those moves (out and back),
which the modelled batch time includes.

Part B (real time, article case, one worker of 10 worlds, the real policy networks): the
declared costs are spent for real — ``sleep`` under the parallel model (concurrent sleeps per
group, overlapping the collector's work as a remote-inference client would), ``busy`` under the
shared model (CPU burnt in turn; Python threads cannot burn CPU in parallel) — scaled by
``--sleep-scale`` / ``--busy-scale`` (quotas are invariant to scaling every cost by a constant;
the fixed per-step overhead of the env and the collector is not, so real speedups sit below the
modelled ones by that overhead, printed per step).  Sync and WAR batches are interleaved so that
both see the same machine load.

    python benchmarks/war_speed.py [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("WARP_CACHE_PATH", os.path.expanduser("~/.cache/war-envs/warp"))

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

SENTRY_MS = 5.0
RATIOS = (10, 2, 5, 20)   # commander cost / sentry cost; 10 = the article's 50 ms + 9 x 5 ms
ARMS = ("sync", "ddppo", "steal", "overlap", "war")
CLOCKED = ("ddppo", "steal")  # arms whose rounds depend on the clock: a timing run per resource model


class UniformPolicy:
    """Uniform random actions, zero values: the timing rounds' stand-in (modelled time does not
    depend on the networks)."""

    def __init__(self, seed=0):
        self.gen = torch.Generator().manual_seed(seed)

    def act(self, group, obs, state, avail=None):
        a = torch.randint(0, 5, obs.shape[:2], generator=self.gen)
        return a, torch.full(obs.shape[:2], -math.log(5.0)), torch.zeros(obs.shape[:2])

    draft = act

    def to_env(self, group, actions):
        return actions

    def value(self, group, state, obs=None):
        return torch.zeros(state.shape[0], self.n_agents[group])


def costs(ratio: float) -> dict:
    return {"commander": {"per_decision_ms": ratio * SENTRY_MS}, "sentry": {"per_decision_ms": SENTRY_MS}}


def train_config(args, workers: int, worlds: int):
    import war_train

    return war_train.preset_config("onpolicy", scenario="Command-v0", num_envs=workers * worlds,
                                   total_env_steps=10**9, progress=False, tensorboard=False, torch_threads=1)


def trainer(args, arm: str, ratio: float, resource: str, *, workers=None, worlds=None, mode="virtual", scale=1.0):
    from war_train.config import WarConfig
    from war_train.war.mode import WarMode

    workers = args.workers if workers is None else workers
    worlds = args.worlds_per_worker if worlds is None else worlds
    war = WarConfig(arm=arm, costs=costs(ratio), resource=resource, workers=workers, cost_mode=mode,
                    cost_scale=scale, straggler=args.straggler if workers > 1 else 1.0)
    return WarMode(train_config(args, workers, worlds), war)


def timing(args, arm: str, ratio: float, resource: str) -> dict:
    """Median modelled batch (round) time over batches x repeats, with a uniform policy, under
    ``resource`` — and, for lock-step and WAR rounds (whose decisions do not depend on the
    clock), re-costed under the other resource model too (``WindowBatch.recost``)."""
    other = "shared" if resource == "parallel" else "parallel"
    times = {resource: [], other: []}
    medians = {resource: [], other: []}
    env_s, stolen, move_s = [], [], []
    tr = trainer(args, "sync" if arm == "overlap" else arm, ratio, resource)
    policy = UniformPolicy(seed=1)
    policy.n_agents = tr.n_agents
    for c in tr.collectors:
        c.policy = policy
    scales = [c.cost.scale for c in tr.collectors]
    profiles = {lane: tr.profiles[lane] for lane in tr.lanes}
    tr._collect_round()  # warm-up (first kernel launches)
    for _ in range(args.repeats):
        per = {resource: [], other: []}
        for _ in range(args.batches):
            rnd = tr._collect_round()
            per[resource].append(rnd.seconds)
            if arm not in CLOCKED:
                per[other].append(max(w.recost(profiles, tr.lanes, other, scale=sc)
                                      for w, sc in zip(rnd.windows, scales)))
            env_s.append(max(w.env_seconds for w in rnd.windows))
            stolen.append(rnd.stolen)
            move_s.append(rnd.move_seconds)
        for key in per:
            if per[key]:
                medians[key].append(statistics.median(per[key]))
                times[key] += per[key]
    tr.close()
    out = {key: {"batch_s": statistics.median(t), "repeat_medians": medians[key], "env_s": statistics.median(env_s),
                 "stolen": statistics.median(stolen), "move_ms": 1e3 * statistics.median(move_s)}
           for key, t in times.items() if t}
    return out


def learning(args, arm: str, ratio: float) -> dict:
    """Data and learning-time columns from real MAPPO updates of the arm (parallel model)."""
    from war_train.run.loop import update

    tr = trainer(args, arm, ratio, "parallel")
    rows = [update(tr) for _ in range(args.learn_updates)]
    tr.close()
    tail = rows[1:] if len(rows) > 1 else rows  # overlap's first update is on-policy
    med = lambda key: statistics.median(r[key] for r in tail)  # noqa: E731
    return {"learn_s": med("learn_s"), "share_commander": med("share/commander"), "ess_frac": med("ess_frac"),
            "stale_mean": med("staleness_mean"), "stale_p95": med("staleness_p95"),
            "stale_max": max(r["staleness_max"] for r in tail), "dropped": med("dropped_frac"),
            "transitions": med("transitions"), "preempted": med("preempted"),
            "interval_commander": tail[-1]["interval/commander"]}


def real_timing(args, mode: str, resource: str, scale: float) -> dict:
    """Real batch times of sync and WAR, their batches interleaved (sync, WAR, sync, ...) so that
    both see the same machine load."""
    trainers = {arm: trainer(args, arm, 10, resource, workers=1, worlds=10, mode=mode, scale=scale)
                for arm in ("sync", "war")}
    for tr in trainers.values():
        tr._collect_round()
    times = {arm: [] for arm in trainers}
    medians = {arm: [] for arm in trainers}
    overhead = {arm: [] for arm in trainers}
    for _ in range(args.repeats):
        per = {arm: [] for arm in trainers}
        for _ in range(args.real_batches):
            for arm, tr in trainers.items():
                rnd = tr._collect_round()
                w = rnd.windows[0]
                per[arm].append(rnd.seconds)
                overhead[arm].append((rnd.seconds - w.inference_seconds) / max(w.steps, 1))
        for arm in trainers:
            medians[arm].append(statistics.median(per[arm]))
            times[arm] += per[arm]
    for tr in trainers.values():
        tr.close()
    return {arm: {"batch_s": statistics.median(times[arm]), "repeat_medians": medians[arm],
                  "overhead_ms_per_step": 1e3 * statistics.median(overhead[arm])} for arm in trainers}


def fmt(x, spec=".3f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="article case only, fewer batches (about a minute)")
    parser.add_argument("--batches", type=int, default=20, help="batches per repeat (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats (default 3)")
    parser.add_argument("--workers", type=int, default=3, help="rollout workers in part A (default 3)")
    parser.add_argument("--worlds-per-worker", type=int, default=10, help="worlds per worker (default 10)")
    parser.add_argument("--straggler", type=float, default=1.5, help="cost factor of the last worker (default 1.5)")
    parser.add_argument("--learn-updates", type=int, default=3, help="real MAPPO updates per arm for the data "
                                                                     "columns (default 3)")
    parser.add_argument("--ratios", type=str, default=None, help="comma-separated commander/sentry cost ratios "
                                                                  "(default 10,2,5,20; 10 = the article)")
    parser.add_argument("--no-real", action="store_true", help="skip part B (real sleep/busy costs)")
    parser.add_argument("--real-only", action="store_true", help="run part B only")
    parser.add_argument("--real-batches", type=int, default=20, help="batches per repeat in part B (default 20)")
    parser.add_argument("--sleep-scale", type=float, default=0.05, help="scale of part B's sleep costs (0.05)")
    parser.add_argument("--busy-scale", type=float, default=0.02, help="scale of part B's busy costs (0.02)")
    parser.add_argument("--json", type=str, default=None, help="write the rows as JSON records")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.repeats, args.learn_updates, args.real_batches = 5, 1, 2, 5
        args.ratios = args.ratios or "10"
    ratios = tuple(float(r) for r in args.ratios.split(",")) if args.ratios else RATIOS
    torch.set_num_threads(1)
    t_start = time.perf_counter()

    rows = []
    print(f"war_speed: Command-v0, {args.workers} workers x {args.worlds_per_worker} worlds x 25 steps per batch, "
          f"last worker {args.straggler}x slower; sentry {SENTRY_MS} ms/decision; median of "
          f"{args.batches} batches x {args.repeats} repeats", flush=True)
    for ratio in () if args.real_only else ratios:
        data = {arm: learning(args, arm, ratio) for arm in ARMS}
        measured = {arm: timing(args, arm, ratio, "parallel") for arm in ("sync", *CLOCKED, "war")}
        measured.update({f"{arm}_shared": timing(args, arm, ratio, "shared") for arm in CLOCKED})
        for resource in ("parallel", "shared"):
            times = {arm: measured[arm][resource] for arm in ("sync", "war")}
            times.update({arm: measured[arm if resource == "parallel" else f"{arm}_shared"][resource]
                          for arm in CLOCKED})
            times["overlap"] = times["sync"]
            for arm in ARMS:
                t, d = times[arm], data[arm]
                collect = t["batch_s"]
                e2e = max(collect, d["learn_s"]) if arm == "overlap" else collect + d["learn_s"]
                rows.append({"part": "A", "ratio": ratio, "commander_ms": ratio * SENTRY_MS, "resource": resource,
                             "arm": arm, "batch_s": collect, "repeat_medians": t["repeat_medians"],
                             "speedup": times["sync"]["batch_s"] / collect, "learn_s": d["learn_s"],
                             "end_to_end_s": e2e, "env_s": t["env_s"], "stolen": t["stolen"],
                             "move_ms": t["move_ms"], **d})
            sync_e2e = next(r["end_to_end_s"] for r in rows if r["ratio"] == ratio and r["resource"] == resource
                            and r["arm"] == "sync")
            for r in rows:
                if r["ratio"] == ratio and r["resource"] == resource:
                    r["e2e_speedup"] = sync_e2e / r["end_to_end_s"]
        print(f"  ratio 1:{ratio:g} done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)

    if not args.real_only:
        print_part_a(rows)
    if not args.no_real:
        run_part_b(args, rows)
    print(f"\n({time.perf_counter() - t_start:.0f} s)")
    if args.json:
        _results.write(args.json, rows, _results.metadata("war_speed.py", argv))
    return 0


def print_part_a(rows):
    print("\nA. modelled batch time (virtual clock: declared inference + measured env.step), "
          "end-to-end adds measured MAPPO learning")
    head = (f"{'commander':>9} {'resource':>8} {'arm':>7} {'batch s':>8} {'speedup':>7} {'e2e s':>7} {'e2e x':>6} "
            f"{'learn s':>7} {'cmd share':>9} {'k_cmd':>5} {'ESS/N':>6} {'stale mean/p95/max':>18} {'dropped':>7} "
            f"{'preempt':>7} {'transitions':>11} {'stolen':>6} {'move ms':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        stale = f"{r['stale_mean']:.3f}/{r['stale_p95']:.0f}/{r['stale_max']:.0f}"
        print(f"{r['commander_ms']:>7.0f}ms {r['resource']:>8} {r['arm']:>7} {r['batch_s']:>8.3f} "
              f"{r['speedup']:>6.2f}x {r['end_to_end_s']:>7.3f} {r['e2e_speedup']:>5.2f}x {r['learn_s']:>7.3f} "
              f"{r['share_commander']:>9.4f} {r['interval_commander']:>5.2f} {r['ess_frac']:>6.3f} {stale:>18} "
              f"{r['dropped']:>7.3f} {r['preempted']:>7.0f} {r['transitions']:>11.0f} {r['stolen']:>6.0f} "
              f"{r['move_ms']:>7.2f}")


def run_part_b(args, rows):
    print(f"\nB. real time, article case, 1 worker x 10 worlds, real policy networks; sleep costs "
          f"x{args.sleep_scale} (parallel), busy costs x{args.busy_scale} (shared); median of {args.real_batches} "
          f"batches x {args.repeats} repeats, sync and WAR batches interleaved")
    head = (f"{'costs':>6} {'resource':>8} {'arm':>5} {'batch s':>8} {'speedup':>7} {'modelled':>8} "
            f"{'overhead/step':>13}")
    print(head)
    print("-" * len(head))
    for mode, resource, scale in (("sleep", "parallel", args.sleep_scale), ("busy", "shared", args.busy_scale)):
        res = real_timing(args, mode, resource, scale)
        ideal = (12.5 / 3.75) if resource == "parallel" else (23.75 / 15.0)
        for arm in ("sync", "war"):
            r = res[arm]
            row = {"part": "B", "ratio": 10, "resource": resource, "mode": mode, "scale": scale, "arm": arm,
                   "batch_s": r["batch_s"], "repeat_medians": r["repeat_medians"],
                   "speedup": res["sync"]["batch_s"] / r["batch_s"],
                   "modelled_speedup": ideal if arm == "war" else 1.0,
                   "overhead_ms_per_step": r["overhead_ms_per_step"]}
            rows.append(row)
            print(f"{mode:>6} {resource:>8} {arm:>5} {row['batch_s']:>8.3f} {row['speedup']:>6.2f}x "
                  f"{row['modelled_speedup']:>7.2f}x {row['overhead_ms_per_step']:>10.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
