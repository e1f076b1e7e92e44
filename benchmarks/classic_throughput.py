"""Classic-control throughput: war-envs against Gymnasium, envpool and gymnax.

What is measured
----------------
Gymnasium's five classic-control tasks (``ENVS``: CartPole-v1, Acrobot-v1, MountainCar-v0,
MountainCarContinuous-v0, Pendulum-v1) at 1, 64, 4096 and 65536 parallel worlds (``--worlds``),
stepped with random actions and auto-reset on, in five columns:

==================  ==========================================================================
war-envs-vector     ``gym.make_vec("war_envs/<id>", num_envs=W)``: our native Gymnasium vector
                    env (numpy actions ``[W]`` int or ``[W, 1]`` float, NEXT_STEP autoreset)
war-envs-batch      ``war_envs.make(<id>, num_envs=W, num_threads=1)``, ``reset(seed=0)``, then
                    ``env.step({group: actions}, trusted=True)`` with torch tensors (``[W, 1]``
                    int32 for Discrete, ``[W, 1, 1]`` float for Box: the group's shape)
gymnasium           Gymnasium's own vector form: ``gym.make_vec(id, num_envs=W,
                    vectorization_mode="vector_entry_point")`` for CartPole-v1 (its NumPy
                    ``CartPoleVectorEnv``), ``vectorization_mode="sync"`` (``SyncVectorEnv``
                    over W ``gym.make`` envs) for the other four (``GYMNASIUM_MODES``)
envpool             ``envpool.make_gymnasium(id, num_envs=W, batch_size=W, num_threads=1,
                    thread_affinity_offset=<the pinned core>, seed=0)``, stepped synchronously
gymnax              ``gymnax.make(id)``; ``jax.jit`` of a ``jax.lax.scan`` over a chunk of
                    ``jax.vmap(env.step)`` steps (gymnax's ``step`` auto-resets), one key per
                    world per step; the observations and rewards folded into a checksum carried
                    through the scan so XLA cannot drop them; ``block_until_ready`` at the end
                    of each call, compile time excluded (warm-up)
==================  ==========================================================================

Each library's defaults: the same episode limits everywhere (``EPISODE_LIMITS``: CartPole and
Acrobot 500 steps, MountainCar and Pendulum 200, MountainCarContinuous 999) and the same action
spaces (``ACTIONS``; every worker checks its library's space against the table and fails the
cell if it differs).  A war-envs id that is not registered (yet) is skipped, with a note, in
both our columns; the peers still run.

Actions: every column steps the same pre-drawn actions: ``POOL`` (64) batches of W actions
drawn once with ``numpy.random.default_rng(0)`` before the clock starts (uniform over the
Discrete actions, uniform in the Box), converted once to the column's own types (numpy int64 /
float32, envpool int32, a ``jnp`` array, torch int32 / float), and cycled through: step t takes
batch ``t % POOL``.  No column draws random numbers in the timed loop for its actions (gymnax's
per-world keys are its API: its auto-reset needs them).

Timing protocol: ``env_throughput.py``'s (``_measure``): two warm-up calls, one calibration call
that sizes the measurement to about ``--target-s`` seconds (1.0; 0.1 with ``--quick``), three
timed repeats, the median reported as env-steps/s = worlds x steps / s.  A call is
``steps_per_call(worlds)`` steps: a Python loop's at most 100 and at least one, fewer as W grows
(4096 // W); gymnax's scanned chunk 10..1000 steps (65536 // W).  So after its set-up a cell
takes about 3 x ``--target-s`` plus three calls (warm-up, calibration), however slow its steps:
where a step takes longer than the target (SyncVectorEnv at 65536 worlds, about a second a step) each repeat times fewer steps
(``steps_per_repeat``) rather than the cell being skipped; a cell that timed fewer than
``FEW_STEPS`` (100) steps per repeat says so (a note in its record, a ``*`` in the tables).
Each (column, env) worker has ``--worker-timeout-s`` seconds (600; 300 with ``--quick``) for
all its sizes.  A default run takes about 8 minutes on a 2-core machine (the three peers
about 5.5).

Isolation and pinning (``env_throughput.py``'s machinery): every (column, env) is measured in
its own subprocess, pinned with ``os.sched_setaffinity`` to one core (the last one this process
may use) with every thread pool at one thread (``OMP/MKL/OPENBLAS_NUM_THREADS=1``,
``torch.set_num_threads(1)``, ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` and
``JAX_PLATFORMS=cpu`` for gymnax, ``num_threads=1`` for
envpool and our batch API; our vector env's default thread count is one on one core).
``--cores N`` gives every column the first N cores and N threads; ``--no-pin`` leaves both alone.

Peers: Gymnasium (1.4.0) is the project's own dependency and runs under this interpreter.
envpool and gymnax are installed on first use into their own virtual environments,
``<venv-dir>/envpool`` and ``<venv-dir>/gymnax`` (``--venv-dir``, else
``$WAR_ENVS_BENCH_VENVS``, else ``~/.cache/war-envs/bench-venvs``), with install markers and
logs exactly as ``env_throughput.py``'s peers (``PEER_REQUIREMENTS``): gymnax 1.0.1 with jax
and jaxlib 0.10.2 from PyPI (and six, which gymnax imports without requiring it); envpool 1.2.7 where this Python is 3.12 or newer, else 1.2.5 (1.2.7
ships wheels for Python >= 3.12 only; 1.2.5 is the newest release for 3.11, with the same
classic-control tasks).  ``--no-install`` skips a missing peer.

Output: one table per env (rows: worlds; columns: every implementation's env-steps/s, then each
war-envs column over the best peer's, with that peer's name; "n/r": not run, see the note;
"err[n]": note n).  ``--json PATH`` writes one record per (env, worlds, column): the rate,
per-repeat figures, steps per repeat, CPU seconds, set-up and warm-up times, the settings
(target, repeats, pool, steps per call, cpus, threads), the implementation stepped, the
column's package versions, ``over_best_peer`` / ``best_peer`` for our columns, errors and
notes, and ``command`` / ``date`` / ``machine`` / ``versions`` (``benchmarks/_results.py``).
``scripts/tables.py``'s ``classic-throughput`` renderer turns the file into the docs table.

Usage
-----
    python benchmarks/classic_throughput.py --json benchmarks/results/classic_throughput.json
    python benchmarks/classic_throughput.py --quick --frameworks gymnasium      # a few seconds
    python benchmarks/classic_throughput.py --envs CartPole-v1 --worlds 4096 --frameworks envpool,gymnax
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)
import env_throughput as et  # noqa: E402  (stdlib-only at import: workers, pinning, peer venvs)

ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
DEFAULT_WORLDS = (1, 64, 4096, 65536)
QUICK_WORLDS = (1, 64)
DEFAULT_TARGET_S, QUICK_TARGET_S = 1.0, 0.1
DEFAULT_TIMEOUT_S, QUICK_TIMEOUT_S = 600, 300

OURS_VECTOR = "war-envs-vector"  # gym.make_vec("war_envs/<id>")
OURS_BATCH = "war-envs-batch"  # war_envs.make(...), env.step(..., trusted=True)
OURS = (OURS_VECTOR, OURS_BATCH)
PEERS = ("gymnasium", "envpool", "gymnax")
FRAMEWORKS = OURS + PEERS

# Every library's action space of each env: Discrete(n) as n, Box(low, high, (1,)) as (low, high).
ACTIONS = {"CartPole-v1": 2, "Acrobot-v1": 3, "MountainCar-v0": 3,
           "MountainCarContinuous-v0": (-1.0, 1.0), "Pendulum-v1": (-2.0, 2.0)}
# Every library's default episode limit (recorded; the workers step the defaults).
EPISODE_LIMITS = {"CartPole-v1": 500, "Acrobot-v1": 500, "MountainCar-v0": 200,
                  "MountainCarContinuous-v0": 999, "Pendulum-v1": 200}
# Gymnasium's vectorization of each env: its own NumPy vector env where it has one, else sync.
GYMNASIUM_MODES = {"CartPole-v1": "vector_entry_point"}

POOL = 64  # pre-drawn action batches, cycled through
FEW_STEPS = 100  # a cell timing fewer steps per repeat says so

et.PEER_REQUIREMENTS.setdefault(
    "envpool", [["envpool==1.2.7" if sys.version_info >= (3, 12) else "envpool==1.2.5"]])
et.PEER_IMPORT_CHECK.setdefault("envpool", "import envpool")
# gymnax 1.0.1 imports six (its MNIST loader) without requiring it
et.PEER_REQUIREMENTS.setdefault("gymnax", [["jax==0.10.2", "jaxlib==0.10.2", "gymnax==1.0.1", "six==1.17.0"]])
et.PEER_IMPORT_CHECK.setdefault("gymnax", "import jax, gymnax")

# Each column's packages (its ``version`` line and ``versions`` record).
DISTS = {OURS_VECTOR: ["war-envs", "warp-lang", "torch", "gymnasium"],
         OURS_BATCH: ["war-envs", "warp-lang", "torch"],
         "gymnasium": ["gymnasium", "numpy"],
         "envpool": ["envpool", "numpy"],
         "gymnax": ["gymnax", "jax", "jaxlib"]}


def steps_per_call(worlds: int, scanned: bool) -> int:
    """Steps of one measured call: a Python loop's 100 at 1..40 worlds, down to one from 4096
    worlds on; a scanned chunk's 1000 at 1..64 worlds, down to 10 from 6554 worlds on."""
    if scanned:
        return max(10, min(1000, 65536 // worlds))
    return max(1, min(100, 4096 // worlds))


# ---------------------------------------------------------------------------
# Worker side: runs inside each column's subprocess (numpy and the column's library only).
# ---------------------------------------------------------------------------


def action_pool(env_id: str, worlds: int):
    """``POOL`` batches of ``worlds`` random actions for ``env_id`` (numpy, seed 0): int64
    ``[POOL, worlds]`` for a Discrete space, float32 ``[POOL, worlds, 1]`` for a Box."""
    import numpy as np

    rng = np.random.default_rng(0)
    space = ACTIONS[env_id]
    if isinstance(space, int):
        return rng.integers(0, space, (POOL, worlds))
    low, high = space
    return rng.uniform(low, high, (POOL, worlds, 1)).astype(np.float32)


def check_action_space(env_id: str, space) -> None:
    """Fail unless a library's (single-world) action space is ``ACTIONS[env_id]``."""
    import numpy as np

    expected = ACTIONS[env_id]
    if isinstance(expected, int):
        ok = hasattr(space, "n") and int(space.n) == expected
    else:
        ok = (not hasattr(space, "n") and tuple(space.shape) == (1,)
              and np.allclose(space.low, expected[0]) and np.allclose(space.high, expected[1]))
    if not ok:
        raise ValueError(f"{env_id}: expected the action space {expected!r} (ACTIONS), got {space}")


def _loop(step, batches, worlds: int):
    """``run(calls)``: ``calls * steps_per_call`` calls of ``step(batch)``, batch t of
    ``batches`` at step t (cycled)."""
    steps = steps_per_call(worlds, scanned=False)
    count = len(batches)
    t = [0]

    def run(calls):
        i = t[0]
        for _ in range(calls * steps):
            step(batches[i % count])
            i += 1
        t[0] = i

    return run, steps


def _bench_gymnasium(env_id: str, worlds: int, cfg: dict):
    import gymnasium as gym

    mode = GYMNASIUM_MODES.get(env_id, "sync")
    env = gym.make_vec(env_id, num_envs=worlds, vectorization_mode=mode)
    check_action_space(env_id, env.single_action_space)
    env.reset(seed=0)
    run, steps = _loop(env.step, list(action_pool(env_id, worlds)), worlds)
    return run, steps, f"gym.make_vec(vectorization_mode={mode!r}): {type(env.unwrapped).__name__}"


def _bench_envpool(env_id: str, worlds: int, cfg: dict):
    import envpool
    import numpy as np

    if env_id not in envpool.list_all_envs():
        raise ValueError(f"envpool has no {env_id}")
    offset = cfg["cpus"][0] if cfg["cpus"] else -1
    env = envpool.make_gymnasium(env_id, num_envs=worlds, batch_size=worlds, num_threads=cfg["threads"] or 1,
                                 thread_affinity_offset=offset, seed=0)
    check_action_space(env_id, env.action_space)
    env.reset()
    pool = action_pool(env_id, worlds)
    if isinstance(ACTIONS[env_id], int):
        pool = pool.astype(np.int32)
    run, steps = _loop(env.step, list(pool), worlds)
    return run, steps, f"envpool.make_gymnasium(num_threads={cfg['threads'] or 1}, thread_affinity_offset={offset})"


def _bench_gymnax(env_id: str, worlds: int, cfg: dict):
    import gymnax
    import jax
    import jax.numpy as jnp

    env, params = gymnax.make(env_id)
    check_action_space(env_id, env.action_space(params))
    pool = action_pool(env_id, worlds)
    pool = jnp.asarray(pool, dtype=jnp.int32 if isinstance(ACTIONS[env_id], int) else jnp.float32)
    chunk = steps_per_call(worlds, scanned=True)
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def one_step(carry, _):
        key, state, t, checksum, actions = carry
        key, k_step = jax.random.split(key)
        action = jax.lax.dynamic_index_in_dim(actions, t % POOL, keepdims=False)
        obs, state, reward, _, _, _ = step(jax.random.split(k_step, worlds), state, action, params)
        checksum = checksum + jnp.sum(obs) + jnp.sum(reward)
        return (key, state, t + 1, checksum, actions), None

    @jax.jit
    def run_chunk(carry):
        return jax.lax.scan(one_step, carry, None, length=chunk)[0]

    key, k_reset = jax.random.split(jax.random.PRNGKey(0))
    _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(k_reset, worlds), params)
    carry = [(key, state, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.float32), pool)]

    def run(calls):
        c = carry[0]
        for _ in range(calls):
            c = run_chunk(c)
        jax.block_until_ready(c)
        carry[0] = c

    return run, chunk, f"jit(scan({chunk} x vmap(env.step)))"


def _bench_ours_vector(env_id: str, worlds: int, cfg: dict):
    import gymnasium as gym
    import war_envs  # noqa: F401  (registers war_envs/<id> with Gymnasium)

    env = gym.make_vec(f"war_envs/{env_id}", num_envs=worlds)
    check_action_space(env_id, env.single_action_space)
    env.reset(seed=0)
    run, steps = _loop(env.step, list(action_pool(env_id, worlds)), worlds)
    return run, steps, f'gym.make_vec("war_envs/{env_id}"): {type(env.unwrapped).__name__}'


def _bench_ours_batch(env_id: str, worlds: int, cfg: dict):
    import torch
    import war_envs

    threads = cfg["threads"] or 1
    env = war_envs.make(env_id, num_envs=worlds, num_threads=threads)
    (group, spec), = env.groups.items()
    check_action_space(env_id, spec.action_space)
    env.reset(seed=0)
    pool = torch.from_numpy(action_pool(env_id, worlds))
    pool = pool.to(torch.int32 if isinstance(ACTIONS[env_id], int) else env.torch_float)
    pool = pool.reshape(POOL, worlds, spec.n_agents, *spec.action_space.shape)
    run, steps = _loop(lambda actions: env.step(actions, trusted=True), [{group: a} for a in pool], worlds)
    return run, steps, f"war_envs.make(num_threads={threads}).step(trusted=True)"


BENCHES = {OURS_VECTOR: _bench_ours_vector, OURS_BATCH: _bench_ours_batch, "gymnasium": _bench_gymnasium,
           "envpool": _bench_envpool, "gymnax": _bench_gymnax}


def worker_main(cfg: dict) -> None:
    """Measure one column on every (env, worlds) of ``cfg``; print one JSON line."""
    framework = cfg["framework"]
    result_fd = et.worker_start(cfg, OURS)
    rows = []
    for env_id in cfg["scenarios"]:
        for worlds in cfg["worlds"]:
            row = {"env_id": env_id, "worlds": worlds}
            run = None
            try:
                t0 = time.perf_counter()
                run, steps, row["impl"] = BENCHES[framework](env_id, worlds, cfg)
                row["setup_s"] = round(time.perf_counter() - t0, 3)
                row["steps_per_call"] = steps
                row.update(et._measure(run, steps, worlds, cfg["target_s"]))
                row["steps_per_repeat"] = row["env_steps_per_repeat"] // worlds
                et.log(f"[{framework}] {env_id} worlds={worlds}: {et.fmt_rate(row['env_steps_per_s'])} env-steps/s")
            except Exception as exc:  # keep measuring the other sizes
                row["error"] = f"{type(exc).__name__}: {exc}"
                et.log(f"[{framework}] {env_id} worlds={worlds}: FAILED {row['error']}")
            run = None  # free the env before building the next one
            gc.collect()
            rows.append(row)
    versions = _results.versions(DISTS[framework])
    et.worker_finish(result_fd, {
        "framework": framework, "versions": versions,
        "version": ", ".join(f"{d} {versions[d]}" for d in DISTS[framework]),
        "cpus": sorted(os.sched_getaffinity(0)), "threads": cfg["threads"], "rows": rows})


# ---------------------------------------------------------------------------
# Parent side: which columns run, the workers, the records, the tables.
# ---------------------------------------------------------------------------


def unregistered(envs) -> dict[str, str]:
    """``{env_id: note}`` for the ids of ``envs`` that war_envs does not register (yet): our
    columns skip them."""
    registered = et.registered_ids(single_agent=True)
    if registered is None:
        return {e: "war_envs does not import" for e in envs}
    return {e: "not run: not registered in war_envs (yet)" for e in envs if e not in registered}


def _record(env_id, worlds, framework, row, result, meta, args) -> dict:
    eps = row.get("env_steps_per_s")
    steps = row.get("steps_per_repeat")
    note = row.get("note") or result.get("note")
    if eps is not None and steps is not None and steps < FEW_STEPS:
        per_step = statistics.median(row["seconds_per_repeat"]) / steps
        note = (f"timed {steps} step(s) per repeat, fewer than {FEW_STEPS}: one step of {worlds} worlds "
                f"takes {per_step:.3g} s")
    return {
        "env_id": env_id, "worlds": worlds, "framework": framework, "impl": row.get("impl"),
        "env_steps_per_s": eps,
        "over_best_peer": None, "best_peer": None,  # our columns: filled in below
        "repeat_env_steps_per_s": row.get("repeat_env_steps_per_s"),
        "env_steps_per_repeat": row.get("env_steps_per_repeat"), "steps_per_repeat": steps,
        "steps_per_call": row.get("steps_per_call"), "seconds_per_repeat": row.get("seconds_per_repeat"),
        "cpu_seconds_per_repeat": row.get("cpu_seconds_per_repeat"),
        "env_steps_per_cpu_s": row.get("env_steps_per_cpu_s"),
        "setup_s": row.get("setup_s"), "warmup_s": row.get("warmup_s"),
        "target_s": args.target_s, "repeats": et.REPEATS, "warmup_calls": et.WARMUP_CALLS, "pool": POOL,
        "episode_limit": EPISODE_LIMITS[env_id], "action_space": ACTIONS[env_id],
        "cpus": result.get("cpus"), "threads": result.get("threads"),
        "error": None if eps is not None else row.get("error") or result.get("error"),
        "note": note, **meta, "version": result.get("version"), "versions": result.get("versions"),
    }


def collect(args) -> list[dict]:
    """Every (column, env) in its own worker; one record per (env, worlds, column), in table
    order, our columns' ratios to the best peer filled in."""
    cpus, threads = et.pick_cpus(args)
    base = {"target_s": args.target_s, "cpus": cpus, "threads": threads, "worlds": args.worlds}
    root = et.venv_root(args)
    meta = {key: args.meta[key] for key in ("command", "date", "machine")}
    skipped = unregistered(args.envs) if set(OURS) & set(args.frameworks) else {}
    for env_id, why in skipped.items():
        print(f"skipped: war-envs has no {env_id} ({why}); its war-envs columns are left out", flush=True)
    results = {}
    for framework in args.frameworks:
        python, reason = sys.executable, None
        if framework in et.PEER_REQUIREMENTS:
            python, reason = et.ensure_peer_venv(framework, root, install=not args.no_install)
        env = {"JAX_PLATFORMS": "cpu", "JAX_COMPILATION_CACHE_DIR": str(root / "gymnax-xla-cache"),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"} if framework == "gymnax" else {}
        for env_id in args.envs:
            if framework in OURS and env_id in skipped:
                results[(framework, env_id)] = {"note": skipped[env_id]}
            elif python is None:
                results[(framework, env_id)] = {"error": reason}
            else:
                results[(framework, env_id)] = et.run_worker(
                    framework, python, dict(base, scenarios=[env_id]), args.worker_timeout_s, env, script=__file__)
    records = []
    for env_id in args.envs:
        for worlds in args.worlds:
            for framework in args.frameworks:
                result = results[(framework, env_id)]
                row = next((r for r in result.get("rows", []) if r["worlds"] == worlds), {})
                records.append(_record(env_id, worlds, framework, row, result, meta, args))
    fill_ratios(records)
    return records


def fill_ratios(records: list[dict]) -> None:
    """Each of our records' ``over_best_peer``: its env-steps/s over the fastest peer's at the
    same (env, worlds), that peer in ``best_peer``."""
    best = {}
    for r in records:
        key = (r["env_id"], r["worlds"])
        if r["framework"] in PEERS and r["env_steps_per_s"] and r["env_steps_per_s"] > best.get(key, (0, None))[0]:
            best[key] = (r["env_steps_per_s"], r["framework"])
    for r in records:
        rate, peer = best.get((r["env_id"], r["worlds"]), (None, None))
        if r["framework"] in OURS and r["env_steps_per_s"] and rate:
            r["over_best_peer"], r["best_peer"] = r["env_steps_per_s"] / rate, peer


def table_rows(records: list[dict], env_id: str, frameworks) -> tuple[list[str], list[list[str]], list[str]]:
    """(headers, a row per world count, notes) of one env's table: each column's env-steps/s
    ("*": fewer than FEW_STEPS steps per repeat, with a note), "n/r[n]" (not run) or
    "err[n]" (failed), then each of our columns over the best peer."""
    ours = [f for f in frameworks if f in OURS]
    headers = ["worlds", *frameworks, *(f"{f.removeprefix('war-envs-')}/best peer" for f in ours)]
    notes, rows = [], []

    def ref(text: str) -> int:
        text = text if len(text) <= 160 else text[:157] + "..."
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    by = {(r["worlds"], r["framework"]): r for r in records if r["env_id"] == env_id}
    for worlds in dict.fromkeys(r["worlds"] for r in records if r["env_id"] == env_id):
        row = [str(worlds)]
        for fw in frameworks:
            r = by[(worlds, fw)]
            if r["error"]:
                row.append(f"err[{ref(fw + ': ' + r['error'])}]")
            elif r["env_steps_per_s"] is None:
                row.append(f"n/r[{ref(fw + ': ' + (r['note'] or 'not run'))}]")
            elif r["note"]:
                row.append(f"{et.fmt_rate(r['env_steps_per_s'])} *[{ref(f'{fw} at {worlds} worlds: ' + r['note'])}]")
            else:
                row.append(et.fmt_rate(r["env_steps_per_s"]))
        for fw in ours:
            r = by[(worlds, fw)]
            row.append(f"{et.fmt_ratio(r['over_best_peer'])} ({r['best_peer']})" if r["over_best_peer"] else "-")
        rows.append(row)
    return headers, rows, notes


def print_tables(records: list[dict], args) -> None:
    cpus, threads = et.pick_cpus(args)
    how = "unpinned" if cpus is None else f"{threads} thread(s) on cpu {','.join(map(str, cpus))}"
    print(f"\nClassic control: {how}; env-steps/s (worlds x steps / s), auto-reset on, {POOL} pre-drawn "
          f"random action batches; median of {et.REPEATS} x ~{args.target_s:g} s.\n"
          f"*[n]: fewer than {FEW_STEPS} steps timed per repeat (note n); n/r[n]: not run; err[n]: failed; "
          "<column>/best peer: that war-envs column's env-steps/s over the fastest peer's.")
    for env_id in args.envs:
        headers, rows, notes = table_rows(records, env_id, args.frameworks)
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        print(f"\n{env_id} (episodes of at most {EPISODE_LIMITS[env_id]} steps, actions {ACTIONS[env_id]})")
        for line in (headers, ["-" * w for w in widths], *rows):
            print("  ".join(c.rjust(w) for c, w in zip(line, widths)))
        for i, note in enumerate(notes, 1):
            print(f"  [{i}] {note}")
    versions = {r["framework"]: r["version"] for r in records if r["version"]}
    print("\n" + "\n".join(f"{fw}: {v}" for fw, v in versions.items()))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1 and 64 worlds, 0.1 s repeats (for tests)")
    p.add_argument("--json", metavar="PATH", help="also write one record per (env, worlds, column) as JSON")
    p.add_argument("--worlds", type=lambda s: [int(w) for w in et.comma_list(s)],
                   help="comma-separated world counts (default 1,64,4096,65536; --quick 1,64)")
    p.add_argument("--envs", type=et.comma_list, default=list(ENVS),
                   help=f"comma-separated env ids (default {','.join(ENVS)})")
    p.add_argument("--frameworks", type=et.comma_list, default=list(FRAMEWORKS),
                   help=f"comma-separated columns (default {','.join(FRAMEWORKS)})")
    p.add_argument("--no-install", action="store_true", help="skip missing peers instead of installing them")
    p.add_argument("--venv-dir", help="where peer venvs live (default $WAR_ENVS_BENCH_VENVS or "
                                      "~/.cache/war-envs/bench-venvs)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="pin each column's subprocess to one core with one thread (default on)")
    p.add_argument("--cores", type=int, help="give every column N cores and N threads instead of --pin")
    p.add_argument("--target-s", type=float, help="seconds per timed repeat (default 1.0, 0.1 with --quick)")
    p.add_argument("--worker-timeout-s", type=float,
                   help="seconds for one (column, env) worker, every size (default 600, 300 with --quick)")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._worker:
        return args
    for name, chosen, known in (("--envs", args.envs, ENVS), ("--frameworks", args.frameworks, FRAMEWORKS)):
        if not chosen:
            p.error(f"{name}: expected at least one of {', '.join(known)}")
        for item in chosen:
            if item not in known:
                p.error(f"{name}: unknown {item!r} (choose from {', '.join(known)})")
    args.worlds = list(args.worlds or (QUICK_WORLDS if args.quick else DEFAULT_WORLDS))
    if not args.worlds or min(args.worlds) < 1:
        p.error(f"--worlds: expected world counts >= 1, got {args.worlds}")
    if args.cores is not None and args.cores < 1:
        p.error(f"--cores: expected a count >= 1, got {args.cores}")
    if args.target_s is None:
        args.target_s = QUICK_TARGET_S if args.quick else DEFAULT_TARGET_S
    if args.target_s <= 0:
        p.error(f"--target-s: expected seconds > 0, got {args.target_s}")
    if args.worker_timeout_s is None:
        args.worker_timeout_s = QUICK_TIMEOUT_S if args.quick else DEFAULT_TIMEOUT_S
    args.meta = _results.metadata("classic_throughput.py", argv, [*_results.CORE_DISTS, "gymnasium"])
    return args


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    if args._worker:
        worker_main(json.loads(args._worker))
        return []
    records = collect(args)
    print_tables(records, args)
    if args.json:
        _results.write(args.json, records, args.meta)
        et.log(f"wrote {args.json}")
    return records


if __name__ == "__main__":
    main()
