"""Restarts: train policies one after another and keep the one that scores best on held-out worlds.

With ``TrainConfig.restarts = K > 0`` (and policy selection, ``select_every > 0``) a run trains
its first policy, then, while the best selected score so far is below ``restart_below``, up to
K more.  Restart k is a complete run of its own in ``<run>/restart_<k>/`` (config, metrics,
checkpoint, TensorBoard): the run's config with seed ``seeding.restart_seed(seed, k)`` (restart
0: the run's own seed, so it is exactly the run without restarts; the others' seeds lie in
``[2**62, 2**63)``), hence its own network initialisation, sampling stream and training worlds,
and its own selection worlds (``war_train.run.selection``).  The run's result is the restart whose
selected networks scored best (a tie keeps the earlier): its ``metrics.csv`` is copied into
the run folder and its ``checkpoint.pt`` written there under the run's config (and a
``"restart"`` entry naming it), so ``war-train eval``/``render`` and ``load_policies`` read the
kept networks there and play the run's own evaluation worlds; ``restarts.json`` lists every restart (seed, folder, selected
update, score) and which was kept.  The final evaluation, plot and GIF then play the kept
networks, the evaluation on the worlds of the run's own seed, which no restart trains or
selects on.

This is random restarts with model selection on held-out worlds.  A training setup that
sometimes settles on a poor policy (SMAX-v0 3m: allies that learn to hide from the enemy) fails
with probability p per run; K restarts make that about p^(K+1), at up to K+1 times the compute
(a restart is trained only when the ones before it fell short of ``restart_below``).

A stopped or interrupted restart stops the run; ``resume`` continues it: finished restarts are
read from their checkpoints, an unfinished one is resumed exactly, the rest are trained.  Under
torchrun every rank trains every restart and rank 0's selection scores decide; a resume rank 0
refuses (the run's ``config.json``, a restart's checkpoint) stops every rank with its error.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil

from war_train.checkpoint import load_checkpoint, save_checkpoint
from war_train.config import TrainConfig, config_to_dict
from war_train.run.loop import TrainResult, train
from war_train.learn.policy import load_policies
from war_train.run.resume import check_config
from war_train.run.runlog import read_metrics
from war_train.seeding import restart_seed
from war_train.run.selection import selected_networks

__all__ = ["restart_config", "restarts_run", "train_restarts"]


def restart_config(config: TrainConfig, restart: int) -> TrainConfig:
    """The config restart ``restart`` trains with: the run's, with the restart's seed and without
    the outputs the run makes once, for the networks it keeps (evaluation, GIF)."""
    return dataclasses.replace(config, seed=restart_seed(config.seed, restart), restarts=0,
                               restart_below=float("inf"), eval_episodes=0, gif=False)


def restarts_run(path) -> pathlib.Path | None:
    """The run folder when ``path`` (a run folder or its ``checkpoint.pt``) is a run with restarts
    (it has ``restart_0/``), else None.  Its ``config.json`` holds the run's config (the
    checkpoints hold their restarts'), and ``restart_0/checkpoint.pt`` its WAR config, if any."""
    path = pathlib.Path(path)
    run = path if path.is_dir() else path.parent
    return run if (run / "restart_0").is_dir() and (run / "config.json").is_file() else None


def _finished(folder: pathlib.Path, config: TrainConfig) -> dict | None:
    """The selection summary of a restart that trained to its end (None: not started or not done)."""
    path = folder / "checkpoint.pt"
    if not path.exists():
        return None
    ckpt = load_checkpoint(path)
    check_config(ckpt, repr(str(path)), config)   # (a restart of another run is refused)
    if int(ckpt["update"]) < config.num_updates:
        return None
    return selected_networks(ckpt)


def _write_run_config(run_dir: pathlib.Path, config: TrainConfig, resume) -> None:
    """The run's ``config.json``; resuming, after checking that the saved one is ``config`` but
    for ``restarts`` and ``restart_below`` (refused before anything is written)."""
    saved = run_dir / "config.json"
    if resume is not None and saved.is_file():
        check_config({"config": json.loads(saved.read_text())}, repr(str(saved)),
                     config, also=("restarts", "restart_below"))
    run_dir.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(config_to_dict(config), indent=2) + "\n")


def train_restarts(env, config: TrainConfig, progress_fn=None, *, run_dir, resume=None, dist, war=None,
                   log=print) -> TrainResult:
    """Train ``config``'s restarts in ``run_dir`` (see the module docstring); the result holds the
    kept restart's selected networks (``selected`` adds ``"restart"`` and ``"seed"``), its
    history, and ``config`` the run's.  A restart stopped early or interrupted is returned as
    it is (``TrainResult.stopped_early`` / ``interrupted_by``)."""
    run_dir = pathlib.Path(run_dir)
    # rank 0 reads and writes the run folder; its refusals are every rank's (``dist.agree``)
    dist.agree(lambda: _write_run_config(run_dir, config, resume), main_only=True)
    records, best = [], None
    for k in range(config.restarts + 1):
        sub, folder = restart_config(config, k), run_dir / f"restart_{k}"
        summary = (dist.agree(lambda folder=folder, sub=sub: _finished(folder, sub), main_only=True)
                   if resume is not None else None)
        done = dist.broadcast(summary is not None)
        if not done:
            log(f"war-train: restart {k} of {config.restarts} (seed {sub.seed}) -> {folder}")
            again = resume is not None and (folder / "checkpoint.pt").exists()
            result = train(env, sub, progress_fn, run_dir=folder, resume=folder if again else None, dist=dist,
                           war=war)
            if result.stopped_early or result.interrupted_by is not None:
                return dataclasses.replace(result, config=config, run_dir=run_dir)
            summary = result.selected
        summary = dist.broadcast(summary)
        records.append({"restart": k, "seed": sub.seed, "dir": folder.name, **summary})
        log(f"war-train: restart {k}: the networks of update {summary['update']} scored {summary['metric']} "
            f"{summary['score']:.4g} on its selection worlds")
        if best is None or summary["score"] > best["score"]:
            best = records[-1]
        if dist.is_main:
            (run_dir / "restarts.json").write_text(json.dumps({"restarts": records, "kept": best["restart"]},
                                                              indent=2) + "\n")
        if best["score"] >= config.restart_below:
            break
    kept = run_dir / best["dir"]
    log(f"war-train: kept restart {best['restart']} (seed {best['seed']}, {best['metric']} {best['score']:.4g})")
    if not dist.is_main:
        return TrainResult({}, [], config, run_dir, None, False)
    shutil.copyfile(kept / "metrics.csv", run_dir / "metrics.csv")
    ckpt = load_checkpoint(kept / "checkpoint.pt")   # (under the run's config: its seed's evaluation worlds)
    ckpt.update(config=config_to_dict(config), restart={"restart": best["restart"], "seed": best["seed"]})
    save_checkpoint(run_dir / "checkpoint.pt", ckpt)
    policies, _, _ = load_policies(run_dir / "checkpoint.pt")
    selected = {**{k: best[k] for k in ("update", "env_steps", "metric", "score", "episodes")},
                "restart": best["restart"], "seed": best["seed"]}
    return TrainResult(policies, read_metrics(run_dir / "metrics.csv"), config, run_dir, run_dir / "checkpoint.pt",
                       False, selected=selected)
