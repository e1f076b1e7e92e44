"""Is thinking worth it?  The same team trained with a planning commander and with a policy
commander, at equal env steps, evaluated greedily on held-out worlds.

For each seed, two ``war-train train`` runs of the ``relay`` preset (Relay-v0), identical but for
``--planner commander`` (its decisions by a PUCT search over copies of its worlds, their goal
schedule re-drawn: ``war_train.plan``).  Each run is evaluated on ``--episodes`` worlds of the
evaluation streams (never trained on): the planning team with its planner deciding
(``plan``: the search's most probable action) and with its raw policy (``greedy``), the policy
team greedy and with its commander planning at evaluation only (the same search over the
policies it trained with).  The table: per seed the greedy return of each, the median row, and the seconds
each run took; ``--json`` writes the rows with the command, machine and versions.

    python benchmarks/war_planner_value.py --seeds 1,2,3,4,5 --steps 400000 --json benchmarks/results/war_planner_value.json
    python benchmarks/war_planner_value.py --seeds 1 --steps 20000 --episodes 16     # seconds: checks the script

An interrupted run is resumed exactly from its last checkpoint when the command is run again
(every 20 updates, the preset's ``checkpoint_every``); finished runs are reused.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)


def train(run_dir: Path, seed: int, steps: int, num_envs: int, planner: dict | None, log: Path) -> float:
    """One ``war-train train`` run of the relay preset (resumed exactly from its checkpoint where
    an earlier call was interrupted; a finished one is kept); its training seconds (the
    checkpoint's ``wall_s``: the resumed parts added up)."""
    from war_train.checkpoint import load_checkpoint

    cmd = [sys.executable, "-m", "war_train.run.cli", "train", "Relay-v0", "--preset", "relay", "--seed", str(seed),
           "--total-steps", str(steps), "--num-envs", str(num_envs), "--run-dir", str(run_dir), "--no-progress",
           "--no-gif", "--eval-episodes", "0", "--torch-threads", "1"]
    if planner:
        cmd += ["--planner", "commander", "--planner-simulations", str(planner["simulations"]),
                "--planner-depth", str(planner["depth"]), "--planner-ratio", planner["ratio"],
                "--planner-distill", str(planner.get("distill", 0.0))]
    done = (run_dir / "checkpoint.pt").exists() and load_checkpoint(run_dir)["env_steps"] >= steps - num_envs * 25
    if not done:
        if (run_dir / "checkpoint.pt").exists():
            cmd += ["--resume", str(run_dir)]
        elif run_dir.exists():   # (interrupted before its first checkpoint)
            shutil.rmtree(run_dir)
        with open(log, "a") as out:
            subprocess.run(cmd, check=True, stdout=out, stderr=subprocess.STDOUT,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
    return float(load_checkpoint(run_dir)["wall_s"])


def evaluate(run_dir: Path, episodes: int, modes: list[str], planner: dict) -> dict[str, float]:
    """Mean episode return of the run's checkpoint on ``episodes`` evaluation worlds per mode
    (``plan``: the commander by a search of ``planner``'s size, whether or not it trained with one)."""
    import dataclasses

    from war_train.checkpoint import load_checkpoint
    from war_train.learn.policy import load_policies
    from war_train.rollout.metrics import summarize
    from war_train.run.evaluate import plan_evaluator, run_episodes

    ckpt = load_checkpoint(run_dir)
    policies, cfg, _ = load_policies(ckpt)
    cfg = dataclasses.replace(cfg, planner="commander", planner_simulations=planner["simulations"],
                              planner_depth=planner["depth"])
    out = {}
    for mode in modes:
        modes_g = {g: "greedy" for g in policies}
        planner = None
        if mode == "plan":
            modes_g["commander"] = "plan"
            planner = plan_evaluator(cfg, policies, ckpt["valuenorms"])
        stats = summarize(run_episodes(cfg.scenario, cfg.env_kwargs, policies, episodes, cfg.seed, modes_g,
                                       planner=planner))
        out[mode] = stats["episode_return"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--steps", type=int, default=400_000, help="env steps per run (both teams)")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--simulations", type=int, default=8, help="planner simulations per decision")
    parser.add_argument("--depth", type=int, default=2, help="planner depth")
    parser.add_argument("--ratio", choices=("search", "policy"), default="search",
                        help="the planner's behaviour probability in PPO's ratio (TrainConfig.planner_ratio)")
    parser.add_argument("--distill", type=float, default=1.0,
                        help="weight of the commander's cross-entropy to the searched actions beside its PPO loss "
                             "(TrainConfig.planner_distill)")
    parser.add_argument("--episodes", type=int, default=500, help="evaluation episodes (held-out worlds)")
    parser.add_argument("--out", default="runs/war_planner_value")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    planner = {"simulations": args.simulations, "depth": args.depth, "ratio": args.ratio, "distill": args.distill}
    rows = []
    print(f"{'seed':>4} | {'policy team':>11} | {'planner team':>12} | {'planner team, raw policy':>24} | "
          f"{'policy team, planning at eval':>29} | {'policy s':>8} | {'planner s':>9}")
    for seed in [int(s) for s in args.seeds.split(",")]:
        base = out / f"policy__seed{seed}"
        rule = ("" if args.ratio == "search" else f"_{args.ratio}") + (f"_distill{args.distill:g}" if args.distill
                                                                        else "")
        plan = out / f"planner_s{args.simulations}_d{args.depth}{rule}__seed{seed}"
        t_base = train(base, seed, args.steps, args.num_envs, None, out / f"{base.name}.log")
        t_plan = train(plan, seed, args.steps, args.num_envs, planner, out / f"{plan.name}.log")
        e_base = evaluate(base, args.episodes, ["greedy", "plan"], planner)
        e_plan = evaluate(plan, args.episodes, ["plan", "greedy"], planner)
        row = {"seed": seed, "policy_team": e_base["greedy"], "planner_team": e_plan["plan"],
               "planner_team_raw_policy": e_plan["greedy"], "policy_team_planning": e_base["plan"],
               "policy_wall_s": t_base, "planner_wall_s": t_plan}
        rows.append(row)
        print(f"{seed:>4} | {row['policy_team']:>11.2f} | {row['planner_team']:>12.2f} | "
              f"{row['planner_team_raw_policy']:>24.2f} | {row['policy_team_planning']:>29.2f} | {t_base:>8.0f} | "
              f"{t_plan:>9.0f}", flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "seed"}
    print(f"{'med':>4} | {med['policy_team']:>11.2f} | {med['planner_team']:>12.2f} | "
          f"{med['planner_team_raw_policy']:>24.2f} | {med['policy_team_planning']:>29.2f} | "
          f"{med['policy_wall_s']:>8.0f} | {med['planner_wall_s']:>9.0f}")
    if args.json:
        _results.write(args.json, {"steps": args.steps, "num_envs": args.num_envs, "planner": planner,
                                   "episodes": args.episodes, "metric": "episode_return (greedy, held-out worlds)",
                                   "rows": rows, "median": med}, _results.metadata(__file__))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
