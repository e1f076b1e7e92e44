"""The packages' layering: ``war_envs`` imports nothing from ``war_train`` (it is usable without
our trainer), no module of either package imports itself back through others (module-level and
function-level imports alike), and no function of either package is longer than 80 lines."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("war_envs", "war_train")
MAX_FUNCTION_LINES = 80


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imported(path: pathlib.Path, name: str, known) -> set[str]:
    """The project modules ``path`` (module ``name``) imports anywhere in its code: for
    ``from a.b import c`` the module ``a.b.c`` if it is one, else ``a.b``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:   # ``import a.b.c`` of a module, or a name inside one
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(path, name, known) for name, path in known.items()}


def cycle_through(g: dict[str, set[str]], start: str) -> list[str] | None:
    """A path start -> ... -> start, else None (a package's ``__init__`` importing its own
    submodules is how a package exports them, not a cycle: edges into an ``__init__`` from its
    own submodules are the ones counted)."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(g[node]):
            if nxt == start:
                return path + [nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_the_graph_finds_imports():
    g = graph()
    assert "war_envs.core.batched_env" in g["war_envs.core"]
    assert "war_train.config" in g["war_train.run.cli"] and "war_envs.war.costs" in g["war_envs.war"]


def test_war_envs_imports_nothing_from_war_train():
    bad = {m: sorted(t for t in ts if t.startswith("war_train")) for m, ts in graph().items()
           if m.startswith("war_envs")}
    assert {m: ts for m, ts in bad.items() if ts} == {}


def package_edges(g):
    """Edges without ``package.__init__ -> package.sub`` (re-exports of a package's own modules)."""
    return {m: {t for t in ts if not (t.startswith(m + ".") and modules()[m].name == "__init__.py")}
            for m, ts in g.items()}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_itself_back(package):
    g = package_edges(graph())
    cycles = [cycle_through(g, m) for m in g if m.startswith(package)]
    assert [c for c in cycles if c] == []


def test_a_cycle_is_found():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycle_through(g, "a") == ["a", "b", "c", "a"] and cycle_through(g, "d") is None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_function_is_longer_than_80_lines(package):
    """Every function of ``war_train`` and ``war_envs``, Warp kernels and functions included."""
    long = [f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for p in sorted((ROOT / package).rglob("*.py"))
            for node in ast.walk(ast.parse(p.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


# ----------------------------------------------------------------------------- war_train's rooms
#: room -> the rooms it may import (besides the shared modules at the top of ``war_train``:
#: config, seeding, checkpoint, stopping, and the preset data); the adapters and ``run`` may import
#: any room
ROOMS = {"learn": set(), "rollout": {"learn"}, "plan": {"learn", "rollout"}, "war": {"learn", "rollout", "plan"}}
SHARED = ("war_train.config", "war_train.seeding", "war_train.checkpoint", "war_train.stopping")


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "war_train" else None


def test_the_rooms_import_only_downward():
    """``learn`` imports no ``rollout``/``plan``/``war``/``run``; ``rollout`` no ``plan``/``war``/
    ``run`` (a planner reaches the collector as a policy); ``plan`` no ``war``/``run``; ``war`` no
    ``run``; the shared modules none of the rooms."""
    g = graph()
    bad = []
    for m, targets in g.items():
        if not m.startswith("war_train"):
            continue
        mine = room(m)
        for t in targets:
            other = room(t)
            if not t.startswith("war_train") or other in (None, "presets") or other == mine:
                continue
            if m in SHARED or (mine in ROOMS and other not in ROOMS[mine]):
                bad.append(f"{m} -> {t}")
    assert bad == []


def test_the_room_rule_sees_a_wrong_direction():
    assert room("war_train.learn.ppo") == "learn" and room("war_train.config") is None
    assert "run" not in ROOMS["war"] and "rollout" not in ROOMS["learn"]


def test_no_module_of_war_train_imports_a_scenario():
    """The trainer reaches scenarios through the declared scenario interface only
    (``war_envs.core.scenario``), never a scenario module."""
    bad = {m: sorted(t for t in ts if t.startswith("war_envs.scenarios")) for m, ts in graph().items()
           if m.startswith("war_train")}
    assert {m: ts for m, ts in bad.items() if ts} == {}
