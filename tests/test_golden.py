"""Spread-v0, PredatorPrey-v0, Command-v0 and Tag-v0 reproduce, bitwise, the trajectories recorded
before the one-file scenario refactor, SMAX-v0 and the VMAS family those recorded before their
kernel speed-ups (see tests/golden_trajectories.py)."""

import json

import pytest

import golden_trajectories as G

GOLDEN = json.loads(G.GOLDEN.read_text())["digests"]


def assert_reproduces(key: str, got: list[str], what: str) -> None:
    expected = GOLDEN[key]
    first = next((t for t, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    assert first is None and len(got) == len(expected), f"{what}: differs from step {first}"


@pytest.mark.parametrize("n", range(len(G.mpe_cases())))
def test_mpe_trajectories_are_bitwise_the_recorded_ones(n):
    env_id, kw = G.mpe_cases()[n]
    assert_reproduces(G.key("mpe", n, env_id, kw), G.step_digests(G.record_mpe(n, env_id, kw)), f"{env_id} {kw}")


@pytest.mark.parametrize("n", range(len(G.tag_cases())))
def test_tag_trajectories_are_bitwise_the_recorded_ones(n):
    kw = G.tag_cases()[n]
    assert_reproduces(G.key("tag", n, "Tag-v0", kw), G.step_digests(G.record_tag(n, kw)), f"Tag-v0 {kw}")


@pytest.mark.parametrize("n", range(len(G.smax_cases())))
def test_smax_trajectories_are_bitwise_the_recorded_ones(n):
    kw = G.smax_cases()[n]
    assert_reproduces(G.key("smax", n, "SMAX-v0", kw), G.step_digests(G.record_smax(n, kw)), f"SMAX-v0 {kw}")


@pytest.mark.parametrize("n", range(len(G.vmas_cases())))
def test_vmas_trajectories_are_bitwise_the_recorded_ones(n):
    env_id, kw = G.vmas_cases()[n]
    assert_reproduces(G.key("vmas", n, env_id, kw), G.step_digests(G.record_vmas(n, env_id, kw)), f"{env_id} {kw}")
