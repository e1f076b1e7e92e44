"""Step throughput of this tree against an earlier commit, side by side in one run.

What is measured
----------------
The earlier commit (``--ref``; default ``cb9a33e``, the last commit before the one-file MPE
refactor) is checked out into a temporary git worktree (``git worktree add --detach``, removed
at the end).  Every scenario of ``--scenarios`` (default: every MPE scenario registered in both
trees) at every ``--worlds`` size is then stepped by both trees, each in its own subprocess with
``PYTHONPATH`` pointing at that tree and pinned to one core (``os.sched_setaffinity``,
``num_threads=1``).  A subprocess builds the env (``war_envs.make(id, num_envs=E, seed=0)``,
float32, the scenario's default autoreset mode, plus ``--kwargs``), resets it, draws a pool of
16 batches of uniformly random actions from the groups' action spaces, steps ``--warmup`` times
(kernel compilation and graph capture: not timed), then times two loops over the pool, each for at
least ``--seconds``:

* ``step``: ``env.step(actions, trusted=True)`` -- the batch API's trusted path (what a trainer
  calls), and
* ``kernels``: the actions written once, then ``env._run_step()`` (the captured step's replay:
  the kernels and the launch overhead, no action copy, no info dict).

The figures are env-steps per second of the subprocess's own CPU time (``time.process_time``:
the time other jobs held the pinned core is left out, which wall-clock rates on a shared machine
do not; the wall-clock rates are in the results file too).  Rounds are interleaved (round r:
every scenario, both trees, the tree order alternating between rounds) and the table reports
each tree's median over ``--rounds`` rounds and the ratio new / ref of the medians, with the
min-max range of the rounds' ratios.  Timings under load (other jobs on the machine) are
noisier even so: the results file records ``--note``.

Usage
-----
    python benchmarks/speed_vs_commit.py                         # MPE: this tree vs cb9a33e
    python benchmarks/speed_vs_commit.py --ref 22e5726 --scenarios Tag-v0 --worlds 64 1024 \\
        --json benchmarks/results/trials/tag_struct_speed.json

``--json PATH`` writes the table's rows (and every round's figures) with the command, date,
machine and versions (``benchmarks/_results.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
POOL = 16  # random action batches cycled through by the timed loops


# ------------------------------------------------------------------ child: one tree, one scenario
def _random_actions(env, torch, gen):
    """One batch of uniformly random actions ``{group: tensor}`` from the groups' spaces."""
    import gymnasium

    E = env.num_envs
    batch = {}
    for name, spec in env.groups.items():
        space, n = spec.action_space, spec.n_agents
        if isinstance(space, gymnasium.spaces.Discrete):
            batch[name] = torch.randint(int(space.n), (E, n), generator=gen, dtype=torch.int64)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            parts = [torch.randint(int(k), (E, n), generator=gen, dtype=torch.int64) for k in space.nvec]
            batch[name] = torch.stack(parts, dim=-1)
        elif isinstance(space, gymnasium.spaces.Box):
            low, high = float(space.low.min()), float(space.high.max())
            batch[name] = low + (high - low) * torch.rand((E, n, *space.shape), generator=gen)
        else:
            raise TypeError(f"{env.env_id}: group {name!r} has an action space this benchmark cannot draw "
                            f"({type(space).__name__})")
    return batch


def _timed(fn, seconds: float) -> tuple[int, float, float]:
    """Call ``fn(k)`` for k = 0, 1, ... until ``seconds`` of wall time have passed; (calls, wall
    seconds, CPU seconds of this process)."""
    calls, start, cpu = 0, time.perf_counter(), time.process_time()
    while True:
        for _ in range(POOL):
            fn(calls % POOL)
            calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls, elapsed, time.process_time() - cpu


