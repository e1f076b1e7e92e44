"""benchmarks/classic_throughput.py: its tables of action spaces and episode limits are
Gymnasium's, the pre-drawn actions are the spaces', a quick run of the Gymnasium column (no peer
venv installed) gives complete records and the docs renderer's table, and war-envs ids that are
not registered are skipped with a note.  No wall-clock assertions: the figures are measured by
hand (module docstring)."""

import importlib.util
import json
import pathlib

import gymnasium as gym
import numpy as np
import pytest

import war_envs

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name, folder="benchmarks"):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tables_are_gymnasiums():
    ct = load("classic_throughput")
    assert set(ct.ACTIONS) == set(ct.EPISODE_LIMITS) == set(ct.ENVS)
    for env_id in ct.ENVS:
        env = gym.make(env_id)
        ct.check_action_space(env_id, env.action_space)  # raises if the table is wrong
        assert env.spec.max_episode_steps == ct.EPISODE_LIMITS[env_id], env_id
        # Gymnasium's own vector env where it has one, SyncVectorEnv otherwise
        has_vector = gym.spec(env_id).vector_entry_point is not None
        assert (ct.GYMNASIUM_MODES.get(env_id) == "vector_entry_point") == has_vector, env_id
        env.close()
    with pytest.raises(ValueError, match="Pendulum-v1: expected the action space"):
        ct.check_action_space("Pendulum-v1", gym.spaces.Box(-1.0, 1.0, (1,)))
    with pytest.raises(ValueError, match="CartPole-v1"):
        ct.check_action_space("CartPole-v1", gym.spaces.Discrete(3))


def test_action_pool_draws_from_the_spaces():
    ct = load("classic_throughput")
    discrete = ct.action_pool("Acrobot-v1", 1000)
    assert discrete.shape == (ct.POOL, 1000) and discrete.dtype == np.int64
    counts = np.bincount(discrete.ravel(), minlength=3)
    n = discrete.size
    assert counts.size == 3 and (np.abs(counts - n / 3) < 5 * np.sqrt(n * 2 / 9)).all(), counts  # 5 sigma
    box = ct.action_pool("Pendulum-v1", 1000)
    assert box.shape == (ct.POOL, 1000, 1) and box.dtype == np.float32
    assert box.min() >= -2.0 and box.max() <= 2.0 and box.min() < -1.9 and box.max() > 1.9
    np.testing.assert_array_equal(box, ct.action_pool("Pendulum-v1", 1000))  # seeded
    assert ct.steps_per_call(1, scanned=False) == 100 and ct.steps_per_call(65536, scanned=False) == 1
    assert ct.steps_per_call(1, scanned=True) == 1000 and ct.steps_per_call(65536, scanned=True) == 10


def test_bad_arguments_are_refused(capsys):
    ct = load("classic_throughput")
    for argv, expected in ((["--envs", "CartPole-v0"], "--envs: unknown 'CartPole-v0'"),
                           (["--frameworks", "brax"], "--frameworks: unknown 'brax'"),
                           (["--worlds", "0"], "--worlds"), (["--target-s", "0"], "--target-s")):
        with pytest.raises(SystemExit):
            ct.parse_args(argv)
        assert expected in capsys.readouterr().err
    args = ct.parse_args(["--quick"])
    assert args.worlds == list(ct.QUICK_WORLDS) and args.frameworks == list(ct.FRAMEWORKS)
    assert ct.parse_args([]).worlds == [1, 64, 4096, 65536]


def test_quick_gymnasium_run_records(tmp_path, capsys):
    ct = load("classic_throughput")
    out = tmp_path / "classic.json"
    records = ct.main(["--quick", "--frameworks", "gymnasium", "--target-s", "0.02", "--json", str(out)])
    assert [(r["env_id"], r["worlds"], r["framework"]) for r in records] == [
        (e, w, "gymnasium") for e in ct.ENVS for w in (1, 64)]
    for r in records:
        assert r["error"] is None and r["env_steps_per_s"] > 0, r
        assert r["env_steps_per_repeat"] == r["steps_per_repeat"] * r["worlds"]
        assert r["steps_per_repeat"] % r["steps_per_call"] == 0
        assert len(r["repeat_env_steps_per_s"]) == len(r["cpu_seconds_per_repeat"]) == r["repeats"] == 3
        assert r["episode_limit"] == ct.EPISODE_LIMITS[r["env_id"]] and r["pool"] == ct.POOL
        assert r["over_best_peer"] is None  # a peer record
        assert r["cpus"] and r["threads"] == 1 and r["target_s"] == 0.02
        assert r["versions"]["gymnasium"] == gym.__version__
        assert {"command", "date", "machine", "versions"} <= set(r) and {"cpu", "cores"} <= set(r["machine"])
        if r["steps_per_repeat"] < ct.FEW_STEPS:  # says so
            assert r["note"].startswith(f"timed {r['steps_per_repeat']} step(s) per repeat")
        else:
            assert r["note"] is None
        impl = "CartPoleVectorEnv" if r["env_id"] == "CartPole-v1" else "SyncVectorEnv"
        assert r["impl"].endswith(impl), r["impl"]
    assert json.loads(out.read_text()) == json.loads(json.dumps(records, default=str))
    text = capsys.readouterr().out
    assert all(f"\n{e} (episodes of at most" in text for e in ct.ENVS) and "gymnasium: gymnasium" in text

    # the docs renderer: a row per (env, worlds), the peers' cells filled, ours "–" here
    tables = load("tables", "scripts")
    rendered = tables.classic_throughput(json.loads(out.read_text()))
    lines = rendered.splitlines()
    assert lines[0].startswith("| env | worlds | war-envs vector env | war-envs batch API | Gymnasium |")
    body = [line for line in lines[2:] if line.startswith("| ")]
    assert len(body) == 2 * len(ct.ENVS)
    cells = body[0].strip("| ").split(" | ")
    assert cells[:2] == ["CartPole-v1", "1"] and cells[2:4] == ["–", "–"] and cells[4] != "–"
    assert "`classic_throughput.py --quick" in rendered and f"Versions: gymnasium {gym.__version__}" in rendered


