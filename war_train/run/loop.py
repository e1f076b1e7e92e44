"""The trainer: ``train(env, config)``, one run loop for every mode of it.

Each update of the loop (``update``) sets the update's sampling temperature on every actor
(``cfg.schedule(update).temperature``: 1 unless ``final_temperature`` says otherwise), then makes
the same four calls, whatever the mode:

    data    = mode.collect()                       # rollouts (the mode's own way)
    batches = mode.batches(data)                   # advantages -> one GroupBatch per group
    diag    = learn(mode.learner, batches, cfg.schedule(update), reducer, ...)   # war_train.learn.step
    row     = mode.row(data, batches, diag, learn_s)                             # metrics

and the loop around them (``_run``) does the rest: history, ``metrics.csv``, TensorBoard, the
progress bar, side logs, stop requests (SIGINT/SIGTERM, ``progress_fn``), checkpoints every
``checkpoint_every`` updates, at the end and when stopped, resuming, and policy selection
(``select_every``: the networks a run ends with, ``war_train.run.selection``).

Two modes implement ``Mode``, side by side below the loop: lock-step MAPPO
(``war_train.run.lockstep.LockstepMode``, the default; data parallel under torchrun through the
reducer, ``war_train.learn.distributed``) and the WAR harness (``war_train.war.mode.WarMode``, with
``war=WarConfig(...)``: decision schedules and cost models in the rollout, macro-step
fragments, SMDP advantages; data parallel under torchrun through the same reducer).  A new mode is a class with the attributes and methods of
``Mode``; a new loss term goes into ``war_train.learn.ppo`` (its coefficient, with a schedule, into
``config.Coefficients``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import pathlib
import time
from collections.abc import Callable
from typing import Protocol

from war_train.learn import distributed
from war_train.checkpoint import load_checkpoint, save_checkpoint
from war_train.run.resume import check_resume
from war_train.config import TrainConfig, config_to_dict
from war_train.learn.step import Batches, learn
from war_train.learn.policy import set_temperature
from war_train.learn.ppo import Learner
from war_train.run.selection import Selection
from war_train.stopping import NonFiniteTraining, StopRequests

__all__ = ["train", "TrainResult", "Mode", "update"]


class Mode(Protocol):
    """What a training mode provides the run loop.

    State the loop reads: ``cfg`` (the validated config), ``war`` (its WAR section, None for
    lock-step), ``env`` (the env, the first worker's under WAR), ``dist`` (the reducer), ``learner``
    (``ppo.Learner``: policies, optimizers, value normalizers, generator), ``policies``
    (``learner.policies``), ``update_idx`` (updates done; the loop increments it before each),
    ``env_steps`` (env steps so far, all ranks), ``checkpoint`` (the last complete checkpoint
    written or resumed; the loop sets it), ``learn_generator`` (the minibatch stream, None: the
    learner's), ``columns`` (``metrics.csv``'s), ``label`` and ``progress_key`` (the progress
    bar's), ``run_files`` (extra files of the run folder: name -> text) and ``side_logs`` (row
    entry -> (JSON-lines file, key): entries popped from each row into their own log).
    """

    cfg: TrainConfig
    war: object          # the WAR section (``config.WarConfig``) of a WAR mode; None: lock-step
    env: object          # the (first) env: what checkpoints record the signature of
    dist: object
    learner: Learner
    policies: dict
    update_idx: int
    env_steps: int
    checkpoint: pathlib.Path | None
    learn_generator: object
    columns: list[str]
    label: str
    progress_key: str | None
    run_files: dict[str, str]
    side_logs: dict[str, tuple[str, str]]

    def collect(self):
        """This update's rollouts (the mode's data; counts ``env_steps``)."""

    def batches(self, data) -> Batches:
        """Advantages and one ``GroupBatch`` per group to learn from ``data``."""

    def row(self, data, batches: Batches, diag: dict, learn_s: float) -> dict:
        """The update's metrics row, given the learn step's diagnostics and its seconds."""

    def fail(self, what: str, hint: str) -> NonFiniteTraining:
        """The error of a non-finite value met in this update (names the last checkpoint)."""

    def checkpoint_payload(self, wall_s: float) -> dict | None:
        """The run's checkpoint so far (None on ranks that do not write it)."""

    def restore(self, ckpt: dict, path) -> None:
        """Continue exactly from ``ckpt`` (read from ``path``), after checking it is this run's."""

    def close(self) -> None:
        """Release what the mode made (envs, threads)."""


@dataclasses.dataclass
class TrainResult:
    policies: dict
    history: list[dict]
    config: TrainConfig
    run_dir: pathlib.Path | None
    checkpoint: pathlib.Path | None
    stopped_early: bool
    #: the signal (SIGINT/SIGTERM number) that stopped the run after its checkpoint, else None
    interrupted_by: int | None = None
    #: with ``select_every``: ``{"update", "env_steps", "metric", "score", "episodes"}`` of the
    #: networks in ``policies`` (``war_train.run.selection``); None: they are the last update's
    selected: dict | None = None


