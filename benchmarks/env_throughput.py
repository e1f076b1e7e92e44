"""Environment throughput: war-envs against mpe2, VMAS and JaxMARL.

What is measured
----------------
For each scenario (``Spread-v0``, ``PredatorPrey-v0``) and each number of
parallel worlds (default 1, 64, 1024, 8192) we step the environment with
uniformly random discrete actions and report

* env-steps/s   -- world steps per second (one step of one world), and
* agent-steps/s -- env-steps/s x agents per world (3 for Spread, 4 for
  PredatorPrey),

plus the ratio of our env-steps/s to each peer's at the same size.  The peers
run their equivalent scenarios with the same settings:

==============  ===============================  =======================  ======================
ours            mpe2 (PettingZoo parallel API)   vmas (torch, CPU)        jaxmarl (jax, CPU)
==============  ===============================  =======================  ======================
Spread-v0       simple_spread_v3, N=3            "simple_spread", 3 ag.   "MPE_simple_spread_v3"
PredatorPrey-v0 simple_tag_v3 (3 adv., 1 good)   "simple_tag"             "MPE_simple_tag_v3"
==============  ===============================  =======================  ======================

Every framework uses discrete actions, 25-step episodes and automatic reset,
and draws its own random actions inside the timed loop:

* war-envs: ``torch.randint`` per agent group (one reused ``torch.Generator``),
  auto-reset is built into ``env.step``.
* mpe2: one env object per world stepped in a Python loop (so only at small
  sizes, larger sizes are reported as "-"), actions from ``np.random``,
  ``env.reset()`` when the episode ends.
* vmas: ``torch.randint`` over each agent's own action space (VMAS' discrete
  2-D action space has 9 actions, not 5), ``env.reset()`` when all worlds are
  done (they are in lock-step: 25-step episodes, no early termination) and
  ``env.reset_at(i)`` otherwise.
* jaxmarl: ``jax.jit`` + ``jax.vmap`` over worlds + ``jax.lax.scan`` over a
  chunk of steps, actions from ``jax.random``; ``env.step`` auto-resets.  The
  observations and rewards are folded into a checksum carried through the scan
  so XLA cannot dead-code-eliminate them (every other framework materialises
  them too).  Compile time is excluded.

Timing protocol: each measurement first runs two warm-up calls (JIT / kernel
compilation, caches, first resets), then one calibration call that sizes the
measurement to about ``--target-s`` seconds (1.5 s; 0.25 s with ``--quick``),
then three timed repeats with ``time.perf_counter``; the median is reported.
One "call" is one 25-step episode for the Python-loop frameworks and one
scanned chunk of 25..1000 steps for jaxmarl.  ``--quick`` measures 1 and 1024
worlds only (mpe2 at 1 world) for 0.25 s per repeat, about a minute in all.

Isolation and pinning
---------------------
Each framework is measured in its own subprocess (so torch / XLA / OpenMP
thread pools cannot interfere), which prints exactly one JSON line with its
results on stdout (anything the libraries print goes to stderr).  By default
(``--pin``) each subprocess restricts itself with ``os.sched_setaffinity`` to a
single core (the last one this process may use) and sets every thread pool to
one thread (``OMP/MKL/OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``,
``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false``).  This is the protocol under
which the reference figures were measured (8192 worlds, agent-steps/s: VMAS
about 2.7 M, JaxMARL about 1.16 M; mpe2 about 11 k).  ``--cores N`` instead
gives every framework the first N cores and N threads; ``--no-pin`` leaves
affinity and thread counts alone.

Peers in their own virtual environments
---------------------------------------
vmas and jaxmarl are never installed into the project's environment.  If
missing, they are installed (``python -m venv`` + ``pip``) into
``<venv-dir>/<peer>``, where ``<venv-dir>`` is ``--venv-dir``, else
``$WAR_ENVS_BENCH_VENVS``, else ``~/.cache/war-envs/bench-venvs``; the pip log
is kept next to it as ``<peer>-install.log``.  The vmas venv gets
``torch==2.13.0`` (the CPU build, same as the project's) before ``vmas`` so pip
does not pull a multi-GB CUDA torch.  Versions are pinned to the ones this
benchmark was validated with (see ``PEER_REQUIREMENTS``).  JaxMARL's compiled
programs are kept in ``<venv-dir>/jaxmarl-xla-cache`` (JAX's persistent
compilation cache), which only shortens the warm-up of re-runs.  mpe2 is a test
dependency of the project and runs under the current interpreter.  With
``--no-install`` a missing peer is skipped; a failed install turns that peer's
rows into an error note and the rest still runs.

Usage
-----
    python benchmarks/env_throughput.py                      # full run
    python benchmarks/env_throughput.py --quick              # about a minute
    python benchmarks/env_throughput.py --peers vmas --worlds 8192 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

EPISODE_LEN = 25
REPEATS = 3
WARMUP_CALLS = 2

OURS = "war-envs"
PEERS = ("mpe2", "vmas", "jaxmarl")
SCENARIOS = ("Spread-v0", "PredatorPrey-v0")
DEFAULT_WORLDS = (1, 64, 1024, 8192)
QUICK_WORLDS = (1, 1024)

# Scenario -> each peer's equivalent environment.
MPE2_ENVS = {
    "Spread-v0": ("simple_spread_v3", {"N": 3}),
    "PredatorPrey-v0": ("simple_tag_v3", {}),  # 1 good agent, 3 adversaries, 2 obstacles
}
VMAS_ENVS = {
    "Spread-v0": ("simple_spread", {"n_agents": 3}),
    "PredatorPrey-v0": ("simple_tag", {}),  # 1 good agent, 3 adversaries, 2 obstacles
}
JAXMARL_ENVS = {
    "Spread-v0": "MPE_simple_spread_v3",
    "PredatorPrey-v0": "MPE_simple_tag_v3",
}

# Peer venvs: pip install steps, run in order.  torch first for vmas: an
# unpinned torch would resolve to a multi-GB CUDA build.
PEER_REQUIREMENTS = {
    "vmas": [["torch==2.13.0"], ["vmas==1.5.2"]],
    "jaxmarl": [["jax==0.10.2", "jaxlib==0.10.2", "jaxmarl==0.2.0"]],
}
PEER_IMPORT_CHECK = {"vmas": "import torch, vmas", "jaxmarl": "import jax, jaxmarl"}
INSTALL_MARKER = ".war-envs-bench-ok"

# mpe2 is one Python env object per world; beyond this it is reported as "-".
MPE2_MAX_WORLDS = 64
MPE2_MAX_WORLDS_QUICK = 1


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Worker side: runs inside the per-framework subprocess.  Only the standard
# library is imported at module level so the same file runs in the peer venvs.
# ---------------------------------------------------------------------------


def _limit_threads(threads: int) -> None:
    """Size the native thread pools; must run before torch / jax are imported."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()