def child(args) -> None:
    """Measure one tree (the one on ``PYTHONPATH``) for one scenario at every size; prints one
    JSON line per size."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    import torch

    torch.set_num_threads(1)
    import war_envs

    tree = Path(os.environ["PYTHONPATH"]).resolve()
    if tree not in Path(war_envs.__file__).resolve().parents:
        raise RuntimeError(f"war_envs was imported from {war_envs.__file__}, not from PYTHONPATH={tree}")
    for E in args.worlds:
        env = war_envs.make(args.scenario, num_envs=E, seed=0, num_threads=1, **json.loads(args.kwargs))
        gen = torch.Generator().manual_seed(0)
        pool = [_random_actions(env, torch, gen) for _ in range(POOL)]
        env.reset()
        for k in range(args.warmup):
            env.step(pool[k % POOL], trusted=True)
        figures = {"scenario": args.scenario, "worlds": E, "agents": env.num_agents}
        step = _timed(lambda k: env.step(pool[k], trusted=True), args.seconds)
        env._write_trusted_actions(pool[0])
        kernels = _timed(lambda k: env._run_step(), args.seconds)
        env.close()
        for what, (calls, wall, cpu) in (("step", step), ("kernels", kernels)):
            figures[what] = E * calls / cpu
            figures[f"{what}_wall"] = E * calls / wall
        print(json.dumps(figures), flush=True)


def list_ids(prefix: str) -> None:
    """Print the registered ids of the tree on ``PYTHONPATH`` whose entry point is under ``prefix``."""
    from war_envs import registry

    ids = [i for i in registry.registered_ids() if registry._SCENARIOS[i].startswith(prefix)]
    print(json.dumps(ids))


# ------------------------------------------------------------------ parent
def _run_child(tree: Path, argv: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, *argv], env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"child in {tree} failed ({' '.join(argv)}):\n{out.stderr[-4000:]}")
    return out.stdout


def _ids(tree: Path) -> list[str]:
    return json.loads(_run_child(tree, ["--list", "war_envs.scenarios.mpe."]).strip().splitlines()[-1])


def fmt(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ref", default="cb9a33e", help="the earlier commit (default: cb9a33e)")
    p.add_argument("--scenarios", nargs="+", default=None,
                   help="env ids (default: every MPE scenario registered in both trees)")
    p.add_argument("--worlds", nargs="+", type=int, default=[64, 1024, 8192])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=0.5, help="minimum seconds per timed loop")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--core", type=int, default=None, help="the core to pin to (default: the last usable)")
    p.add_argument("--kwargs", default="{}", help="scenario arguments, a JSON object (default: none)")
    p.add_argument("--note", default="", help="recorded in the results file (e.g. the machine's load)")
    p.add_argument("--json", default=None, help="results file to write")
    # child modes
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--scenario", help=argparse.SUPPRESS)
    p.add_argument("--list", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.list is not None:
        return list_ids(args.list)
    if args.core is None:
        args.core = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    if args.child:
        return child(args)

    meta = _results.metadata("speed_vs_commit.py", argv)
    ref_sha = subprocess.run(["git", "rev-parse", args.ref], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
    new_sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.strip())
    tmp = Path(tempfile.mkdtemp(prefix="speed_vs_commit_")) / "ref"
    subprocess.run(["git", "worktree", "add", "--detach", str(tmp), ref_sha], cwd=ROOT, check=True,
                   capture_output=True)
    try:
        trees = {"new": ROOT, "ref": tmp}
        scenarios = args.scenarios
        if scenarios is None:
            in_ref = set(_ids(tmp))
            scenarios = [i for i in _ids(ROOT) if i in in_ref]
        common = ["--child", "--core", str(args.core), "--seconds", str(args.seconds), "--kwargs", args.kwargs,
                  "--warmup", str(args.warmup), "--worlds", *map(str, args.worlds)]
        figures: dict = {}
        for rnd in range(args.rounds):
            order = ["new", "ref"] if rnd % 2 == 0 else ["ref", "new"]
            for sc in scenarios:
                for tree in order:
                    for line in _run_child(trees[tree], [*common, "--scenario", sc]).strip().splitlines():
                        r = json.loads(line)
                        cell = figures.setdefault((sc, r["worlds"]), {"agents": r["agents"]})
                        for what in ("step", "kernels", "step_wall", "kernels_wall"):
                            cell.setdefault(f"{tree}_{what}", []).append(r[what])
            print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tmp)], cwd=ROOT, capture_output=True)
        shutil.rmtree(tmp.parent, ignore_errors=True)

    rows = []
    head = (f"{'scenario':<18} {'worlds':>6} | {'step ref':>9} {'step new':>9} {'new/ref':>7} {'range':>11} | "
            f"{'kern ref':>9} {'kern new':>9} {'new/ref':>7} {'range':>11}")
    print(f"env-steps per CPU second, medians of {args.rounds} interleaved rounds, one pinned core "
          f"(ref {args.ref} = {ref_sha[:7]}, new {new_sha[:7]}{' + changes' if dirty else ''})")
    print(head)
    print("-" * len(head))
    for (sc, E), cell in figures.items():
        row = {"scenario": sc, "worlds": E, "agents": cell["agents"]}
        line = f"{sc:<18} {E:>6} |"
        for what in ("step", "kernels"):
            ref, new = cell[f"ref_{what}"], cell[f"new_{what}"]
            m_ref, m_new = statistics.median(ref), statistics.median(new)
            ratios = [n / r for n, r in zip(new, ref)]
            row[what] = {"ref_median": m_ref, "new_median": m_new, "ratio": m_new / m_ref,
                         "ratio_min": min(ratios), "ratio_max": max(ratios), "ref_rounds": ref, "new_rounds": new,
                         "ref_rounds_wall": cell[f"ref_{what}_wall"], "new_rounds_wall": cell[f"new_{what}_wall"]}
            line += (f" {fmt(m_ref):>9} {fmt(m_new):>9} {m_new / m_ref:>7.3f} "
                     f"{min(ratios):.2f}-{max(ratios):.2f} |")
        rows.append(row)
        print(line.rstrip(" |"))
    if args.json:
        _results.write(args.json, {"ref": args.ref, "ref_commit": ref_sha, "new_commit": new_sha,
                                   "new_uncommitted_changes": dirty, "rounds": args.rounds,
                                   "pinned_core": args.core, "kwargs": json.loads(args.kwargs), "note": args.note, "rows": rows}, meta)


if __name__ == "__main__":
    main()
