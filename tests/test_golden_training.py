"""Seeded training runs of every mode (lock-step MLP, GRU, frame stack, shared actor, Tag
MultiDiscrete, Box Spread, SMAX masks; WAR war, draft, sync, overlap, ddppo, steal) write bitwise
the ``metrics.csv`` rows recorded before the one-trainer refactor (tests/golden_training.py),
those of this machine kind's recording where it has one."""

import json

import pytest

import golden_training as G

KIND, GOLDEN = G.recorded_digests()


def test_every_case_has_a_recording():
    for kind, digests in json.loads(G.GOLDEN.read_text())["recordings"].items():
        assert sorted(digests) == sorted(G.CASES), kind


@pytest.mark.parametrize("name", sorted(G.CASES))
def test_training_run_is_bitwise_the_recorded_one(name, tmp_path):
    got = G.row_digests(G.run_case(name, tmp_path / name))
    expected = GOLDEN[name]
    first = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    assert first is None and len(got) == len(expected), (f"{name}: metrics.csv differs from row {first} of the {KIND} recording "
                                                          f"(this machine: {G.machine_key()})")


def test_the_digest_sees_a_changed_value(tmp_path):
    path = G.run_case("lockstep-mlp", tmp_path / "run")
    lines = path.read_text().splitlines()
    header, row = lines[0].split(","), lines[1].split(",")
    col = header.index("episodes")
    row[col] = str(int(row[col]) + 1)
    path.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    assert G.row_digests(path)[0] != GOLDEN["lockstep-mlp"][0]
    assert G.row_digests(path)[1:] == GOLDEN["lockstep-mlp"][1:]
