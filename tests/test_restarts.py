"""Restarts (``TrainConfig.restarts`` / ``restart_below``, ``war_train.run.restarts``): restart 0 is
the run without restarts, bitwise; later restarts train on seeds of their own, apart from every
other run's worlds; the run keeps the restart that scored best on its selection worlds, stops
restarting once ``restart_below`` is reached, records all of it, and resumes exactly."""

import csv
import json

import numpy as np
import pytest
import torch

import war_train
from war_train.checkpoint import load_checkpoint
from war_train.learn.policy import load_policies
from war_train.run.training import run_training
from war_train.seeding import restart_seed, run_world_seeds
from war_train.config import WarConfig

torch.set_num_threads(1)
UPDATES = 4


def config(**overrides):
    values = dict(total_env_steps=16 * 25 * UPDATES, gif=False, eval_episodes=10, progress=False,
                  tensorboard=False, select_every=2, select_episodes=20, restarts=2)
    values.update(overrides)
    return war_train.preset_config("smoke", **values)


def rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")} for r in csv.DictReader(f)]


def quiet(_):
    pass


def test_restart_seeds_are_apart_from_every_run_seed():
    assert restart_seed(7, 0) == 7
    seeds = {restart_seed(s, k) for s in range(1, 6) for k in range(1, 4)}
    assert len(seeds) == 15 and all(2 ** 62 <= s < 2 ** 63 for s in seeds)
    keys = [run_world_seeds(s, 128, "train") for s in [*range(1, 6), *seeds]]
    assert len(np.unique(np.concatenate(keys))) == 128 * 20   # no world shared by any two runs
    with pytest.raises(ValueError, match="restart: expected an int >= 0, got -1"):
        restart_seed(1, -1)


def test_restart_zero_is_the_run_without_restarts(tmp_path):
    plain = run_training(config(restarts=0), run_dir=tmp_path / "plain", log=quiet)
    run = run_training(config(restart_below=-1e9), run_dir=tmp_path / "run", log=quiet)   # (restart 0 is enough)
    assert rows(run / "restart_0" / "metrics.csv") == rows(plain / "metrics.csv")
    record = json.loads((run / "restarts.json").read_text())
    assert [r["restart"] for r in record["restarts"]] == [0] and record["kept"] == 0
    assert not (run / "restart_1").exists()
    a, b = load_checkpoint(plain), load_checkpoint(run)
    for g in a["actors"]:
        for k in a["selection"]["actors"][g]:
            assert torch.equal(a["selection"]["actors"][g][k], b["selection"]["actors"][g][k])
    assert json.loads((run / "eval.json").read_text())["results"] == json.loads((plain / "eval.json").read_text())[
        "results"]   # the same networks on the same evaluation worlds


def test_the_run_keeps_the_best_restart_and_says_which(tmp_path):
    run = run_training(config(), run_dir=tmp_path / "run", log=quiet)
    record = json.loads((run / "restarts.json").read_text())
    restarts = record["restarts"]
    assert [r["restart"] for r in restarts] == [0, 1, 2]   # restart_below inf: every restart
    assert [r["seed"] for r in restarts] == [1, restart_seed(1, 1), restart_seed(1, 2)]
    scores = [r["score"] for r in restarts]
    assert len(set(scores)) > 1, "the restarts should train different policies"
    kept = max(range(3), key=lambda k: (scores[k], -k))
    assert record["kept"] == kept
    for k, r in enumerate(restarts):   # each restart: its own run with its own seed, its own selection
        sub = json.loads((run / f"restart_{k}" / "config.json").read_text())
        assert sub["seed"] == r["seed"] and sub["restarts"] == 0 and sub["eval_episodes"] == 0
        assert load_checkpoint(run / f"restart_{k}")["selection"]["score"] == pytest.approx(r["score"])
    top, sub = load_checkpoint(run), load_checkpoint(run / f"restart_{kept}")
    assert top["restart"] == {"restart": kept, "seed": restarts[kept]["seed"]}
    assert top["config"]["seed"] == 1 and top["config"]["restarts"] == 2   # the run's config: its evaluation worlds
    for part in ("actors", "critics"):
        for g in sub[part]:
            for k, t in sub["selection"][part][g].items():
                assert torch.equal(top["selection"][part][g][k], t)
    assert rows(run / "metrics.csv") == rows(run / f"restart_{kept}" / "metrics.csv")
    report = json.loads((run / "eval.json").read_text())
    assert report["seed"] == 1 and report["selected"]["restart"] == kept
    assert report["selected"]["score"] == pytest.approx(scores[kept])
    assert json.loads((run / "config.json").read_text())["restarts"] == 2
    policies, _, _ = load_policies(run)   # war-train eval / render read the kept networks
    kept_policies, _, _ = load_policies(run / f"restart_{kept}")
    for g, p in policies.items():
        torch.testing.assert_close(p.actor.state_dict(), kept_policies[g].actor.state_dict(), rtol=0, atol=0)


