"""MkDocs hooks (``hooks:`` in mkdocs.yml): pages generated from the code at build time.

- ``scenarios/<Id>.md`` for every id in ``war_envs.registry.registered_ids()``: an animated
  picture of one episode (``docs/images/scenarios/<Id>.gif``, made by
  ``scripts/scenario_gifs.py``, captioned from its ``manifest.json``; a scenario without one
  fails the build), the scenario class's docstring (agents, spaces, rewards, termination,
  arguments, reference, version history), how to build it through each front end, and its
  keyword arguments with their defaults read from the signatures; ``scenarios/index.md`` lists
  them.  The nav entry
  ``Scenarios: []`` in mkdocs.yml is filled with these pages.
- ``quickstart.md``: README.md's "Install" and "Quick start" sections (links into ``docs/``
  rewritten to site links, other repository links to the repository path in code).
- ``examples.md``: one section per ``examples/*.py`` with the script's docstring.
- Nav entries for optional pages (``OPTIONAL_PAGES``: written by other work in progress)
  are dropped while the file does not exist, and pages of ``docs/`` that the nav does not list
  are appended under "More" (titled by their first heading), so adding or removing a page
  never breaks ``mkdocs build --strict`` and no page is unreachable.

Nothing is written into ``docs/``: the pages exist only in the build.  Needs war_envs to be
importable (scenario classes are imported; no kernel is compiled or launched).
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import re

from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: pages listed in mkdocs.yml's nav only once they exist
OPTIONAL_PAGES = ("war.md", "distributed.md", "tag.md")
#: nav section that collects pages of docs/ the nav does not list (so none is unreachable)
MORE_TITLE = "More"
PAGES_DIR = "scenarios"
NAV_TITLE = "Scenarios"
#: the scenario pictures (scripts/scenario_gifs.py) and their manifest, under docs/
PICTURES_DIR = "images/scenarios"
PICTURES_MANIFEST = "manifest.json"


# ---------------------------------------------------------------------------------- scenarios
def scenario_ids() -> list[str]:
    from war_envs.registry import registered_ids

    return list(registered_ids())


def _default(value) -> str:
    if value is inspect.Parameter.empty:
        return "required"
    return f"`{value!r}`"


def scenario_arguments(cls) -> list[tuple[str, str, str]]:
    """``(name, default, defined in)`` for every keyword argument the class accepts."""
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind == p.KEYWORD_ONLY and p.name not in seen:
                seen.add(p.name)
                rows.append((p.name, _default(p.default), klass.__name__))
    return rows


def _kwargs_text(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def picture_caption(env_id: str, entry: dict) -> str:
    """What the picture of ``env_id`` shows, from its manifest entry."""
    if entry["policy"] == "random":
        who = "Random actions (every agent uniformly at random)"
    else:
        who = (f"The trained policy of preset `{entry['preset']}`, acting greedily (`war-train train {env_id}`, "
               f"seed {entry['seed']}, {entry['checkpoint_env_steps']:,} env steps)")
    steps, length = entry["steps"], entry["episode_length"]
    if steps >= length:
        span = f"the whole {length}-step episode"
    elif steps < entry["max_steps"]:
        span = f"an episode that ended after {steps} of at most {length} steps"
    else:
        span = f"the first {steps} of the episode's {length} steps"
    env = f"with `{_kwargs_text(entry['env_kwargs'])}`" if entry["env_kwargs"] else "default arguments"
    if entry["frames"] == 1 and steps > 0:
        span += " (nothing in it moves: one still frame)"
    return (f"{who}, evaluation world 0 of seed {entry['seed']}: {span}, {env}; "
            f"drawn by `render_frame`, {entry['size']} × {entry['size']} px "
            f"(`scripts/scenario_gifs.py`, `docs/{PICTURES_DIR}/{PICTURES_MANIFEST}`).")


def scenario_picture(env_id: str, docs_dir: pathlib.Path = ROOT / "docs") -> list[str]:
    """The Markdown lines of ``env_id``'s picture and caption (from the pictures' manifest)."""
    import json

    folder = docs_dir / PICTURES_DIR
    fix = f"run `python scripts/scenario_gifs.py --only {env_id}` and commit docs/{PICTURES_DIR}/"
    manifest = folder / PICTURES_MANIFEST
    if not manifest.is_file():
        raise ValueError(f"docs/{PICTURES_DIR}/{PICTURES_MANIFEST} is missing: {fix}")
    entry = json.loads(manifest.read_text())["pictures"].get(env_id)
    if entry is None:
        raise ValueError(f"{env_id}: no entry in docs/{PICTURES_DIR}/{PICTURES_MANIFEST}: {fix}")
    if not (folder / entry["file"]).is_file():
        raise ValueError(f"{env_id}: docs/{PICTURES_DIR}/{entry['file']} is missing: {fix}")
    what = "random actions" if entry["policy"] == "random" else f"trained policy ({entry['preset']})"
    return [f"![{env_id}: one episode, {what}](../{PICTURES_DIR}/{entry['file']})"
            f"{{ width=\"{entry['size']}\" }}", "", f"*{picture_caption(env_id, entry)}*"]


def scenario_page(env_id: str) -> str:
    """The Markdown page of scenario ``env_id``."""
    from war_envs.registry import scenario_class

    cls = scenario_class(env_id)
    doc = inspect.getdoc(cls)
    if not doc:
        raise ValueError(f"{env_id}: {cls.__module__}.{cls.__qualname__} has no docstring to document it with")
    summary, _, body = doc.partition("\n\n")
    summary = " ".join(summary.split())
    if summary.startswith(env_id):
        summary = summary[len(env_id):].lstrip(" —-:")
    source = pathlib.Path(inspect.getsourcefile(cls)).resolve()
    try:
        source_text = str(source.relative_to(ROOT))
    except ValueError:
        source_text = source.name
    try:
        from war_train.presets import DEFAULT_PRESETS
        preset = env_id in DEFAULT_PRESETS
    except Exception:  # the trainer is optional for the docs
        preset = False
    lines = [
        f"# {env_id}",
        "",
        *scenario_picture(env_id),
        "",
        summary[0].upper() + summary[1:] if summary else "",
        "",
        "| use | how |",
        "|---|---|",
        f"| class | `{cls.__module__}.{cls.__qualname__}` (`{source_text}`) |",
        f"| batch API (torch) | `war_envs.make(\"{env_id}\", num_envs=1024, seed=0)` |",
        f"| PettingZoo | `war_envs.parallel_env(\"{env_id}\")`, `war_envs.env(\"{env_id}\")` |",
        f"| Gymnasium | `gym.make(\"war_envs/{env_id}\")`, `gym.make_vec(\"war_envs/{env_id}\", num_envs=1024, "
        f"vectorization_mode=\"vector_entry_point\")` |",
        f"| war-train | `war-train train {env_id}`" + (" (tuned preset)" if preset else " (default settings)") + " |",
        "",
        "## Rules",
        "",
        "*From the class docstring (`help(" + f"{cls.__module__}.{cls.__qualname__}" + ")`).*",
        "",
        body.strip(),
        "",
        "## Keyword arguments",
        "",
        "Read from the constructors' signatures; unknown arguments raise `TypeError`.",
        "",
        "| argument | default | defined by |",
        "|---|---|---|",
    ]
    lines += [f"| `{name}` | {default} | `{owner}` |" for name, default, owner in scenario_arguments(cls)]
    return "\n".join(lines) + "\n"


def scenarios_index(ids: list[str]) -> str:
    from war_envs.registry import scenario_class

    lines = ["# Scenarios", "",
             "One page per registered scenario (`war_envs.registered_ids()`), generated at build time "
             "from the scenario class's docstring and signature.", "",
             "| id | summary |", "|---|---|"]
    for env_id in ids:
        first = " ".join(inspect.getdoc(scenario_class(env_id)).partition("\n\n")[0].split())
        if first.startswith(env_id):
            first = first[len(env_id):].lstrip(" —-:")
        lines.append(f"| [{env_id}]({env_id}.md) | {first.replace('|', '&#124;')} |")
    lines += ["", "Writing your own: [a new scenario from scratch](../new_scenario.md)."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- README
_LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)\s]+)\)")


def readme_sections(readme: str) -> dict[str, str]:
    """README's ``## `` sections: heading -> text (heading line included)."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in readme.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        if current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).rstrip() for k, v in sections.items()}


