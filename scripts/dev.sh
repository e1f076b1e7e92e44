#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv, installs war-envs with what the chosen
# job needs, then runs it.
#   bash scripts/dev.sh main [args]   the main job (examples/main_job.py)
#   bash scripts/dev.sh test [args]   the test suite (pytest; extra args go to pytest)
#   bash scripts/dev.sh bench [args]  benchmarks/env_throughput.py
set -euo pipefail
cd "$(dirname "$0")/.."
job="${1:-test}"; shift || true
PY="${PYTHON:-python3}"
VENV="${WAR_ENVS_VENV:-.venv}"

if [ ! -x "$VENV/bin/python" ]; then
    echo "[war-envs] creating $VENV" >&2
    "$PY" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! python -c "import torch" 2>/dev/null; then
    # On this project's machines a CPU build of torch 2.13.0 lies on local disk; an unpinned
    # torch would pull a multi-GB CUDA build. Elsewhere fall back to whatever pip resolves.
    echo "[war-envs] installing torch" >&2
    pip install -q "torch==2.13.0" || pip install -q torch
fi
extras="dev,train"
stamp="$VENV/.war-envs-installed-$(sha1sum pyproject.toml | cut -c1-12)-$extras"
if [ ! -f "$stamp" ]; then
    echo "[war-envs] installing war-envs[$extras]" >&2
    pip install -q -e ".[$extras]"
    touch "$stamp"
fi

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
case "$job" in
    main)  exec python examples/main_job.py "$@" ;;
    test)  exec python -m pytest -q "$@" ;;
    bench) exec python benchmarks/env_throughput.py "$@" ;;
    *) echo "usage: bash scripts/dev.sh {main|test|bench} [args]" >&2; exit 2 ;;
esac
