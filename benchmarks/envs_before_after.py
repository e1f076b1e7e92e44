"""Before/after throughput of war-envs itself: ``env_throughput.py`` or ``vmas_throughput.py``
(our column only: no peers, no PettingZoo or validated columns) run alternately in a baseline
tree (a ``git worktree`` of the commit compared against) and in this one, ``--rounds`` times,
the order of the two trees swapped every round, and the per-scenario median of the rounds
compared: ``after / before`` env-steps/s.

    git worktree add /tmp/envs_before <commit>
    python benchmarks/envs_before_after.py --baseline-tree /tmp/envs_before --bench env \
        --rounds 3 --worlds 1024 --json benchmarks/results/env_throughput_before_after_X.json

Each run imports ``war_envs`` from its own tree (``PYTHONPATH``).  Interleaving makes the noise
of a shared machine fall on both sides alike; the ratio of medians is what to read.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parents[1]


def bench_command(bench: str, tree: pathlib.Path, worlds: str, target_s: float, scenarios: str | None,
                  out: str) -> list[str]:
    script = tree / "benchmarks" / ("env_throughput.py" if bench == "env" else "vmas_throughput.py")
    cmd = [sys.executable, str(script), "--worlds", worlds, "--target-s", str(target_s), "--json", out]
    cmd += ["--peers", "", "--no-pettingzoo", "--no-validated", "--no-install"] if bench == "env" else \
        ["--frameworks", "war-envs"]
    if scenarios:
        cmd += ["--scenarios", scenarios]
    return cmd


def run_tree(bench: str, tree: pathlib.Path, args) -> dict[tuple[str, int], float]:
    """One run in ``tree``: ``{(scenario, worlds): env-steps/s}`` of our column."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.json")
        cmd = bench_command(bench, tree, args.worlds, args.target_s, args.scenarios, out)
        env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
        subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
        records = json.load(open(out))
    return {(r["scenario"], r["worlds"]): r["env_steps_per_s"] for r in records
            if r["framework"] == "war-envs"}


def git_head(tree: pathlib.Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True).stdout.strip()


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline-tree", required=True, type=pathlib.Path)
    p.add_argument("--bench", choices=("env", "vmas"), default="env")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--worlds", default="1024")
    p.add_argument("--target-s", type=float, default=0.25)
    p.add_argument("--scenarios")
    p.add_argument("--json")
    args = p.parse_args(argv)
    trees = {"before": args.baseline_tree.resolve(), "after": HERE}
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for r in range(args.rounds):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
            runs[side].append(run_tree(args.bench, trees[side], args))
            print(f"round {r + 1}/{args.rounds}: {side} done", file=sys.stderr, flush=True)
    rows = []
    for key in sorted(runs["after"][0]):
        before = [run[key] for run in runs["before"] if key in run]
        after = [run[key] for run in runs["after"] if key in run]
        b, a = statistics.median(before), statistics.median(after)
        rows.append({"scenario": key[0], "worlds": key[1], "before_env_steps_per_s": b,
                     "after_env_steps_per_s": a, "ratio": a / b, "before_rounds": before, "after_rounds": after})
        print(f"{key[0]:28s} {key[1]:6d}  before {b:12.0f}  after {a:12.0f}  ratio {a / b:.3f}")
    result = {
        "command": " ".join(["python", "benchmarks/envs_before_after.py", *(argv or sys.argv[1:])]),
        "bench_command": " ".join(bench_command(args.bench, pathlib.Path("<tree>"), args.worlds, args.target_s,
                                                args.scenarios, "<records.json>")),
        "before_commit": git_head(trees["before"]),
        "after_commit": git_head(trees["after"]) + " + working tree",
        "rounds": args.rounds,
        "interleaved": "trees alternate every run, the order swapped every round; medians over rounds",
        "min_ratio": min(row["ratio"] for row in rows),
        "records": rows,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
