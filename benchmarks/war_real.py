"""WAR for real: MAPPO on Relay-v0 with a commander whose policy really computes, in real
wall-clock — sync, DD-PPO, overlap and WAR at the same env-step budget and hyperparameters.

Nothing is declared or slept: ``cost_mode=real`` (every policy call costs what it takes on the
wall clock; the online cost models measure it and WAR plans its quotas from them).  The
commander's actor and critic are wide MLPs (``group_network``) whose width is calibrated so
that one commander policy call over the worker's worlds takes ``ratio`` times one call of the
sentries' (9 agents, 64 wide) over the same worlds — the article's 50 ms : 5 ms is ratio 10.
Resource models:

- ``parallel``: the commander's lane on CPU 0 and the sentries' lane on CPU 1, each on a thread
  of its own (torch's kernels release the GIL, so the two forward passes really overlap); env
  steps and learning on the main thread;
- ``shared``: the whole process pinned to CPU 0, the lanes called in turn.

``--commander planner``: the commander thinks instead — it decides by a PUCT search over copies
of its worlds (``--planner``, ``war_train.plan``; depth ``--planner-depth``) and its call's cost
is set by the number of simulations, calibrated as the width is (``SIMULATIONS``; the kept runs
and the calibration file are the planner's own, ``planner_*.json``).

Per arm (medians over seeds): real seconds per batch (collection + learning), the real speedup
over sync and, beside it, what the cost model predicts from the measured per-lane costs
(``predicted``: the fitted cost models ``a + b·n`` priced at each arm's decision rates plus the
arm's measured env and learning time), real wall-clock to 90 % of sync's final return, final
return at equal env steps normalized between random (0) and sync (1), the commander's share of
the batch, ESS fraction, staleness and dropped fraction.

    python benchmarks/war_real.py --quick                       # one seed at 1:10, both models
    python benchmarks/war_real.py --seeds 1,2,3,4,5 --ratios 2,5,10,20 --json benchmarks/results/war_real.json
    python benchmarks/war_real.py --seeds 1 --ratios 10 --resources parallel --arms sync,war \
        --runs benchmarks/results/war_real_runs       # one cell now; later calls add seeds and arms
    python benchmarks/war_real.py --runs benchmarks/results/war_real_runs --kept-only   # the table so far

With ``--runs DIR`` every finished run is kept (its per-update rows), and a later call with the
same worlds, steps and commander width reads it instead of training it again: the full grid
(hours on two cores) can be filled a few runs at a time; the table is always computed from the
rows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

#: ``draft``: WAR whose commander's draft (a small actor distilled from it: from the search's
#: actions with ``--commander planner``) acts between its decisions instead of holding
ARMS = ("sync", "ddppo", "overlap", "war", "draft")
RESOURCES = ("parallel", "shared")
#: sync must beat random by this much (team return) before returns are compared: below it (e.g.
#: --quick's budget, far too short to learn Relay-v0) the return columns are "nan"
MIN_GAIN = 2.0
WIDTHS = (64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
#: a ratio is out of reach when the smallest commander costs more than this many times it
SMALLEST_OVER = 1.25
#: the planner commander's simulations per decision tried by the calibration
SIMULATIONS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="1,2,3,4,5")
    p.add_argument("--ratios", default="2,5,10,20", help="commander call : sentry call cost ratios")
    p.add_argument("--resources", default=",".join(RESOURCES))
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--worlds", type=int, default=128, help="worlds per update (default: 128)")
    p.add_argument("--steps", type=int, default=400_000, help="env steps per run (default: 400,000)")
    p.add_argument("--commander", choices=("network", "planner"), default="network",
                   help="how the commander's cost is reached: a wider network (default) or more search "
                        "simulations (it plans)")
    p.add_argument("--planner-depth", type=int, default=4, help="--commander planner: the search's depth")
    p.add_argument("--quick", action="store_true",
                   help="seed 1, ratio 10, 60,000 env steps: batch times and the prediction only (far too few "
                        "steps to learn Relay-v0, so the return columns are nan)")
    p.add_argument("--json", default=None)
    p.add_argument("--kept-only", action="store_true",
                   help="with --runs: train nothing; the table (and --json) of the runs kept there, runs missing "
                        "from the grid left out (what a grid filled over several sessions has so far)")
    p.add_argument("--runs", default=None, metavar="DIR",
                   help="keep every run (its per-update rows) as DIR/<arm>_<resource>_r<ratio>_s<seed>.json and "
                        "the commander widths as DIR/calibration.json; runs already there (same worlds, steps "
                        "and width) are read instead of trained, so a grid can be filled over several sessions")
    args = p.parse_args(argv)
    if args.quick:
        args.seeds, args.ratios, args.steps = "1", "10", 60_000
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.ratios = [float(r) for r in args.ratios.split(",")]
    args.resources = args.resources.split(",")
    args.arms = args.arms.split(",")
    for name, values, allowed in (("resources", args.resources, RESOURCES), ("arms", args.arms, ARMS)):
        bad = sorted(set(values) - set(allowed))
        if bad:
            p.error(f"--{name}: unknown {bad}; expected some of {list(allowed)}")
    if "sync" not in args.arms:
        p.error("--arms: sync is the reference of every figure; include it")
    if args.kept_only and not args.runs:
        p.error("--kept-only: reads the runs kept in --runs DIR; give --runs")
    args.meta = _results.metadata("war_real.py", argv)
    return args


def train_config(args, seed: int, size: int | None = None):
    """The relay preset at the benchmark's worlds and steps; ``size``: the commander's width, or
    with ``--commander planner`` its simulations."""
    import war_train

    if args.commander == "planner":
        # (PPO on the search alone, planner_distill=0: the learning rule the kept planner grid was run with)
        extra = ({"planner": "commander", "planner_simulations": size, "planner_depth": args.planner_depth,
                  "planner_distill": 0.0} if size else {})
    else:
        extra = {"group_network": {"commander": {"hidden_size": size, "num_layers": 2}} if size else {}}
    return war_train.preset_config("relay", num_envs=args.worlds, total_env_steps=args.steps, seed=seed,
                                   progress=False, tensorboard=False, torch_threads=1, **extra)


def call_seconds(policy, group: str, obs, state, repeats: int = 20, **kw) -> float:
    """Median seconds of one ``BehaviourPolicy.act`` call (actor or search, sampling, critic) of
    ``group``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        policy.act(group, obs, state, **kw)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def calibrate(args, ratios) -> dict:
    """The commander's size per ratio: the width (or, with ``--commander planner``, the number of
    simulations) whose policy call over the worlds costs ``ratio`` x the sentries' call
    (measured on this machine, one thread; log-linear between the sizes tried)."""
    import torch

    import war_envs
    from war_train.learn.policy import build_policies
    from war_train.learn.valuenorm import ValueNorm
    from war_train.plan.planner import build_planner
    from war_train.rollout.collector import BehaviourPolicy

    env = war_envs.make("Relay-v0", num_envs=args.worlds, seed=0)
    obs = env.reset(seed=0)
    state = env.state()
    gen = torch.Generator().manual_seed(0)
    sizes = SIMULATIONS if args.commander == "planner" else WIDTHS
    cost = {}
    for size in sizes:
        cfg = train_config(args, 1, size)
        policies = build_policies(env.groups, env.state_dim, cfg, "cpu")
        planner, kw = None, {}
        if args.commander == "planner":
            planner = build_planner(cfg, env, policies, {g: ValueNorm() for g in env.groups}, 0)
            kw = {"worlds": slice(None), "env": env}
        pol = BehaviourPolicy(policies, gen, planners={"commander": planner} if planner else None)
        if size == sizes[0]:
            sentry = call_seconds(pol, "sentry", obs["sentry"], state)
        cost[size] = call_seconds(pol, "commander", obs["commander"], state, repeats=5 if planner else 20,
                                  **kw) / sentry
        if planner is not None:
            planner.close()
    env.close()
    out = {}
    for r in ratios:
        if cost[sizes[0]] > SMALLEST_OVER * r:   # (a search of one simulation already holds a sentries' call)
            raise SystemExit(f"ratio {r:g}: the smallest commander ({sizes[0]}) already costs "
                             f"{cost[sizes[0]]:.1f}x the sentries' call on this machine")
        above = [w for w in sizes if cost[w] >= r]
        if not above:
            raise SystemExit(f"ratio {r}: the largest commander ({sizes[-1]}) costs only {cost[sizes[-1]]:.1f}x")
        hi = above[0]
        lo = sizes[max(0, sizes.index(hi) - 1)]
        if hi == lo or cost[hi] == cost[lo]:
            out[r] = hi
        else:
            f = (math.log(r) - math.log(cost[lo])) / (math.log(cost[hi]) - math.log(cost[lo]))
            out[r] = int(round(lo + f * (hi - lo)))
    return {"widths": out, "measured_ratio": cost, "sentry_call_s": sentry}


