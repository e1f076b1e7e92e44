"""Two RLlib PPO iterations on a war-envs scenario through ``war_train.adapters.rllib``.

    python scripts/rllib_ppo.py [--scenario Spread-v0] [--iterations 2] [--batch 400] [--env-kwargs JSON]

Run by ``scripts/rllib_check.sh`` (inside the RLlib virtual environment) and imported by
``tests/test_adapters_rllib.py``.  Everything runs in this process (no remote env runners,
one local learner) on the CPU, with Ray limited to one CPU and no dashboard.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

os.environ.setdefault("RAY_DEDUP_LOGS", "0")


def _total(x) -> int:
    """RLlib reports some counts per agent (a dict), others as one number."""
    return int(sum(x.values())) if isinstance(x, dict) else int(x)


def run_ppo(scenario: str = "Spread-v0", iterations: int = 2, batch: int = 400, seed: int = 0,
            env_kwargs: dict | None = None) -> list[dict]:
    """``iterations`` calls of ``algo.train()``; returns one summary dict per iteration.
    ``env_kwargs``: scenario arguments (e.g. ``{"max_cycles": 25}``)."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from war_train.adapters.rllib import group_policy_mapping, rllib_env_creator

    if not ray.is_initialized():
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    env_kwargs = dict(env_kwargs or {})
    creator = rllib_env_creator(scenario, seed=seed, **env_kwargs)
    policies, mapping_fn = group_policy_mapping(scenario, **env_kwargs)
    config = (
        PPOConfig()
        .environment(creator.name)
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .multi_agent(policies=policies, policy_mapping_fn=mapping_fn)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64]))
        .training(train_batch_size_per_learner=batch, minibatch_size=min(128, batch), num_epochs=2, lr=3e-4)
        .debugging(seed=seed, log_level="ERROR")
    )
    algo = config.build_algo()
    out = []
    try:
        for i in range(iterations):
            t0 = time.perf_counter()
            result = algo.train()
            env_runners = result.get("env_runners", {})
            learners = result.get("learners", {})
            summary = {
                "iteration": i + 1,
                "env_steps": int(env_runners.get("num_env_steps_sampled_lifetime", 0)),
                "agent_steps": _total(env_runners.get("num_agent_steps_sampled_lifetime", 0)),
                "episode_return_mean": float(env_runners.get("episode_return_mean", math.nan)),
                "policy_loss": {p: float(learners[p]["policy_loss"]) for p in sorted(policies)
                                if p in learners and "policy_loss" in learners[p]},
                "wall_s": round(time.perf_counter() - t0, 2),
            }
            out.append(summary)
            print(f"iteration {summary['iteration']}: {summary}", flush=True)
    finally:
        algo.stop()
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="Spread-v0")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--batch", type=int, default=400, help="train batch (env steps) per iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env-kwargs", type=json.loads, default={}, metavar="JSON",
                        help='scenario arguments, e.g. \'{"max_cycles": 25}\' or \'{"episode_length": 20}\' for Tag-v0')
    args = parser.parse_args(argv)
    import ray

    results = run_ppo(args.scenario, args.iterations, args.batch, args.seed, args.env_kwargs)
    ray.shutdown()
    if len(results) != args.iterations or any(r["env_steps"] <= 0 for r in results):
        raise SystemExit(f"RLlib PPO did not run {args.iterations} iterations: {results}")
    print(f"ok: RLlib PPO ran {len(results)} iterations on {args.scenario}")


if __name__ == "__main__":
    main()
