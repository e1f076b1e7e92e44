"""A short variant of benchmarks/soak.py: resident memory stays flat while stepping and across
make/close cycles and while training (the full soak -- 10 M agent-steps and 20 minutes of
training: ``python benchmarks/soak.py``)."""

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


def test_training_keeps_memory_and_live_objects_flat():
    # smoke-sized MAPPO with checkpoints and metrics every update, ~10 s after warm-up
    result = soak.soak_training(10 / 60, warmup_updates=5, num_envs=64, epochs=2, checkpoint_every=1,
                                tensorboard=False)
    assert result["updates"] > 20
    assert result["growth"] < 0.05, result
    assert result["objects_end"] == result["objects_base"], result
