"""A uniformly random policy on SMAX-v0 and on JaxMARL 0.2.0's SMAX, per map: episode length,
ally return and win rate, and how far apart they are in standard errors.

Both sides play the heuristic enemy (JaxMARL's ``HeuristicEnemySMAX``) with discrete actions,
every ally choosing uniformly among its available actions at every step, and take the first
``--episodes-per-world`` episodes of each of ``--worlds`` worlds (a fixed number per world, so
short episodes are not over-represented):

* ours: ``war_envs.make("SMAX-v0", map_name=m, num_envs=worlds)``, actions drawn with torch from
  ``env.action_mask()`` (``war_envs.testing.random_actions``), SAME_STEP autoreset;
* JaxMARL: ``tests/smax_reference.py random_stats`` in JaxMARL's own venv (jit + vmap over the
  worlds, its auto-reset ``step``; ``jax.random.categorical`` over the available actions).

Episode length counts env steps (at most ``max_steps + 1 = 101``); the ally return is the sum of
``ally_0``'s reward over the episode (the reward is the team's, shared by every ally); an
episode is won when it ends with every enemy dead and some ally alive.  ``z`` is the difference
of the means over its standard error (Welch's for length and return, the pooled proportion's
for the win rate); ``tests/test_smax_reference.py`` asks ``|z| <= 4`` on every map.

    python benchmarks/smax_random_policy.py [--maps 3m,2s3z] [--worlds 256]
        [--episodes-per-world 8] [--quick] [--json PATH] [--reference-python PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_SCRIPT = ROOT / "tests" / "smax_reference.py"
DEFAULT_REFERENCE_PYTHON = "~/.cache/war-envs/bench-venvs/jaxmarl/bin/python"
METRICS = ("length", "ally_return", "won")
Z_LIMIT = 4.0


def reference_python(path: str | None = None) -> Path:
    """JaxMARL's python: ``path``, else ``$SMAX_REFERENCE_PYTHON``, else the default venv."""
    return Path(path or os.environ.get("SMAX_REFERENCE_PYTHON") or DEFAULT_REFERENCE_PYTHON).expanduser()


def ours(map_name: str, worlds: int, episodes_per_world: int, seed: int = 0, **config) -> dict:
    """The first ``episodes_per_world`` episodes of each world under uniformly random available
    actions: ``{"length", "ally_return", "won"}`` arrays (world-major)."""
    import torch

    import war_envs
    from war_envs.testing import random_actions

    gen = torch.Generator().manual_seed(seed)
    out = {m: [[] for _ in range(worlds)] for m in METRICS}
    with war_envs.make("SMAX-v0", map_name=map_name, num_envs=worlds, seed=seed, **config) as env:
        env.reset()
        length = torch.zeros(worlds, dtype=torch.int64)
        ret = torch.zeros(worlds, dtype=torch.float64)
        count = np.zeros(worlds, dtype=np.int64)
        while count.min() < episodes_per_world:
            _, rew, _, _, info = env.step(random_actions(env, gen))
            length += 1
            ret += rew["ally"][:, 0].double()
            term, trunc = env.world_flags()
            for w in (term | trunc).nonzero().flatten().tolist():
                if count[w] < episodes_per_world:
                    out["length"][w].append(int(length[w]))
                    out["ally_return"][w].append(float(ret[w]))
                    out["won"][w].append(float(info["won"][w]))
                    count[w] += 1
                length[w], ret[w] = 0, 0.0
    return {m: np.asarray([x for per_world in v for x in per_world], dtype=np.float64) for m, v in out.items()}


