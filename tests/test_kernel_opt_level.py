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


@pytest.mark.parametrize("level", [4, -1, "3", 3.0, True, None])
def test_kernels_compiled_at_refuses_a_bad_level(level):
    with pytest.raises(ValueError, match="level: expected an optimization level 0, 1, 2 or 3"):
        with episode.kernels_compiled_at(level):
            pass


def test_kernels_compiled_at_builds_a_module_of_its_own_with_the_same_results():
    """Inside the block the scenario's module is another one, at the block's level (named apart
    where the level differs from the process's), and it steps the same worlds bit for bit."""
    import torch

    import war_envs
    from war_envs.core import fields

    process = episode.KERNEL_MODULE_OPTIONS["optimization_level"]
    other = 0 if process else 3
    assert episode.module_level_suffix() == (process, "")
    with episode.kernels_compiled_at(other):
        assert episode.module_level_suffix() == (other, f"_O{other}")
        with episode.kernels_compiled_at(process):   # nested: the innermost level
            assert episode.module_level_suffix() == (process, "")
        env_other = war_envs.make("Wheel-v0", num_envs=16)
    assert episode.module_level_suffix() == (process, "")
    env = war_envs.make("Wheel-v0", num_envs=16)
    for e in (env, env_other):
        e.reset(seed=3)
    assert env._physics is not env_other._physics
    names = {k for k in fields._KERNELS if "Wheel" in k}
    assert any(k.endswith(f"_O{other}") for k in names) and any(not k.endswith(f"_O{other}") for k in names)
    import warp as wp
    assert wp.get_module(next(k for k in names if k.endswith(f"_O{other}"))).options["optimization_level"] == other
    gen = torch.Generator().manual_seed(0)
    for _ in range(30):
        u = {g: torch.rand((16, len(s.agents), *s.action_space.shape), generator=gen) * 2 - 1
             for g, s in env.groups.items()}
        a, b = env.step(u), env_other.step(u)
        for x, y in zip(a[:4], b[:4]):
            for g in x:
                assert torch.equal(x[g], y[g])
