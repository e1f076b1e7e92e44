"""``$WAR_ENVS_KERNEL_OPT_LEVEL``: the kernels' optimization level (the test suite compiles at 0)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from war_envs.core import episode

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value, level", [("", 3), ("3", 3), ("0", 0), (" 1 ", 1)])
def test_the_level_comes_from_the_variable(monkeypatch, value, level):
    monkeypatch.setenv(episode.OPT_LEVEL_VARIABLE, value)
    assert episode.kernel_optimization_level() == level


def test_a_bad_level_is_refused_when_the_kernels_load():
    env = {**os.environ, episode.OPT_LEVEL_VARIABLE: "fast"}
    out = subprocess.run([sys.executable, "-c", "import war_envs; war_envs.make('Spread-v0', num_envs=1)"],
                         env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "$WAR_ENVS_KERNEL_OPT_LEVEL: expected an optimization level 0, 1, 2 or 3, got 'fast'" in out.stderr


def test_results_files_say_when_kernels_were_not_optimized(monkeypatch, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import _results
    finally:
        sys.path.pop(0)
    monkeypatch.setenv(episode.OPT_LEVEL_VARIABLE, "0")
    assert _results.machine()["kernel_optimization_level"] == "0"
    assert "not a speed measurement" in capsys.readouterr().err
    monkeypatch.setenv(episode.OPT_LEVEL_VARIABLE, "3")
    assert "kernel_optimization_level" not in _results.machine()


def test_the_package_modules_compile_at_that_level():
    assert episode.KERNEL_MODULE_OPTIONS["optimization_level"] == episode.kernel_optimization_level()
    assert episode.KERNEL_MODULE_OPTIONS["fuse_fp"] is False   # the same rounding at every level
