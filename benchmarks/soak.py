"""Soak: step an env for many agent-steps, cycle make/close, and train MAPPO for 20 minutes,
printing resident memory.

    python benchmarks/soak.py                      # 10 M agent-steps per scenario, 200 make/close cycles, 20 min training
    python benchmarks/soak.py --agent-steps 1e6 --cycles 20 --train-minutes 2 --json soak.json

Resident memory (VmRSS) is sampled after a warm-up (kernel compilation, first graph capture,
allocator pools) and then periodically; the growth after warm-up must stay under 5 %.
Training: the same after its first updates, and the numbers of live torch tensors and Warp
arrays must not change between the end of warm-up and the end.  Exit status 1 otherwise.  ``tests/test_soak.py`` runs a short variant.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import torch

import war_envs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux /proc)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("VmRSS not found in /proc/self/status")


def soak_steps(env_id: str, agent_steps: float, num_envs: int = 1024, samples: int = 10) -> dict:
    """Step ``env_id`` for ``agent_steps`` agent-steps with random actions; RSS per sample."""
    env = war_envs.make(env_id, num_envs=num_envs, seed=0)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    buffers = {g: torch.empty((num_envs, s.n_agents), dtype=torch.int64) for g, s in env.groups.items()}

    def run(steps):
        for _ in range(steps):
            for b in buffers.values():
                b.random_(0, 5, generator=gen)
            obs, rew, term, trunc, info = env.step(buffers)
            env.state()  # allocates a fresh tensor each call: must not accumulate

    total_steps = max(samples, int(agent_steps / (num_envs * env.num_agents)))
    run(min(200, total_steps))  # warm-up
    gc.collect()
    base = rss_mb()
    trace = []
    t0 = time.perf_counter()
    per_sample = total_steps // samples
    for _ in range(samples):
        run(per_sample)
        trace.append(rss_mb())
    elapsed = time.perf_counter() - t0
    done = per_sample * samples * num_envs * env.num_agents
    env.close()
    return {"scenario": env_id, "agent_steps": done, "seconds": elapsed, "rss_base_mb": base,
            "rss_max_mb": max(trace), "growth": (max(trace) - base) / base, "trace_mb": trace}


def soak_make_close(env_id: str, cycles: int, num_envs: int = 2048) -> dict:
    """``cycles`` rounds of make / reset / step / close; RSS after warm-up vs at the end."""

    def cycle():
        env = war_envs.make(env_id, num_envs=num_envs, seed=0)
        env.reset()
        for _ in range(5):
            env.step({g: torch.zeros((num_envs, s.n_agents), dtype=torch.int64) for g, s in env.groups.items()})
        env.close()

    for _ in range(min(5, cycles)):
        cycle()
    gc.collect()
    base = rss_mb()
    for _ in range(cycles):
        cycle()
    gc.collect()
    end = rss_mb()
    return {"scenario": env_id, "cycles": cycles, "rss_base_mb": base, "rss_end_mb": end,
            "growth": (end - base) / base}


def live_objects() -> dict[str, int]:
    """Live torch tensors and Warp arrays in this process (after a full collection)."""
    import warp as wp

    gc.collect()
    counts = {"tensors": 0, "warp_arrays": 0}
    for obj in gc.get_objects():
        kind = type(obj)   # (not isinstance: that reads __class__, which some module proxies warn about)
        if issubclass(kind, torch.Tensor):
            counts["tensors"] += 1
        elif issubclass(kind, wp.array):
            counts["warp_arrays"] += 1
    return counts


def soak_training(minutes: float, scenario: str = "Spread-v0", warmup_updates: int = 10, **overrides) -> dict:
    """MAPPO training with the scenario's preset, writing metrics, TensorBoard events and
    checkpoints to a temporary run folder as a real run does, for ``minutes`` (the run is stopped
    through ``progress_fn`` like a preemption).  RSS after ``warmup_updates`` updates vs its
    maximum afterwards; live tensors and Warp arrays at the end of warm-up (at least one
    checkpoint written) vs at the end."""
    import tempfile

    import war_train

    cfg = war_train.preset_config(scenario, total_env_steps=10**12, progress=False, **overrides)
    # warm-up includes the first checkpoint: writing one creates views of the env state once
    warmup_updates = max(warmup_updates, cfg.checkpoint_every + 1)
    trace, marks = [], {}
    t_end = None

    def progress(row):
        nonlocal t_end
        if row["update"] == warmup_updates:
            marks["base"], marks["objects_base"] = rss_mb(), live_objects()
            t_end = time.perf_counter() + minutes * 60.0
        elif row["update"] > warmup_updates:
            trace.append(rss_mb())
            if time.perf_counter() >= t_end:
                marks["objects_end"] = live_objects()
                return False
        return True

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="war-soak-") as run_dir:
        with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **cfg.env_kwargs) as env:
            result = war_train.train(env, cfg, progress, run_dir=run_dir)
    last = result.history[-1]
    base = marks["base"]
    return {"scenario": scenario, "updates": last["update"], "env_steps": last["env_steps"],
            "seconds": time.perf_counter() - t0, "rss_base_mb": base, "rss_max_mb": max(trace),
            "growth": (max(trace) - base) / base, "objects_base": marks["objects_base"],
            "objects_end": marks["objects_end"], "trace_mb": trace}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent-steps", type=float, default=1e7, help="agent-steps per scenario")
    parser.add_argument("--cycles", type=int, default=200, help="make/close cycles per scenario")
    parser.add_argument("--train-minutes", type=float, default=20.0,
                        help="minutes of MAPPO training on Spread-v0 (its preset; 0: skip)")
    parser.add_argument("--max-growth", type=float, default=0.05, help="allowed RSS growth after warm-up")
    parser.add_argument("--json", help="also write the rows as JSON")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows, ok = [], True
    print(f"{'scenario':<17}{'test':<12}{'amount':>14}{'seconds':>9}{'RSS base':>10}{'RSS max':>9}{'growth':>8}")
    for env_id in ("Spread-v0", "PredatorPrey-v0"):
        r = soak_steps(env_id, args.agent_steps)
        rows.append({"test": "steps", **r})
        print(f"{env_id:<17}{'steps':<12}{r['agent_steps']:>14,}{r['seconds']:>9.1f}{r['rss_base_mb']:>9.0f}M"
              f"{r['rss_max_mb']:>8.0f}M{r['growth']:>8.2%}")
        c = soak_make_close(env_id, args.cycles)
        rows.append({"test": "make/close", **c})
        print(f"{env_id:<17}{'make/close':<12}{c['cycles']:>14,}{'':>9}{c['rss_base_mb']:>9.0f}M"
              f"{c['rss_end_mb']:>8.0f}M{c['growth']:>8.2%}")
        ok &= r["growth"] < args.max_growth and c["growth"] < args.max_growth
    if args.train_minutes > 0:
        t = soak_training(args.train_minutes)
        rows.append({"test": "training", **t})
        print(f"{'Spread-v0':<17}{'training':<12}{t['env_steps']:>14,}{t['seconds']:>9.1f}{t['rss_base_mb']:>9.0f}M"
              f"{t['rss_max_mb']:>8.0f}M{t['growth']:>8.2%}")
        print(f"  {t['updates']} updates; live tensors {t['objects_base']['tensors']} -> {t['objects_end']['tensors']}, "
              f"Warp arrays {t['objects_base']['warp_arrays']} -> {t['objects_end']['warp_arrays']} "
              f"(end of warm-up -> end)")
        if t["objects_end"] != t["objects_base"]:
            print("FAIL: the numbers of live tensors / Warp arrays changed during training")
            ok = False
        ok &= t["growth"] < args.max_growth
    if args.json:
        _results.write(args.json, rows, _results.metadata("soak.py"))
    growths = [r["growth"] for r in rows]
    if max(growths) >= args.max_growth:
        print(f"FAIL: resident memory grew by more than {args.max_growth:.0%}")
    print("memory flat" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