def _measure(run, steps_per_call: int, worlds: int, target_s: float) -> dict:
    """Warm up, size the measurement to ~target_s, time REPEATS runs.

    ``run(calls)`` must advance every one of the ``worlds`` worlds by
    ``calls * steps_per_call`` steps and return only once the work is finished.
    """
    t0 = time.perf_counter()
    for _ in range(WARMUP_CALLS):
        run(1)
    warmup_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    run(1)
    calls = max(1, round(target_s / (time.perf_counter() - t0)))

    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        run(calls)
        times.append(time.perf_counter() - t0)
    steps = calls * steps_per_call * worlds  # env-steps (world steps)
    return {
        "env_steps_per_repeat": steps,
        "seconds_per_repeat": [round(t, 4) for t in times],
        "repeat_env_steps_per_s": [steps / t for t in times],
        "env_steps_per_s": steps / statistics.median(times),
        "warmup_s": round(warmup_s, 3),
    }


def _bench_ours(scenario: str, worlds: int):
    import torch
    import war_envs

    env = war_envs.make(scenario, num_envs=worlds, device="cpu", seed=0)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    groups = [(g, spec.n_agents, int(spec.action_space.n)) for g, spec in env.groups.items()]

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            actions = {
                g: torch.randint(0, n_act, (worlds, n), dtype=torch.int32, generator=gen)
                for g, n, n_act in groups
            }
            env.step(actions)

    return env.num_agents, run, EPISODE_LEN


