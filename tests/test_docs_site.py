"""The documentation site builds with ``mkdocs build --strict`` (warnings are errors), with one
generated page per registered scenario; the generation hooks do what they say."""

from __future__ import annotations

import inspect
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")
pytest.importorskip("material")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import mkdocs_hooks  # noqa: E402

import war_envs  # noqa: E402
from war_envs.registry import accepted_kwargs, scenario_class  # noqa: E402


def test_strict_build(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    site = tmp_path / "site"
    for env_id in war_envs.registered_ids():
        page = (site / "scenarios" / f"{env_id}.html").read_text()
        assert "<h1" in page and env_id in page
        assert "Keyword arguments" in page and "Version history" in page
        assert f'src="../images/scenarios/{env_id}.gif"' in page   # opens with its picture (test_scenario_gifs.py)
        assert (site / "images" / "scenarios" / f"{env_id}.gif").is_file()
    for name in ("index", "install", "quickstart", "examples", "api", "batch_api", "integrations", "training", "ci"):
        assert (site / f"{name}.html").exists(), name
    api = (site / "api.html").read_text()
    assert "SB3VecEnv" in api and "rllib_env_creator" in api and "BatchedEnv" in api


@pytest.mark.parametrize("env_id", war_envs.registered_ids())
def test_scenario_page_is_the_docstring_plus_every_argument(env_id):
    cls = scenario_class(env_id)
    page = mkdocs_hooks.scenario_page(env_id)
    assert page.startswith(f"# {env_id}\n")
    body = inspect.getdoc(cls).partition("\n\n")[2].strip()
    assert body in page
    names = [n for n, _, _ in mkdocs_hooks.scenario_arguments(cls)]
    assert names == accepted_kwargs(cls)  # what war_envs.make accepts
    for name in names:
        assert f"| `{name}` |" in page


def test_quickstart_comes_from_the_readme_with_site_links():
    readme = (ROOT / "README.md").read_text()
    page = mkdocs_hooks.quickstart_page(readme)
    assert page.startswith("# Quick start")
    assert "## Install" in page and "war_envs.make(" in page
    assert "](docs/" not in page  # README links into docs/ become site links
    fake = "## Quick start: x\n\nsee [the guide](docs/batch_api.md) and [the code](war_envs/registry.py)\n"
    out = mkdocs_hooks.quickstart_page(fake)
    assert "[the guide](batch_api.md)" in out and "`war_envs/registry.py`" in out
    with pytest.raises(ValueError, match="Quick start"):
        mkdocs_hooks.quickstart_page("# nothing\n")


def test_nav_drops_missing_optional_pages_and_collects_unlisted_ones(tmp_path):
    for name in ("index.md", "extra_page.md"):
        (tmp_path / name).write_text(f"# Title of {name}\n")
    config = {"docs_dir": str(tmp_path),
              "nav": [{"Home": "index.md"}, {"Scenarios": []}, {"WAR guide": "war.md"}, "distributed.md"]}
    nav = mkdocs_hooks.on_config(config)["nav"]
    assert nav[0] == {"Home": "index.md"}
    scenarios = nav[1]["Scenarios"]
    assert scenarios[0] == {"Overview": "scenarios/index.md"}
    assert [next(iter(e)) for e in scenarios[1:]] == war_envs.registered_ids()
    assert all("war.md" not in str(e) and "distributed.md" not in str(e) for e in nav)
    assert nav[-1] == {"More": [{"Title of extra_page.md": "extra_page.md"}]}


def test_examples_page_lists_every_example():
    page = mkdocs_hooks.examples_page()
    for path in (ROOT / "examples").glob("*.py"):
        assert f"## `{path.name}`" in page