def jaxmarl(maps, worlds: int, episodes_per_world: int, seed: int = 0, python: str | None = None,
            folder: str | None = None) -> dict:
    """``{map: {"length", "ally_return", "won"}}`` from JaxMARL (one process for all maps)."""
    py = reference_python(python)
    if not py.exists():
        raise FileNotFoundError(f"JaxMARL's python {py} does not exist (bash scripts/smax_check.sh builds its venv; "
                                f"or pass --reference-python / set SMAX_REFERENCE_PYTHON)")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.setdefault("JAX_COMPILATION_CACHE_DIR", str(py.parent.parent.parent / "jaxmarl-xla-cache"))
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(folder or tmp)
        jobs = [["random_stats", "--config", json.dumps({"map_name": m}), "--seed", str(seed),
                 "--worlds", str(worlds), "--episodes-per-world", str(episodes_per_world),
                 "--out", str(where / f"{m}.npz")] for m in maps]
        (where / "jobs.json").write_text(json.dumps(jobs))
        proc = subprocess.run([str(py), str(REFERENCE_SCRIPT), "batch", str(where / "jobs.json")],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{REFERENCE_SCRIPT.name} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        out = {}
        for m in maps:
            with np.load(where / f"{m}.npz") as f:
                out[m] = {k: f[k].astype(np.float64) for k in METRICS}
                out["_versions"] = json.loads(str(f["versions"])) if "versions" in f.files else {}
        return out


def describe(x: np.ndarray) -> dict:
    return {"mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else 0.0, "count": int(x.size)}


def z_score(metric: str, a: np.ndarray, b: np.ndarray) -> float:
    """(mean a - mean b) / its standard error: Welch's, or for the win rate (0/1 values) the
    pooled proportion's; 0 when both samples are constant and equal, inf when they differ."""
    diff = float(a.mean() - b.mean())
    if metric == "won":
        p = (a.sum() + b.sum()) / (a.size + b.size)
        se = math.sqrt(p * (1 - p) * (1 / a.size + 1 / b.size))
    else:
        se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if se == 0:
        return 0.0 if diff == 0 else math.inf
    return diff / se


def compare(map_name: str, our: dict, theirs: dict) -> dict:
    """One map's record: every metric's description on both sides and its z-score."""
    record = {"map": map_name}
    for m in METRICS:
        record[m] = {"war_envs": describe(our[m]), "jaxmarl": describe(theirs[m]),
                     "z": z_score(m, our[m], theirs[m])}
    return record


def table(records) -> str:
    head = (f"{'map':<16} {'episodes':>8}  {'length ours / jaxmarl (z)':>28}  {'ally return ours / jaxmarl (z)':>32}"
            f"  {'win rate ours / jaxmarl (z)':>30}")
    lines = [head, "-" * len(head)]
    for r in records:
        cells = []
        for m, fmt in (("length", "{:.2f}"), ("ally_return", "{:.4f}"), ("won", "{:.4f}")):
            a, b, z = r[m]["war_envs"]["mean"], r[m]["jaxmarl"]["mean"], r[m]["z"]
            cells.append(f"{fmt.format(a)} / {fmt.format(b)} ({z:+.2f})")
        n = r["length"]["war_envs"]["count"]
        lines.append(f"{r['map']:<16} {n:>8}  {cells[0]:>28}  {cells[1]:>32}  {cells[2]:>30}")
    return "\n".join(lines)


def main(argv=None) -> int:
    from war_envs.scenarios.smax.maps import MAPS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--maps", help=f"comma-separated map names (default: all {len(MAPS)})")
    p.add_argument("--worlds", type=int, default=256, help="worlds per side (default 256)")
    p.add_argument("--episodes-per-world", type=int, default=8, help="episodes taken per world (default 8)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="64 worlds x 4 episodes on 3m and 2s3z")
    p.add_argument("--json", metavar="PATH", help="write the results file here")
    p.add_argument("--reference-python", help="JaxMARL's python (default $SMAX_REFERENCE_PYTHON or "
                                              f"{DEFAULT_REFERENCE_PYTHON})")
    args = p.parse_args(argv)
    meta = _results.metadata("smax_random_policy.py", argv)
    if args.quick:
        maps, worlds, per_world = ["3m", "2s3z"], 64, 4
    else:
        maps = args.maps.split(",") if args.maps else list(MAPS)
        worlds, per_world = args.worlds, args.episodes_per_world
    unknown = [m for m in maps if m not in MAPS]
    if unknown:
        p.error(f"--maps: unknown maps {unknown}; expected names from {list(MAPS)}")
    if worlds < 2 or per_world < 1:
        p.error("--worlds: expected >= 2; --episodes-per-world: expected >= 1")
    theirs = jaxmarl(maps, worlds, per_world, args.seed, args.reference_python)
    records = [compare(m, ours(m, worlds, per_world, args.seed), theirs[m]) for m in maps]
    print(table(records))
    worst = max(abs(r[m]["z"]) for r in records for m in METRICS)
    print(f"largest |z| {worst:.2f} (the reference test asks <= {Z_LIMIT:g})")
    if args.json:
        meta["jaxmarl_versions"] = theirs.get("_versions", {})
        meta["setup"] = {"worlds": worlds, "episodes_per_world": per_world, "seed": args.seed,
                         "enemy": "heuristic", "action_type": "discrete"}
        _results.write(args.json, records, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