def _bench_mpe2(scenario: str, worlds: int):
    import importlib

    import numpy as np

    module_name, kwargs = MPE2_ENVS[scenario]
    module = importlib.import_module(f"mpe2.{module_name}")
    envs = []
    for i in range(worlds):
        env = module.parallel_env(max_cycles=EPISODE_LEN, continuous_actions=False, **kwargs)
        env.reset(seed=i)
        envs.append(env)
    agents = list(envs[0].possible_agents)
    n_actions = np.array([envs[0].action_space(a).n for a in agents])
    rng = np.random.default_rng(0)

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            for env in envs:
                actions = dict(zip(env.agents, rng.integers(0, n_actions).tolist()))
                env.step(actions)
                if not env.agents:  # episode over (truncated at max_cycles)
                    env.reset()

    return len(agents), run, EPISODE_LEN


def _bench_vmas(scenario: str, worlds: int):
    import torch
    import vmas

    name, kwargs = VMAS_ENVS[scenario]
    env = vmas.make_env(
        name,
        num_envs=worlds,
        device="cpu",
        continuous_actions=False,
        max_steps=EPISODE_LEN,
        seed=0,
        **kwargs,
    )
    env.reset()
    n_actions = [int(space.n) for space in env.action_space]
    gen = torch.Generator().manual_seed(0)

    def run(calls):
        for _ in range(calls * EPISODE_LEN):
            actions = [torch.randint(0, n, (worlds,), generator=gen) for n in n_actions]
            _, _, dones, _ = env.step(actions)
            if dones.any():  # VMAS has no built-in auto-reset
                if dones.all():
                    env.reset()
                else:
                    for i in dones.nonzero().flatten().tolist():
                        env.reset_at(i)

    return env.n_agents, run, EPISODE_LEN


