"""Crash safety of training runs: signals, SIGKILL (also mid-checkpoint-write), NaN/inf, unsafe or
damaged checkpoints, and byte-identical metrics files from the same seed.

The killed runs are real ``war-train`` processes; resuming them must reproduce, number for number,
an uninterrupted run (every metrics column but wall-clock, and the final weights).
"""

import csv
import os
import pathlib
import random
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest
import torch

import war_envs
import war_train
from war_train.checkpoint import load_checkpoint, save_checkpoint
from war_train.run.cli import main as cli_main
from war_train.learn.policy import load_policies
from war_train.run.training import run_training
from war_train.stopping import NonFiniteTraining

torch.set_num_threads(1)
ROOT = pathlib.Path(__file__).resolve().parents[1]
UPDATES = 150          # long enough (seconds) that a signal always lands mid-run
WALL = ("wall_s", "env_steps_per_s")


def config(**overrides):
    values = dict(total_env_steps=16 * 25 * UPDATES, checkpoint_every=1, gif=False, eval_episodes=0)
    values.update(overrides)
    return war_train.preset_config("smoke", **values)


def cli_args(run_dir, checkpoint_every: int = 1) -> list[str]:
    return ["train", "Spread-v0", "--preset", "smoke", "--total-env-steps", str(16 * 25 * UPDATES),
            "--checkpoint-every", str(checkpoint_every), "--no-gif", "--eval-episodes", "0",
            "--run-dir", str(run_dir)]


def start(args: list[str], prefix: tuple[str, ...] = ("-m", "war_train.run.cli")) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, *prefix, *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def rows(run_dir) -> list[dict]:
    path = pathlib.Path(run_dir) / "metrics.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in WALL} for r in csv.DictReader(f) if None not in r.values()]