def update(mode: Mode) -> dict:
    """One update of ``mode``: collect, batches, the learn step, the row."""
    mode.update_idx += 1
    coefs = mode.cfg.schedule(mode.update_idx)
    set_temperature(mode.learner.policies, coefs.temperature)   # the policy this update samples and learns
    data = mode.collect()
    t0 = time.perf_counter()
    batches = mode.batches(data)
    diag = learn(mode.learner, batches, coefs, mode.dist, cfg=mode.cfg, fail=mode.fail,
                 generator=mode.learn_generator)
    return mode.row(data, batches, diag, time.perf_counter() - t0)


def train(env, config: TrainConfig, progress_fn: Callable[[dict], bool | None] | None = None, *,
          run_dir=None, resume=None, dist=None, war=None) -> TrainResult:
    """Train MAPPO on ``env`` (a war_envs batched env with ``config.num_envs`` worlds, SAME_STEP
    autoreset, on ``config.device``; it is reset with ``config.seed``; ``None``: made from the
    config and closed at the end).

    ``war``: a ``war_train.config.WarConfig`` trains in that WAR mode instead of lock-step
    (``war_train.war.mode.WarMode``); ``env`` is then ``None``, one env (``war.workers == 1``)
    or a list of ``war.workers`` worker envs holding the worlds together.

    ``progress_fn(row)`` is called after every update with that update's metrics; returning
    ``False`` stops training after writing a checkpoint (as a preemption would).  With
    ``run_dir``, writes ``config.json`` (once a resume is accepted), ``metrics.csv``, TensorBoard
    events under ``tb/`` and ``checkpoint.pt`` there (every ``config.checkpoint_every`` updates,
    at the end and when stopped, SIGINT/SIGTERM included), plus the mode's own files (WAR:
    ``war_config.json``, ``staleness.jsonl``); nothing is written without it.  ``resume``: a
    checkpoint (or a run folder) of the same mode to continue from exactly; its config must equal
    ``config`` except for ``war_train.run.resume.RESUMABLE_CHANGES`` (and a WAR run's WAR config must
    equal ``war``).

    ``config.select_every > 0``: the result's policies are the networks that scored best on the
    selection worlds (``war_train.run.selection``; ``TrainResult.selected`` says which update's); the
    checkpoint holds them beside the last ones.

    ``dist``: a ``war_train.learn.distributed`` reducer (default: ``distributed.current()``, i.e. the
    torchrun rank this process is, or one process).  Under torchrun every rank calls ``train``
    with the same arguments and its own env (``war_train.rollout.envs.make_env(config, dist)``).
    """
    cfg = config.validate()
    dist = distributed.current() if dist is None else dist
    mode = _make_mode(env, cfg, dist, war)
    try:
        # every rank reads the checkpoint and checks it is this run's; a refusal on any rank (of
        # the mode, config, env, ranks, or of the selection state only rank 0 keeps) is every rank's
        selection, wall_before = dist.agree(lambda: _start(mode, resume))
        return _run(mode, progress_fn, None if run_dir is None else pathlib.Path(run_dir),
                    resumed=resume is not None, wall_before=wall_before, selection=selection)
    finally:
        mode.close()


def _start(mode: Mode, resume) -> tuple[Selection | None, float]:
    """``(selection, wall seconds before this session)``: the selection of rank 0 (with
    ``select_every``), and with ``resume`` the mode restored from that checkpoint (or run folder)."""
    cfg, dist = mode.cfg, mode.dist
    selection = Selection(cfg) if cfg.select_every and dist.is_main else None
    if resume is None:
        return selection, 0.0
    path = pathlib.Path(resume)
    path = path / "checkpoint.pt" if path.is_dir() else path
    ckpt = load_checkpoint(path)
    check_resume(ckpt, path, cfg, mode.env, mode.war)
    mode.restore(ckpt, path)
    mode.checkpoint = path
    if selection is not None:
        selection.load_state_dict(ckpt.get("selection"))
    return selection, float(ckpt["wall_s"])


def _make_mode(env, cfg: TrainConfig, dist, war) -> Mode:
    if war is not None:
        from war_train.war.mode import WarMode

        return WarMode(cfg, war, envs=[env] if hasattr(env, "num_envs") else env, dist=dist)
    from war_train.rollout.envs import make_env
    from war_train.run.lockstep import LockstepMode

    owns = env is None
    env = make_env(cfg, dist) if owns else env
    try:
        return LockstepMode(env, cfg, dist, owns_env=owns)
    except BaseException:
        if owns:
            env.close()
        raise