def test_restarting_stops_once_a_restart_reaches_restart_below(tmp_path):
    full = run_training(config(), run_dir=tmp_path / "full", log=quiet)
    scores = [r["score"] for r in json.loads((full / "restarts.json").read_text())["restarts"]]
    target = max(scores[:2])   # restart 0 or 1 reaches it: restart 2 is not trained
    run = run_training(config(restart_below=target), run_dir=tmp_path / "run", log=quiet)
    record = json.loads((run / "restarts.json").read_text())
    n = 1 if scores[0] >= target else 2
    assert len(record["restarts"]) == n and not (run / f"restart_{n}").exists()
    assert [r["score"] for r in record["restarts"]] == scores[:n]


def test_a_stopped_run_resumes_into_the_same_restarts(tmp_path):
    straight = run_training(config(), run_dir=tmp_path / "straight", log=quiet)
    calls = []

    def stop_in_restart_1(row):   # restart 0 trains 4 updates; stop at restart 1's second
        calls.append(row["update"])
        return len(calls) < UPDATES + 2

    cut = tmp_path / "cut"
    run_training(config(), run_dir=cut, progress_fn=stop_in_restart_1, log=quiet)
    assert load_checkpoint(cut / "restart_1")["update"] == 2 and not (cut / "restart_2").exists()
    run_training(config(), resume=cut, log=quiet)
    assert (json.loads((cut / "restarts.json").read_text()) == json.loads((straight / "restarts.json").read_text()))
    for k in range(3):
        assert rows(cut / f"restart_{k}" / "metrics.csv") == rows(straight / f"restart_{k}" / "metrics.csv")
    assert json.loads((cut / "eval.json").read_text())["results"] == json.loads((straight / "eval.json").read_text())[
        "results"]


def test_bad_restart_settings_are_refused():
    with pytest.raises(ValueError, match="restarts: 2 restarts pick a policy by its selection score; set select_every"):
        config(select_every=0)
    with pytest.raises(ValueError, match="restarts: expected an integer >= 0, got -1"):
        config(restarts=-1)
    with pytest.raises(ValueError, match="restart_below: expected a number"):
        config(restart_below=float("nan"))
    with pytest.raises(ValueError, match="restart_below: expected a number"):
        config(restart_below=True)


def test_the_war_mode_restarts_too(tmp_path):
    run = run_training(config(num_minibatches=1, restarts=1), run_dir=tmp_path / "run", log=quiet,
                       war=WarConfig(arm="war"))
    record = json.loads((run / "restarts.json").read_text())
    assert [r["restart"] for r in record["restarts"]] == [0, 1]
    assert (run / f"restart_{record['kept']}" / "war_config.json").exists()
    assert json.loads((run / "eval.json").read_text())["selected"]["restart"] == record["kept"]


def test_resume_refuses_restarts_of_another_config(tmp_path):
    run = run_training(config(restarts=1), run_dir=tmp_path / "run", log=quiet)
    before = (run / "config.json").read_text()
    with pytest.raises(ValueError, match=r"config.json' was trained with a different config: lr="):
        run_training(config(restarts=1, lr=1e-4), resume=run, log=quiet)
    assert (run / "config.json").read_text() == before   # (the run folder as it was)
    (run / "config.json").write_text(json.dumps({**json.loads(before), "lr": 1e-4}))   # an edited run config:
    with pytest.raises(ValueError, match=r"restart_0.*was trained with a different config: lr="):
        run_training(config(restarts=1, lr=1e-4), resume=run, log=quiet)      # its restarts still refuse


def test_the_cli_resumes_a_run_with_restarts(tmp_path):
    from war_train.run.cli import main as cli_main

    args = ["train", "Spread-v0", "--preset", "smoke", "--restarts", "1", "--select-every", "2", "--select-episodes", "20",
            "--total-env-steps", str(16 * 25 * UPDATES), "--eval-episodes", "10", "--no-gif"]
    assert cli_main([*args, "--run-dir", str(tmp_path / "straight")]) == 0
    cut = tmp_path / "cut"
    # a run stopped in restart 1 (its checkpoint at update 2, no top-level checkpoint yet), resumed by the CLI
    run_training(config(restarts=1), run_dir=cut, progress_fn=lambda row, n=[]: n.append(1) or len(n) < UPDATES + 2,
                 log=quiet)
    assert not (cut / "checkpoint.pt").exists()
    assert cli_main(["train", "--resume", str(cut)]) == 0
    assert rows(cut / "metrics.csv") == rows(tmp_path / "straight" / "metrics.csv")
    assert (json.loads((cut / "restarts.json").read_text()) ==
            json.loads((tmp_path / "straight" / "restarts.json").read_text()))