def _bench_jaxmarl(scenario: str, worlds: int):
    import jaxmarl

    env = jaxmarl.make(JAXMARL_ENVS[scenario], max_steps=EPISODE_LEN)
    # Steps per jitted call: long enough that dispatch overhead is negligible
    # at small sizes, short enough that calibration stays fine-grained.
    chunk_steps = EPISODE_LEN * max(1, min(40, 1024 // worlds))
    return env.num_agents, jaxmarl_runner(env, worlds, chunk_steps), chunk_steps


def jaxmarl_runner(env, worlds: int, chunk_steps: int):
    """``run(calls)`` for a JaxMARL env: ``calls`` jitted chunks of ``chunk_steps`` vmapped steps
    (``lax.scan``), random actions from ``jax.random``, the outputs consumed into a checksum so
    XLA cannot drop them (also used by tag_scale.py)."""
    import jax
    import jax.numpy as jnp

    agents = list(env.agents)
    n_actions = [int(env.action_space(a).n) for a in agents]
    step = jax.vmap(env.step)

    def one_step(carry, _):
        key, state, checksum = carry
        key, k_act, k_step = jax.random.split(key, 3)
        act_keys = jax.random.split(k_act, len(agents))
        actions = {
            a: jax.random.randint(k, (worlds,), 0, n)
            for a, k, n in zip(agents, act_keys, n_actions)
        }
        obs, state, rew, _, _ = step(jax.random.split(k_step, worlds), state, actions)
        for a in agents:
            checksum = checksum + jnp.sum(obs[a]) + jnp.sum(rew[a])
        return (key, state, checksum), None

    @jax.jit
    def run_chunk(carry):
        carry, _ = jax.lax.scan(one_step, carry, None, length=chunk_steps)
        return carry

    key, k_reset = jax.random.split(jax.random.PRNGKey(0))
    _, state = jax.vmap(env.reset)(jax.random.split(k_reset, worlds))
    carry = [(key, state, jnp.zeros((), jnp.float32))]

    def run(calls):
        c = carry[0]
        for _ in range(calls):
            c = run_chunk(c)
        jax.block_until_ready(c)
        carry[0] = c

    return run


BENCHES = {OURS: _bench_ours, "mpe2": _bench_mpe2, "vmas": _bench_vmas, "jaxmarl": _bench_jaxmarl}


def _framework_version(framework: str) -> str:
    from importlib import metadata

    dists = {
        OURS: ["war-envs", "warp-lang", "torch"],
        "mpe2": ["mpe2", "pettingzoo"],
        "vmas": ["vmas", "torch"],
        "jaxmarl": ["jaxmarl", "jax"],
    }[framework]
    parts = []
    for dist in dists:
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} ?")
    return ", ".join(parts)


def worker_main(cfg: dict) -> None:
    """Measure one framework on every (scenario, worlds); print one JSON line."""
    # Keep stdout for the result line alone: whatever the libraries print
    # (jaxmarl prints on import) goes to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)

    framework = cfg["framework"]
    if cfg["cpus"] is not None:
        os.sched_setaffinity(0, cfg["cpus"])
    if cfg["threads"] is not None:
        _limit_threads(cfg["threads"])
        if framework in (OURS, "vmas"):
            import torch

            torch.set_num_threads(cfg["threads"])

    rows = []
    for scenario in cfg["scenarios"]:
        for worlds in cfg["worlds"]:
            row = {"scenario": scenario, "worlds": worlds}
            if framework == "mpe2" and worlds > cfg["mpe2_max_worlds"]:
                limit = cfg["mpe2_max_worlds"]
                row["note"] = f"not run: Python loop over env objects, > {limit} worlds"
                rows.append(row)
                continue
            try:
                t0 = time.perf_counter()
                agents, run, steps_per_call = BENCHES[framework](scenario, worlds)
                row["agents"] = agents
                row["setup_s"] = round(time.perf_counter() - t0, 3)
                row.update(_measure(run, steps_per_call, worlds, cfg["target_s"]))
                log(
                    f"[{framework}] {scenario} worlds={worlds}: "
                    f"{fmt_rate(row['env_steps_per_s'])} env-steps/s"
                )
            except Exception as exc:  # keep measuring the other sizes
                row["error"] = f"{type(exc).__name__}: {exc}"
                log(f"[{framework}] {scenario} worlds={worlds}: FAILED {row['error']}")
            finally:
                run = None  # free the env before building the next one
            rows.append(row)

    result = {
        "framework": framework,
        "version": _framework_version(framework),
        "cpus": sorted(os.sched_getaffinity(0)),
        "threads": cfg["threads"],
        "rows": rows,
    }
    os.write(result_fd, (json.dumps(result) + "\n").encode())
    os.close(result_fd)


# ---------------------------------------------------------------------------
# Parent side: peer venvs, launching workers, the table.
# ---------------------------------------------------------------------------


def venv_root(args) -> Path:
    if args.venv_dir:
        return Path(args.venv_dir).expanduser()
    if os.environ.get("WAR_ENVS_BENCH_VENVS"):
        return Path(os.environ["WAR_ENVS_BENCH_VENVS"]).expanduser()
    return Path("~/.cache/war-envs/bench-venvs").expanduser()


def ensure_peer_venv(peer: str, root: Path, install: bool) -> tuple[str | None, str | None]:
    """Return (python executable, None) or (None, reason it is unavailable)."""
    venv = root / peer
    python = venv / "bin" / "python"
    marker = venv / INSTALL_MARKER
    spec = json.dumps(PEER_REQUIREMENTS[peer])
    if python.exists() and marker.exists() and marker.read_text() == spec:
        return str(python), None
    if not install:
        return None, f"not installed in {venv} (--no-install)"

    root.mkdir(parents=True, exist_ok=True)
    log_path = root / f"{peer}-install.log"
    log(f"installing {peer} into {venv} (log: {log_path}) ...")
    if venv.exists():
        shutil.rmtree(venv)  # partial or outdated install
    steps = [[sys.executable, "-m", "venv", str(venv)]]
    steps += [[str(python), "-m", "pip", "install", *pkgs] for pkgs in PEER_REQUIREMENTS[peer]]
    steps.append([str(python), "-c", PEER_IMPORT_CHECK[peer]])
    t0 = time.perf_counter()
    with open(log_path, "w") as logf:
        for cmd in steps:
            logf.write(f"$ {' '.join(cmd)}\n")
            logf.flush()
            proc = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT)
            if proc.returncode != 0:
                lines = log_path.read_text().strip().splitlines()
                errors = [ln for ln in lines if ln.startswith("ERROR:")] or lines[-1:] or ["?"]
                step = " ".join(cmd[-2:])
                reason = f"install failed at `{step}`: {errors[0][:160]} (see {log_path})"
                log(f"  {reason}")
                return None, reason
    marker.write_text(spec)
    log(f"  installed {peer} in {time.perf_counter() - t0:.0f} s")
    return str(python), None


