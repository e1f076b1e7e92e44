"""Spread-v0, PredatorPrey-v0, Command-v0 and Tag-v0 reproduce, bitwise, the trajectories recorded
before the one-file scenario refactor, SMAX-v0 those recorded before its kernel speed-up (see
tests/golden_trajectories.py)."""

import json

import pytest

import golden_trajectories as G

GOLDEN = json.loads(G.GOLDEN.read_text())["digests"]


@pytest.mark.parametrize("n", range(len(G.mpe_cases())))
def test_mpe_trajectories_are_bitwise_the_recorded_ones(n):
    env_id, kw = G.mpe_cases()[n]
    expected = GOLDEN[f"mpe/{n}/{env_id}/{json.dumps(kw, sort_keys=True)}"]
    got = G.step_digests(G.record_mpe(n, env_id, kw))
    first = next((t for t, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    assert first is None and len(got) == len(expected), f"{env_id} {kw}: differs from step {first}"


@pytest.mark.parametrize("n", range(len(G.tag_cases())))
def test_tag_trajectories_are_bitwise_the_recorded_ones(n):
    kw = G.tag_cases()[n]
    expected = GOLDEN[f"tag/{n}/Tag-v0/{json.dumps(kw, sort_keys=True)}"]
    got = G.step_digests(G.record_tag(n, kw))
    first = next((t for t, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    assert first is None and len(got) == len(expected), f"Tag-v0 {kw}: differs from step {first}"


@pytest.mark.parametrize("n", range(len(G.smax_cases())))
def test_smax_trajectories_are_bitwise_the_recorded_ones(n):
    kw = G.smax_cases()[n]
    expected = GOLDEN[f"smax/{n}/SMAX-v0/{json.dumps(kw, sort_keys=True)}"]
    got = G.step_digests(G.record_smax(n, kw))
    first = next((t for t, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    assert first is None and len(got) == len(expected), f"SMAX-v0 {kw}: differs from step {first}"
