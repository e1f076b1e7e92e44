"""A run refused under torchrun stops every rank with the same one-line error (``DataParallel.agree``).

Each case trains a small run in this process, then resumes it on 2 gloo ranks in a way that is
refused: both ranks must exit with status 2 and the same ``war-train train: error: ...`` line
within the time limit.  The ranks are ``war-train train`` processes given the variables torchrun
sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) but started
without torchrun's agent, which would stop a rank left waiting in a collective once another
failed: here such a rank runs past the limit and fails the test instead of hiding the hang.

Refusals decided by every rank (the config, a WAR checkpoint of another number of ranks) and
by rank 0 alone (a ``metrics.csv`` of other columns, a restarts run's ``config.json``).
"""

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest
import torch
import torch.distributed

from war_train.learn import distributed
from war_train.run.cli import main as cli_main

torch.set_num_threads(1)
pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="torch.distributed with gloo is needed")
ROOT = pathlib.Path(__file__).resolve().parents[1]
#: seconds both ranks get to start, refuse and exit (about 15 s on 2 CI cores)
LIMIT_S = 150
LOCKSTEP = ["Spread-v0", "--preset", "smoke", "--num-envs", "16", "--rollout-length", "20", "--num-minibatches", "2",
            "--eval-episodes", "0", "--no-gif", "--no-progress", "--checkpoint-every", "1",
            "--total-steps", str(16 * 20)]