#: README sections the quick start is made of (headings starting with these words)
QUICKSTART_SECTIONS = ("Install", "Quick start")


def quickstart_page(readme: str) -> str:
    """README's install and quick-start sections, with links fixed for the site."""
    chosen = [text for heading, text in readme_sections(readme).items() if heading.startswith(QUICKSTART_SECTIONS)]
    if not any(text.startswith("## Quick start") for text in chosen):
        raise ValueError("README.md: no '## Quick start' section to build the quick start page from")
    intro = ["# Quick start", "", "*Generated from the repository's README.md.*", "", ""]
    body = re.sub(r"^## Quick start: (.)", lambda m: "## " + m.group(1).upper(), "\n\n".join(chosen), flags=re.M)

    def fix(m: re.Match) -> str:
        target = m.group(1)
        if target.startswith("docs/"):
            return f"]({target[len('docs/'):]})"
        return f"](<repo>{target})"

    body = _LINK.sub(fix, body)
    # a link to a repository file outside docs/ has no page on the site: show its path instead
    body = re.sub(r"\[([^\]]+)\]\(<repo>([^)]+)\)", r"`\2`", body)
    return "\n".join(intro) + body + "\n"


# ---------------------------------------------------------------------------------- examples
def examples_page() -> str:
    lines = ["# Examples", "",
             "Single-file, headless scripts in `examples/`. Each prints a banner saying what it shows "
             "and takes `--device`, `--num-envs` and `--total-steps` (`--help` lists the rest); "
             "`tests/test_examples.py` runs every one with a tiny budget.", ""]
    for path in sorted((ROOT / "examples").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        lines += [f"## `{path.name}`", ""]
        lines += [doc.strip() if doc else "(no docstring)", ""]
        lines += ["```bash", f"python examples/{path.name} --help", "```", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- hooks
def _walk_nav(nav, docs_dir: pathlib.Path, ids: list[str]):
    out = []
    for item in nav:
        if isinstance(item, dict):
            (title, value), = item.items()
            if title == NAV_TITLE and value in ([], None):
                value = [{"Overview": f"{PAGES_DIR}/index.md"}] + [{env_id: f"{PAGES_DIR}/{env_id}.md"}
                                                                       for env_id in ids]
            elif isinstance(value, list):
                value = _walk_nav(value, docs_dir, ids)
            elif isinstance(value, str) and value in OPTIONAL_PAGES and not (docs_dir / value).exists():
                continue
            out.append({title: value})
        elif isinstance(item, str) and item in OPTIONAL_PAGES and not (docs_dir / item).exists():
            continue
        else:
            out.append(item)
    return out


def _nav_pages(nav) -> set[str]:
    out: set[str] = set()
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out |= _nav_pages(value)
        elif isinstance(value, str):
            out.add(value)
    return out


def _title(path: pathlib.Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("_", " ").capitalize()


def on_config(config, **kwargs):
    docs_dir = pathlib.Path(config["docs_dir"])
    nav = _walk_nav(config["nav"] or [], docs_dir, scenario_ids())
    listed = _nav_pages(nav)
    extra = [{_title(p): p.relative_to(docs_dir).as_posix()} for p in sorted(docs_dir.rglob("*.md"))
             if p.relative_to(docs_dir).as_posix() not in listed]
    if extra:
        nav.append({MORE_TITLE: extra})
    config["nav"] = nav
    return config


def on_files(files, config, **kwargs):
    ids = scenario_ids()
    pages = {f"{PAGES_DIR}/index.md": scenarios_index(ids),
             "quickstart.md": quickstart_page((ROOT / "README.md").read_text()),
             "examples.md": examples_page()}
    pages.update({f"{PAGES_DIR}/{env_id}.md": scenario_page(env_id) for env_id in ids})
    for uri, content in pages.items():
        if files.get_file_from_path(uri) is not None:
            raise ValueError(f"docs/{uri} exists but is generated at build time by scripts/mkdocs_hooks.py: remove it")
        files.append(File.generated(config, uri, content=content))
    return files