def pick_cpus(args) -> tuple[list[int] | None, int | None]:
    """CPUs each worker is pinned to and its thread count (None: leave alone)."""
    allowed = sorted(os.sched_getaffinity(0))
    if args.cores:
        if args.cores > len(allowed):
            sys.exit(f"--cores {args.cores}: only {len(allowed)} cores available")
        return allowed[: args.cores], args.cores
    if args.pin:
        return allowed[-1:], 1
    return None, None


def run_worker(framework: str, python: str, cfg: dict, timeout_s: float, env: dict) -> dict:
    cfg = dict(cfg, framework=framework)
    cmd = [python, os.path.abspath(__file__), "--_worker", json.dumps(cfg)]
    log(f"measuring {framework} ...")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, text=True, timeout=timeout_s, env={**os.environ, **env}
        )
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {timeout_s:.0f} s"}
    log(f"  {framework} done in {time.perf_counter() - t0:.0f} s")
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"worker exited with code {proc.returncode}"}
    return json.loads(lines[-1])


def collect(args) -> list[dict]:
    cpus, threads = pick_cpus(args)
    cfg = {
        "scenarios": args.scenarios,
        "worlds": args.worlds,
        "target_s": args.target_s,
        "cpus": cpus,
        "threads": threads,
        "mpe2_max_worlds": MPE2_MAX_WORLDS_QUICK if args.quick else MPE2_MAX_WORLDS,
    }
    timeout_s = 900 if args.quick else 3600
    root = venv_root(args)

    records = []
    for framework in [OURS, *args.peers]:
        if framework in PEER_REQUIREMENTS:
            python, reason = ensure_peer_venv(framework, root, install=not args.no_install)
        else:
            python, reason = sys.executable, None
        env = {}
        if framework == "jaxmarl":  # persistent XLA cache: only shortens re-runs' warm-up
            env["JAX_COMPILATION_CACHE_DIR"] = str(root / "jaxmarl-xla-cache")
            env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        result = run_worker(framework, python, cfg, timeout_s, env) if python else {"error": reason}
        by_key = {(r["scenario"], r["worlds"]): r for r in result.get("rows", [])}
        for scenario in args.scenarios:
            for worlds in args.worlds:
                row = by_key.get((scenario, worlds), {})
                eps = row.get("env_steps_per_s")
                agents = row.get("agents")
                records.append(
                    {
                        "scenario": scenario,
                        "worlds": worlds,
                        "framework": framework,
                        "agents": agents,
                        "env_steps_per_s": eps,
                        "agent_steps_per_s": eps * agents if eps is not None else None,
                        "ours_over_peer": None,  # filled in below
                        "repeat_env_steps_per_s": row.get("repeat_env_steps_per_s"),
                        "env_steps_per_repeat": row.get("env_steps_per_repeat"),
                        "seconds_per_repeat": row.get("seconds_per_repeat"),
                        "setup_s": row.get("setup_s"),
                        "warmup_s": row.get("warmup_s"),
                        "version": result.get("version"),
                        "cpus": result.get("cpus", cpus),
                        "threads": threads,
                        "error": row.get("error") or result.get("error"),
                        "note": row.get("note"),
                    }
                )

    order = [OURS, *args.peers]
    records.sort(
        key=lambda r: (
            args.scenarios.index(r["scenario"]),
            r["worlds"],
            order.index(r["framework"]),
        )
    )
    ours = {
        (r["scenario"], r["worlds"]): r["env_steps_per_s"] for r in records if r["framework"] == OURS
    }
    for r in records:
        mine = ours.get((r["scenario"], r["worlds"]))
        if r["framework"] != OURS and mine and r["env_steps_per_s"]:
            r["ours_over_peer"] = mine / r["env_steps_per_s"]
    return records


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "–"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f} {suffix}"
    return f"{x:.1f}"


