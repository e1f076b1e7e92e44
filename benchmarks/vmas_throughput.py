"""VMAS-family throughput: every war-envs VMAS scenario against VMAS 1.5.2 itself.

Issue #25's speed criterion: our agent-steps/s at least ``TARGETS`` times VMAS's, 5x at 4 096
worlds and 20x at 64 worlds, on one pinned core with VMAS on one torch thread, for every
scenario, in one run.  This script measures exactly that and says, scenario by scenario,
whether it holds.

What is measured
----------------
Every VMAS-family scenario: every id of ``war_envs.registered_ids()`` whose class subclasses
``war_envs.scenarios.vmas.base.VmasBase`` (found at run time, so scenarios added later are
picked up; ``--scenarios`` limits the run), each at 64 and 4 096 parallel worlds (``--worlds``
for other sizes), in two columns:

========  =====================================================================================
war-envs  ``war_envs.make(id, num_envs=W, num_threads=1, seed=0)`` with its default keyword
          arguments (continuous actions, ``max_steps=100``), ``reset(seed=0)``, then every step
          ``env.step(actions, trusted=True)`` (the batch API's trusted path: the actions are
          drawn from the spaces); auto-reset is built into the step (per world, in the kernels)
vmas      ``vmas.make_env(cls.vmas_scenario, num_envs=W, device="cpu", continuous_actions=True,
          max_steps=<ours>, seed=0)`` with VMAS's default scenario arguments (the same as ours by
          construction), ``reset()``, then every step ``env.step(actions)``; VMAS has no
          auto-reset: ``env.reset()`` when every world is done (they are in lock-step: every
          world truncates at ``max_steps``) and ``env.reset_at(i)`` for each done world
          otherwise (as TorchRL's ``VmasEnv`` does); the record counts both kinds of
          reset over the cell (warm-up, calibration, repeats and breakdown together)
========  =====================================================================================

``--resets none`` measures stepping alone: both sides are made without a horizon
(``max_steps=None``; ours also ``autoreset_mode="disabled"``) and never restart a world, VMAS
gets no ``reset`` / ``reset_at`` call, so every window is the worlds stepping on from their
first start (VMAS's per-world ``reset_at`` loop is what the default mode adds to its side).

Random actions are drawn inside the timed loop on both sides, uniform in each agent's Box
(``torch.rand`` from one reused ``torch.Generator``, scaled to the space's bounds): ours one
draw of every agent's actions into a ``[W, agents, dim]`` buffer made once (the joint form of
``env.step``; per group where the groups' spaces differ), VMAS one ``[W, dim]`` tensor per agent
(its ``env.step`` takes a list; what ``env.get_random_actions()`` draws, without its RNG-state
save and restore).  VMAS runs under this interpreter: it is the project's test dependency
(``vmas==1.5.2`` in ``[dev]``), the version our parity tests compare against.

Timing protocol: ``env_throughput.py``'s (``_measure``): two warm-up calls (Warp compiles the
kernels on first use; VMAS builds its first tensors), one calibration call that sizes the
measurement to about ``--target-s`` seconds (0.8 s; 0.05 s with ``--quick``), three timed
repeats, the median reported as env-steps/s = worlds x steps / s and agent-steps/s = env-steps/s
x agents.  A call is ``steps_per_call(W)`` steps (64 at 64 worlds, one from 4096 worlds on), so
a cell takes about 3 x ``--target-s`` plus three calls after its set-up: Navigation-v0's two
sizes take about 20 s for both columns, worker start-up included, so a default run of ten
scenarios a few minutes (more on the first run, whose warm-up compiles each scenario's kernels
into Warp's cache).  A repeat is a window of consecutive steps; both sides reset every
world at once every ``max_steps`` steps, so a reset falls in a window in proportion to its
length (the median of three mostly leaves it out: the figures are steady-state stepping).

Isolation and pinning (``env_throughput.py``'s machinery): every (column, scenario) runs in its
own subprocess, pinned with ``os.sched_setaffinity`` to one core (the last one this process may
use; the same core for both columns), every thread pool at one thread
(``OMP/MKL/OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)`` in both columns, our
``num_threads=1``).  The columns alternate scenario by scenario, and ``--rounds N`` measures
everything N times and reports the median round, so background load falls on both alike.
``--cores N`` gives both columns the first N cores and N threads; ``--no-pin`` leaves both alone.

Where the time goes (``--breakdown``): after its measurement each cell also steps
``--target-s`` worth of steps split into parts, in microseconds per step.  Ours: ``draw`` (the
random actions), ``actions`` (the trusted copy into the action buffer), the three kernels
``physics`` (actions -> forces, every substep: contacts, integration), ``reward_done`` (the
scenario's reward and done, the episode protocol) and ``observe`` (auto-reset, observations,
lidar), each replayed as its own captured graph, and ``info`` (the step's info dict); VMAS:
``draw``, ``actions`` (``_set_action`` and the scenario's ``process_action``), ``pre_post_step``,
``physics`` (``World.step``), ``reward``, ``observe`` (``scenario.observation`` without its
sensors), ``lidar`` (the sensors' ``measure``), ``info``, ``done``, ``reset`` (``reset`` /
``reset_at``) and ``other`` (the rest of ``env.step``: argument checks, clones, RNG-state
save/restore), each part timed exclusive of the parts it calls.  The breakdown's own timers cost
a little; its ``total`` is next to the measured step's time.

Output: one table (scenario, worlds, agents, each column's agent-steps/s, ours over VMAS, the
criterion's target at that size and whether it is met), the breakdown tables with
``--breakdown``, and a last line saying whether the criterion holds for every scenario.
``--json PATH`` writes one record per (scenario, worlds, column): the rates, per-repeat and
per-round figures, steps per repeat and per call, CPU seconds, set-up and warm-up times, the
settings (target, repeats, cpus, threads, torch's thread count), the call stepped, VMAS's reset
counts, the breakdown, ``over_vmas`` / ``target`` / ``meets_target`` on our records, errors and
notes, and ``command`` / ``date`` / ``machine`` / ``versions`` (``benchmarks/_results.py``).
``scripts/tables.py``'s ``vmas-throughput`` renderer turns the file into the docs table.

Usage
-----
    python benchmarks/vmas_throughput.py --json benchmarks/results/vmas_throughput.json
    python benchmarks/vmas_throughput.py --scenarios Navigation-v0 --breakdown
    python benchmarks/vmas_throughput.py --quick                        # 2 and 8 worlds, seconds a cell
    python benchmarks/vmas_throughput.py --worlds 1,64,1024,4096,16384 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)
import env_throughput as et  # noqa: E402  (stdlib-only at import: workers, pinning, timing)

OURS, VMAS = "war-envs", "vmas"
FRAMEWORKS = (OURS, VMAS)
#: issue #25: our agent-steps/s over VMAS's at these world counts
TARGETS = {64: 20.0, 4096: 5.0}
DEFAULT_WORLDS = (64, 4096)
QUICK_WORLDS = (2, 8)
DEFAULT_TARGET_S, QUICK_TARGET_S = 0.8, 0.05
DEFAULT_TIMEOUT_S = 600
#: each column's packages (its ``version`` line and ``versions`` record)
DISTS = {OURS: ["war-envs", "warp-lang", "torch"], VMAS: ["vmas", "torch"]}
#: the order of the breakdown's parts
OUR_PARTS = ("draw", "actions", "physics", "reward_done", "observe", "info")
VMAS_PARTS = ("draw", "actions", "pre_post_step", "physics", "reward", "observe", "lidar", "info", "done", "reset",
              "other")


def steps_per_call(worlds: int) -> int:
    """Steps of one measured call: 100 up to 40 worlds, 64 at 64, one from 4096 worlds on."""
    return max(1, min(100, 4096 // worlds))


# ---------------------------------------------------------------------------
# Worker side: runs inside each column's subprocess.
# ---------------------------------------------------------------------------


def box_bounds(space):
    """``(low, span)`` float32 tensors of a Box action space (``TypeError`` for any other: the
    benchmark steps continuous actions)."""
    import numpy as np
    import torch

    if not (hasattr(space, "low") and hasattr(space, "high")) or hasattr(space, "n") or hasattr(space, "nvec"):
        raise TypeError(f"expected a Box action space (continuous actions), got {space}")
    low = torch.from_numpy(np.asarray(space.low, dtype=np.float32).copy())
    high = torch.from_numpy(np.asarray(space.high, dtype=np.float32).copy())
    return low, high - low


def uniform_into(buffer, low, span, gen):
    """``buffer`` := uniform draws in ``[low, low + span)`` (broadcast over its last axis)."""
    import torch

    torch.rand(buffer.shape, generator=gen, out=buffer)
    return buffer.mul_(span).add_(low)


def _our_drawer(env, worlds: int, gen):
    """``draw() -> actions`` for ``env.step(actions, trusted=True)``: one ``[W, agents, dim]``
    buffer where every agent has the same Box (``joint_action_space``), else one per group."""
    import torch

    joint = env.joint_action_space
    if joint is not None:
        low, span = box_bounds(joint)
        buffer = torch.empty((worlds, env.num_agents, *joint.shape), dtype=torch.float32)
        return lambda: uniform_into(buffer, low, span, gen), "joint [W, agents, dim] tensor"
    draws = []
    for g, spec in env.groups.items():
        low, span = box_bounds(spec.action_space)
        draws.append((g, torch.empty((worlds, spec.n_agents, *spec.action_space.shape), dtype=torch.float32),
                      low, span))

    def draw():
        return {g: uniform_into(buf, low, span, gen) for g, buf, low, span in draws}

    return draw, "{group: [W, n_g, dim] tensor}"


def _bench_ours(cell: dict, worlds: int, cfg: dict):
    import torch
    import war_envs

    threads = cfg["threads"] or 1
    no_reset = cfg.get("resets") == "none"  # no horizon, no auto-reset: the worlds never restart
    env = war_envs.make(cell["id"], num_envs=worlds, num_threads=threads, seed=0,
                        **({"max_steps": None, "autoreset_mode": "disabled"} if no_reset else {}))
    if env.num_agents != cell["agents"]:
        raise ValueError(f"{cell['id']}: {env.num_agents} agents at {worlds} worlds, {cell['agents']} at one")
    env.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    draw, form = _our_drawer(env, worlds, gen)
    steps = steps_per_call(worlds)

    def run(calls):
        for _ in range(calls * steps):
            env.step(draw(), trusted=True)

    impl = (f"war_envs.make(num_threads={threads}"
            + (", max_steps=None, autoreset_mode='disabled'" if no_reset else "") + f").step({form}, trusted=True)")
    return run, steps, impl, {"env": env, "draw": draw}


def _bench_vmas(cell: dict, worlds: int, cfg: dict):
    import torch
    import vmas

    no_reset = cfg.get("resets") == "none"  # no horizon and no reset calls: the worlds never restart
    env = vmas.make_env(cell["vmas_scenario"], num_envs=worlds, device="cpu", continuous_actions=True,
                        max_steps=None if no_reset else cell["max_steps"], seed=0)
    if env.n_agents != cell["agents"]:
        raise ValueError(f"VMAS's {cell['vmas_scenario']} has {env.n_agents} agents, ours {cell['agents']}")
    env.reset()
    gen = torch.Generator().manual_seed(0)
    bounds = [box_bounds(space) for space in env.action_space]
    shapes = [(worlds, int(low.numel())) for low, _ in bounds]
    resets = {"reset": 0, "reset_at": 0}

    def draw():
        return [torch.rand(shape, generator=gen).mul_(span).add_(low) for shape, (low, span) in zip(shapes, bounds)]

    def after(dones):
        if no_reset:
            return
        if dones.any():  # VMAS has no auto-reset
            if dones.all():
                env.reset()
                resets["reset"] += 1
            else:
                for i in dones.nonzero().flatten().tolist():
                    env.reset_at(i)
                    resets["reset_at"] += 1

    steps = steps_per_call(worlds)

    def run(calls):
        for _ in range(calls * steps):
            after(env.step(draw())[2])

    impl = (f"vmas.make_env({cell['vmas_scenario']!r}, continuous_actions=True"
            + (", max_steps=None" if no_reset else "") + ").step([W, dim] per agent)"
            + (", never reset" if no_reset else ""))
    return run, steps, impl, {"env": env, "draw": draw, "after": after, "resets": resets}


# ---------------------------------------------------------------------------
# --breakdown: where a step's time goes.
# ---------------------------------------------------------------------------


class PartTimer:
    """Exclusive time per named part: a part's time excludes the parts timed inside it."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._stack: list[list] = []  # [name, start, seconds spent in nested parts]
        self._parts: dict[str, _Part] = {}

    def start(self, name: str) -> None:
        self._stack.append([name, time.perf_counter(), 0.0])

    def stop(self) -> None:
        name, t0, nested = self._stack.pop()
        elapsed = time.perf_counter() - t0
        self.seconds[name] = self.seconds.get(name, 0.0) + elapsed - nested
        if self._stack:
            self._stack[-1][2] += elapsed

    def part(self, name: str) -> _Part:
        """A context manager timing its block as part ``name`` (one per name, reused)."""
        found = self._parts.get(name)
        if found is None:
            found = self._parts[name] = _Part(self, name)
        return found

    def wrap(self, name: str, fn):
        """``fn`` timed as part ``name``."""

        def timed(*args, **kwargs):
            self.start(name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stop()

        return timed


class _Part:
    """``with timer.part(name):`` (see ``PartTimer.part``)."""

    __slots__ = ("timer", "name")

    def __init__(self, timer: PartTimer, name: str):
        self.timer, self.name = timer, name

    def __enter__(self):
        self.timer.start(self.name)

    def __exit__(self, *exc):
        self.timer.stop()
        return False


def _breakdown_ours(state: dict, steps: int) -> dict:
    """``steps`` steps of ``env.step(actions, trusted=True)`` taken apart (``OUR_PARTS``): the
    trusted action copy, each of the three kernels replayed as its own captured graph, the info
    dict; the same work as the step's one graph of all three (``VmasBase._launch_step``)."""
    import warp as wp

    from war_envs.core.runtime import capture_guard

    from war_envs.scenarios.vmas import world as W

    env, draw = state["env"], state["draw"]
    if len(env._shards) != 1:
        raise ValueError("--breakdown: expected one shard of worlds (one thread)")
    # VmasBase._launch_step's three launches, one by one
    launches = {"physics": lambda: env._launch_chunked(env._physics, None),
                "reward_done": lambda: env._launch_chunked(env._reward_done, None),
                "observe": lambda: env._launch_observe(write_final=env._mode_code == W.AUTORESET_SAME_STEP)}
    graphs = {}
    with capture_guard.exclusive():
        for name, launch in launches.items():
            with wp.ScopedCapture(device=env.device) as capture:
                launch()
            graphs[name] = capture.graph
    timer = PartTimer()
    joint = env.joint_action_space is not None
    t0 = time.perf_counter()
    for _ in range(steps):
        with timer.part("draw"):
            actions = draw()
        with timer.part("actions"):
            if joint:
                env._write_joint_actions(actions, True)
            else:
                env._write_trusted_actions(actions)
        with env._warp_work():
            for name, graph in graphs.items():
                with timer.part(name):
                    wp.capture_launch(graph)
        with timer.part("info"):
            env._step_info()
    total = time.perf_counter() - t0
    return _per_step(timer, total, steps, OUR_PARTS)


def _breakdown_vmas(state: dict, steps: int) -> dict:
    """``steps`` VMAS steps (and resets) with VMAS's parts timed (``VMAS_PARTS``): its methods
    wrapped on the instances for the duration, then restored."""
    env, draw, after = state["env"], state["draw"], state["after"]
    timer = PartTimer()
    scenario, world = env.scenario, env.world
    patched = [(env, "_set_action", "actions"), (scenario, "env_process_action", "actions"),
               (scenario, "pre_step", "pre_post_step"), (scenario, "post_step", "pre_post_step"),
               (world, "step", "physics"), (scenario, "reward", "reward"), (scenario, "observation", "observe"),
               (scenario, "info", "info"), (scenario, "done", "done"), (env, "reset", "reset"),
               (env, "reset_at", "reset")]
    patched += [(sensor, "measure", "lidar") for agent in world.agents for sensor in (agent.sensors or [])]
    saved = [(obj, attr, obj.__dict__.get(attr)) for obj, attr, _ in patched]
    try:
        for obj, attr, part in patched:
            setattr(obj, attr, timer.wrap(part, getattr(obj, attr)))
        t0 = time.perf_counter()
        for _ in range(steps):
            with timer.part("draw"):
                actions = draw()
            with timer.part("other"):
                dones = env.step(actions)[2]
            after(dones)
        total = time.perf_counter() - t0
    finally:
        for obj, attr, value in saved:
            if value is None:
                obj.__dict__.pop(attr, None)
            else:
                setattr(obj, attr, value)
    return _per_step(timer, total, steps, VMAS_PARTS)


def _per_step(timer: PartTimer, total: float, steps: int, parts) -> dict:
    """Microseconds per step of every part of ``parts`` (0 where it never ran) and ``total``."""
    out = {p: round(timer.seconds.get(p, 0.0) / steps * 1e6, 2) for p in parts}
    out["total"] = round(total / steps * 1e6, 2)
    out["steps"] = steps
    return out


BENCHES = {OURS: _bench_ours, VMAS: _bench_vmas}
BREAKDOWNS = {OURS: _breakdown_ours, VMAS: _breakdown_vmas}


def worker_main(cfg: dict) -> None:
    """Measure one column on every (scenario, worlds) of ``cfg``; print one JSON line."""
    framework = cfg["framework"]
    result_fd = et.worker_start(cfg, FRAMEWORKS)
    import torch

    rows = []
    for scenario in cfg["scenarios"]:
        cell = cfg["cells"][scenario]
        for worlds in cfg["worlds"]:
            row = {"scenario": scenario, "worlds": worlds}
            state = None
            try:
                t0 = time.perf_counter()
                run, steps, row["impl"], state = BENCHES[framework](cell, worlds, cfg)
                row["setup_s"] = round(time.perf_counter() - t0, 3)
                row["steps_per_call"] = steps
                row.update(et._measure(run, steps, worlds, cfg["target_s"]))
                row["steps_per_repeat"] = row["env_steps_per_repeat"] // worlds
                if cfg.get("breakdown"):
                    n = max(1, min(10_000, round(cfg["target_s"] * row["env_steps_per_s"] / worlds)))
                    row["breakdown_us_per_step"] = BREAKDOWNS[framework](state, n)
                if "resets" in state:
                    row["resets"] = dict(state["resets"])
                et.log(f"[{framework}] {scenario} worlds={worlds}: "
                       f"{et.fmt_rate(row['env_steps_per_s'] * cell['agents'])} agent-steps/s")
            except Exception as exc:  # keep measuring the other sizes
                row["error"] = f"{type(exc).__name__}: {exc}"
                et.log(f"[{framework}] {scenario} worlds={worlds}: FAILED {row['error']}")
            run = state = None  # free the env before building the next one
            gc.collect()
            rows.append(row)
    versions = _results.versions(DISTS[framework])
    et.worker_finish(result_fd, {
        "framework": framework, "versions": versions,
        "version": ", ".join(f"{d} {versions[d]}" for d in DISTS[framework]),
        "cpus": sorted(os.sched_getaffinity(0)), "threads": cfg["threads"],
        "torch_threads": torch.get_num_threads(), "rows": rows})


# ---------------------------------------------------------------------------
# Parent side: the scenarios, the workers, the records, the tables.
# ---------------------------------------------------------------------------


def vmas_scenarios() -> tuple[dict[str, dict], dict[str, str]]:
    """``(cells, failures)``: ``{id: {"id", "vmas_scenario", "agents", "max_steps"}}`` for every
    registered id whose class subclasses ``VmasBase`` (default arguments, read off a one-world
    env), in registration order, and ``{id: reason}`` for the ids that could not be looked at:
    a class that does not import, a VMAS scenario without ``vmas_scenario`` or one that fails to
    build.  ``({}, {"war_envs.scenarios.vmas": reason})`` when the family does not import."""
    import war_envs
    from war_envs import registry

    try:
        from war_envs.scenarios.vmas.base import VmasBase
    except Exception as exc:  # e.g. geometry.py not there yet
        return {}, {"war_envs.scenarios.vmas": f"does not import ({type(exc).__name__}: {exc})"}
    cells, failures = {}, {}
    for env_id in registry.registered_ids():
        try:
            cls = registry.scenario_class(env_id)
        except Exception as exc:  # a half-written module of another family or ours
            failures[env_id] = f"class does not import ({type(exc).__name__}: {exc})"
            continue
        if not (isinstance(cls, type) and issubclass(cls, VmasBase)):
            continue
        try:
            if not cls.vmas_scenario:
                raise ValueError(f"{cls.__name__}.vmas_scenario is not set")
            env = war_envs.make(env_id, num_envs=1)
            cells[env_id] = {"id": env_id, "vmas_scenario": cls.vmas_scenario, "agents": env.num_agents,
                             "max_steps": env.max_steps}
            env.close()
        except Exception as exc:
            failures[env_id] = f"{type(exc).__name__}: {exc}"
    return cells, failures


def collect(args) -> list[dict]:
    """Every (column, scenario) in its own worker, the columns in turn scenario by scenario,
    ``args.rounds`` times; one record per (scenario, worlds, column), the median round's."""
    cpus, threads = et.pick_cpus(args)
    base = {"target_s": args.target_s, "cpus": cpus, "threads": threads, "worlds": args.worlds,
            "cells": args.cells, "breakdown": args.breakdown, "resets": args.resets}
    meta = {key: args.meta[key] for key in ("command", "date", "machine")}
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.rounds):
        for scenario in args.scenarios:
            for framework in args.frameworks:
                if scenario in args.failures:
                    result = {"error": args.failures[scenario]}
                else:
                    result = et.run_worker(framework, sys.executable, dict(base, scenarios=[scenario]),
                                           args.worker_timeout_s, {}, script=__file__)
                results.setdefault((scenario, framework), []).append(result)
    records = []
    for scenario in args.scenarios:
        cell = args.cells.get(scenario, {})
        for worlds in args.worlds:
            for framework in args.frameworks:
                rounds = results[(scenario, framework)]
                records.append(_record(scenario, cell, worlds, framework, rounds, meta, args))
    fill_ratios(records)
    return records


