#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv (or $WAR_ENVS_VENV), installs war-envs
# with the extras the chosen job needs, then runs it.
#   bash scripts/dev.sh main [args]   the main job (examples/main_job.py): war-envs[train]
#   bash scripts/dev.sh test [args]   the test suite (pytest; extra args go to pytest): [dev,train];
#                                     one test file per worker on every core (pytest-xdist:
#                                     -n auto --dist loadfile; WAR_ENVS_TEST_WORKERS=N or -n 0 to change)
#   bash scripts/dev.sh bench [args]  benchmarks/env_throughput.py: [dev] (mpe2 side by side)
# Each extra is installed once per pyproject.toml (a stamp file per extra in the venv), so
# switching jobs installs only what the new one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
job="${1:-test}"; shift || true
PY="${PYTHON:-python3}"
VENV="${WAR_ENVS_VENV:-.venv}"

case "$job" in
    main)  extras=(train) ;;       # matplotlib (plot), pillow (GIF), tensorboard
    test)  extras=(dev train) ;;   # the reference (mpe2), the adapters' libraries, pytest, mkdocs
    bench) extras=(dev) ;;         # mpe2 and pettingzoo run beside war-envs
    *) echo "usage: bash scripts/dev.sh {main|test|bench} [args]" >&2; exit 2 ;;
esac

if [ ! -x "$VENV/bin/python" ]; then
    echo "[war-envs] creating $VENV" >&2
    "$PY" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! python -c "import torch" 2>/dev/null; then
    # On this project's machines a CPU build of torch 2.13.0 lies on local disk; an unpinned
    # torch would pull a multi-GB CUDA build. Elsewhere fall back to whatever pip resolves (on a
    # CPU-only machine, put PyTorch's CPU build into the venv first: README.md, "Install").
    echo "[war-envs] installing torch" >&2
    pip install -q "torch==2.13.0" || pip install -q torch
fi
hash="$(sha1sum pyproject.toml | cut -c1-12)"
missing=()
for extra in "${extras[@]}"; do
    [ -f "$VENV/.war-envs-installed-$hash-$extra" ] || missing+=("$extra")
done
if [ "${#missing[@]}" -gt 0 ]; then
    spec="$(IFS=,; echo "${missing[*]}")"
    echo "[war-envs] installing war-envs[$spec]" >&2
    # stamps of another pyproject.toml are stale: what they stood for is reinstalled on use
    find "$VENV" -maxdepth 1 -name '.war-envs-installed-*' ! -name ".war-envs-installed-$hash-*" -delete
    pip install -q -e ".[$spec]"
    for extra in "${missing[@]}"; do touch "$VENV/.war-envs-installed-$hash-$extra"; done
fi

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
case "$job" in
    main)  exec python examples/main_job.py "$@" ;;
    # the tests compile their hundreds of kernel modules at -O0: about ten times sooner, the same
    # results (war_envs.core.episode.kernel_optimization_level)
    test)  export WAR_ENVS_KERNEL_OPT_LEVEL="${WAR_ENVS_KERNEL_OPT_LEVEL:-0}"
           exec python -m pytest -q -n "${WAR_ENVS_TEST_WORKERS:-auto}" --dist loadfile "$@" ;;
    bench) exec python benchmarks/env_throughput.py "$@" ;;
esac
