"""The training benchmarks run end to end on tiny sizes (their figures are measured by hand:
tests never assert wall-clock times, only that the rows are complete and consistent)."""

import importlib.util
import json
import math
import pathlib

import torch

torch.set_num_threads(1)
BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_speed_rows_and_breakdown(tmp_path, capsys):
    train_speed = load("train_speed")
    out = tmp_path / "speed.json"
    rows = train_speed.main(["--scenarios", "Spread-v0,Tag-v0", "--worlds", "16", "--updates", "2", "--warmup", "1",
                             "--set", "epochs=1", "--json", str(out)])
    assert [r["scenario"] for r in rows] == ["Spread-v0", "Tag-v0"]
    for r in rows:
        shares = [r[f"{p}_share"] for p in train_speed.PHASES]
        assert math.isclose(sum(shares), 1.0, rel_tol=1e-9) and all(s > 0 for s in shares)
        assert r["agent_steps_per_s"] == r["env_steps_per_s"] * r["agents_per_world"]
        assert r["updates"] == 2 and r["epochs"] == 1
        assert {"command", "date", "machine", "versions"} <= set(r)
    assert json.loads(out.read_text())[0]["worlds"] == 16
    assert "outside nets" in capsys.readouterr().out


def test_learning_table_over_seeds(tmp_path):
    learning = load("learning")
    rows = learning.main(["--preset", "smoke", "--seeds", "1,2", "--quick", "--out", str(tmp_path / "runs"),
                          "--json", str(tmp_path / "learning.json")])
    assert [r["seed"] for r in rows] == [1, 2]
    for r in rows:
        assert r["metric"] == "onpolicy_episode_reward" and math.isfinite(r["train_last5"])
        assert {"eval/greedy", "eval/random", "eval/greedy@onpolicy_init"} <= set(r)
    assert rows[0]["eval/greedy"] != rows[1]["eval/greedy"]   # different seeds, different runs