def run(args, arm: str, resource: str, width: int, seed: int) -> dict:
    """One training run; per update: real seconds, the return, WAR's diagnostics."""
    from war_train.config import WarConfig
    from war_train.run.loop import update
    from war_train.war.mode import WarMode

    cpus = sorted(os.sched_getaffinity(0))
    lane_cpus = {"commander": [cpus[0]], "sentry": [cpus[-1]]} if resource == "parallel" else {}
    if resource == "shared":
        os.sched_setaffinity(0, {cpus[0]})
    try:
        # the article's floor K = 3 fragments per 10 worlds (as benchmarks/war_learning.py scales it)
        draft = {"fill": "draft", "draft_groups": ["commander"]} if arm == "draft" else {}
        war = WarConfig(arm="war" if arm == "draft" else arm, **draft,
                        cost_mode="real", resource=resource, lane_cpus=lane_cpus,
                        workers=2 if arm == "ddppo" else 1, floor=max(1, round(3 * args.worlds / 10)))
        tr = WarMode(train_config(args, seed, width), war)
        rows, wall = [], 0.0
        while tr.update_idx < tr.cfg.num_updates:
            t0 = time.perf_counter()
            row = update(tr)
            wall += time.perf_counter() - t0
            row["wall_s"] = wall
            rows.append(row)
        models = {g: tr.cost_models[g] for g in tr.groups}
        E, n = tr.E_worker, tr.n_agents
        tr.close()
    finally:
        os.sched_setaffinity(0, set(cpus))
    # the cost model's price of one env step at this arm's decision rates (k: steps per decision)
    def step_price(k_commander: float) -> float:
        lanes = [models["commander"].seconds(max(1, round(E * n["commander"] / k_commander))),
                 models["sentry"].seconds(E * n["sentry"])]
        return max(lanes) if resource == "parallel" else sum(lanes)

    tail = rows[len(rows) // 2:]
    med = lambda key: statistics.median(r[key] for r in tail)  # noqa: E731
    env_per_step = med("env_s") / max(1, med("window_steps"))  # measured env.step time, apart from the calls
    return {"arm": arm, "resource": resource, "seed": seed, "width": width, "rows": rows,
            "batch_s": med("batch_s"), "learn_s": med("learn_s"), "collect_s": med("collect_s"),
            "window_steps": med("window_steps"), "interval_commander": med("interval/commander"),
            "price_sync_step": step_price(1.0), "price_step": step_price(med("interval/commander")),
            "env_s_per_step": env_per_step,
            "share_commander": med("share/commander"), "ess_frac": med("ess_frac"),
            "staleness_mean": med("staleness_mean"), "dropped_frac": med("dropped_frac")}


def random_return(worlds: int, seed: int = 12345) -> float:
    """Mean team return of uniform random actions over one episode in every world (the Relay-v0
    defaults: ``relay_baselines.play``'s random team)."""
    from relay_baselines import play

    return float(play(worlds, seed, random_team=True).mean())


def final_return(rows) -> float:
    tail = rows[-max(1, len(rows) // 5):]
    vals = [r["episode_return"] for r in tail if r.get("episode_return", math.nan) == r.get("episode_return")]
    return statistics.mean(vals) if vals else float("nan")


def time_to(rows, target: float, width: int = 3) -> float:
    """Real seconds at which the smoothed return first reaches ``target`` (inf: never)."""
    vals = [r.get("episode_return", float("nan")) for r in rows]
    for i in range(len(rows)):
        window = [v for v in vals[max(0, i - width + 1):i + 1] if v == v]
        if window and statistics.mean(window) >= target:
            return rows[i]["wall_s"]
    return math.inf


def summarize(runs: list[dict], rand: float) -> list[dict]:
    out = []
    keys = sorted({(r["ratio"], r["resource"]) for r in runs})
    for ratio, resource in keys:
        group = [r for r in runs if r["ratio"] == ratio and r["resource"] == resource]
        sync = {r["seed"]: r for r in group if r["arm"] == "sync"}
        for arm in ARMS:
            mine = [r for r in group if r["arm"] == arm and r["seed"] in sync]
            if not mine:
                continue
            per_seed = []
            for r in mine:
                s = sync[r["seed"]]
                s_final = final_return(s["rows"])
                learned = s_final - rand >= MIN_GAIN  # else there is no return level to compare
                target = rand + 0.9 * (s_final - rand)
                t_sync, t_mine = ((time_to(s["rows"], target), time_to(r["rows"], target)) if learned
                                  else (math.nan, math.nan))
                pred_sync = s["window_steps"] * (s["price_sync_step"] + s["env_s_per_step"]) + s["learn_s"]
                pred_mine = r["window_steps"] * (r["price_step"] + r["env_s_per_step"]) + r["learn_s"]
                per_seed.append({
                    "seed": r["seed"], "batch_s": r["batch_s"], "speedup": s["batch_s"] / r["batch_s"],
                    "collect_s": r["collect_s"], "learn_s": r["learn_s"],
                    "predicted": pred_sync / pred_mine if pred_mine > 0 else float("nan"),
                    "time_to_90_s": t_mine, "time_to_90_speedup": t_sync / t_mine if t_mine > 0 else float("nan"),
                    "final_return_norm": (final_return(r["rows"]) - rand) / (s_final - rand) if learned else math.nan,
                    "sync_final_return": s_final,
                    "share_commander": r["share_commander"], "ess_frac": r["ess_frac"],
                    "staleness_mean": r["staleness_mean"], "dropped_frac": r["dropped_frac"]})
            rec = {"arm": arm, "resource": resource, "ratio": ratio, "width": mine[0]["width"],
                   "seeds": [p["seed"] for p in per_seed], "per_seed": per_seed}
            for key in per_seed[0]:
                if key != "seed":
                    vals = [p[key] for p in per_seed]
                    rec[key] = (statistics.median(vals) if all(math.isfinite(v) for v in vals) else
                                math.nan if any(v != v for v in vals) else math.inf)
            out.append(rec)
    return out


def print_table(records) -> None:
    head = ("ratio", "resource", "arm", "batch s", "speedup", "predicted", "to 90% s", "x sync",
            "final (norm)", "cmd share", "ESS", "stale", "dropped")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for r in records:
        print(" | ".join([f"1:{r['ratio']:g}", r["resource"], r["arm"], f"{r['batch_s']:.3f}", f"{r['speedup']:.2f}",
                          f"{r['predicted']:.2f} (modelled)", f"{r['time_to_90_s']:.0f}",
                          f"{r['time_to_90_speedup']:.2f}", f"{r['final_return_norm']:.3f}",
                          f"{r['share_commander']:.3f}", f"{r['ess_frac']:.2f}", f"{r['staleness_mean']:.2f}",
                          f"{r['dropped_frac']:.3f}"]))
    for r in records:   # the design's case: one planning commander at 10x nine reactive agents' cost
        sync = next((s for s in records if s["arm"] == "sync" and (s["ratio"], s["resource"]) ==
                     (r["ratio"], r["resource"])), None)
        if r["arm"] == "war" and sync is not None:
            print(f"1:{r['ratio']:g} {r['resource']}: batch sync {sync['batch_s']:.3f} s -> war {r['batch_s']:.3f} s "
                  f"({r['speedup']:.2f}x), of which collection {sync['collect_s']:.3f} s -> {r['collect_s']:.3f} s "
                  f"({sync['collect_s'] / r['collect_s']:.2f}x) and learning {sync['learn_s']:.3f} s -> "
                  f"{r['learn_s']:.3f} s; the design's 12.5 s -> 3.8 s (3.3x)")


def _calibration(args) -> dict:
    """``calibrate``'s result, read from ``--runs``' calibration.json when it holds every ratio for
    these worlds (the widths of runs kept there), else measured (and written there)."""
    name = "planner_calibration.json" if args.commander == "planner" else "calibration.json"
    path = os.path.join(args.runs, name) if args.runs else None
    if path and os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        widths = {float(r): w for r, w in saved["widths"].items()}
        if saved["worlds"] == args.worlds and (args.kept_only or all(r in widths for r in args.ratios)):
            return {**saved, "widths": widths,
                    "measured_ratio": {int(w): c for w, c in saved["measured_ratio"].items()}}
    if args.kept_only:
        raise SystemExit(f"--kept-only: no calibration for {args.worlds} worlds in {path}")
    cal = calibrate(args, args.ratios)
    if path:
        os.makedirs(args.runs, exist_ok=True)
        old = {}
        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)
        widths = {**(old.get("widths", {}) if old.get("worlds") == args.worlds else {}),
                  **{str(r): w for r, w in cal["widths"].items()}}
        with open(path, "w") as f:
            json.dump({**cal, "widths": widths, "worlds": args.worlds}, f, indent=1)
    return cal


def _kept_run(args, arm: str, resource: str, ratio: float, seed: int, width: int) -> tuple[str | None, dict | None]:
    """``(path, run)``: the ``--runs`` file of this run and its content if it matches."""
    if not args.runs:
        return None, None
    kind = "planner_" if args.commander == "planner" else ""
    path = os.path.join(args.runs, f"{kind}{arm}_{resource}_r{ratio:g}_s{seed}.json")
    if not os.path.exists(path):
        return path, None
    with open(path) as f:
        kept = json.load(f)
    depth = args.planner_depth if args.commander == "planner" else None
    same = (kept.get("worlds"), kept.get("env_steps"), kept.get("width"), kept.get("planner_depth")) == (
        args.worlds, args.steps, width, depth)
    return path, kept if same else None


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cal = _calibration(args)
    what = "planner simulations" if args.commander == "planner" else "commander widths"
    print(f"{what} per ratio: {cal['widths']} (sentry call {1e3 * cal['sentry_call_s']:.2f} ms "
          f"over {args.worlds} worlds)", flush=True)
    rand = random_return(args.worlds)
    runs = []
    for ratio in args.ratios:
        for resource in args.resources:
            for seed in args.seeds:
                for arm in args.arms:
                    t0 = time.perf_counter()
                    width = cal["widths"].get(ratio)   # (None: --kept-only, a ratio never calibrated)
                    path, r = _kept_run(args, arm, resource, ratio, seed, width)
                    source = "kept"
                    if r is None and args.kept_only:
                        print(f"  1:{ratio:g} {resource:8s} {arm:7s} seed {seed}: not in {args.runs} (left out)",
                              flush=True)
                        continue
                    if r is None:
                        r = run(args, arm, resource, width, seed)
                        r.update({"ratio": ratio, "worlds": args.worlds, "env_steps": args.steps,
                                  "planner_depth": args.planner_depth if args.commander == "planner" else None,
                                  "date": time.strftime("%Y-%m-%dT%H:%M:%S")})
                        source = f"{time.perf_counter() - t0:.0f} s"
                        if path:
                            os.makedirs(args.runs, exist_ok=True)
                            with open(path + ".tmp", "w") as f:
                                json.dump(r, f, default=float)
                            os.replace(path + ".tmp", path)
                    runs.append(r)
                    print(f"  1:{ratio:g} {resource:8s} {arm:7s} seed {seed}: batch {r['batch_s']:.3f} s, final "
                          f"{final_return(r['rows']):.2f} ({source})", flush=True)
    records = summarize(runs, rand)
    print(f"\nRelay-v0, {args.worlds} worlds, {args.steps:,} env steps per run, seeds {args.seeds}; random "
          f"return {rand:.2f}; real wall-clock (cost_mode=real), medians over seeds\n")
    print_table(records)
    if args.json:
        for rec in records:
            rec.update({"worlds": args.worlds, "env_steps": args.steps, "random_return": rand,
                        "commander": args.commander,
                        **({"planner_depth": args.planner_depth} if args.commander == "planner" else {}),
                        "calibration": {str(k): v for k, v in cal["measured_ratio"].items()}})
        _results.write(args.json, records, args.meta)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