def fmt_ratio(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:.0f}×"


def print_table(records: list[dict], args) -> None:
    cpus, threads = pick_cpus(args)
    if cpus is None:
        how = "unpinned"
    else:
        how = f"{threads} thread(s) on cpu {','.join(map(str, cpus))}"
    print(
        f"\nEnv throughput: {how}, {EPISODE_LEN}-step episodes with auto-reset, random actions, "
        f"median of {REPEATS} x ~{args.target_s:g} s\n"
    )
    headers = ["scenario", "worlds", "framework", "env-steps/s", "agent-steps/s", "ours ×", "note"]
    table = []
    for r in records:
        note = r["error"] or r["note"] or ""
        table.append(
            [
                r["scenario"],
                str(r["worlds"]),
                r["framework"],
                fmt_rate(r["env_steps_per_s"]),
                fmt_rate(r["agent_steps_per_s"]),
                fmt_ratio(r["ours_over_peer"]),
                note if len(note) <= 90 else note[:87] + "...",
            ]
        )
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(headers)]
    right = {1, 3, 4, 5}

    def line(cells):
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    previous = None
    for r, row in zip(records, table):
        if previous is not None and (r["scenario"], r["worlds"]) != previous:
            print()
        previous = (r["scenario"], r["worlds"])
        print(line(row))
    versions = {r["framework"]: r["version"] for r in records if r["version"]}
    if versions:
        print("\n" + "\n".join(f"{fw}: {v}" for fw, v in versions.items()))


def comma_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1 and 1024 worlds, 0.25 s repeats (~1 minute)")
    p.add_argument("--json", metavar="PATH", help="also write the rows as a JSON list of records")
    p.add_argument("--worlds", type=lambda s: [int(w) for w in comma_list(s)],
                   help="comma-separated world counts (default 1,64,1024,8192)")
    p.add_argument("--scenarios", type=comma_list, default=list(SCENARIOS),
                   help=f"comma-separated scenarios (default {','.join(SCENARIOS)})")
    p.add_argument("--peers", type=comma_list, default=list(PEERS),
                   help=f"comma-separated peers, may be empty (default {','.join(PEERS)})")
    p.add_argument("--no-install", action="store_true",
                   help="skip missing peers instead of installing them")
    p.add_argument("--venv-dir", help="where peer venvs live (default $WAR_ENVS_BENCH_VENVS "
                                      "or ~/.cache/war-envs/bench-venvs)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="pin each framework's subprocess to one core with one thread (default on)")
    p.add_argument("--cores", type=int,
                   help="give every framework N cores and N threads instead of --pin")
    p.add_argument("--target-s", type=float,
                   help="seconds per timed repeat (default 1.5, 0.25 with --quick)")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args._worker:
        return args
    if args.worlds is None:
        args.worlds = list(QUICK_WORLDS if args.quick else DEFAULT_WORLDS)
    if args.target_s is None:
        args.target_s = 0.25 if args.quick else 1.5
    for s in args.scenarios:
        if s not in SCENARIOS:
            p.error(f"unknown scenario {s!r} (choose from {', '.join(SCENARIOS)})")
    for peer in args.peers:
        if peer not in PEERS:
            p.error(f"unknown peer {peer!r} (choose from {', '.join(PEERS)})")
    if args.cores is not None and args.cores < 1:
        p.error("--cores must be >= 1")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return
    records = collect(args)
    print_table(records, args)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=2) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
