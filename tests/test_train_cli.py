"""The war-train CLI: every config field is an option, train/eval/render/resume work end to end."""

import dataclasses
import json

import pytest
import torch

from war_train import TrainConfig
from war_train.run.cli import build_parser, main
from war_train.run.runlog import read_metrics

torch.set_num_threads(1)


def test_train_help_documents_every_config_field(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for field in dataclasses.fields(TrainConfig):
        if field.name == "scenario":
            continue
        option = "--" + field.name.replace("_", "-")
        assert option in text, option
        assert field.metadata["help"].split()[0] in text
    for option in ("--preset", "--out", "--resume", "--total-steps", "--num-envs", "--seed", "--device",
                   "--torch-threads"):
        assert option in text


def test_print_config_merges_defaults_preset_and_options(capsys):
    assert main(["train", "Spread-v0", "--preset", "smoke", "--lr", "0.002", "--no-layer-norm",
                 "--env-kwargs", '{"N": 2}', "--total-steps", "800", "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert cfg["num_envs"] == 16            # from the preset
    assert cfg["lr"] == 0.002 and cfg["layer_norm"] is False and cfg["env_kwargs"] == {"N": 2}
    assert cfg["total_env_steps"] == 800
    assert cfg["gamma"] == 0.99             # the on-policy default


def test_train_eval_render_and_resume_end_to_end(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "Spread-v0", "--preset", "smoke", "--run-dir", str(run), "--total-steps", "800",
                 "--eval-episodes", "4", "--tensorboard"]) == 0
    for name in ("config.json", "metrics.csv", "checkpoint.pt", "learning_curve.png", "eval.json", "episode.gif"):
        assert (run / name).is_file(), name
    assert list((run / "tb").iterdir())
    rows = read_metrics(run / "metrics.csv")
    assert [r["env_steps"] for r in rows] == [400, 800]
    for key in ("agent_steps", "wall_s", "episode_return", "episode_return/agent", "onpolicy_episode_reward"):
        assert key in rows[0]
    report = json.loads((run / "eval.json").read_text())
    assert {"greedy", "sample", "random"} <= set(report["results"])

    # continue the same run to 1200 steps: one more row, same first rows
    assert main(["train", "--resume", str(run), "--total-steps", "1200", "--no-gif", "--eval-episodes", "0"]) == 0
    more = read_metrics(run / "metrics.csv")
    assert [r["env_steps"] for r in more] == [400, 800, 1200]
    assert more[:2] == rows

    capsys.readouterr()
    assert main(["eval", str(run / "checkpoint.pt"), "--episodes", "3", "--json", str(tmp_path / "e.json")]) == 0
    assert "greedy" in capsys.readouterr().out
    assert json.loads((tmp_path / "e.json").read_text())["episodes"] == 3
    # without --json: eval.json beside the checkpoint, in the training run's eval.json format
    assert main(["eval", str(run), "--episodes", "2"]) == 0
    assert f"wrote {run / 'eval.json'}" in capsys.readouterr().out
    saved = json.loads((run / "eval.json").read_text())
    assert saved["episodes"] == 2 and saved["checkpoint"] == str(run) and saved["train_env_steps"] == 1200
    assert set(report) <= set(saved) and {"greedy", "sample", "random"} <= set(saved["results"])
    assert main(["render", str(run), "--gif", str(tmp_path / "x.gif"), "--mode", "sample", "--size", "160"]) == 0
    assert (tmp_path / "x.gif").stat().st_size > 0


def test_clear_errors(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.pt")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    assert main(["render", str(tmp_path / "bad.pt"), "--gif", str(tmp_path / "x.gif")]) == 2
    assert "not a readable war_train checkpoint" in capsys.readouterr().err
    assert main(["train", "Nope-v0", "--print-config"]) == 2
    assert "unknown id" in capsys.readouterr().err
    assert main(["train", "Spread-v0", "--num-envs", "0", "--print-config"]) == 2
    assert "num_envs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "Spread-v0", "--env-kwargs", "[1]"])


def test_a_smax_map_gets_its_own_preset(capsys):
    """Without --preset, a SMAX-v0 map named in --env-kwargs trains with that map's preset; a map
    without one, and no map, with the scenario's default (3m's)."""
    from war_train.presets import VARIANT_PRESETS, default_preset, preset_overrides

    def printed(*argv):
        assert main(["train", "SMAX-v0", *argv, "--print-config"]) == 0
        return json.loads(capsys.readouterr().out)

    for map_name, preset in VARIANT_PRESETS["SMAX-v0"][1].items():
        cfg = printed("--env-kwargs", json.dumps({"map_name": map_name}))
        want = preset_overrides(preset)
        assert cfg["total_env_steps"] == want["total_env_steps"]
        assert cfg["env_kwargs"] == {**want["env_kwargs"], "map_name": map_name}
        assert cfg["restarts"] == want.get("restarts", 0)
    # naming the map keeps the other env arguments of its preset; a key given changes that one only
    assert printed("--env-kwargs", '{"map_name": "3s5z"}')["env_kwargs"] == {"map_name": "3s5z", "observe_time": True}
    assert printed("--env-kwargs", '{"map_name": "3s5z", "observe_time": false}')["env_kwargs"] == {
        "map_name": "3s5z", "observe_time": False}
    assert printed("--preset", "smax_3s5z", "--env-kwargs", '{"map_name": "8m"}')["env_kwargs"] == {
        "map_name": "8m", "observe_time": True}
    assert printed("--env-kwargs", '{"map_name": "2s3z"}')["total_env_steps"] == 4_000_000
    assert printed("--env-kwargs", '{"map_name": "2s3z", "enemy": "self_play"}')["env_kwargs"]["enemy"] == "self_play"
    assert printed()["env_kwargs"] == {"map_name": "3m", "observe_time": True}
    assert default_preset("SMAX-v0", {"map_name": "3s_vs_3z"}) == "smax"
    # --preset still wins over the map's own
    assert printed("--preset", "smax_2s3z", "--env-kwargs", '{"map_name": "5m_vs_6m"}')["total_env_steps"] == 4_000_000
    assert default_preset("Spread-v0", {"map_name": "2s3z"}) == "spread" and default_preset("Nope-v0") is None
    # the Python API too
    import war_train

    assert war_train.preset_config("SMAX-v0", env_kwargs={"map_name": "5m_vs_6m"}).total_env_steps == 6_000_000
    assert war_train.preset_config("SMAX-v0").env_kwargs == {"map_name": "3m", "observe_time": True}
    assert war_train.preset_config("SMAX-v0", env_kwargs={"map_name": "6h_vs_8z"}).env_kwargs == {
        "map_name": "6h_vs_8z", "observe_time": True}