def _record(scenario, cell, worlds, framework, rounds, meta, args) -> dict:
    result = next((r for r in rounds if r.get("versions")), rounds[0])
    rows = [next((r for r in res.get("rows", []) if r["worlds"] == worlds), {}) for res in rounds]
    measured = [r for r in rows if r.get("env_steps_per_s") is not None]
    # the median round (the lower middle one for an even count) gives every figure
    row = sorted(measured, key=lambda r: r["env_steps_per_s"])[(len(measured) - 1) // 2] if measured else rows[0]
    eps, agents = row.get("env_steps_per_s"), cell.get("agents")
    return {
        "scenario": scenario, "vmas_scenario": cell.get("vmas_scenario"), "worlds": worlds, "framework": framework,
        "agents": agents, "max_steps": None if args.resets == "none" else cell.get("max_steps"),
        "resets_mode": args.resets, "impl": row.get("impl"),
        "env_steps_per_s": eps, "agent_steps_per_s": eps * agents if eps is not None else None,
        "over_vmas": None, "target": None, "meets_target": None,  # our records: filled in below
        "rounds": args.rounds, "round_env_steps_per_s": [r.get("env_steps_per_s") for r in rows],
        "repeat_env_steps_per_s": row.get("repeat_env_steps_per_s"),
        "env_steps_per_repeat": row.get("env_steps_per_repeat"), "steps_per_repeat": row.get("steps_per_repeat"),
        "steps_per_call": row.get("steps_per_call"), "seconds_per_repeat": row.get("seconds_per_repeat"),
        "cpu_seconds_per_repeat": row.get("cpu_seconds_per_repeat"),
        "env_steps_per_cpu_s": row.get("env_steps_per_cpu_s"),
        "setup_s": row.get("setup_s"), "warmup_s": row.get("warmup_s"), "resets": row.get("resets"),
        "breakdown_us_per_step": row.get("breakdown_us_per_step"),
        "target_s": args.target_s, "repeats": et.REPEATS, "warmup_calls": et.WARMUP_CALLS,
        "cpus": result.get("cpus"), "threads": result.get("threads"), "torch_threads": result.get("torch_threads"),
        "error": None if eps is not None else row.get("error") or result.get("error"),
        "note": row.get("note") or result.get("note"),
        **meta, "version": result.get("version"), "versions": result.get("versions"),
    }


def fill_ratios(records: list[dict]) -> None:
    """Each of our records' ``over_vmas`` (our agent-steps/s over VMAS's at the same scenario and
    worlds), ``target`` (``TARGETS``; None at other sizes) and ``meets_target``."""
    theirs = {(r["scenario"], r["worlds"]): r["agent_steps_per_s"] for r in records if r["framework"] == VMAS}
    for r in records:
        if r["framework"] != OURS:
            continue
        r["target"] = TARGETS.get(r["worlds"])
        vmas_rate = theirs.get((r["scenario"], r["worlds"]))
        if r["agent_steps_per_s"] and vmas_rate:
            r["over_vmas"] = r["agent_steps_per_s"] / vmas_rate
            if r["target"] is not None:
                r["meets_target"] = r["over_vmas"] >= r["target"]


def verdict(records: list[dict]) -> str:
    """One line: whether issue #25's criterion holds for every measured scenario (at the sizes of
    ``TARGETS`` that were measured), else which (scenario, worlds) miss it or are missing."""
    ours = [r for r in records if r["framework"] == OURS and r["target"] is not None]
    if not ours:
        return f"criterion: not evaluated (no size of {sorted(TARGETS)} measured)"
    missed = [f"{r['scenario']} at {r['worlds']} ({et.fmt_ratio(r['over_vmas'])} < {r['target']:g}×)"
              for r in ours if r["meets_target"] is False]
    unknown = [f"{r['scenario']} at {r['worlds']}" for r in ours if r["meets_target"] is None]
    scenarios = len({r["scenario"] for r in ours})
    if not missed and not unknown:
        return f"criterion: met for all {scenarios} scenario(s) (≥ {', '.join(_targets_text())})"
    parts = ([f"missed by {', '.join(missed)}"] if missed else []) + (
        [f"not measured for {', '.join(unknown)}"] if unknown else [])
    return "criterion: NOT met: " + "; ".join(parts)


def _targets_text() -> list[str]:
    return [f"{t:g}× at {w} worlds" for w, t in sorted(TARGETS.items())]


def table_rows(records: list[dict]) -> tuple[list[str], list[list[str]], list[str]]:
    """(headers, a row per (scenario, worlds), notes): agents, each column's agent-steps/s
    ("err[n]": failed, note n), ours over VMAS, the target there and whether it is met."""
    headers = ["scenario", "worlds", "agents", f"{OURS} agent-steps/s", f"{VMAS} agent-steps/s", "ours/vmas",
               "target", "met"]
    by = {(r["scenario"], r["worlds"], r["framework"]): r for r in records}
    notes: list[str] = []

    def cell(r):
        if r is None:
            return "–"
        if r["agent_steps_per_s"] is None:
            text = f"{r['framework']}: {r['error'] or r['note'] or 'not run'}"
            text = text if len(text) <= 200 else text[:197] + "..."
            if text not in notes:
                notes.append(text)
            return f"err[{notes.index(text) + 1}]"
        return et.fmt_rate(r["agent_steps_per_s"])

    rows = []
    for scenario, worlds in dict.fromkeys((r["scenario"], r["worlds"]) for r in records):
        ours, theirs = by.get((scenario, worlds, OURS)), by.get((scenario, worlds, VMAS))
        any_r = ours or theirs
        met = "–" if ours is None or ours["meets_target"] is None else ("yes" if ours["meets_target"] else "NO")
        rows.append([scenario, str(worlds), str(any_r["agents"] or "–"), cell(ours), cell(theirs),
                     et.fmt_ratio(ours["over_vmas"]) if ours and ours["over_vmas"] else "–",
                     f"{ours['target']:g}×" if ours and ours["target"] else "–", met])
    return headers, rows, notes


def breakdown_rows(records: list[dict], framework: str) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of one column's breakdown: microseconds per step of every part."""
    parts = OUR_PARTS if framework == OURS else VMAS_PARTS
    headers = ["scenario", "worlds", *parts, "total", "measured"]
    rows = []
    for r in records:
        b = r.get("breakdown_us_per_step")
        if r["framework"] != framework or not b:
            continue
        measured = r["worlds"] / r["env_steps_per_s"] * 1e6
        rows.append([r["scenario"], str(r["worlds"]), *(f"{b[p]:.1f}" for p in parts), f"{b['total']:.1f}",
                     f"{measured:.1f}"])
    return headers, rows


def _print_table(headers, rows) -> None:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    for line in (headers, ["-" * w for w in widths], *rows):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))