def test_table_marks_skipped_failed_and_short_cells():
    ct = load("classic_throughput")

    def rec(framework, eps, error=None, note=None, steps=1000):
        return {"env_id": "CartPole-v1", "worlds": 1, "framework": framework, "env_steps_per_s": eps,
                "error": error, "note": note, "steps_per_repeat": steps, "over_best_peer": None, "best_peer": None}

    records = [rec(ct.OURS_VECTOR, 300.0), rec(ct.OURS_BATCH, None, note="not run: not registered"),
               rec("gymnasium", 100.0), rec("envpool", 150.0, note="timed 3 step(s) per repeat", steps=3),
               rec("gymnax", None, error="boom")]
    ct.fill_ratios(records)
    assert records[0]["over_best_peer"] == 2.0 and records[0]["best_peer"] == "envpool"
    assert records[1]["over_best_peer"] is None
    headers, rows, notes = ct.table_rows(records, "CartPole-v1", list(ct.FRAMEWORKS))
    assert headers == ["worlds", *ct.FRAMEWORKS, "vector/best peer", "batch/best peer"]
    assert rows == [["1", "300.0", "n/r[1]", "100.0", "150.0 *[2]", "err[3]", "2.00× (envpool)", "-"]]
    assert notes == ["war-envs-batch: not run: not registered", "envpool at 1 worlds: timed 3 step(s) per repeat",
                     "gymnax: boom"]


def test_war_envs_columns_measure_or_skip(capsys):
    """Our columns at one world: measured (the classic ids registered), or skipped with a note."""
    ct = load("classic_throughput")
    records = ct.main(["--quick", "--envs", "CartPole-v1,Pendulum-v1", "--worlds", "1", "--target-s", "0.02",
                       "--frameworks", "war-envs-vector,war-envs-batch,gymnasium"])
    out = capsys.readouterr().out
    by = {(r["env_id"], r["framework"]): r for r in records}
    for env_id in ("CartPole-v1", "Pendulum-v1"):
        assert by[(env_id, "gymnasium")]["env_steps_per_s"] > 0
        for fw in ct.OURS:
            r = by[(env_id, fw)]
            if env_id in war_envs.registered_ids():
                assert r["error"] is None and r["env_steps_per_s"] > 0, r
                assert r["over_best_peer"] == r["env_steps_per_s"] / by[(env_id, "gymnasium")]["env_steps_per_s"]
                assert r["best_peer"] == "gymnasium"
            else:
                assert r["env_steps_per_s"] is None and r["error"] is None
                assert r["note"] == "not run: not registered in war_envs (yet)"
                assert f"skipped: war-envs has no {env_id}" in out


def _venv(peer):
    return pathlib.Path("~/.cache/war-envs/bench-venvs").expanduser() / peer / "bin" / "python"


@pytest.mark.skipif(not (_venv("envpool").exists() and _venv("gymnax").exists()),
                    reason="envpool's or gymnax's venv is absent (python benchmarks/classic_throughput.py installs them)")
def test_peer_columns_tiny_run():
    """envpool and gymnax in their venvs: a discrete and a continuous env at two worlds."""
    ct = load("classic_throughput")
    records = ct.main(["--quick", "--envs", "CartPole-v1,Pendulum-v1", "--worlds", "2", "--target-s", "0.02",
                       "--frameworks", "envpool,gymnax", "--no-install"])
    for r in records:
        assert r["error"] is None and r["env_steps_per_s"] > 0, r
    by = {(r["env_id"], r["framework"]): r for r in records}
    assert by[("CartPole-v1", "gymnax")]["impl"] == "jit(scan(1000 x vmap(env.step)))"
    assert by[("Pendulum-v1", "envpool")]["versions"]["envpool"] in ("1.2.5", "1.2.7")
    assert by[("Pendulum-v1", "gymnax")]["versions"]["gymnax"] == "1.0.1"
