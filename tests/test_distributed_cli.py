"""``torchrun --nproc_per_node=2 -m war_train.run.cli train ...``: one set of outputs, written by rank 0,
with the numbers of a one-process run; the checkpoint resumes (in one process here; under
torchrun again in the slow test)."""

import csv
import math
import os
import shutil
import subprocess
import sys

import pytest
import torch
import torch.distributed

from war_train.run import cli
from war_train.checkpoint import load_checkpoint

torch.set_num_threads(1)
pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="torch.distributed with gloo is needed")

ARGS = ["--preset", "smoke", "--num-envs", "16", "--rollout-length", "20", "--num-minibatches", "2",
        "--eval-episodes", "0", "--no-gif", "--no-progress", "--checkpoint-every", "1"]


def torchrun(*args, nproc=2, timeout=300):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", "war_train.run.cli", "train", *args]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def rows(path):
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in ("wall_s", "env_steps_per_s")} for r in csv.DictReader(f)]


def assert_close_rows(a, b):
    assert len(a) == len(b) and a[0].keys() == b[0].keys()
    for ra, rb in zip(a, b):
        for k in ra:
            x, y = float(ra[k]), float(rb[k])
            assert (math.isnan(x) and math.isnan(y)) or y == pytest.approx(x, rel=1e-4, abs=1e-6), k


def test_torchrun_two_ranks_write_one_run_like_one_process(tmp_path):
    two, one = tmp_path / "two", tmp_path / "one"
    proc = torchrun("Spread-v0", *ARGS, "--total-steps", str(16 * 20 * 2), "--run-dir", str(two))
    assert proc.stdout.count("war-train: Spread-v0") == 1  # rank 0 logs, rank 1 is quiet
    assert "on 2 ranks (8 worlds each)" in proc.stdout
    assert sorted(p.name for p in two.iterdir()) == ["checkpoint.pt", "config.json", "learning_curve.png",
                                                      "metrics.csv"]
    assert cli.main(["train", "Spread-v0", *ARGS, "--total-steps", str(16 * 20 * 2), "--run-dir", str(one)]) == 0
    assert_close_rows(rows(one / "metrics.csv"), rows(two / "metrics.csv"))
    ckpt = load_checkpoint(two)
    assert ckpt["distributed"]["world_size"] == 2 and ckpt["env"]["num_envs"] == 16
    assert ckpt["starts"].shape == (16,)
    # any number of ranks resumes it: one process here
    assert cli.main(["train", "--resume", str(two), "--total-steps", str(16 * 20 * 3), "--no-progress"]) == 0
    assert cli.main(["train", "--resume", str(one), "--total-steps", str(16 * 20 * 3), "--no-progress"]) == 0
    assert_close_rows(rows(one / "metrics.csv"), rows(two / "metrics.csv"))
    assert len(rows(two / "metrics.csv")) == 3


def test_uneven_worlds_are_a_clear_error(tmp_path):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "war_train.run.cli", "train", "Spread-v0", *ARGS, "--num-envs", "15", "--run-dir", str(tmp_path / "x")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode != 0
    assert "num_envs: 15 worlds cannot be split evenly over 2 ranks" in proc.stderr


@pytest.mark.slow
def test_torchrun_learns_spread_and_resumes_under_torchrun(tmp_path):
    # Spread with one agent (one landmark): learns within a few updates on 2 ranks; then a
    # torchrun resume continues the run in its folder
    run = tmp_path / "run"
    common = ["--preset", "smoke", "--env-kwargs", '{"N": 1}', "--num-envs", "32", "--epochs", "5", "--lr", "3e-3",
              "--critic-lr", "3e-3", "--eval-episodes", "0", "--no-gif", "--no-progress", "--checkpoint-every", "5"]
    torchrun("Spread-v0", *common, "--total-steps", str(32 * 25 * 6), "--run-dir", str(run))
    torchrun("--resume", str(run), "--total-steps", str(32 * 25 * 12))
    r = rows(run / "metrics.csv")
    assert [int(x["update"]) for x in r] == list(range(1, 13))
    returns = [float(x["episode_return"]) for x in r]
    assert sum(returns[-3:]) / 3 > sum(returns[:2]) / 2 + 3.0, returns
    shutil.rmtree(run)


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm-to-launcher"])
def test_signal_under_torchrun_writes_the_final_checkpoint(tmp_path, how):
    # Ctrl-C in a terminal signals the whole process group (launcher and every rank) and the
    # launcher forwards it again; a scheduler's SIGTERM reaches the launcher, which forwards it.
    # Either way the ranks finish the update together, rank 0 checkpoints, and the run resumes.
    import signal
    import time

    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "war_train.run.cli", "train", "Spread-v0", *ARGS, "--checkpoint-every", "0",
           "--total-steps", str(16 * 20 * 2000), "--run-dir", str(run)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"), start_new_session=True)
    deadline = time.monotonic() + 240
    while not ((run / "metrics.csv").exists() and len(rows(run / "metrics.csv")) >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.05)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    sig = "SIGINT" if how == "ctrl-c" else "SIGTERM"
    assert f"{sig} received" in err and "KeyboardInterrupt" not in err, err[-3000:]
    done = rows(run / "metrics.csv")
    assert load_checkpoint(run)["update"] == int(done[-1]["update"]) < 2000   # the signal's checkpoint
    assert cli.main(["train", "--resume", str(run), "--total-steps", str(16 * 20 * (len(done) + 2)),
                     "--no-progress"]) == 0
    assert len(rows(run / "metrics.csv")) == len(done) + 2
