"""``benchmarks/results/`` holds what README.md and docs/ publish; ``benchmarks/results/trials/``
holds the rest (tuning trials, checks), each file with a line in ``trials/README.md``.

A results file is cited by its path (``benchmarks/results/NAME``, ``benchmarks/results/trials/NAME``)
or by its bare name relative to ``benchmarks/results/`` (``NAME.json``, ``trials/NAME.json``,
``war_real_runs/NAME.json``, the files of a ``<!-- table: RENDERER FILE -->`` marker). A path
right after ``--json`` is where a command writes, not a citation that must exist (the docs name
outputs of benchmarks not run yet, and generated blocks quote each file's recorded command)."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TRIALS = RESULTS / "trials"
INDEX = TRIALS / "README.md"

#: JSON files the docs name that are not results files: a run folder's files, the pictures' manifest
NOT_RESULTS = {"eval.json", "config.json", "restarts.json", "manifest.json"}
PATH = re.compile(r"benchmarks/results/([\w.+/-]*)")
BARE = re.compile(r"(?<![\w./<>*-])((?:[\w.+-]+/)*[\w.+-]+\.json)(?![\w-])")
OUTPUT = re.compile(r"--json\s+\S*$")
INDEX_LINE = re.compile(r"^- `([^`]+)` — tried: .+; verdict: .+; command: `.+`$")


def doc_files() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def citations(text: str) -> tuple[set[str], set[str]]:
    """``(cited, written)``: the results paths (relative to ``benchmarks/results/``) that ``text``
    cites, and those it names only as a command's ``--json`` output."""
    cited: set[str] = set()
    written: set[str] = set()
    for m in PATH.finditer(text):
        name = m.group(1).rstrip("./")
        if name:
            output = OUTPUT.search(text[max(0, m.start() - 200):m.start()]) is not None
            (written if output else cited).add(name)
    rest = PATH.sub(lambda m: " " * len(m.group(0)), text)
    for m in BARE.finditer(rest):
        name = m.group(1)
        folder, _, base = name.rpartition("/")
        if base in NOT_RESULTS:
            continue
        if folder and not (RESULTS / folder.split("/")[0]).is_dir():
            continue  # a repository path (docs/..., runs/...), not one under benchmarks/results/
        output = OUTPUT.search(rest[max(0, m.start() - 200):m.start()]) is not None
        (written if output else cited).add(name)
    return cited, written - cited


def all_citations() -> dict[str, list[str]]:
    """Every cited results path -> the documents citing it."""
    found: dict[str, list[str]] = {}
    for path in doc_files():
        cited, written = citations(path.read_text(encoding="utf-8"))
        for name in cited | {w for w in written if (RESULTS / w).exists()}:
            found.setdefault(name, []).append(path.relative_to(ROOT).as_posix())
    return found


def index_entries() -> list[str]:
    return [m.group(1) for line in INDEX.read_text(encoding="utf-8").splitlines()
            if (m := INDEX_LINE.match(line))]


def test_the_citation_parser():
    text = ("Measured (`benchmarks/results/a.json`, `b.json`; the trial `trials/c.json`)\n"
            "<!-- table: renderer d.json e.json -->\n"
            "`python x.py --json benchmarks/results/f.json` and `--json /tmp/g.json`; see "
            "`benchmarks/results/war_real_runs/`, a run's `eval.json`, `runs/x/config.json`, "
            "`docs/images/scenarios/manifest.json`, `staleness.jsonl`.")
    cited, written = citations(text)
    assert cited == {"a.json", "b.json", "trials/c.json", "d.json", "e.json", "war_real_runs"}
    assert written == {"f.json"}


def test_every_cited_results_file_exists():
    missing = []
    for path in doc_files():
        cited, _ = citations(path.read_text(encoding="utf-8"))
        missing += [f"{path.relative_to(ROOT)}: benchmarks/results/{name}" for name in sorted(cited)
                    if not (RESULTS / name).exists()]
    assert not missing, "cited results files that do not exist (moved to trials/? renamed?):\n" + "\n".join(missing)


def test_every_published_results_file_is_cited():
    cited = set(all_citations())

    def is_cited(rel: pathlib.PurePosixPath) -> bool:  # the file or a folder above it
        return any(str(p) in cited for p in [rel, *rel.parents] if str(p) != ".")

    published = [p for p in RESULTS.rglob("*") if p.is_file() and TRIALS not in p.parents]
    assert len(published) >= 20
    uncited = [p.relative_to(RESULTS).as_posix() for p in sorted(published)
               if not is_cited(pathlib.PurePosixPath(p.relative_to(RESULTS).as_posix()))]
    assert not uncited, ("results files that neither README.md nor docs/ cite: cite them or move them "
                         "(git mv) to benchmarks/results/trials/ with a line in its README.md:\n" + "\n".join(uncited))


def test_no_trial_is_cited_as_published():
    both = sorted(p.name for p in TRIALS.iterdir() if (RESULTS / p.name).exists() and p.name != "README.md")
    assert not both, f"files both in benchmarks/results/ and in trials/: {both}"


def test_every_trial_has_one_index_line_and_every_line_a_file():
    assert INDEX.is_file(), "benchmarks/results/trials/README.md: the index of the trials"
    lines = [line for line in INDEX.read_text(encoding="utf-8").splitlines() if line.startswith("- ")]
    malformed = [line[:80] for line in lines if not INDEX_LINE.match(line)]
    assert not malformed, "index lines not of the form - `FILE` — tried: ...; verdict: ...; command: `...`:\n" + \
        "\n".join(malformed)
    names = index_entries()
    assert len(names) == len(set(names)), f"files with more than one index line: {sorted({n for n in names if names.count(n) > 1})}"
    files = sorted(p.relative_to(TRIALS).as_posix() for p in TRIALS.rglob("*") if p.is_file() and p != INDEX)
    assert sorted(set(files) - set(names)) == [], "trials without an index line"
    assert sorted(set(names) - set(files)) == [], "index lines naming no file in trials/"


def test_the_readme_cites_its_headline_figures():
    """The README's measured figures keep citing their results files."""
    cited, _ = citations((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {"env_throughput_cpu.json", "learning_spread.json"} <= cited
