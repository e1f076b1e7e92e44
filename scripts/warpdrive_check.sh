#!/usr/bin/env bash
# WarpDrive check: TagGridWorld-v0 against WarpDrive 2.7.1's own tag_gridworld.  WarpDrive is never
# installed into the project's environment: it gets its own virtual environment.  rl-warp-drive
# 2.7.1 requires pycuda (a CUDA build) and torch, which its tag_gridworld does not use: it is
# installed without dependencies, plus what its NumPy env and Numba step import (gym 0.26.2,
# numpy 1.26.4, numba 0.60.0; Numba's CUDA simulator runs the Numba step without a GPU).  Builds
# it on first use (~30 s), then runs tests/test_warpdrive_reference.py with the project's
# environment: WarpDrive's episodes (tests/warpdrive_reference.py records them in WarpDrive's
# venv) replayed bitwise, and start distributions against WarpDrive's reset pool.
#
#   bash scripts/warpdrive_check.sh
#   bash scripts/warpdrive_check.sh --prepare   # only build WarpDrive's venv (.ci/run, beside the tests)
#
# Environment: WARPDRIVE_REFERENCE_VENV (default ~/.cache/war-envs/bench-venvs/warpdrive),
# WAR_ENVS_VENV (the project's environment, default .venv: bash scripts/dev.sh test builds it),
# PYTHON (default python3, for creating WarpDrive's venv).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "--prepare" ]; }; then
    echo "usage: bash scripts/warpdrive_check.sh [--prepare] (got: $*)" >&2
    exit 2
fi
VENV="${WARPDRIVE_REFERENCE_VENV:-$HOME/.cache/war-envs/bench-venvs/warpdrive}"
PROJECT="${WAR_ENVS_VENV:-.venv}"
if [ "${1:-}" != "--prepare" ] && [ ! -x "$PROJECT/bin/python" ]; then
    echo "[warpdrive-check] the project's environment $PROJECT does not exist: run bash scripts/dev.sh test first (or set WAR_ENVS_VENV)" >&2
    exit 1
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
SPEC='[["rl-warp-drive==2.7.1 --no-deps"], ["gym==0.26.2", "numpy==1.26.4", "numba==0.60.0"]]'
MARKER="$VENV/.war-envs-bench-ok"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$MARKER" ] || [ "$(cat "$MARKER")" != "$SPEC" ]; then
    echo "[warpdrive-check] installing rl-warp-drive 2.7.1 (no dependencies), gym 0.26.2, numpy 1.26.4, numba 0.60.0 into $VENV" >&2
    rm -rf "$VENV"  # partial or outdated install
    mkdir -p "$(dirname "$VENV")"
    "${PYTHON:-python3}" -m venv "$VENV"
    "$VENV/bin/pip" install -q --no-deps "rl-warp-drive==2.7.1"
    # (pip then lists the requirements of rl-warp-drive left out: pycuda, torch, pyyaml, pytest)
    "$VENV/bin/pip" install -q "gym==0.26.2" "numpy==1.26.4" "numba==0.60.0"
    "$VENV/bin/python" -c "import example_envs.tag_gridworld.tag_gridworld, numba" 2>/dev/null
    printf '%s' "$SPEC" > "$MARKER"
fi
"$VENV/bin/python" -c "import numba, numpy, gym; from importlib.metadata import version; print(f'[warpdrive-check] rl-warp-drive {version(\"rl-warp-drive\")}, gym {gym.__version__}, numba {numba.__version__}, numpy {numpy.__version__}')" 2>/dev/null
echo "[warpdrive-check] environment ready after ${SECONDS} s"
if [ "${1:-}" = "--prepare" ]; then
    exit 0
fi

export WARPDRIVE_REFERENCE_PYTHON="$VENV/bin/python"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
"$PROJECT/bin/python" -m pytest -q -p no:cacheprovider tests/test_warpdrive_reference.py
