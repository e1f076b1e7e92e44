"""Stable-Baselines3 PPO training speed: the native ``SB3VecEnv`` on war-envs' Spread-v0
against the usual PettingZoo recipe, SuperSuit on mpe2's ``simple_spread_v3``.

What is measured
----------------
Agent-steps per second of ``PPO.learn`` (rollout collection *and* the PPO updates, i.e. what
a user waits for), with the **same PPO settings** on both paths: ``MlpPolicy`` [64, 64],
``n_steps``, ``batch_size``, ``n_epochs`` and the same number of SB3 sub-environments
(agents as environments: ``worlds x 3``), one torch thread, CPU.

* ``native``: ``VecMonitor(SB3VecEnv("Spread-v0", num_envs=worlds))`` — one batched Warp
  step of every world per ``step_wait``.
* ``supersuit``: ``VecMonitor(concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(
  mpe2.simple_spread_v3.parallel_env()), worlds, num_cpus=0, base_class="stable_baselines3"))``
  — SuperSuit's standard path, a Python loop over ``worlds`` mpe2 envs.

Rows ``env only`` step each VecEnv with random actions (no learning) for reference.  Each
figure is the best of ``--repeats`` timed runs after a warm-up ``learn`` (kernel compile,
first resets).  ``--quick`` (about a minute) uses fewer timesteps; ``--json PATH`` writes the
rows as a list of records.  Wall-clock numbers depend on the machine and its load: compare
the ratio.

    python benchmarks/sb3_speed.py [--quick] [--worlds 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("WARP_CACHE_PATH", os.path.expanduser("~/.cache/war-envs/warp"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)


def native_venv(worlds: int):
    from stable_baselines3.common.vec_env import VecMonitor

    from war_train.adapters.sb3 import SB3VecEnv

    return VecMonitor(SB3VecEnv("Spread-v0", num_envs=worlds, seed=0))


def supersuit_venv(worlds: int):
    import supersuit as ss
    from mpe2 import simple_spread_v3
    from stable_baselines3.common.vec_env import VecMonitor

    vec = ss.pettingzoo_env_to_vec_env_v1(simple_spread_v3.parallel_env(N=3, max_cycles=25))
    return VecMonitor(ss.concat_vec_envs_v1(vec, worlds, num_cpus=0, base_class="stable_baselines3"))


def ppo_rate(make, worlds: int, timesteps: int, repeats: int, args) -> float:
    from stable_baselines3 import PPO

    best = 0.0
    venv = make(worlds)
    for r in range(repeats + 1):  # the first run warms up
        torch.manual_seed(r)
        model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=args.batch_size,
                    n_epochs=args.n_epochs, policy_kwargs=dict(net_arch=[64, 64]), device="cpu", verbose=0)
        steps = timesteps if r else venv.num_envs * args.n_steps
        start = time.perf_counter()
        model.learn(steps)
        rate = model.num_timesteps / (time.perf_counter() - start)
        if r:
            best = max(best, rate)
    venv.close()
    return best


def env_rate(make, worlds: int, steps: int, repeats: int) -> float:
    venv = make(worlds)
    venv.reset()
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 5, venv.num_envs) for _ in range(16)]
    best = 0.0
    for r in range(repeats + 1):
        start = time.perf_counter()
        for t in range(steps):
            venv.step(actions[t % 16])
        rate = steps * venv.num_envs / (time.perf_counter() - start)
        if r:
            best = max(best, rate)
    venv.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer timesteps (about a minute)")
    parser.add_argument("--worlds", type=int, default=32, help="worlds (SB3 sub-envs = 3 x worlds)")
    parser.add_argument("--n-steps", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=768)
    parser.add_argument("--n-epochs", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--json", type=str, default=None, help="write the rows as JSON records")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="The `render_mode` attribute is not defined")  # SuperSuit
    repeats = args.repeats or (1 if args.quick else 2)
    per_rollout = 3 * args.worlds * args.n_steps
    native_steps = per_rollout * (4 if args.quick else 12)
    ss_steps = per_rollout * (1 if args.quick else 3)

    rows = []
    for path, make, timesteps in (("native SB3VecEnv (war-envs Spread-v0)", native_venv, native_steps),
                                  ("SuperSuit + mpe2 simple_spread_v3", supersuit_venv, ss_steps)):
        rows.append({"path": path, "what": "PPO.learn", "worlds": args.worlds, "sub_envs": 3 * args.worlds,
                     "agent_steps_per_s": ppo_rate(make, args.worlds, timesteps, repeats, args)})
        rows.append({"path": path, "what": "env only (random actions)", "worlds": args.worlds,
                     "sub_envs": 3 * args.worlds,
                     "agent_steps_per_s": env_rate(make, args.worlds, 100 if args.quick else 400, repeats)})
    base = {r["what"]: r["agent_steps_per_s"] for r in rows if r["path"].startswith("SuperSuit")}
    for r in rows:
        r["speedup_vs_supersuit"] = r["agent_steps_per_s"] / base[r["what"]]

    print(f"PPO settings: MlpPolicy [64, 64], n_steps={args.n_steps}, batch_size={args.batch_size}, "
          f"n_epochs={args.n_epochs}, {3 * args.worlds} sub-envs ({args.worlds} worlds x 3 agents), "
          "1 torch thread")
    header = f"{'path':<40} {'what':<27} {'agent-steps/s':>14} {'vs SuperSuit':>13}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['path']:<40} {r['what']:<27} {r['agent_steps_per_s']:>14,.0f} {r['speedup_vs_supersuit']:>12.1f}x")
    if args.json:
        meta = _results.metadata("sb3_speed.py", None, _results.CORE_DISTS + ("stable-baselines3", "supersuit", "mpe2", "pettingzoo"))
        _results.write(args.json, rows, meta)


if __name__ == "__main__":
    main()
