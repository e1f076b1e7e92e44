"""A complete training job: make the env, train with outputs, then evaluate, plot and render.

``run_training(config, out="runs")`` writes ``runs/<scenario>__<seed>__<time>/``:
``config.json``, ``metrics.csv``, ``tb/`` (TensorBoard), ``checkpoint.pt``,
``learning_curve.png``, ``eval.json`` and ``episode.gif`` (WAR modes: ``war_config.json``,
``staleness.jsonl`` and ``war_curve.png`` too; with ``restarts`` each restart's run in
``restart_<k>/``, ``restarts.json``, and the kept restart's checkpoint and metrics).  The CLI's
``train`` and the main job call it.
Under ``torchrun`` every rank runs it: each steps its share of the worlds
(``war_train.learn.distributed``), rank 0 picks the run folder and writes every output, and a run
refused on any rank (a resume of another run's checkpoint, say) stops every rank with the same
error (``DataParallel.agree``).

Everything is checked before anything is created (``preflight``, then the env is made): a bad
config or scenario argument leaves no run folder.  The optional outputs need optional packages
(``war-envs[train]``): the plot matplotlib, the GIF pillow, TensorBoard tensorboard; one that is
missing is skipped with one warning line before training, unless the caller names it in
``require`` (the CLI: ``--gif``/``--tensorboard`` given): then a ``ValueError`` before training.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import pathlib
import sys
import time

from war_envs._extras import MissingExtraError, needs_extra
from war_train.learn import distributed
from war_train.config import TrainConfig
from war_train.checkpoint import load_checkpoint
from war_train.run.evaluate import evaluation_suite, plan_evaluator, render_gif
from war_train.rollout.envs import make_env, make_probe_env
from war_train.run.loop import train
from war_train.run.plot import plot_learning_curve
from war_train.run.restarts import train_restarts
from war_train.run.runlog import read_metrics
from war_train.run.selection import check_select_metric
from war_train.stopping import TrainingInterrupted

__all__ = ["new_run_dir", "preflight", "missing_package", "run_training", "finish_run", "format_eval"]

#: optional output -> (the module that must import, what it writes, the option that turns it off)
OPTIONAL_OUTPUTS = {"plot": ("matplotlib", "the learning-curve PNG", None),
                    "gif": ("PIL.Image", "the episode GIF", "--no-gif"),
                    "tensorboard": ("torch.utils.tensorboard", "TensorBoard logging", "--no-tensorboard")}
#: a budget that whole updates change by more than this fraction gets a warning
BUDGET_TOLERANCE = 0.10


def missing_package(output: str) -> str | None:
    """None when optional ``output`` (a key of ``OPTIONAL_OUTPUTS``) can be written, else the
    one-line reason: the missing package and the extra that installs it (``needs_extra``'s
    message, the same as the output's own import would raise)."""
    module, what, _ = OPTIONAL_OUTPUTS[output]
    try:
        with needs_extra("train", what):
            importlib.import_module(module)
    except MissingExtraError as exc:
        return str(exc)
    except ImportError as exc:   # present but unloadable (another version, a broken install)
        return f"{what} cannot import {module} ({exc}): pip install -U 'war-envs[train]'"
    return None


def preflight(config: TrainConfig, require=()) -> tuple[TrainConfig, bool, list[str]]:
    """What a run can write, checked before it starts: ``(config, plot, warnings)``.

    Each optional output whose package is missing is turned off (``gif``/``tensorboard`` set
    False in the returned config; ``plot`` False) with one warning line, unless it is named in
    ``require`` (``"gif"``, ``"tensorboard"``): then ``ValueError`` naming the package.  Also warns
    when whole updates make the budget differ from ``total_env_steps`` by more than 10 %."""
    unknown = sorted(set(require) - {"gif", "tensorboard"})
    if unknown:
        raise ValueError(f"require: expected names among ['gif', 'tensorboard'], got {unknown}")
    warnings, off, plot = [], {}, True
    for name, (_, _, flag) in OPTIONAL_OUTPUTS.items():
        if name != "plot" and not getattr(config, name):
            continue
        why = missing_package(name)
        if why is None:
            continue
        if name in require:
            raise ValueError(f"{name}=True: {why} (or {flag})")
        warnings.append(f"war-train: warning: {why}; this run skips it" + (f" ({flag} to say so)" if flag else ""))
        if name == "plot":
            plot = False
        else:
            off[name] = False
    planned, budget = config.num_updates * config.batch_env_steps, config.total_env_steps
    if abs(planned - budget) > BUDGET_TOLERANCE * budget:
        warnings.append(f"war-train: warning: total_env_steps {budget:,} is not a whole number of updates of "
                        f"num_envs x rollout_length = {config.batch_env_steps:,} env steps: the run trains "
                        f"{config.num_updates} update(s) = {planned:,} env steps ({planned / budget - 1:+.0%})")
    return (dataclasses.replace(config, **off) if off else config), plot, warnings


def new_run_dir(out, config: TrainConfig) -> pathlib.Path:
    """``<out>/<scenario>__<seed>__<YYYYmmdd-HHMMSS>`` (suffixed if it exists already)."""
    base = pathlib.Path(out) / f"{config.scenario}__{config.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    path, i = base, 1
    while path.exists():
        i += 1
        path = base.with_name(f"{base.name}-{i}")
    path.mkdir(parents=True)
    return path


def run_training(config: TrainConfig, out="runs", *, run_dir=None, resume=None, progress_fn=None,
                 log=print, war=None, require=()) -> pathlib.Path:
    """Train, then ``finish_run``; returns the run folder.  SIGINT/SIGTERM stop it after a
    checkpoint and raise ``TrainingInterrupted`` (no evaluation, plot or GIF).  ``resume`` (a checkpoint or run
    folder) continues that run in its own folder.  Under torchrun (``RANK``/``WORLD_SIZE``... set)
    every rank joins the process group, trains on its worlds, and only rank 0 writes and logs.
    ``war`` (a ``WarConfig``): train in that WAR mode (under torchrun each rank runs its own WAR
    workers over its worlds, the update is data parallel), and plot ``war_curve.png``
    (return against env steps and modelled time, throughput, data share, ESS, staleness) too.
    ``require``: optional outputs (``"gif"``, ``"tensorboard"``) whose missing package is an error
    rather than a warning (``preflight``).  Bad arguments raise before anything is created."""
    config.validate()
    if war is not None:
        war.validate()
    config, plot, warnings = preflight(config, require)
    with distributed.launch(config.device) as dist:
        if not dist.is_main:
            log = _quiet
        # the env first: a bad scenario argument is refused before the run folder exists (the WAR
        # mode makes its worker envs itself; one world made here checks their arguments)
        env = make_env(config, dist) if war is None else None
        try:
            if war is not None:
                make_probe_env(config, dist).close()
            check_select_metric(config)
            if dist.is_main:   # (after every check that can refuse the run)
                for line in warnings:
                    _stderr(line)
            if resume is not None:
                resume = pathlib.Path(resume)
                run_dir = resume if resume.is_dir() else resume.parent
            elif run_dir is None:   # (a folder rank 0 cannot make stops every rank)
                run_dir = dist.agree(lambda: new_run_dir(out, config), main_only=True)
            run_dir = pathlib.Path(dist.broadcast(str(run_dir)))   # rank 0's folder (train creates it, config.json first)
            ranks = (f" on {dist.world_size} ranks ({config.num_envs // dist.world_size} worlds each)"
                     if dist.active else "")
            if war is not None:
                log(f"war-train: {config.scenario} [{war.arm}, {war.resource}, {war.cost_mode} costs], "
                    f"{config.num_envs} worlds{ranks} in {war.workers} worker(s){' a rank' if dist.active else ''} "
                    f"x {config.rollout_length} steps, {config.total_env_steps:,} env steps -> {run_dir}")
            else:
                log(f"war-train: {config.scenario}, {config.num_envs} worlds x {config.rollout_length} steps"
                    f"{ranks}, {config.num_updates} updates = {config.num_updates * config.batch_env_steps:,} "
                    f"env steps -> {run_dir}")
            if config.restarts:
                result = train_restarts(env, config, progress_fn, run_dir=run_dir, resume=resume, dist=dist,
                                        war=war, log=log)
            else:
                result = train(env, config, progress_fn, run_dir=run_dir, resume=resume, dist=dist, war=war)
        finally:
            if env is not None:
                env.close()
        if not dist.is_main:
            return run_dir
    if war is not None and plot:
        from war_train.run.plot import plot_war_run

        rows = read_metrics(run_dir / "metrics.csv")
        if rows:
            path = plot_war_run(rows, run_dir / "war_curve.png",
                                title=f"{config.scenario} [{war.arm}] seed {config.seed}")
            log(f"WAR curves: {path}")
    if result.interrupted_by is not None:
        raise TrainingInterrupted(result.interrupted_by, run_dir, result.checkpoint, result.history[-1]["env_steps"]
                                  if result.history else 0)
    if result.stopped_early:
        log(f"stopped early at {result.history[-1]['env_steps']:,} env steps; resume with "
            f"`war-train train --resume {run_dir}`")
        return run_dir
    if result.selected is not None:
        s = result.selected
        kept = f"restart {s['restart']}'s" if "restart" in s else "the"
        log(f"selected {kept} networks of update {s['update']} ({s['env_steps']:,} env steps): {s['metric']} "
            f"{s['score']:.4g} over {s['episodes']} greedy episodes on the selection worlds")
    finish_run(run_dir, result.policies, config, log=log, plot=plot, selected=result.selected)
    return run_dir


def finish_run(run_dir, policies, config: TrainConfig, log=print, plot: bool = True,
               selected: dict | None = None) -> dict:
    """Learning-curve PNG (unless ``plot`` is False), evaluation (``eval.json``) and a GIF of one
    greedy episode (``config.gif``).  ``selected``: ``TrainResult.selected`` (recorded in
    ``eval.json``: which update's networks ``policies`` are; None: the last update's)."""
    run_dir = pathlib.Path(run_dir)
    out = {}
    rows = read_metrics(run_dir / "metrics.csv")
    if rows and plot:
        out["learning_curve"] = plot_learning_curve(rows, run_dir / "learning_curve.png",
                                                    title=f"{config.scenario} seed {config.seed}")
        log(f"learning curve: {out['learning_curve']}")
    if config.eval_episodes:
        seed = config.seed   # its evaluation streams: never a training world (war_train.seeding)
        t0 = time.perf_counter()
        planner = None
        if config.planner and (run_dir / "checkpoint.pt").exists():   # (its critics' value normalizers)
            planner = plan_evaluator(config, policies, load_checkpoint(run_dir)["valuenorms"])
        summary = evaluation_suite(policies, config.scenario, config.env_kwargs, config.eval_episodes, seed,
                                   planner=planner, planning_group=config.planner)
        report = {"scenario": config.scenario, "episodes": config.eval_episodes, "seed": seed,
                  "train_env_steps": rows[-1]["env_steps"] if rows else 0,
                  "train_wall_s": rows[-1]["wall_s"] if rows else 0.0, "selected": selected, "results": summary}
        (run_dir / "eval.json").write_text(json.dumps(report, indent=2) + "\n")
        log(format_eval(report))
        log(f"evaluation ({time.perf_counter() - t0:.1f} s): {run_dir / 'eval.json'}")
        out["eval"] = report
    if config.gif:
        out["gif"] = render_gif(policies, config.scenario, config.env_kwargs, run_dir / "episode.gif",
                                seed=config.seed)
        log(f"episode GIF: {out['gif']}")
    return out


def format_eval(report: dict) -> str:
    """A small table: one row per policy mode, the main statistics as columns."""
    results = report["results"]
    keys = []   # episode_return, then the scenario's declared metrics, then the per-group returns
    for r in results.values():
        keys += [k for k in r if k not in keys and k not in ("episodes", "episode_length")
                 and not k.startswith("episode_return/")]
    keys += sorted({k for r in results.values() for k in r if k.startswith("episode_return/")})
    width = max(len(m) for m in results) + 2
    cols = [max(len(k), 8) + 2 for k in keys]
    lines = [f"evaluation of {report['scenario']} over {report['episodes']} episodes (seed {report['seed']}):",
             " " * width + "".join(f"{k:>{c}}" for k, c in zip(keys, cols))]
    for mode, r in results.items():
        cells = "".join(f"{_num(r.get(k)):>{c}}" for k, c in zip(keys, cols))
        lines.append(f"{mode:<{width}}{cells}")
    return "\n".join(lines)


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}"


def _quiet(msg: str) -> None:
    """The log of ranks other than 0."""


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
