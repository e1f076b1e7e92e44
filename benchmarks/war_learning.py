"""Does learning hold under WAR?  MAPPO on Command-v0 with the article's declared costs (commander
50 ms, sentries 5 ms per decision), lock-step sync against WAR, several seeds, both axes.

Every run is ``war-train train Command-v0 --arm {sync,war} ...`` (same hyperparameters, same
seeds, same env steps); outputs land in ``--out/<arm>_seed<k>/``.  Then:

- **equal env steps**: each run's final team return = mean ``episode_return`` (the shared team
  reward, training episodes with the sampling policy) over the last ``--tail`` of its updates;
  normalized between the random policy (uniform actions, ``--random-episodes`` episodes) and
  sync: ``(R_war - R_random) / (R_sync - R_random)``, seed-averaged;
- **wall-clock**: the *modelled* wall-clock ``model_s`` of each run (virtual clock: the declared
  inference time under the parallel resource model + the measured env-step and learning time —
  real CPU time here would measure the 2-core machine, not the modelled inference); the time at
  which the seed-averaged, smoothed curve first reaches 90 % of sync's final return (normalized:
  R_random + 0.9 (R_sync - R_random)), WAR's against sync's;
- plots: ``learning.png`` (return against env steps and against modelled wall-clock, mean and
  min/max over seeds) and ``summary.json``.

Setting: one worker of ``--worlds`` worlds x 25 steps per update; WAR's fragment floor scaled
with the batch (``K = 3 x worlds/10``: the article's K = 3 per 2500 agent-transitions), so each
world's commander decides 7.5 times per 25-step episode as in the article's case.

    python benchmarks/war_learning.py [--quick] [--seeds 5] [--steps 1000000] [--jobs 2]
    python benchmarks/war_learning.py --analyze-only --out runs/war_learning
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

HYPER = {"num-envs": None, "rollout-length": 25, "epochs": 5, "num-minibatches": 4, "lr": 3e-3, "critic-lr": 3e-3,
         "gamma": 0.95, "entropy-coef": 0.005}
COSTS = '{"commander": {"per_decision_ms": 50}, "sentry": {"per_decision_ms": 5}}'


def command(args, arm: str, seed: int, run_dir: pathlib.Path) -> list[str]:
    exe = pathlib.Path(sys.executable).with_name("war-train")
    cmd = [str(exe), "train", "Command-v0", "--preset", "onpolicy", "--arm", arm, "--war-costs", COSTS,
           "--war-resource", "parallel", "--war-floor", str(max(1, round(3 * args.worlds / 10))),
           "--seed", str(seed), "--total-steps", str(args.steps), "--anneal-lr", "--no-progress", "--no-gif",
           "--no-tensorboard", "--checkpoint-every", "0", "--eval-episodes", str(args.eval_episodes),
           "--run-dir", str(run_dir)]
    for key, value in HYPER.items():
        cmd += [f"--{key}", str(args.worlds if key == "num-envs" else value)]
    return cmd


def launch(args, runs):
    pending = list(runs)
    active = []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    while pending or active:
        while pending and len(active) < args.jobs:
            arm, seed, run_dir = pending.pop(0)
            run_dir.mkdir(parents=True, exist_ok=True)
            log = open(run_dir / "train.log", "w")
            proc = subprocess.Popen(command(args, arm, seed, run_dir), stdout=log, stderr=subprocess.STDOUT, env=env)
            active.append((proc, log, arm, seed, time.perf_counter()))
            print(f"started {arm} seed {seed} (pid {proc.pid})", flush=True)
        for item in list(active):
            proc, log, arm, seed, t0 = item
            if proc.poll() is not None:
                log.close()
                active.remove(item)
                status = "done" if proc.returncode == 0 else f"FAILED ({proc.returncode})"
                print(f"{status}: {arm} seed {seed} in {time.perf_counter() - t0:.0f} s", flush=True)
        time.sleep(2)


def random_return(episodes: int, seed: int = 12345) -> float:
    from war_train.run.evaluate import run_episodes

    out = run_episodes("Command-v0", {}, {}, episodes, seed, {"commander": "random", "sentry": "random"})
    return float(out["episode_return"].mean())


def smooth(ys, width):
    out = []
    for i in range(len(ys)):
        window = ys[max(0, i - width + 1): i + 1]
        out.append(sum(window) / len(window))
    return out


def analyze(args) -> dict:
    from war_train.run.runlog import read_metrics
    from war_train.run.plot import plot_war_comparison

    out = pathlib.Path(args.out)
    runs = {arm: [] for arm in ("sync", "war")}
    evals = {arm: [] for arm in runs}
    for arm in runs:
        for seed in range(1, args.seeds + 1):
            path = out / f"{arm}_seed{seed}" / "metrics.csv"
            if path.is_file():
                runs[arm].append(read_metrics(path))
                ev = out / f"{arm}_seed{seed}" / "eval.json"
                if ev.is_file():
                    evals[arm].append(json.loads(ev.read_text())["results"]["sample"]["episode_return"])
    if not runs["sync"] or not runs["war"]:
        raise SystemExit(f"no finished runs under {out}")
    n = min(len(r) for arm in runs for r in runs[arm])
    tail = max(1, int(n * args.tail))

    def final(rows):
        return sum(r["episode_return"] for r in rows[n - tail:n]) / tail

    r_rand = random_return(args.random_episodes)
    finals = {arm: [final(rows) for rows in runs[arm]] for arm in runs}
    mean = {arm: sum(v) / len(v) for arm, v in finals.items()}
    gap = mean["sync"] - r_rand
    normalized = (mean["war"] - r_rand) / gap if gap else float("nan")
    per_seed_norm = [(w - r_rand) / (s - r_rand) for w, s in zip(finals["war"], finals["sync"])]
    target = r_rand + 0.9 * gap

    def time_to(arm):
        seeds = runs[arm]
        ys = [sum(rows[i]["episode_return"] for rows in seeds) / len(seeds) for i in range(n)]
        xs = [sum(rows[i]["model_s"] for rows in seeds) / len(seeds) for i in range(n)]
        steps = [seeds[0][i]["env_steps"] for i in range(n)]
        for x, y, s in zip(xs, smooth(ys, args.smooth), steps):
            if y >= target:
                return x, s
        return math.inf, math.inf

    t_sync, s_sync = time_to("sync")
    t_war, s_war = time_to("war")
    total = {arm: sum(rows[n - 1]["model_s"] for rows in runs[arm]) / len(runs[arm]) for arm in runs}

    def war_mean(key):
        return sum(r[key] for rows in runs["war"] for r in rows[:n]) / (n * len(runs["war"]))

    summary = {
        "seeds": {arm: len(runs[arm]) for arm in runs}, "updates": n, "env_steps": runs["sync"][0][n - 1]["env_steps"],
        "random_return": r_rand, "final_return": finals, "final_return_mean": mean,
        "normalized_war": normalized, "normalized_war_per_seed": per_seed_norm,
        "target_90pct": target, "model_s_to_target": {"sync": t_sync, "war": t_war},
        "env_steps_to_target": {"sync": s_sync, "war": s_war},
        "time_speedup_to_target": t_sync / t_war if t_war and math.isfinite(t_war) else float("nan"),
        "model_s_total": total, "eval_sample_return": evals,
        "share_commander_war": war_mean("share/commander"), "ess_frac_war": war_mean("ess_frac"),
        "staleness_mean_war": war_mean("staleness_mean"),
    }
    plot_war_comparison({f"{arm}": runs[arm] for arm in runs}, out / "learning.png",
                        title="Command-v0, commander 50 ms + 9 sentries 5 ms (parallel inference, modelled time)")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"random {r_rand:.2f}; final team return (last {tail} of {n} updates, mean over seeds): "
          f"sync {mean['sync']:.2f}, WAR {mean['war']:.2f}; WAR normalized {normalized:.3f} "
          f"(per seed {', '.join(f'{x:.3f}' for x in per_seed_norm)})")
    print(f"90 % of sync's final ({target:.2f}): sync at {t_sync:.0f} s ({s_sync:,} env steps), WAR at {t_war:.0f} s "
          f"({s_war:,} env steps) of modelled wall-clock: {summary['time_speedup_to_target']:.2f}x sooner")
    print(f"modelled wall-clock of the whole run: sync {total['sync']:.0f} s, WAR {total['war']:.0f} s; "
          f"WAR commander share {summary['share_commander_war']:.4f}, ESS/N {summary['ess_frac_war']:.3f}")
    print(f"wrote {out / 'learning.png'} and {out / 'summary.json'}")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 seeds x 40k env steps (a smoke run)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=1_000_000, help="env steps per run")
    parser.add_argument("--worlds", type=int, default=80, help="worlds per update")
    parser.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--random-episodes", type=int, default=2000)
    parser.add_argument("--tail", type=float, default=0.05, help="fraction of the last updates averaged as 'final'")
    parser.add_argument("--smooth", type=int, default=10, help="moving-average width (updates) for time-to-target")
    parser.add_argument("--out", default="runs/war_learning")
    parser.add_argument("--arms", default="sync,war")
    parser.add_argument("--analyze-only", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write the summary, with the run's metadata, as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.steps, args.eval_episodes, args.random_episodes = 2, 40_000, 20, 200
    if not args.analyze_only:
        out = pathlib.Path(args.out)
        runs = [(arm, seed, out / f"{arm}_seed{seed}") for seed in range(1, args.seeds + 1)
                for arm in args.arms.split(",")]
        launch(args, runs)
    summary = analyze(args)
    if args.json:
        _results.write(args.json, summary, _results.metadata("war_learning.py", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
