"""war-train checks everything before it creates anything: optional outputs whose package is
missing (skipped with one warning, or one error line when asked for by name), scenario
arguments, budgets rounded to whole updates; its parser matches options exactly, suggests the
closest for a mistyped one, reports errors in one line, describes the presets, and imports
neither torch nor Warp.

The missing packages are simulated in a subprocess (``sys.modules[name] = None`` makes their
import fail as it does on the core install)."""

import json
import subprocess
import sys
import textwrap

import pytest

from war_train.run.cli import main
from war_train.config import TrainConfig
from war_train.presets import preset_descriptions, preset_names
from war_train.run.training import preflight

#: runs war_train.run.cli.main with the packages named in argv[1] (comma-separated) unimportable
WRAPPER = textwrap.dedent("""
    import sys
    for name in filter(None, sys.argv[1].split(",")):
        sys.modules[name] = None
    from war_train.run.cli import main
    sys.exit(main(sys.argv[2:]))
""")
MISSING = "matplotlib,PIL,tensorboard"
#: a tiny run of the Spread preset (whose TensorBoard and GIF are on by default)
TINY = ["train", "Spread-v0", "--num-envs", "16", "--total-steps", "800", "--epochs", "1", "--eval-episodes", "4",
        "--no-progress"]


def _cli(tmp_path, missing: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-u", "-c", WRAPPER, missing, *argv], cwd=tmp_path, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)


def test_core_install_run_skips_plot_gif_and_tensorboard_with_one_warning_each(tmp_path):
    run = tmp_path / "run"
    proc = _cli(tmp_path, MISSING, *TINY, "--run-dir", str(run))
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    warnings = [line for line in lines if line.startswith("war-train: warning:")]
    assert len(warnings) == 3, warnings
    for warning, package in zip(warnings, ("matplotlib", "Pillow", "tensorboard")):
        assert f"needs {package}, which is not installed" in warning and "this run skips it" in warning
        assert "pip install 'war-envs[train]'" in warning
    start = next(i for i, line in enumerate(lines) if line.startswith("war-train: Spread-v0"))
    assert max(lines.index(w) for w in warnings) < start        # told before training starts
    for name in ("config.json", "metrics.csv", "checkpoint.pt", "eval.json"):
        assert (run / name).is_file(), name
    for name in ("learning_curve.png", "episode.gif", "tb"):
        assert not (run / name).exists(), name
    assert json.loads((run / "eval.json").read_text())["episodes"] == 4
    saved = json.loads((run / "config.json").read_text())
    assert saved["gif"] is False and saved["tensorboard"] is False   # what the run really did


@pytest.mark.parametrize("flag, package, field", [("--tensorboard", "tensorboard", "tensorboard"),
                                                  ("--gif", "PIL", "gif")])
def test_an_output_asked_for_by_name_stops_before_training(tmp_path, flag, package, field):
    proc = _cli(tmp_path, package, *TINY, "--out", str(tmp_path / "runs"), flag)
    assert proc.returncode == 2
    assert proc.stdout.count("\n") == 1, proc.stdout              # one line, no traceback
    assert proc.stdout.startswith(f"war-train train: error: {field}=True:")
    assert "pip install 'war-envs[train]'" in proc.stdout and f"--no-{field}" in proc.stdout
    assert not (tmp_path / "runs").exists()


def test_render_without_pillow_is_one_error_line(tmp_path):
    proc = _cli(tmp_path, "PIL", "render", str(tmp_path / "run"), "--gif", "x.gif")
    assert proc.returncode == 2 and proc.stdout.count("\n") == 1, proc.stdout
    assert proc.stdout.startswith("war-train render: error: --gif: the episode GIF needs Pillow, which is not installed")


@pytest.mark.parametrize("kwargs, expected", [('{"nope": 1}', "unknown keyword argument"),
                                              ('{"N": 0}', "N: expected an int >= 1"),
                                              ('{"num_envs": 4}', "set by the config's own fields")])
def test_bad_scenario_arguments_are_refused_before_the_run_folder(tmp_path, capsys, kwargs, expected):
    out = tmp_path / "runs"
    assert main(["train", "Spread-v0", "--preset", "smoke", "--out", str(out), "--env-kwargs", kwargs]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""                                     # not even the starting line
    assert captured.err.count("\n") == 1 and captured.err.startswith("war-train train: error: env_kwargs:")
    assert expected in captured.err
    assert not out.exists()


def test_budget_rounded_to_whole_updates_warns_beyond_ten_percent():
    def budget_warnings(**fields):
        config = TrainConfig(tensorboard=False, gif=False, **fields).validate()
        return [w for w in preflight(config)[2] if "total_env_steps" in w]

    (grown,) = budget_warnings(num_envs=1024, total_env_steps=1000)
    assert "1,000" in grown and "25,600" in grown and "1 update(s)" in grown and "+2460%" in grown
    (shrunk,) = budget_warnings(num_envs=16, total_env_steps=1000)   # 2 updates of 400
    assert "800 env steps (-20%)" in shrunk
    assert budget_warnings(num_envs=16, total_env_steps=1700) == []  # 1 600: -6 %
    assert budget_warnings(num_envs=16, total_env_steps=1600) == []


def test_budget_warning_printed_once_before_the_starting_line(tmp_path, capsys):
    assert main(["train", "Spread-v0", "--preset", "smoke", "--run-dir", str(tmp_path / "r"), "--total-steps", "250",
                 "--eval-episodes", "0", "--no-gif"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "total_env_steps" in line]
    assert len(warnings) == 1 and "the run trains 1 update(s) = 400 env steps (+60%)" in warnings[0]
    assert "1 updates = 400 env steps" in captured.out


def test_options_are_not_abbreviated_and_a_typo_gets_a_suggestion(capsys):
    for argv, suggestion in ((["train", "Spread-v0", "--total-step", "1000"], "did you mean --total-steps?"),
                             (["train", "Spread-v0", "--num-env=4"], "did you mean --num-envs?"),
                             (["eval", "run", "--episode", "3"], "did you mean --episodes?"),
                             (["train", "Spread-v0", "--preset", "spred"], "did you mean spread?"),
                             (["trian", "Spread-v0"], "did you mean train?")):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and suggestion in err, err
        assert "usage:" not in err


def test_a_bad_json_argument_is_one_error_line(capsys):
    for option in ("--env-kwargs", "--group-lr-scale"):
        with pytest.raises(SystemExit) as exc:
            main(["train", "Spread-v0", option, "{1"])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "usage:" not in err
        assert err.startswith(f"war-train train: error: argument {option}: expected a JSON object")


def test_presets_are_listed_with_a_description_each(capsys):
    descriptions = preset_descriptions()
    assert list(descriptions) == preset_names()
    for name, text in descriptions.items():
        assert isinstance(text, str) and text.strip() and "\n" not in text, name
    with pytest.raises(SystemExit) as exc:
        main(["train", "--list-presets"])
    assert exc.value.code == 0
    listed = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = capsys.readouterr().out
    for name, text in descriptions.items():
        assert f"  {name} " in listed and text in listed, name
        assert text in help_text, name
    assert "[default for Spread-v0]" in listed


def test_the_parser_and_config_need_neither_torch_nor_warp():
    code = textwrap.dedent("""
        import sys
        import war_train
        from war_train import TrainConfig, preset_config
        from war_train.run.cli import main
        preset_config("Spread-v0")
        for argv in (["train", "--help"], ["eval", "--help"], ["train", "--list-presets"]):
            try:
                main(argv)
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        heavy = sorted(m for m in ("torch", "warp", "war_envs", "numpy") if m in sys.modules)
        assert not heavy, heavy
        assert callable(war_train.train) and "torch" in sys.modules   # the trainer on first use
        from war_train.run.loop import train
        assert war_train.train is train and all(getattr(war_train, name) for name in war_train.__all__)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr
