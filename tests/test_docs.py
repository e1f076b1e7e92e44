"""Generated documentation stays in sync with the code, and the README's scenario list with
the registry."""

import pathlib
import re
import subprocess
import sys

import war_envs

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# a scenario id as written in the docs: `Spread-v0` or war_envs/Spread-v0
ID = re.compile(r"`([A-Z][A-Za-z0-9]*-v\d+)`|war_envs/([A-Z][A-Za-z0-9]*-v\d+)")


def test_error_table_is_up_to_date():
    """docs/errors.md is produced by running every bad-input case of test_validation.py and
    test_adapter_validation.py."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "error_table.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + "\nrun: python scripts/error_table.py"


def readme_table_ids() -> list[str]:
    """The ids in the first column of the README's scenario table (``| id | groups | ... |``)."""
    text = README.read_text(encoding="utf-8")
    header = "| id | groups | reference |"
    assert text.count(header) == 1, f"README.md: expected one scenario table starting {header!r}"
    table = text[text.index(header):].split("\n\n", 1)[0].splitlines()
    return [m.group(1) for row in table[2:] for m in ID.finditer(row.split("|")[1])]


def test_readme_scenario_table_lists_every_registered_id():
    ids = readme_table_ids()
    assert len(ids) == len(set(ids)), f"README.md scenario table lists an id twice: {ids}"
    registered = war_envs.registered_ids()
    assert sorted(ids) == sorted(registered), (
        f"README.md scenario table: missing {sorted(set(registered) - set(ids))}, "
        f"not registered {sorted(set(ids) - set(registered))}")


def test_readme_mentions_only_registered_ids():
    text = README.read_text(encoding="utf-8")
    mentioned = {a or b for a, b in ID.findall(text)}
    assert mentioned - set(war_envs.registered_ids()) == set()
    assert "war_envs.registered_ids()" in text


def test_readme_is_short_and_its_links_and_pictures_exist():
    """README.md is a two-minute read (everything else lives in docs/): at most 150 lines, and
    every relative link and picture it shows exists."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md: keep it at most 150 lines; move details into docs/"
    targets = re.findall(r"\]\((?!https?://|#)([^)#\s]+)", text) + re.findall(r'<img src="([^"]+)"', text)
    assert any(t.startswith("docs/images/") for t in targets)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
