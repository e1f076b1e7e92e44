"""What a results file under ``benchmarks/results/`` records next to its figures: the command
that produced it, the package versions, the machine and the date.

Every benchmark's ``--json PATH`` goes through :func:`write`, so every results file carries the
same metadata (``scripts/tables.py`` turns those files into the tables of README.md and docs/)::

    meta = _results.metadata("train_speed.py", argv)            # at the start of the run
    _results.write(args.json, rows, meta)                         # every record gets the metadata

Only the standard library is imported at module level: env_throughput's peer workers run this
module in the peers' own virtual environments (without torch).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from importlib import metadata as _metadata
from pathlib import Path

#: The packages every results file records (``?`` when one is not installed).
CORE_DISTS = ("war-envs", "warp-lang", "torch", "numpy")


def versions(dists=CORE_DISTS) -> dict:
    """``{"python": ..., dist: version}`` for the named distributions (``?``: not installed)."""
    found = {"python": platform.python_version()}
    for dist in dists:
        try:
            found[dist] = _metadata.version(dist)
        except _metadata.PackageNotFoundError:
            found[dist] = "?"
    return found


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name() -> str | None:
    """The first CUDA device's name, or ``None`` (also where torch is not installed)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def machine() -> dict:
    """``{"cpu": model, "cores": usable cores, "gpu": name or None}``, plus
    ``kernel_optimization_level`` where ``$WAR_ENVS_KERNEL_OPT_LEVEL`` lowered it (the test
    suite's fast-compiling kernels: no speed figure should come from them)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    from war_envs.core.episode import kernel_optimization_level

    out = {"cpu": cpu_model(), "cores": cores, "gpu": gpu_name()}
    level = kernel_optimization_level()
    if level != 3:
        out["kernel_optimization_level"] = str(level)
        print(f"warning: kernels compiled at -O{level} ($WAR_ENVS_KERNEL_OPT_LEVEL): not a speed measurement",
              file=sys.stderr)
    return out


def command(script: str, argv=None) -> str:
    """The command line of a run: the script's file name and its arguments (``sys.argv[1:]`` when
    ``argv`` is None, as ``argparse`` reads them)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join([Path(script).name, *map(str, args)])


def metadata(script: str, argv=None, dists=CORE_DISTS) -> dict:
    """``command``, ``date`` (local time, ISO 8601), ``machine`` and ``versions`` of a run."""
    return {"command": command(script, argv), "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": machine(), "versions": versions(dists)}


def write(path, results, meta: dict) -> None:
    """Write ``results`` as JSON to ``path`` (parent folders created), the metadata merged into
    every record of a list, or into the top level of a dict report. The records' own keys win
    (env_throughput's records carry each framework's versions)."""
    if isinstance(results, dict):
        results = {**meta, **results}
    elif isinstance(results, list) and all(isinstance(r, dict) for r in results):
        results = [{**meta, **r} for r in results]
    else:
        raise TypeError(f"results: expected a dict or a list of dicts, got {type(results).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
