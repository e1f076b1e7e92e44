"""Policy selection (``TrainConfig.select_every``, ``war_train.run.selection``): the run ends with the
networks that scored best on the selection worlds, recorded where a user looks (eval.json,
metrics.csv, the checkpoint), without changing the training itself, exactly across a resume, in
both training modes."""

import csv
import json
import math

import pytest
import torch

import war_train
from war_train.checkpoint import load_checkpoint
from war_train.run.cli import main as cli_main
from war_train.run.evaluate import run_episodes
from war_train.rollout.metrics import summarize
from war_train.learn.policy import load_policies
from war_train.run.training import run_training
from war_train.config import WarConfig

torch.set_num_threads(1)
UPDATES = 12


def config(**overrides):
    values = dict(total_env_steps=16 * 25 * UPDATES, gif=False, eval_episodes=20, progress=False,
                  tensorboard=False, select_every=3, select_episodes=40)
    values.update(overrides)
    return war_train.preset_config("smoke", **values)


def networks(policies) -> dict:
    return {g: {k: v.clone() for k, v in p.actor.state_dict().items()} for g, p in policies.items()}


def same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[g][k], b[g][k]) for g in a for k in a[g])


def scores(run_dir) -> dict[int, float]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return {int(r["update"]): float(r["select/onpolicy_episode_reward"]) for r in csv.DictReader(f)
                if r["select/onpolicy_episode_reward"] != "nan"}


def test_a_run_ends_with_the_best_networks_on_the_selection_worlds(tmp_path):
    run_dir = run_training(config(), run_dir=tmp_path / "run", log=lambda _: None)
    evaluated = scores(run_dir)
    assert sorted(evaluated) == [3, 6, 9, 12]          # every select_every updates and the last
    best = max(evaluated, key=lambda u: (evaluated[u], -u))   # (a tie keeps the earlier)
    report = json.loads((run_dir / "eval.json").read_text())
    assert report["selected"] == {"update": best, "env_steps": best * 16 * 25, "metric": "onpolicy_episode_reward",
                                  "score": pytest.approx(evaluated[best]), "episodes": 40}
    ckpt = load_checkpoint(run_dir)
    assert ckpt["update"] == UPDATES and ckpt["selection"]["update"] == best
    # the score is recomputed from the kept networks on the selection worlds...
    selected, cfg, _ = load_policies(run_dir)
    stats = summarize(run_episodes(cfg.scenario, cfg.env_kwargs, selected, 40, cfg.seed, {"agent": "greedy"},
                                   stream="select"))
    assert stats["onpolicy_episode_reward"] == pytest.approx(evaluated[best])
    # ...and the last networks are those of a run that does not select: training is unchanged
    last, _, _ = load_policies(run_dir, last=True)
    plain = war_train.train(None, config(select_every=0))
    assert same(networks(last), networks(plain.policies))
    assert plain.selected is None
    if best != UPDATES:
        assert not same(networks(selected), networks(last))


def test_the_cli_evaluates_the_selected_networks_unless_told_last(tmp_path):
    run_dir = run_training(config(select_every=4), run_dir=tmp_path / "run", log=lambda _: None)
    ckpt = load_checkpoint(run_dir)
    assert cli_main(["eval", str(run_dir), "--episodes", "10", "--json", str(tmp_path / "sel.json")]) == 0
    assert json.loads((tmp_path / "sel.json").read_text())["selected"]["update"] == ckpt["selection"]["update"]
    assert cli_main(["eval", str(run_dir), "--episodes", "10", "--last", "--json", str(tmp_path / "last.json")]) == 0
    assert json.loads((tmp_path / "last.json").read_text())["selected"] is None


def test_an_edited_selection_entry_is_refused(tmp_path):
    run_dir = run_training(config(eval_episodes=0), run_dir=tmp_path / "run", log=lambda _: None)
    ckpt = load_checkpoint(run_dir)
    del ckpt["selection"]["critics"]
    with pytest.raises(ValueError, match=r"'selection' entry lacks \(or has malformed\) \['critics'\]"):
        load_policies(ckpt)
    load_policies(ckpt, last=True)   # the last networks are intact


def test_a_resumed_run_selects_as_an_uninterrupted_one(tmp_path):
    whole = run_training(config(checkpoint_every=1), run_dir=tmp_path / "whole", log=lambda _: None)
    stop_at = 7   # after the selection evaluations of updates 3 and 6

    def stop(row):
        return row["update"] < stop_at

    run_training(config(checkpoint_every=1), run_dir=tmp_path / "part", progress_fn=stop, log=lambda _: None)
    assert load_checkpoint(tmp_path / "part")["selection"]["update"] in (3, 6)
    run_training(config(checkpoint_every=1), resume=tmp_path / "part", log=lambda _: None)
    a, b = load_checkpoint(whole), load_checkpoint(tmp_path / "part")
    assert a["selection"]["update"] == b["selection"]["update"]
    assert a["selection"]["score"] == b["selection"]["score"]
    assert same(a["selection"]["actors"], b["selection"]["actors"])
    assert scores(whole) == scores(tmp_path / "part")


def test_the_war_mode_selects_too():
    result = war_train.train(None, config(num_minibatches=1), war=WarConfig(arm="war"))
    assert result.selected is not None and result.selected["update"] in (3, 6, 9, 12)
    assert math.isfinite(result.selected["score"])


@pytest.mark.parametrize("field, value, message", [
    ("select_every", -1, "select_every: expected an integer >= 0"),
    ("select_episodes", 0, "select_episodes: expected an integer >= 1"),
    ("select_metric", "", "select_metric: expected the name of an episode statistic"),
])
def test_bad_settings_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        config(**{field: value}).validate()


def test_an_unknown_metric_is_refused_before_the_run_folder_exists(tmp_path):
    with pytest.raises(ValueError, match=r"select_metric: expected 'auto' or one of the episode statistics of "
                                         r"Spread-v0 \[.*'episode_return'.*\], got 'wins'"):
        run_training(config(select_metric="wins"), out=tmp_path / "runs", log=lambda _: None)
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ValueError, match="select_metric"):
        war_train.train(None, config(select_metric="wins"))


def test_the_selected_networks_sample_at_their_update_temperature(tmp_path):
    cfg = config(final_temperature=0.5, temperature_start=0.0)
    result = war_train.train(None, cfg, run_dir=tmp_path / "run")
    assert result.selected["update"] != UPDATES   # (else the last temperature would be the right one too)
    want = cfg.schedule(result.selected["update"]).temperature
    assert [p.dist.temperature for p in result.policies.values()] == [want]
    loaded, _, _ = load_policies(tmp_path / "run")
    assert [p.dist.temperature for p in loaded.values()] == [want]
