"""war-train trains every registered scenario without error: a smoke run (a few updates, the
evaluation, checkpoint and metrics files) on each id with its own action spaces."""

import json
import math

import pytest

import war_envs
import war_train
from war_train.run.training import run_training

# Tag-v0 at its default size (11 agents, 21 x 21 actions) is the slowest: a smaller game
KWARGS = {"Tag-v0": {"num_runners": 4}, "Command-v0": {"num_sentries": 3}}


@pytest.mark.parametrize("env_id", war_envs.registered_ids())
def test_every_scenario_trains(env_id, tmp_path):
    cfg = war_train.preset_config("smoke", scenario=env_id, env_kwargs=KWARGS.get(env_id, {}), num_envs=8,
                                  total_env_steps=8 * 25 * 2, eval_episodes=4, gif=False)
    run = run_training(cfg, run_dir=tmp_path / "run", log=lambda *_: None)
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 3                                        # header + 2 updates
    report = json.loads((run / "eval.json").read_text())["results"]
    assert {"greedy", "sample", "random"} <= set(report)
    assert all(math.isfinite(r["episode_return"]) for r in report.values())
    assert (run / "checkpoint.pt").exists()
