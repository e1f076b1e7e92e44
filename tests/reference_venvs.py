"""Where the parity tests find a reference that lives in its own virtual environment (JaxMARL,
WarpDrive: their pins conflict with ours, so CI builds each a venv of its own and the tests call
its Python in a subprocess)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def reference_python(env_var: str, venv: str, who: str, script: str) -> Path:
    """The reference's Python: ``$env_var``, else ``~/.cache/war-envs/bench-venvs/<venv>/bin/python``.
    Absent: the calling test module is skipped (``RuntimeError`` where ``$env_var`` names a
    missing file: a CI step that set it must not pass by skipping)."""
    default = Path(f"~/.cache/war-envs/bench-venvs/{venv}/bin/python").expanduser()
    path = Path(os.environ.get(env_var) or default).expanduser()
    if not path.exists():
        if os.environ.get(env_var):
            raise RuntimeError(f"{env_var}={path} does not exist")
        pytest.skip(f"{who}'s venv is absent ({path}; bash {script} builds it and runs these tests, or set "
                    f"{env_var})", allow_module_level=True)
    return path
