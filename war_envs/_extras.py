"""One-line errors for a missing optional dependency (an extra of ``pyproject.toml``).

```python
from war_envs._extras import needs_extra

with needs_extra("pettingzoo", "the PettingZoo front end (war_envs.parallel_env / war_envs.env)"):
    import pettingzoo
```

A module that cannot be found inside the block (the library itself, or one of its own
dependencies) becomes a ``MissingExtraError``, a ``ModuleNotFoundError`` whose message is one
line naming the feature, the missing package and the command that installs it
(``pip install 'war-envs[<extra>]'``).  A missing ``war_envs`` / ``war_train`` module is a bug,
not a missing extra, and any other ``ImportError`` (a library present in an incompatible
version) keeps its own message.  Only the standard library is imported here: ``import war_envs``
needs only the core dependencies.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["EXTRAS", "MissingExtraError", "needs_extra"]

#: the extras of pyproject.toml's [project.optional-dependencies] (tests/test_extras.py checks)
EXTRAS = ("pettingzoo", "render", "sb3", "torchrl", "skrl", "benchmarl", "train", "rllib", "docs", "dev")

#: import name -> the name pip knows the package by, where the two differ
_DISTRIBUTIONS = {"PIL": "Pillow", "ray": "ray[rllib]", "stable_baselines3": "stable-baselines3",
                  "sb3_contrib": "sb3-contrib"}

_OURS = ("war_envs", "war_train")


class MissingExtraError(ModuleNotFoundError):
    """An optional dependency of a war-envs feature is not installed; ``extra`` names the extra
    that installs it (``pip install 'war-envs[<extra>]'``), ``name`` the missing module.
    Public as ``war_envs.MissingExtraError``."""

    __module__ = "war_envs"

    def __init__(self, message: str, *, extra: str | None = None, name: str | None = None) -> None:
        super().__init__(message, name=name)
        self.extra = extra


def missing_extra_message(feature: str, extra: str, missing: str | None, note: str = "") -> str:
    """The one-line message for module ``missing`` not found while loading ``feature``."""
    root = (missing or "").split(".")[0]
    package = _DISTRIBUTIONS.get(root, root)
    install = f"pip install 'war-envs[{extra}]'"
    if not root:
        text = f"{feature} needs a package that is not installed: {install}"
    elif missing != root and sys.modules.get(root) is not None:
        # the package imported, one of its modules is missing: another version than the extra's
        text = (f"{feature} needs {missing}, which the installed {package} lacks (an incompatible "
                f"version): pip install -U 'war-envs[{extra}]'")
    else:
        text = f"{feature} needs {package}, which is not installed: {install}"
    return f"{text} {note}" if note else text


@contextlib.contextmanager
def needs_extra(extra: str, feature: str, *, note: str = "") -> Iterator[None]:
    """Turn a ``ModuleNotFoundError`` raised in the block into a one-line ``MissingExtraError``
    naming ``feature`` (what the user called), the missing package and ``war-envs[extra]``;
    ``note`` (one line) is appended, e.g. to say the extra wants its own environment."""
    if extra not in EXTRAS:
        raise ValueError(f"extra: expected one of {EXTRAS}, got {extra!r}")
    if "\n" in feature or "\n" in note:
        raise ValueError("feature and note must be one line each")
    try:
        yield
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in _OURS:
            raise
        raise MissingExtraError(missing_extra_message(feature, extra, exc.name, note),
                                extra=extra, name=exc.name) from None
