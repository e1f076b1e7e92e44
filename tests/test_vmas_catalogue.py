"""docs/vmas.md's catalogue lists every scenario VMAS 1.5.2 ships, each with its id here or "not
yet", and agrees with the registry: an id in a row is registered and (for the VMAS family) plays
that row's VMAS scenario; every registered VMAS-family id has its row."""

import pathlib
import re

import pytest

import war_envs
from war_envs.registry import scenario_class
from war_envs.scenarios.vmas.base import VmasBase

vmas = pytest.importorskip("vmas")

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "vmas.md"


def catalogue() -> dict[str, tuple[str, str]]:
    """``{VMAS scenario: (kind, id or "")}`` from docs/vmas.md's catalogue table."""
    text = DOC.read_text(encoding="utf-8")
    header = "| VMAS scenario | kind | id |"
    assert text.count(header) == 1
    rows = text[text.index(header):].split("\n\n", 1)[0].splitlines()[2:]
    out = {}
    for row in rows:
        name, kind, cell = (c.strip() for c in row.strip("|").split("|"))
        ids = re.findall(r"`([A-Za-z0-9]+-v\d+)`", cell)
        assert len(ids) <= 1 and (ids or cell.startswith("not yet")), row
        out[name.strip("`")] = (kind, ids[0] if ids else "")
    return out


def test_the_catalogue_lists_every_vmas_scenario_once():
    rows = catalogue()
    expected = {**{n: "main" for n in vmas.scenarios}, **{n: "debug" for n in vmas.debug_scenarios},
                **{n: "mpe" for n in vmas.mpe_scenarios}}
    assert {n: kind for n, (kind, _) in rows.items()} == expected


def test_the_catalogue_agrees_with_the_registry():
    rows = catalogue()
    registered = war_envs.registered_ids()
    family = {i for i in registered if issubclass(scenario_class(i), VmasBase)}
    listed = {env_id for _, env_id in rows.values() if env_id}
    assert listed <= set(registered), listed - set(registered)
    assert family <= listed, family - listed
    for name, (kind, env_id) in rows.items():
        if env_id in family:
            assert kind in ("main", "debug") and scenario_class(env_id).vmas_scenario == name, (name, env_id)