def wait_for(predicate, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the run ended early (status {proc.returncode}):\n{err[-3000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("timed out waiting for the run")
        time.sleep(0.02)


def assert_same_run(reference, run_dir) -> None:
    """Same metrics rows (every column but wall-clock) and the same final networks and env."""
    assert rows(run_dir) == reference["rows"]
    ckpt = load_checkpoint(run_dir)
    assert ckpt["update"] == UPDATES
    for key in ("actors", "critics"):
        for name, t in ckpt[key]["agent"].items():
            assert torch.equal(t, reference["ckpt"][key]["agent"][name]), (key, name)
    for name, t in ckpt["env_state"].items():
        assert torch.equal(t, reference["ckpt"]["env_state"][name]), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run every interrupted one must reproduce."""
    run_dir = tmp_path_factory.mktemp("reference")
    run_training(config(), run_dir=run_dir, log=lambda *a: None)
    return {"rows": rows(run_dir), "ckpt": load_checkpoint(run_dir)}


# ----------------------------------------------------------------------------- signals
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_writes_a_final_checkpoint_and_exits_cleanly(tmp_path, reference, sig):
    run_dir = tmp_path / "run"
    proc = start(cli_args(run_dir, checkpoint_every=0))   # no periodic checkpoints: only the signal's
    wait_for(lambda: len(rows(run_dir)) >= 3, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert f"{signal.Signals(sig).name} received" in err and "--resume" in err
    ckpt = load_checkpoint(run_dir)
    done = rows(run_dir)
    assert ckpt["update"] == int(done[-1]["update"]) < UPDATES    # the update in flight finished
    assert not (run_dir / "eval.json").exists()
    assert cli_main(["train", "--resume", str(run_dir)]) == 0
    assert_same_run(reference, run_dir)


# ----------------------------------------------------------------------------- SIGKILL
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sigkill_at_a_random_moment_then_resume_is_exact(tmp_path, reference, seed):
    # a checkpoint every update, so the kill often lands inside a checkpoint write too
    run_dir = tmp_path / "run"
    proc = start(cli_args(run_dir, checkpoint_every=1))
    wait_for(lambda: (run_dir / "checkpoint.pt").exists(), proc)
    delay = random.Random(seed).uniform(0.0, 1.5)
    time.sleep(delay)
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, f"the run finished within {delay:.2f} s; make UPDATES larger"
    ckpt = load_checkpoint(run_dir)        # the last complete checkpoint loads
    assert 1 <= ckpt["update"] <= len(rows(run_dir)) + 1
    assert cli_main(["train", "--resume", str(run_dir)]) == 0
    assert_same_run(reference, run_dir)
    assert not list(run_dir.glob(".checkpoint.pt.*.tmp"))


FREEZE_IN_CHECKPOINT_WRITE = textwrap.dedent("""
    # Run war-train, but freeze inside the N-th checkpoint write: the temporary file is written,
    # not yet fsynced nor renamed over checkpoint.pt.  The test SIGKILLs the process there.
    import os, pathlib, sys, time
    marker, target = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    real_fsync, count = os.fsync, [0]
    def fsync(fd):
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if ".checkpoint.pt." in name and name.endswith(".tmp"):
            count[0] += 1
            if count[0] == target:
                marker.write_text(name)
                time.sleep(600)
        return real_fsync(fd)
    os.fsync = fsync
    from war_train.run.cli import main
    sys.exit(main(sys.argv[3:]))
""")


@pytest.mark.skipif(not pathlib.Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_sigkill_during_a_checkpoint_write_keeps_the_previous_checkpoint(tmp_path, reference):
    run_dir, marker = tmp_path / "run", tmp_path / "frozen"
    proc = start([str(marker), "3", *cli_args(run_dir, checkpoint_every=2)],
                 prefix=("-c", FREEZE_IN_CHECKPOINT_WRITE))
    wait_for(marker.exists, proc)
    proc.kill()
    proc.communicate(timeout=60)
    temporary = pathlib.Path(marker.read_text())
    assert temporary.exists()                       # the torn write is left behind...
    assert load_checkpoint(run_dir)["update"] == 4  # ...and checkpoint.pt is the complete one before it
    assert len(rows(run_dir)) == 6
    assert cli_main(["train", "--resume", str(run_dir)]) == 0
    assert_same_run(reference, run_dir)
    assert not temporary.exists()


# ----------------------------------------------------------------------------- NaN / inf
class RewardsFrom:
    """A real Spread env whose rewards become ``value`` from env step ``at`` on (what a scenario
    bug or an exploding reward looks like to the trainer)."""

    def __init__(self, env, at: int, value: float) -> None:
        self.env, self.at, self.value, self.steps = env, at, value, 0

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step(self, actions, **kw):
        obs, rew, term, trunc, info = self.env.step(actions, **kw)
        self.steps += 1
        if self.steps >= self.at:
            rew = {g: torch.full_like(r, self.value) for g, r in rew.items()}
        return obs, rew, term, trunc, info


@pytest.mark.parametrize("value, what", [(float("nan"), "non-finite rewards"), (float("inf"), "non-finite rewards"),
                                         (3e38, "(gradient norm|parameter)")], ids=["nan", "inf", "overflow"])
def test_non_finite_numbers_stop_the_run_and_keep_the_last_good_checkpoint(tmp_path, reference, value, what):
    cfg = config(checkpoint_every=2)
    run_dir = tmp_path / "run"
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed) as env:
        bad = RewardsFrom(env, at=2 * 25 + 5, value=value)   # in update 3
        with pytest.raises(NonFiniteTraining, match=rf"update 3: .*{what}.*last good checkpoint is .*checkpoint.pt"):
            war_train.train(bad, cfg, run_dir=run_dir)
    assert load_checkpoint(run_dir)["update"] == 2
    assert len(rows(run_dir)) == 2                  # update 3 left no row
    assert cli_main(["train", "--resume", str(run_dir)]) == 0   # the good checkpoint continues exactly
    assert_same_run(reference, run_dir)


def test_non_finite_error_through_the_cli_is_one_clear_line(tmp_path, capsys, monkeypatch):
    import war_train.run.training as run_module

    real_make = run_module.make_env
    monkeypatch.setattr(run_module, "make_env", lambda cfg, dist=None: RewardsFrom(real_make(cfg, dist), 30, float("nan")))
    status = cli_main(cli_args(tmp_path / "run", checkpoint_every=1))
    err = capsys.readouterr().err
    assert status == 3
    assert "training stopped in update 2: the env returned non-finite rewards for group 'agent'" in err
    assert "Traceback" not in err


# ----------------------------------------------------------------------------- safe loading
def make_small_run(run_dir) -> pathlib.Path:
    """A 2-update smoke run: the good checkpoint the bad ones below are made from."""
    run_training(config(total_env_steps=16 * 25 * 2), run_dir=run_dir, log=lambda *a: None)
    return pathlib.Path(run_dir)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    return make_small_run(tmp_path_factory.mktemp("small"))


class _RunsCode:
    """Unpickling this would create ``marker``: a stand-in for arbitrary code in a pickle."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


def _truncated(good, tmp):
    data = (good / "checkpoint.pt").read_bytes()
    (tmp / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    return tmp / "checkpoint.pt"


def _flipped_byte(good, tmp):
    # one byte inside the largest stored tensor: torch's zip reader would load it silently
    data = bytearray((good / "checkpoint.pt").read_bytes())
    with zipfile.ZipFile(good / "checkpoint.pt") as z:
        info = max(z.infolist(), key=lambda i: i.file_size)
    header = data[info.header_offset: info.header_offset + 30]
    start_of_data = (info.header_offset + 30 + int.from_bytes(header[26:28], "little")
                     + int.from_bytes(header[28:30], "little"))
    data[start_of_data + info.file_size // 2] ^= 0x40
    (tmp / "checkpoint.pt").write_bytes(bytes(data))
    return tmp / "checkpoint.pt"


def _saved(obj):
    def make(good, tmp):
        torch.save(obj(tmp) if callable(obj) else obj, tmp / "checkpoint.pt")
        return tmp / "checkpoint.pt"
    return make


def _edited(edit):
    def make(good, tmp):
        payload = load_checkpoint(good)
        edit(payload)
        save_checkpoint(tmp / "checkpoint.pt", payload)   # (re-checksummed: a well-formed file)
        return tmp / "checkpoint.pt"
    return make


def _resume_with(**overrides):
    def call(path):
        cfg = config(total_env_steps=16 * 25 * 4, **overrides)
        with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed) as env:
            war_train.train(env, cfg, resume=path)
    return call


def _drop_resume_state(payload):
    from war_train.checkpoint import RESUMABLE

    for key in RESUMABLE:
        del payload[key]


#: (case, how the file is made from a good run, what is done with it, what the error must say).
#: docs/errors.md lists these with the errors they get (scripts/error_table.py).
CHECKPOINT_CASES = [
    ("truncated to half its size", _truncated, load_checkpoint,
     "not a readable war_train checkpoint .truncated, corrupted or not written by war_train"),
    ("one byte of tensor data flipped", _flipped_byte, load_checkpoint, "is corrupted"),
    ("a pickle whose unpickling would run code", _saved(lambda tmp: {"format": "war_train.mappo/2",
                                                                     "actors": _RunsCode(tmp / "executed")}),
     load_checkpoint, "not a readable war_train checkpoint"),
    ("another program's file", _saved({"format": "someone-else/3", "weights": torch.zeros(3)}), load_checkpoint,
     r"has format 'someone-else/3', expected one of \['war_train.mappo/1', 'war_train.mappo/2'\]"),
    ("not a dict", _saved([1, 2, 3]), load_checkpoint, "has format 'list'"),
    ("an entry removed", _edited(lambda p: p.pop("actors")), load_checkpoint,
     r"lacks \(or has malformed\) entries \['actors'\]"),
    ("weights that do not fit its config (hidden_size edited)",
     _edited(lambda p: p["config"].update(hidden_size=32)), load_policies,
     "actor weights of group 'agent' do not fit the network its config describes"),
    ("resumed with another scenario", lambda good, tmp: good / "checkpoint.pt",
     _resume_with(scenario="PredatorPrey-v0"), r"different config: .*scenario='Spread-v0' \(now 'PredatorPrey-v0'\)"),
    ("resumed with another network shape", lambda good, tmp: good / "checkpoint.pt",
     _resume_with(hidden_size=32), r"different config: hidden_size=64 \(now 32\)"),
    ("resumed from a networks-only checkpoint", _edited(_drop_resume_state), _resume_with(),
     "holds networks only"),
    ("no such file", lambda good, tmp: tmp / "missing.pt", load_checkpoint, "no such file"),
]


@pytest.mark.parametrize("desc, make, call, match", CHECKPOINT_CASES, ids=[c[0] for c in CHECKPOINT_CASES])
def test_bad_checkpoints_get_one_clear_error(tmp_path, small_run, desc, make, call, match):
    path = make(small_run, tmp_path)
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        call(path)
    assert not (tmp_path / "executed").exists()     # nothing from the file ran


@pytest.mark.parametrize("desc, make", [c[:2] for c in CHECKPOINT_CASES if c[2] in (load_checkpoint, load_policies)],
                         ids=[c[0] for c in CHECKPOINT_CASES if c[2] in (load_checkpoint, load_policies)])
def test_the_cli_reports_bad_checkpoints_in_one_line(tmp_path, small_run, capsys, desc, make):
    path = make(small_run, tmp_path)
    for argv in (["eval", str(path)], ["render", str(path), "--gif", str(tmp_path / "x.gif")]):
        status = cli_main(argv)
        err = capsys.readouterr().err
        assert status == 2, err
        assert "Traceback" not in err and err.startswith(f"war-train {argv[0]}: error: checkpoint"), err
        assert err.count("\n") == 1


def test_a_flipped_byte_loads_silently_without_the_checksum(tmp_path, small_run):
    torch.load(_flipped_byte(small_run, tmp_path), weights_only=True)   # why the checksum exists


def test_resume_of_another_scenario_through_the_cli(small_run, capsys):
    status = cli_main(["train", "PredatorPrey-v0", "--resume", str(small_run)])
    err = capsys.readouterr().err
    assert status == 2 and "the checkpoint trained 'Spread-v0', not 'PredatorPrey-v0'" in err


def test_a_refused_resume_leaves_the_run_folder_as_it_was(small_run, capsys):
    before = {p.name: p.read_bytes() for p in small_run.iterdir() if p.is_file()}
    status = cli_main(["train", "Spread-v0", "--resume", str(small_run), "--hidden-size", "32"])
    err = capsys.readouterr().err
    assert status == 2 and "different config: hidden_size=64 (now 32)" in err, err
    after = {p.name: p.read_bytes() for p in small_run.iterdir() if p.is_file()}
    assert after == before     # config.json included: written only once a resume is accepted


def test_a_format_1_checkpoint_without_checksum_still_loads(tmp_path, small_run):
    # written before checksums existed (format /1): read without verification
    payload = torch.load(small_run / "checkpoint.pt", weights_only=True)
    del payload["sha256"]
    payload["format"] = "war_train.mappo/1"
    torch.save(payload, tmp_path / "old.pt")
    assert load_checkpoint(tmp_path / "old.pt")["update"] == 2
    payload["format"] = "war_train.mappo/2"    # a /2 checkpoint must carry its checksum
    torch.save(payload, tmp_path / "stripped.pt")
    with pytest.raises(ValueError, match="is corrupted"):
        load_checkpoint(tmp_path / "stripped.pt")


def test_checkpoint_records_format_config_and_scenario(small_run):
    raw = torch.load(small_run / "checkpoint.pt", weights_only=True)
    assert raw["format"] == "war_train.mappo/2"
    assert raw["config"]["scenario"] == raw["env"]["id"] == "Spread-v0"
    assert raw["config"]["num_envs"] == 16 and len(raw["sha256"]) == 64


# ----------------------------------------------------------------------------- determinism
def test_same_seed_writes_an_identical_metrics_file(tmp_path):
    files = []
    for name in ("a", "b"):
        run_training(config(total_env_steps=16 * 25 * 6), run_dir=tmp_path / name, log=lambda *a: None)
        with open(tmp_path / name / "metrics.csv", newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            keep = [i for i, c in enumerate(header) if c not in WALL]
            files.append([header] + [[r[i] for i in keep] for r in reader])
    assert files[0] == files[1] and len(files[0]) == 7


# ----------------------------------------------------------------------------- WAR runs
def war_cli_args(run_dir, updates: int) -> list[str]:
    return ["train", "Command-v0", "--war", "--arm", "war", "--preset", "smoke", "--num-envs", "10",
            "--total-steps", str(10 * 25 * updates), "--no-gif", "--eval-episodes", "0",
            "--war-resource", "shared", "--run-dir", str(run_dir)]


#: WAR columns that measure time (modelled clocks count the measured env-step and learning seconds)
WAR_TIMING = ("model_s", "collect_s", "learn_s", "batch_s", "env_s", "model_env_steps_per_s", "agent_transitions_per_s",
              "decisions_per_s/")


def war_rows(run_dir) -> list[dict]:
    return [{k: v for k, v in r.items() if not k.startswith(WAR_TIMING)} for r in rows(run_dir)]


def test_war_checkpoint_evaluates_and_resumes(tmp_path, capsys):
    run_dir = tmp_path / "war"
    assert cli_main(war_cli_args(run_dir, 2)) == 0
    policies, cfg, _ = load_policies(run_dir)
    assert cfg.scenario == "Command-v0" and set(policies) == {"commander", "sentry"}
    assert cli_main(["eval", str(run_dir), "--episodes", "4"]) == 0
    assert cli_main(["train", "--resume", str(run_dir), "--total-steps", str(10 * 25 * 3)]) == 0
    assert load_checkpoint(run_dir)["update"] == 3 and len(rows(run_dir)) == 3
    capsys.readouterr()
    status = cli_main(["train", "--resume", str(run_dir), "--war-resource", "parallel"])
    err = capsys.readouterr().err
    assert status == 2 and "different WAR config: resource='shared' (now 'parallel')" in err and "Traceback" not in err


def test_sigterm_stops_a_war_run_and_resume_continues_it_exactly(tmp_path):
    run_dir = tmp_path / "war"
    proc = start(war_cli_args(run_dir, 400))
    wait_for(lambda: len(rows(run_dir)) >= 2, proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and f"--resume {run_dir}" in err
    stopped = load_checkpoint(run_dir)["update"]
    assert stopped == int(rows(run_dir)[-1]["update"]) < 400
    assert (run_dir / "war_curve.png").is_file() and not (run_dir / "eval.json").exists()
    # two more updates (total_env_steps may change on resume), then the same run uninterrupted
    assert cli_main(["train", "--resume", str(run_dir), "--total-steps", str(10 * 25 * (stopped + 2))]) == 0
    assert cli_main(war_cli_args(tmp_path / "straight", stopped + 2)) == 0
    assert war_rows(run_dir) == war_rows(tmp_path / "straight") and len(rows(run_dir)) == stopped + 2
    a, b = load_checkpoint(run_dir), load_checkpoint(tmp_path / "straight")
    for key in ("actors", "critics"):
        for g in a[key]:
            for name, t in a[key][g].items():
                assert torch.equal(t, b[key][g][name]), (key, g, name)


def test_non_finite_rewards_stop_a_war_run(tmp_path):
    from war_train.config import WarConfig
    from war_train.presets import ARTICLE_COSTS

    cfg = war_train.preset_config("smoke", scenario="Command-v0", num_envs=10, total_env_steps=10 * 25 * 4)
    env = war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed)
    with pytest.raises(NonFiniteTraining, match="training stopped in update 2: .*gradient norm is nan"):
        war_train.train([RewardsFrom(env, 30, float("nan"))], cfg, run_dir=tmp_path, war=WarConfig(costs=ARTICLE_COSTS))


def test_stop_requests_treat_a_quick_repeat_as_the_same_request():
    from war_train.stopping import ECHO_S, StopRequests

    before = signal.getsignal(signal.SIGTERM)
    with StopRequests(log=lambda msg: None) as stops:
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)        # e.g. the launcher forwarding it again
        assert stops.signum == signal.SIGTERM
        stops._first -= ECHO_S                    # a human pressing again, later
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) == before   # handlers restored


@pytest.mark.parametrize("scenario, env_kwargs", [("Spread-v0", {"continuous_actions": True}),
                                                  ("Tag-v0", {"num_runners": 3, "episode_length": 20})],
                         ids=["box", "multidiscrete"])
@pytest.mark.parametrize("value, what", [(float("nan"), "non-finite rewards"), (3e38, "(gradient norm|parameter)")],
                         ids=["nan", "overflow"])
def test_non_finite_numbers_stop_runs_of_every_action_space(tmp_path, scenario, env_kwargs, value, what):
    cfg = config(scenario=scenario, env_kwargs=env_kwargs, checkpoint_every=2)
    with war_envs.make(cfg.scenario, num_envs=cfg.num_envs, seed=cfg.seed, **env_kwargs) as env:
        bad = RewardsFrom(env, at=2 * 25 + 5, value=value)   # in update 3
        with pytest.raises(NonFiniteTraining, match=rf"update 3: .*{what}.*last good checkpoint is .*checkpoint.pt"):
            war_train.train(bad, cfg, run_dir=tmp_path)
    assert load_checkpoint(tmp_path)["update"] == 2