def _open_outputs(mode: Mode, columns: list[str], run_dir: pathlib.Path, resumed: bool,
                  cleanup: contextlib.ExitStack):
    """``(metrics.csv, TensorBoard, side logs)`` of the run folder (rank 0), closed by ``cleanup``;
    the run's files written (once a resume has been accepted: a refused resume leaves the run
    folder as it was)."""
    from war_train.run.runlog import MetricsCSV, TensorBoard, open_jsonl

    cfg = mode.cfg
    keep = mode.update_idx if resumed else None   # a resumed run keeps the rows up to its update
    run_dir.mkdir(parents=True, exist_ok=True)
    files = {"config.json": json.dumps(config_to_dict(cfg), indent=2) + "\n", **mode.run_files}
    for name, text in files.items():
        (run_dir / name).write_text(text)
    csv_log = MetricsCSV(run_dir / "metrics.csv", columns, keep_until=keep)
    cleanup.callback(csv_log.close)
    tb = TensorBoard(run_dir / "tb", cfg.tensorboard, purge_step=mode.env_steps + 1 if resumed else None)
    cleanup.callback(tb.close)
    side = {}
    for entry, (name, _) in mode.side_logs.items():
        side[entry] = open_jsonl(run_dir / name, keep)
        cleanup.callback(side[entry].close)
    return csv_log, tb, side


def _run(mode: Mode, progress_fn, run_dir: pathlib.Path | None, *, resumed: bool, wall_before: float,
         selection: Selection | None) -> TrainResult:
    """The run loop of every mode: ``update(mode)`` until ``config.num_updates``, each row
    logged (history, ``metrics.csv``, TensorBoard, progress bar, side logs), checkpoints, stops,
    and with a ``selection`` its evaluations (the run ends with the networks it kept)."""
    from war_train.run.runlog import ProgressBar

    cfg, dist = mode.cfg, mode.dist
    columns, key = mode.columns + (selection.columns if selection is not None else []), mode.progress_key
    bar = ProgressBar(cfg.num_updates * cfg.batch_env_steps, mode.label, enabled=cfg.progress and dist.is_main)
    history: list[dict] = []
    stopped_early = False
    session_steps = 0
    t_start = time.perf_counter()
    # SIGINT/SIGTERM: finish the update, checkpoint, return (only when there is a run folder to write to)
    stops = StopRequests(enabled=run_dir is not None)
    with stops, contextlib.ExitStack() as cleanup:   # (outputs closed on errors too)
        cleanup.callback(bar.close)
        # rank 0 opens the run folder (a resume into a metrics.csv of other columns is refused: on every rank)
        opened = dist.agree(lambda: None if run_dir is None else _open_outputs(mode, columns, run_dir, resumed,
                                                                                   cleanup), main_only=True)
        csv_log, tb, side = opened or (None, None, {})
        while mode.update_idx < cfg.num_updates:
            before = mode.env_steps
            row = update(mode)
            session_steps += mode.env_steps - before
            last = mode.update_idx >= cfg.num_updates
            if selection is not None:
                due = selection.due(mode.update_idx, last)
                score = selection.consider(mode.update_idx, mode.env_steps, mode.policies) if due else float("nan")
                row.update(selection.row(score))
            extra = {entry: row.pop(entry) for entry in mode.side_logs}
            elapsed = time.perf_counter() - t_start
            row["wall_s"] = wall_before + elapsed
            row["env_steps_per_s"] = session_steps / max(elapsed, 1e-9)
            for c in columns:
                row.setdefault(c, float("nan"))
            history.append(row)
            if csv_log is not None:   # (before the checkpoint: a resumed run keeps the rows up to its update)
                csv_log.write(row)
                tb.write(row, mode.env_steps)
                for entry, f in side.items():
                    f.write(json.dumps({"update": row["update"], mode.side_logs[entry][1]: extra[entry]}) + "\n")
                    f.flush()
            bar.update(mode.env_steps, session_steps, row.get(key), key.replace("_", " "))
            stop = dist.any((progress_fn(row) is False if progress_fn is not None else False) or stops.requested)

            if run_dir is not None and (last or stop or (cfg.checkpoint_every and
                                                         mode.update_idx % cfg.checkpoint_every == 0)):
                payload = mode.checkpoint_payload(wall_before + (time.perf_counter() - t_start))
                if payload is not None:
                    if selection is not None:
                        payload["selection"] = selection.state_dict()
                    mode.checkpoint = save_checkpoint(run_dir / "checkpoint.pt", payload)
            if stop:
                stopped_early = not last
                break

    selected = None
    if selection is not None and mode.update_idx >= cfg.num_updates:   # (a stopped run trains on when resumed)
        selection.apply(mode.policies)
        selected = selection.summary()
        if selected is not None:   # (sampled play at the selected update's temperature, as load_policies)
            set_temperature(mode.policies, cfg.schedule(selected["update"]).temperature)
    return TrainResult(policies=mode.policies, history=history, config=cfg, run_dir=run_dir,
                       checkpoint=mode.checkpoint, stopped_early=stopped_early, interrupted_by=stops.signum,
                       selected=selected)
