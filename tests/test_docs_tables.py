"""The figures of README.md and docs/ are the ones their results files give, and the project
cites no document outside itself.

``scripts/tables.py --check`` regenerates every ``<!-- table: RENDERER FILE -->`` block from
``benchmarks/results/`` in memory and fails when one differs from the markdown (a table edited
by hand, or a results file replaced without ``python scripts/tables.py``)."""

import importlib.util
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_tables():
    spec = importlib.util.spec_from_file_location("tables", ROOT / "scripts" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_blocks_match_their_results_files(capsys):
    tables = load_tables()
    assert tables.main(["--check"]) == 0, capsys.readouterr().err


def test_every_block_names_a_renderer_and_an_existing_results_file():
    tables = load_tables()
    blocks = [(path, m["spec"]) for path in tables.markdown_files() for m in tables.BLOCK.finditer(path.read_text())]
    assert len(blocks) >= 10  # README, performance, training and tag pages carry generated figures
    for path, spec in blocks:
        name, *files = spec.split()
        assert name in tables.RENDERERS, f"{path.name}: {spec}"
        assert files and all((tables.RESULTS / f).is_file() for f in files), f"{path.name}: {spec}"


def test_check_fails_on_a_hand_edited_table(tmp_path, monkeypatch):
    tables = load_tables()
    page = tmp_path / "page.md"
    good = "<!-- table: train-speed train_speed_cpu.json -->\n\n" + tables.render(
        "train-speed train_speed_cpu.json", "page.md") + "\n\n<!-- /table -->\n"
    page.write_text(good)
    monkeypatch.setattr(tables, "ROOT", tmp_path)
    assert tables.process(page, write=False) == []
    page.write_text(good.replace("| Spread-v0 | 256 |", "| Spread-v0 | 257 |"))
    assert len(tables.process(page, write=False)) == 1
    tables.process(page, write=True)
    assert page.read_text() == good


def test_check_refuses_unknown_renderers_and_missing_files():
    tables = load_tables()
    with pytest.raises(ValueError, match="unknown renderer"):
        tables.render("no-such-renderer train_speed_cpu.json", "x.md:1")
    with pytest.raises(ValueError, match="does not exist"):
        tables.render("train-speed no_such_results.json", "x.md:1")


def test_no_file_cites_documents_outside_the_repository():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    # Built from pieces, so that this file does not match itself.
    outside = re.compile("|".join([r"DESIGN" + r"\.md", r"\bDESIGN" + r" §", r"REFERENCES" + r"\.md"]))
    hits = []
    for name in filter(None, files):
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        hits += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in outside.finditer(text)]
    assert not hits, "citations of documents outside the repository: " + ", ".join(hits)