RESTARTS = [*LOCKSTEP, "--restarts", "1", "--restart-below=-1e9", "--select-every", "1", "--select-episodes", "4"]
WAR = ["Command-v0", "--war", "--arm", "war", "--preset", "smoke", "--num-envs", "10", "--total-steps", str(10 * 25),
       "--no-gif", "--eval-episodes", "0", "--no-progress"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_ranks(args: list[str], logs: pathlib.Path) -> list[tuple[int, str]]:
    """``war-train train ARGS`` on 2 ranks: each rank's ``(exit status, stderr)``."""
    port, procs = free_port(), []
    logs.mkdir(parents=True, exist_ok=True)
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        with open(logs / f"rank{rank}.out", "w") as out, open(logs / f"rank{rank}.err", "w") as err:
            procs.append(subprocess.Popen([sys.executable, "-m", "war_train.run.cli", "train", *args], cwd=ROOT, env=env,
                                          stdout=out, stderr=err))
    deadline = time.monotonic() + LIMIT_S
    try:
        for rank, p in enumerate(procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pytest.fail(f"rank {rank} still runs {LIMIT_S} s after the start (waiting for a rank that stopped?); "
                            f"statuses {[q.poll() for q in procs]}; stderr of each rank: "
                            + " | ".join((logs / f"rank{r}.err").read_text()[-1500:] for r in range(2)))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [(p.returncode, (logs / f"rank{r}.err").read_text()) for r, p in enumerate(procs)]


def assert_same_refusal(results: list[tuple[int, str]], expected: str) -> None:
    lines = [([x for x in err.splitlines() if x.strip()] or [""])[-1] for _, err in results]
    assert [status for status, _ in results] == [2, 2], results
    assert lines[0] == lines[1], lines
    assert lines[0].startswith("war-train train: error: ") and expected in lines[0], lines[0]
    assert not any("Traceback" in err for _, err in results), results


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Runs of one update, trained in this process: ``{"lockstep", "restarts", "war"}`` -> run folder."""
    base = tmp_path_factory.mktemp("refusals")
    runs = {"lockstep": LOCKSTEP, "restarts": RESTARTS, "war": WAR}
    for name, args in runs.items():
        assert cli_main(["train", *args, "--run-dir", str(base / name)]) == 0
    return {name: base / name for name in runs}


def copy_run(trained, name, tmp_path) -> pathlib.Path:
    run = tmp_path / name
    shutil.copytree(trained[name], run)
    return run


def test_a_config_change_is_refused_on_every_rank(trained, tmp_path):
    run = copy_run(trained, "lockstep", tmp_path)
    results = two_ranks(["--resume", str(run), "--lr", "1e-4"], tmp_path / "logs")
    assert_same_refusal(results, f"resume: {str(run / 'checkpoint.pt')!r} was trained with a different config: lr=")


def test_a_refusal_of_rank_0_alone_stops_every_rank(trained, tmp_path):
    # only rank 0 opens metrics.csv: one of other columns (another version's) is refused there
    run = copy_run(trained, "lockstep", tmp_path)
    text = (run / "metrics.csv").read_text()
    (run / "metrics.csv").write_text(text.replace("update,", "update_,", 1))
    results = two_ranks(["--resume", str(run), "--total-steps", str(16 * 20 * 2)], tmp_path / "logs")
    assert_same_refusal(results, "metrics.csv: columns differ from this run's; cannot resume into it")


def test_a_restarts_config_refused_by_rank_0_stops_every_rank(trained, tmp_path):
    run = copy_run(trained, "restarts", tmp_path)
    before = (run / "config.json").read_text()
    results = two_ranks(["--resume", str(run), "--lr", "1e-4"], tmp_path / "logs")
    assert_same_refusal(results, f"resume: {str(run / 'config.json')!r} was trained with a different config: lr=")
    assert (run / "config.json").read_text() == before


def test_a_war_checkpoint_of_one_rank_is_refused_on_two(trained, tmp_path):
    run = copy_run(trained, "war", tmp_path)
    results = two_ranks(["--resume", str(run)], tmp_path / "logs")
    assert_same_refusal(results, "was written by a WAR run on 1 rank(s); a WAR run resumes exactly only on as many "
                                 "ranks")


_LEAVE_SCRIPT = """
import os, sys, torch
from war_train.learn import distributed
assert "torch._dynamo" not in sys.modules, "the check needs torch._dynamo first imported inside the run"
with distributed.launch("cpu") as dist:
    torch.optim.Adam(torch.nn.Linear(2, 2).parameters())   # (imports torch._dynamo)
    dist.agree(lambda: None, main_only=True)
threads = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print("gloo threads left:", sorted(t for t in threads if "gloo" in t))
"""


@pytest.mark.skipif(not pathlib.Path("/proc/self/task").is_dir(), reason="reads the threads from /proc")
def test_leaving_the_process_group_stops_its_threads(tmp_path):
    # a group left alive past ``launch`` (torch._dynamo holding references to it) keeps its gloo
    # threads into interpreter exit, where one still releasing a collective's tensors aborts the
    # rank after its run has ended (exit -6, "terminate called without an active exception")
    port, procs = free_port(), []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, "-c", _LEAVE_SCRIPT], cwd=ROOT, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate(timeout=LIMIT_S) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert [out.strip().splitlines()[-1] for out, _ in outs] == ["gloo threads left: []"] * 2, outs


class _Unpicklable(ValueError):
    def __init__(self, what, why):   # (pickle calls it with one argument: the copy fails)
        super().__init__(f"{what}: {why}")


def _refuse_on(rank: int, exc: Exception):
    def fn():
        if torch.distributed.get_rank() == rank:
            raise exc
        return f"ok on rank {torch.distributed.get_rank()}"
    return fn


def _agree_worker(rank, port, out_dir):
    os.environ.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    cases = {"ok": (_refuse_on(-1, None), {}), "ok_main": (_refuse_on(-1, None), {"main_only": True}),
             "rank1": (_refuse_on(1, FileNotFoundError("checkpoint: no such file 'x'")), {}),
             "rank0_main": (_refuse_on(0, ValueError("resume: refused")), {"main_only": True}),
             "key": (_refuse_on(1, KeyError("selection")), {}),
             "unpicklable": (_refuse_on(0, _Unpicklable("resume", "refused")), {})}
    seen = {}
    with distributed.launch("cpu") as dist:
        for name, (fn, kw) in cases.items():   # (one after another: the ranks stay in step after a refusal)
            try:
                seen[name] = ("value", dist.agree(fn, **kw))
            except Exception as exc:
                seen[name] = (type(exc).__name__, str(exc))
    torch.save(seen, os.path.join(out_dir, f"rank{rank}.pt"))


def test_agree_raises_the_first_refusing_ranks_error_on_every_rank(tmp_path):
    import torch.multiprocessing as mp

    ctx = mp.spawn(_agree_worker, args=(free_port(), str(tmp_path)), nprocs=2, join=False)
    deadline = time.monotonic() + LIMIT_S
    while not ctx.join(timeout=1):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail(f"the ranks still run {LIMIT_S} s after the start")
    seen = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    assert seen[0]["ok"] == ("value", "ok on rank 0") and seen[1]["ok"] == ("value", "ok on rank 1")
    assert seen[0]["ok_main"] == ("value", "ok on rank 0") and seen[1]["ok_main"] == ("value", None)
    for name, expected in {"rank1": ("FileNotFoundError", "checkpoint: no such file 'x'"),
                           "rank0_main": ("ValueError", "resume: refused"), "key": ("KeyError", "'selection'"),
                           "unpicklable": ("ValueError", "resume: refused")}.items():   # (its built-in base)
        assert seen[1][name] == expected, name
        assert seen[0][name] == (expected if name != "unpicklable" else ("_Unpicklable", "resume: refused")), name
