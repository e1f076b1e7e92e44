"""WAR (Workload-Aware Rollouts) on Command-v0: the slow commander decides less often.

Command-v0 has one ``commander`` (global view) and nine ``sentry`` agents (3-nearest view); the
WAR harness declares the source article's inference costs — 50 ms per commander decision, 5 ms
per sentry decision (``war_train.config.ARTICLE_COSTS``) — and trains MAPPO with
``war_train.train(None, config, war=WarConfig(arm=...))`` under one or more arms:

- ``sync``: lock-step MAPPO: every agent decides at every step, so each step waits for the
  commander;
- ``war``: per-group quotas from the costs (``war_envs.war.plan``): the commander decides every
  ``interval`` steps (staggered across worlds) and holds its action in between, its transitions
  become SMDP macro-steps, and every group keeps its lock-step weight in the loss
  (group-balancing weights; the Kish ESS of those weights is reported).

By default the costs are paid on a *virtual clock* (``cost_mode="virtual"``: deterministic and
instant; env stepping and learning are measured for real), so ``model_s`` and the
"modelled env-steps/s" are what the declared costs would take, not this machine's wall time;
``--cost-mode sleep`` waits the costs for real (use ``--cost-scale`` to shrink them).  Per
update it prints each group's decision interval, quota (fragments per window), data share and
decisions per modelled second, the ESS, and the episode return; at the end, each arm's modelled
throughput.

    python examples/war_command.py --num-envs 64 --total-steps 200000
    python examples/war_command.py --arms war --cost-mode sleep --cost-scale 0.01
    war-train train Command-v0 --war --arm war      # the same harness from the CLI, with all outputs
"""

from __future__ import annotations

import argparse
import math

BANNER = ("war-envs example: war_command.py\n"
          "  shows: WAR vs lock-step MAPPO on Command-v0 (war_train.train(..., war=WarConfig(...))): per-group decision "
          "intervals, quotas, data shares, ESS and modelled throughput under declared costs")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="device of env and networks (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=32, help="worlds (default: 32)")
    parser.add_argument("--total-steps", type=int, default=20_000,
                        help="env steps per arm, summed over worlds (default: 20,000)")
    parser.add_argument("--arms", default="sync,war",
                        help="comma-separated arms: sync, war, ddppo (needs --workers >= 2), overlap (default: sync,war)")
    parser.add_argument("--workers", type=int, default=1, help="rollout workers (shards of the worlds; default: 1)")
    parser.add_argument("--cost-mode", default="virtual", choices=("virtual", "sleep"),
                        help="pay the declared costs on a modelled clock (virtual) or for real (sleep)")
    parser.add_argument("--cost-scale", type=float, default=1.0, help="multiply every declared cost (default: 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None, help="write a full run folder per arm under this directory")
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import war_train
    from war_train.config import WarConfig
    from war_train.presets import ARTICLE_COSTS
    from war_train.run.training import run_training

    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not arms:
        raise ValueError("--arms: expected at least one of sync, war, ddppo, overlap")
    config = war_train.preset_config("onpolicy", scenario="Command-v0", num_envs=args.num_envs,
                                     total_env_steps=args.total_steps, seed=args.seed, device=args.device,
                                     progress=False, tensorboard=False, gif=False, eval_episodes=0)
    print(f"Command-v0: {config.num_envs} worlds x {config.rollout_length} steps per update, "
          f"{config.num_updates} updates per arm; declared costs (x{args.cost_scale}, {args.cost_mode}): "
          + ", ".join(f"{g} {c['per_decision_ms']} ms/decision" for g, c in ARTICLE_COSTS.items()))

    summary = {}
    for arm in arms:
        war = WarConfig(arm=arm, costs=ARTICLE_COSTS, cost_mode=args.cost_mode, cost_scale=args.cost_scale,
                        workers=args.workers).validate()
        print(f"--- arm {arm}")

        def progress(row: dict) -> None:
            groups = [k.split("/", 1)[1] for k in row if k.startswith("share/")]
            per_group = "; ".join(
                f"{g}: every {row[f'interval/{g}']:.2f} steps, "
                + (f"quota {row[f'quota/{g}']}, " if row[f"quota/{g}"] else "lock-step, ")
                + f"share {row[f'share/{g}']:.3f}, {row.get(f'decisions_per_s/{g}', float('nan')):.0f} decisions/model-s"
                for g in groups)
            print(f"update {row['update']:3d}  env steps {row['env_steps']:>8,}  model {row['model_s']:8.2f} s  "
                  f"ESS {row['ess']:.0f} ({row['ess_frac']:.3f})  return {_fmt(row.get('episode_return'))}  "
                  f"| {per_group}", flush=True)

        if args.out is not None:
            run_dir = run_training(config, args.out, progress_fn=progress, war=war)
            print(f"run folder: {run_dir}")
            import csv

            with open(run_dir / "metrics.csv") as f:
                last = list(csv.DictReader(f))[-1]
            summary[arm] = (int(float(last["env_steps"])), float(last["model_s"]))
        else:
            result = war_train.train(None, config, progress, war=war)
            last = result.history[-1]
            summary[arm] = (last["env_steps"], last["model_s"])

    print("--- modelled throughput (declared inference costs + measured env and learning time)")
    for arm, (steps, model_s) in summary.items():
        rate = steps / model_s if model_s > 0 else float("nan")
        ratio = ""
        if "sync" in summary and arm != "sync":
            s_steps, s_model = summary["sync"]
            ratio = f"  ({rate / (s_steps / s_model):.2f}x sync)"
        print(f"{arm:>8}: {steps:,} env steps in {model_s:.2f} modelled s = {rate:,.1f} env-steps/s{ratio}")


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


if __name__ == "__main__":
    main()
