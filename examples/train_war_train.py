"""Train MAPPO with the bundled trainer ``war_train`` on a batched scenario.

``war_train.preset_config(scenario, ...)`` gives the scenario's tuned preset (Spread-v0,
PredatorPrey-v0) or the on-policy defaults; the flags override its budget, worlds and
device.  Without ``--out`` the run stays in memory: ``war_train.train(env, config,
progress_fn)`` prints one line per update, then the trained greedy policy is compared with a
random one on fresh episodes (``war_train.run.evaluate.evaluation_suite``).  With ``--out DIR``
the same run goes through ``war_train.run.training.run_training`` and writes every output
(``metrics.csv``, TensorBoard, ``checkpoint.pt``, ``learning_curve.png``, ``eval.json``,
``episode.gif``) to ``DIR/<scenario>__<seed>__<time>/``, like ``war-train train``.

    python examples/train_war_train.py --total-steps 2000000                # Spread preset, ~minutes
    python examples/train_war_train.py --scenario PredatorPrey-v0 --num-envs 256 --out runs
"""

from __future__ import annotations

import argparse
import math

BANNER = ("war-envs example: train_war_train.py\n"
          "  shows: MAPPO training with war_train (per-group shared actors, centralized critics) on a batched env")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0", help="registered war_envs id (default: Spread-v0)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda:N, for env and networks (default: cpu)")
    parser.add_argument("--num-envs", type=int, default=None, help="worlds per update (default: the preset's)")
    parser.add_argument("--total-steps", type=int, default=500_000,
                        help="training budget in env steps, summed over worlds (default: 500,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-episodes", type=int, default=32, help="episodes of the final comparison (0: skip)")
    parser.add_argument("--out", default=None, help="write a full run folder under this directory")
    args = parser.parse_args(argv)
    print(BANNER, flush=True)

    import war_envs
    import war_train
    from war_train.presets import DEFAULT_PRESETS

    overrides = {"total_env_steps": args.total_steps, "seed": args.seed, "device": args.device,
                 "progress": False, "eval_episodes": args.eval_episodes}
    if args.num_envs is not None:
        overrides["num_envs"] = args.num_envs
    preset = DEFAULT_PRESETS.get(args.scenario, "onpolicy")
    config = war_train.preset_config(preset, scenario=args.scenario, **overrides)
    if config.num_minibatches > config.num_envs * config.rollout_length:
        config.num_minibatches = config.num_envs * config.rollout_length  # tiny batches (smoke runs)
    config.validate()
    print(f"preset {preset!r}: {config.num_envs} worlds x {config.rollout_length} steps per update, "
          f"{config.num_updates} updates, {config.epochs} epochs x {config.num_minibatches} minibatches, "
          f"lr {config.lr}, gamma {config.gamma}")

    if args.out is not None:
        from war_train.run.training import run_training

        run_dir = run_training(config, args.out)
        print(f"run folder: {run_dir}")
        return

    def progress(row: dict) -> None:
        print(f"update {row['update']:4d}  env steps {row['env_steps']:>10,}  "
              f"{row['env_steps_per_s']:>9,.0f} steps/s  episode return {_fmt(row['episode_return'])}", flush=True)

    config.tensorboard = False
    config.gif = False
    env = war_envs.make(config.scenario, num_envs=config.num_envs, seed=config.seed, device=config.device,
                        precision=config.precision, **config.env_kwargs)
    try:
        result = war_train.train(env, config, progress)
    finally:
        env.close()
    first, last = result.history[0], result.history[-1]
    print(f"trained {last['env_steps']:,} env steps in {last['wall_s']:.1f} s; episode return "
          f"{_fmt(first['episode_return'])} (first update) -> {_fmt(last['episode_return'])} (last)")
    if args.eval_episodes:
        from war_train.run.evaluate import evaluation_suite

        summary = evaluation_suite(result.policies, config.scenario, config.env_kwargs, args.eval_episodes,
                                   config.seed)
        for mode in ("greedy", "sample", "random"):
            print(f"evaluation over {args.eval_episodes} episodes, {mode:>6} policy: episode return "
                  f"{_fmt(summary[mode]['episode_return'])}")


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


if __name__ == "__main__":
    main()
