"""A short variant of benchmarks/soak.py: resident memory stays flat while stepping and across
make/close cycles (the full 10 M agent-step soak: ``python benchmarks/soak.py``)."""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "soak", pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "soak.py")
soak = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(soak)


@pytest.mark.parametrize("env_id", ["Spread-v0", "PredatorPrey-v0"])
def test_stepping_keeps_memory_flat(env_id):
    result = soak.soak_steps(env_id, agent_steps=1.5e6, num_envs=512, samples=5)
    assert result["agent_steps"] >= 1e6
    assert result["growth"] < 0.05, result


def test_make_close_keeps_memory_flat():
    result = soak.soak_make_close("Spread-v0", cycles=15, num_envs=1024)
    assert result["growth"] < 0.05, result