def print_tables(records: list[dict], args) -> None:
    cpus, threads = et.pick_cpus(args)
    how = "unpinned" if cpus is None else f"{threads} thread(s) on cpu {','.join(map(str, cpus))}"
    print(f"\nVMAS family: {how} (torch too); agent-steps/s (worlds x agents x steps / s), continuous random "
          f"actions, default arguments, "
          + ("no horizon and no restarts (--resets none)" if args.resets == "none" else
             "100-step episodes restarted (VMAS: reset / reset_at, as TorchRL)")
          + f", median of {et.REPEATS} x ~{args.target_s:g} s"
          + (f", median of {args.rounds} rounds" if args.rounds > 1 else "")
          + f".\nours/vmas: our agent-steps/s over VMAS's; target: issue #25's ({', '.join(_targets_text())}).\n")
    if records:
        headers, rows, notes = table_rows(records)
        _print_table(headers, rows)
        for i, note in enumerate(notes, 1):
            print(f"[{i}] {note}")
    for framework in args.frameworks if args.breakdown else ():
        headers, rows = breakdown_rows(records, framework)
        if rows:
            print(f"\n{framework}: microseconds per step (total: the parts timed together; measured: the "
                  "timed step above)")
            _print_table(headers, rows)
    for env_id, why in args.failures.items():
        if env_id not in args.scenarios:
            print(f"skipped: {env_id}: {why}")
    print("\n" + verdict(records))
    versions = {r["framework"]: r["version"] for r in records if r["version"]}
    if versions:
        print("\n".join(f"{fw}: {v}" for fw, v in versions.items()))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 and 8 worlds, 0.05 s repeats (for tests)")
    p.add_argument("--json", metavar="PATH", help="also write one record per (scenario, worlds, column) as JSON")
    p.add_argument("--worlds", type=lambda s: [int(w) for w in et.comma_list(s)],
                   help="comma-separated world counts (default 64,4096; --quick 2,8)")
    p.add_argument("--scenarios", type=et.comma_list,
                   help="comma-separated VMAS-family ids (default: every registered one)")
    p.add_argument("--frameworks", type=et.comma_list, default=list(FRAMEWORKS),
                   help=f"comma-separated columns (default {','.join(FRAMEWORKS)})")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure everything this many times and report the median round (default 1)")
    p.add_argument("--breakdown", action="store_true", help="also time each part of a step (microseconds)")
    p.add_argument("--resets", choices=("torchrl", "none"), default="torchrl",
                   help="torchrl (default): both sides end episodes at max_steps=100 and restart them, VMAS "
                        "with reset / reset_at as TorchRL's VmasEnv; none: no horizon and no restart on either "
                        "side (the worlds step on from their first start)")
    p.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                   help="pin each worker to one core with one thread (default on)")
    p.add_argument("--cores", type=int, help="give both columns N cores and N threads instead of --pin")
    p.add_argument("--target-s", type=float, help="seconds per timed repeat (default 0.8, 0.05 with --quick)")
    p.add_argument("--worker-timeout-s", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds for one (column, scenario) worker, every size (default {DEFAULT_TIMEOUT_S})")
    p.add_argument("--_worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._worker:
        return args
    if not args.frameworks:
        p.error(f"--frameworks: expected at least one of {', '.join(FRAMEWORKS)}")
    for fw in args.frameworks:
        if fw not in FRAMEWORKS:
            p.error(f"--frameworks: unknown {fw!r} (choose from {', '.join(FRAMEWORKS)})")
    args.worlds = list(args.worlds or (QUICK_WORLDS if args.quick else DEFAULT_WORLDS))
    if not args.worlds or min(args.worlds) < 1:
        p.error(f"--worlds: expected world counts >= 1, got {args.worlds}")
    if args.cores is not None and args.cores < 1:
        p.error(f"--cores: expected a count >= 1, got {args.cores}")
    if args.rounds < 1:
        p.error(f"--rounds: expected a count >= 1, got {args.rounds}")
    if args.target_s is None:
        args.target_s = QUICK_TARGET_S if args.quick else DEFAULT_TARGET_S
    if args.target_s <= 0:
        p.error(f"--target-s: expected seconds > 0, got {args.target_s}")
    if args.worker_timeout_s <= 0:
        p.error(f"--worker-timeout-s: expected seconds > 0, got {args.worker_timeout_s}")
    args.cells, args.failures = vmas_scenarios()
    for env_id, why in args.failures.items():
        et.log(f"{env_id}: {why}")
    known = [*args.cells, *(f for f in args.failures if f != "war_envs.scenarios.vmas")]
    if args.scenarios is None:
        # every VMAS scenario, and every id that could not be looked at under the family's package
        from war_envs import registry

        family = [i for i in args.failures if registry._SCENARIOS.get(i, "").startswith("war_envs.scenarios.vmas.")]
        args.scenarios = [*args.cells, *family]
    else:
        for s in args.scenarios:
            if s not in known:
                p.error(f"--scenarios: {s!r} is not a registered VMAS-family scenario "
                        f"(registered: {', '.join(args.cells) or 'none'})")
    if not args.scenarios:
        p.error("no VMAS-family scenario is registered"
                + "".join(f"; {k}: {v}" for k, v in args.failures.items()))
    args.meta = _results.metadata("vmas_throughput.py", argv, [*_results.CORE_DISTS, "vmas"])
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
