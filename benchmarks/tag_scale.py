"""Tag-v0 at scale: agent-steps/s and cost per agent-step from 10 to 1000 agents per world.

What is measured
----------------
``Tag-v0`` with WarpDrive's training preset (k = 10 nearest-agent observations, episodes of 500
steps, SAME_STEP auto-reset) stepped with uniformly random MultiDiscrete actions drawn by torch
inside the timed loop, for every combination of

* worlds ``{64, 256, 2000}`` (``--worlds``) and
* agents per world ``{10, 100, 1000}`` (``--agents``): 10 % taggers (at least 1), the rest
  runners, and a square grown with the agent count so the density stays the preset's
  (110 agents on 20 x 20: ``grid_length = 20 * sqrt(A / 110)``).

Reported: env-steps/s (world steps), agent-steps/s (env-steps/s x agents, dead runners
included, as WarpDrive counts) and the cost per agent-step in ns; the ratio of that cost at
the largest agent count to the cost at 100 agents shows how flat it stays (the neighbour
search is a per-world cell grid, so it should stay within a small factor).  A PNG plot of cost
per agent-step against agents per world is written to ``--plot`` (matplotlib).

Combinations whose estimated memory exceeds ``--max-mem-gb`` (default: half the available
memory, at most 8 GB) or whose estimated run time exceeds ``--budget-s`` are skipped and
listed as such; a worker that runs past the budget is stopped and reported.

Peer comparison: VMAS and JaxMARL have no WarpDrive Tag; their closest scenario is MPE
``simple_tag`` (different rules and observations — the comparison is of throughput at equal
worlds x agents only), with 10 % adversaries, 2 obstacles, random discrete actions.  Both
scale badly with the agent count here (VMAS ``simple_tag`` 64 worlds x 100 agents: ~2 s per step;
x 1000 agents: ~230 s per step; JaxMARL compiles a program that grows with the agent count:
~90 s at 100 agents), so peers are measured up to ``--peer-max-agents`` (default 100; 10 with
``--quick``) and the comparison is made at the largest size they handle.  Peers run in their own
virtual environments, installed and reused exactly as ``benchmarks/env_throughput.py`` does
(its helpers are imported).

Timing protocol (shared with env_throughput.py): every measurement runs in its own subprocess,
pinned to one core with one thread (``--cores N`` gives it N cores, and Tag N CPU shards);
two warm-up calls, one calibration call sizing the repeat to ``--target-s``, three timed
repeats, median reported.

Usage
-----
    python benchmarks/tag_scale.py                   # full grid + peers (~10-15 minutes)
    python benchmarks/tag_scale.py --quick           # 64/256 worlds, VMAS/JaxMARL at 10 agents
    python benchmarks/tag_scale.py --worlds 64 --agents 100,1000 --peers "" --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)
import env_throughput as et  # noqa: E402  (stdlib-only at import: also runs in the peer venvs)

OURS = "war-envs"
PEERS = ("vmas", "jaxmarl")
DEFAULT_WORLDS = (64, 256, 2000)
QUICK_WORLDS = (64, 256)
DEFAULT_AGENTS = (10, 100, 1000)
EPISODE_LEN = 500
K_NEAREST = 10
# float32 Tag-v0 bytes per agent: obs + final obs (7k + 1 floats each), neighbour scratch,
# state, flags, metrics; plus torch actions.  Measured RSS per agent is below this.
BYTES_PER_AGENT = 2 * (7 * K_NEAREST + 1) * 4 + K_NEAREST * 8 + 160
# conservative single-core cost used to decide whether a combination fits the time budget
EST_NS_PER_AGENT_STEP = 2500.0
# calls made per measurement: 2 warm-up + 1 calibration + 3 repeats of >= 1 call
MIN_CALLS = 6


def tag_config(agents: int) -> dict:
    """WarpDrive's training preset with ``agents`` agents (10 % taggers) at its density."""
    taggers = max(1, agents // 10)
    return {"preset": "warpdrive_training", "num_taggers": taggers, "num_runners": agents - taggers,
            "grid_length": 20.0 * math.sqrt(agents / 110.0)}


# ---------------------------------------------------------------------------
# Worker side (runs in a subprocess; peers run it under their own venv's python)
# ---------------------------------------------------------------------------


def _bench_ours(worlds: int, agents: int, threads: int):
    import torch

    import war_envs

    env = war_envs.make("Tag-v0", num_envs=worlds, device="cpu", seed=0, num_threads=threads,
                        **tag_config(agents))
    env.reset()
    gen = torch.Generator().manual_seed(0)
    groups = [(g, spec.n_agents, [int(n) for n in spec.action_space.nvec]) for g, spec in env.groups.items()]

    def run(calls):
        for _ in range(calls):
            actions = {}
            for g, n, nvec in groups:
                acc = torch.randint(0, nvec[0], (worlds, n, 1), dtype=torch.int32, generator=gen)
                turn = torch.randint(0, nvec[1], (worlds, n, 1), dtype=torch.int32, generator=gen)
                actions[g] = torch.cat([acc, turn], dim=2)
            env.step(actions)

    return env.num_agents, run, 1


def _bench_vmas(worlds: int, agents: int, threads: int):
    import torch
    import vmas

    adversaries = max(1, agents // 10)
    env = vmas.make_env("simple_tag", num_envs=worlds, device="cpu", continuous_actions=False,
                        max_steps=EPISODE_LEN, seed=0, num_good_agents=agents - adversaries,
                        num_adversaries=adversaries, num_landmarks=2)
    env.reset()
    n_actions = [int(space.n) for space in env.action_space]
    gen = torch.Generator().manual_seed(0)

    def run(calls):
        for _ in range(calls):
            _, _, dones, _ = env.step([torch.randint(0, n, (worlds,), generator=gen) for n in n_actions])
            if dones.any():
                if dones.all():
                    env.reset()
                else:
                    for i in dones.nonzero().flatten().tolist():
                        env.reset_at(i)

    return env.n_agents, run, 1


def _bench_jaxmarl(worlds: int, agents: int, threads: int):
    import jaxmarl

    adversaries = max(1, agents // 10)
    env = jaxmarl.make("MPE_simple_tag_v3", num_good_agents=agents - adversaries,
                       num_adversaries=adversaries, num_obs=2, max_steps=EPISODE_LEN)
    chunk = 10
    return env.num_agents, et.jaxmarl_runner(env, worlds, chunk), chunk


BENCHES = {OURS: _bench_ours, "vmas": _bench_vmas, "jaxmarl": _bench_jaxmarl}


def worker_main(cfg: dict) -> None:
    result_fd = os.dup(1)
    os.dup2(2, 1)  # libraries' prints go to stderr; stdout carries the result line only
    if cfg["cpus"] is not None:
        os.sched_setaffinity(0, cfg["cpus"])
    threads = cfg["threads"] or 1
    if cfg["threads"] is not None:
        et._limit_threads(cfg["threads"])
        if cfg["framework"] in (OURS, "vmas"):
            import torch

            torch.set_num_threads(cfg["threads"])
    row = {"framework": cfg["framework"], "worlds": cfg["worlds"], "agents": cfg["agents"]}
    try:
        t0 = time.perf_counter()
        agents, run, steps_per_call = BENCHES[cfg["framework"]](cfg["worlds"], cfg["agents"], threads)
        row["setup_s"] = round(time.perf_counter() - t0, 3)
        row.update(et._measure(run, steps_per_call, cfg["worlds"], cfg["target_s"]))
        row["agent_steps_per_s"] = row["env_steps_per_s"] * agents
        import resource

        row["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
    row["version"] = et._framework_version(cfg["framework"]) if cfg["framework"] != OURS else \
        et._framework_version(OURS)
    os.write(result_fd, (json.dumps(row) + "\n").encode())
    os.close(result_fd)


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------


def available_memory_gb() -> float:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 8.0


def run_worker(python: str, cfg: dict, timeout_s: float) -> dict:
    cmd = [python, os.path.abspath(__file__), "--_worker", json.dumps(cfg)]
    et.log(f"measuring {cfg['framework']} worlds={cfg['worlds']} agents={cfg['agents']} ...")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"stopped: ran past the {timeout_s:.0f} s budget"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"worker exited with code {proc.returncode}"}
    row = json.loads(lines[-1])
    rate = row.get("agent_steps_per_s")
    et.log(f"  {et.fmt_rate(rate)} agent-steps/s in {time.perf_counter() - t0:.0f} s" if rate else
           f"  failed: {row.get('error')}")
    return row


def record(framework, worlds, agents, **extra) -> dict:
    base = {"framework": framework, "worlds": worlds, "agents": agents, "env_steps_per_s": None,
            "agent_steps_per_s": None, "ns_per_agent_step": None, "note": None, "error": None}
    base.update(extra)
    if base["agent_steps_per_s"]:
        base["ns_per_agent_step"] = 1e9 / base["agent_steps_per_s"]
    return base


def collect(args) -> list[dict]:
    cpus, threads = et.pick_cpus(args)
    base = {"cpus": cpus, "threads": threads, "target_s": args.target_s}
    mem_budget = args.max_mem_gb
    records = []
    for worlds in args.worlds:
        for agents in args.agents:
            est_gb = worlds * agents * BYTES_PER_AGENT / 2**30
            est_s = worlds * agents * EST_NS_PER_AGENT_STEP * 1e-9 * MIN_CALLS / (threads or 1)
            if est_gb > mem_budget:
                records.append(record(OURS, worlds, agents, note=f"skipped: ~{est_gb:.1f} GB > memory budget "
                                                                  f"{mem_budget:.1f} GB"))
                continue
            if est_s > args.budget_s:
                records.append(record(OURS, worlds, agents, note=f"skipped: ~{est_s:.0f} s > time budget "
                                                                  f"{args.budget_s:.0f} s"))
                continue
            cfg = dict(base, framework=OURS, worlds=worlds, agents=agents)
            row = run_worker(sys.executable, cfg, timeout_s=args.budget_s + 120)
            records.append(record(OURS, worlds, agents, **{k: row.get(k) for k in (
                "env_steps_per_s", "agent_steps_per_s", "setup_s", "warmup_s", "max_rss_mb",
                "version", "error")}))

    peer_worlds = min(args.worlds)
    root = et.venv_root(args)
    for peer in args.peers:
        python, why = et.ensure_peer_venv(peer, root, install=not args.no_install)
        for agents in args.agents:
            if python is None:
                records.append(record(peer, peer_worlds, agents, error=why))
                continue
            if agents > args.peer_max_agents:
                records.append(record(peer, peer_worlds, agents,
                                      note=f"not run: above --peer-max-agents {args.peer_max_agents} "
                                           "(too slow here, see the module docstring)"))
                continue
            cfg = dict(base, framework=peer, worlds=peer_worlds, agents=agents)
            row = run_worker(python, cfg, timeout_s=args.budget_s + 300)
            records.append(record(peer, peer_worlds, agents, **{k: row.get(k) for k in (
                "env_steps_per_s", "agent_steps_per_s", "setup_s", "warmup_s", "max_rss_mb",
                "version", "error")}))
    ours = {(r["worlds"], r["agents"]): r for r in records if r["framework"] == OURS}
    for r in records:
        mine = ours.get((r["worlds"], r["agents"]))
        r["ours_over_peer"] = None
        if r["framework"] != OURS and r["agent_steps_per_s"] and mine and mine["agent_steps_per_s"]:
            r["ours_over_peer"] = mine["agent_steps_per_s"] / r["agent_steps_per_s"]
    return records


def flatness(records: list[dict]) -> list[dict]:
    """Cost per agent-step at the largest agent count over the cost at 100 agents, per worlds."""
    out = []
    mine = [r for r in records if r["framework"] == OURS and r["ns_per_agent_step"]]
    for worlds in sorted({r["worlds"] for r in mine}):
        rows = {r["agents"]: r["ns_per_agent_step"] for r in mine if r["worlds"] == worlds}
        if 100 in rows and max(rows) > 100:
            top = max(rows)
            out.append({"worlds": worlds, "agents": top, "ratio_vs_100": rows[top] / rows[100]})
    return out


def print_tables(records: list[dict], args) -> None:
    cpus, threads = et.pick_cpus(args)
    how = "unpinned" if cpus is None else f"{threads} thread(s) on cpu {','.join(map(str, cpus))}"
    print(f"\nTag-v0 scale: {how}; WarpDrive training preset (k={K_NEAREST}, 10 % taggers, constant "
          f"density), {EPISODE_LEN}-step episodes, random actions; median of {et.REPEATS} x "
          f"~{args.target_s:g} s\n")
    headers = ["framework", "worlds", "agents", "env-steps/s", "agent-steps/s", "ns/agent-step", "ours ×", "note"]
    table = []
    for r in records:
        note = r["error"] or r["note"] or ""
        table.append([r["framework"] + ("" if r["framework"] == OURS else " (simple_tag)"), str(r["worlds"]),
                      str(r["agents"]), et.fmt_rate(r["env_steps_per_s"]), et.fmt_rate(r["agent_steps_per_s"]),
                      f"{r['ns_per_agent_step']:.0f}" if r["ns_per_agent_step"] else "–",
                      et.fmt_ratio(r.get("ours_over_peer")), note if len(note) <= 80 else note[:77] + "..."])
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(headers)]
    right = {1, 2, 3, 4, 5, 6}

    def line(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    previous = None
    for r, row in zip(records, table):
        key = (r["framework"], r["worlds"])
        if previous is not None and key != previous:
            print()
        previous = key
        print(line(row))
    flat = flatness(records)
    if flat:
        print()
        for f in flat:
            verdict = "within 3x" if f["ratio_vs_100"] <= 3 else "MORE than 3x"
            print(f"cost per agent-step, {f['worlds']} worlds: {f['agents']} agents / 100 agents = "
                  f"{f['ratio_vs_100']:.2f} ({verdict})")
    peers = [r for r in records if r["framework"] != OURS and r.get("ours_over_peer")]
    if peers:
        best = {}
        for r in peers:
            if r["framework"] not in best or r["agents"] > best[r["framework"]]["agents"]:
                best[r["framework"]] = r
        print()
        for fw, r in best.items():
            print(f"largest size measured for {fw}: {r['worlds']} worlds x {r['agents']} agents -> "
                  f"Tag-v0 is {et.fmt_ratio(r['ours_over_peer'])} its agent-steps/s (simple_tag)")
    versions = {r["framework"]: r.get("version") for r in records if r.get("version")}
    if versions:
        print("\n" + "\n".join(f"{fw}: {v}" for fw, v in versions.items()))


def plot(records: list[dict], path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        et.log("matplotlib is not installed: no plot")
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    mine = [r for r in records if r["framework"] == OURS and r["ns_per_agent_step"]]
    for worlds in sorted({r["worlds"] for r in mine}):
        rows = sorted((r for r in mine if r["worlds"] == worlds), key=lambda r: r["agents"])
        ax.plot([r["agents"] for r in rows], [r["ns_per_agent_step"] for r in rows], "o-",
                label=f"Tag-v0, {worlds} worlds")
    markers = {"vmas": "s--", "jaxmarl": "^--"}
    for peer in PEERS:
        rows = sorted((r for r in records if r["framework"] == peer and r["ns_per_agent_step"]),
                      key=lambda r: r["agents"])
        if rows:
            ax.plot([r["agents"] for r in rows], [r["ns_per_agent_step"] for r in rows], markers[peer],
                    label=f"{peer} simple_tag, {rows[0]['worlds']} worlds")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("agents per world")
    ax.set_ylabel("wall time per agent-step (ns, one pinned core)")
    ax.set_title("Cost per agent-step vs agents per world")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def int_list(text: str) -> list[int]:
    return [int(t) for t in et.comma_list(text)]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="64/256 worlds, peers at 10 agents, 0.25 s repeats")
    p.add_argument("--json", metavar="PATH", help="also write the rows as a JSON list of records")
    p.add_argument("--plot", metavar="PATH", help="also write a PNG plot of cost per agent-step to PATH")
    p.add_argument("--worlds", type=int_list, help="comma-separated world counts (default 64,256,2000)")
    p.add_argument("--agents", type=int_list, default=list(DEFAULT_AGENTS),
                   help="comma-separated agents per world (default 10,100,1000)")
    p.add_argument("--peers", type=et.comma_list, default=list(PEERS), help="peers, may be empty")
    p.add_argument("--peer-max-agents", type=int, help="largest agent count to run peers at "
                                                       "(default 100; 10 with --quick)")
    p.add_argument("--max-mem-gb", type=float, help="skip combinations estimated above this "
                                                    "(default: half the available memory, at most 8)")
    p.add_argument("--budget-s", type=float, help="time budget per combination in seconds "
                                                  "(default 240; 60 with --quick)")
    p.add_argument("--no-install", action="store_true", help="skip missing peers instead of installing them")
    p.add_argument("--venv-dir", help="where peer venvs live (as env_throughput.py)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="pin each measurement to one core with one thread (default on)")
    p.add_argument("--cores", type=int, help="give each measurement N cores (and Tag N shards)")
    p.add_argument("--target-s", type=float, help="seconds per timed repeat (default 1.5; 0.25 with --quick)")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._worker:
        return args
    if args.worlds is None:
        args.worlds = list(QUICK_WORLDS if args.quick else DEFAULT_WORLDS)
    if args.target_s is None:
        args.target_s = 0.25 if args.quick else 1.5
    if args.peer_max_agents is None:
        args.peer_max_agents = 10 if args.quick else 100
    if args.budget_s is None:
        args.budget_s = 60.0 if args.quick else 240.0
    if args.max_mem_gb is None:
        args.max_mem_gb = min(8.0, available_memory_gb() / 2)
    for peer in args.peers:
        if peer not in PEERS:
            p.error(f"unknown peer {peer!r} (choose from {', '.join(PEERS)})")
    if args.cores is not None and args.cores < 1:
        p.error("--cores must be >= 1")
    if any(a < 2 for a in args.agents) or any(w < 1 for w in args.worlds):
        p.error("--agents must be >= 2 and --worlds >= 1")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return
    records = collect(args)
    print_tables(records, args)
    path = plot(records, args.plot) if args.plot else None
    if path:
        print(f"\nplot: {path}")
    if args.json:
        _results.write(args.json, records, _results.metadata("tag_scale.py", argv))
        et.log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
