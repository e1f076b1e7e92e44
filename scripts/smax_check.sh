#!/usr/bin/env bash
# SMAX check: SMAX-v0 against JaxMARL 0.2.0's SMAX itself.  JaxMARL (jax 0.10.2) is never
# installed into the project's environment: it gets its own virtual environment, the one
# benchmarks/env_throughput.py uses for its JaxMARL column (same path and install marker, so
# either reuses the other's).  Builds it on first use (~1 min: jax, jaxlib, jaxmarl and flax),
# then runs tests/test_smax_reference.py with the project's environment: JaxMARL's episodes
# replayed step by step and whole (every map, both action and observation types, heuristic and
# self-play enemies), start-state distributions and random-policy statistics against JaxMARL's
# (tests/smax_reference.py records them in JaxMARL's venv); then tests/test_jaxmarl_games_reference.py:
# SwitchRiddle-v0 and CoinGame-v0 against JaxMARL's switch_riddle and coin_game (episodes replayed
# with JaxMARL's draws, our draws' distributions, random-policy statistics); then
# tests/test_overcooked_reference.py: Overcooked-v0 against JaxMARL's overcooked (every layout), and
# tests/test_hanabi_reference.py: Hanabi-v0 against JaxMARL's hanabi (2-5 players, masks), and
# tests/test_facmac_reference.py: FacmacPredatorPrey-v0 and its 3a/6a/9a presets against JaxMARL's
# MPE_simple_facmac_v1/_3a/_6a/_9a (episodes replayed with JaxMARL's prey draws, float32 and x64).
#
#   bash scripts/smax_check.sh
#   bash scripts/smax_check.sh --prepare   # only build JaxMARL's venv (.ci/run, beside the tests)
#
# Environment: SMAX_REFERENCE_VENV (default ~/.cache/war-envs/bench-venvs/jaxmarl),
# WAR_ENVS_VENV (the project's environment, default .venv: bash scripts/dev.sh test builds it),
# PYTHON (default python3, for creating JaxMARL's venv), JAX_COMPILATION_CACHE_DIR (default
# jaxmarl-xla-cache beside JaxMARL's venv: JAX's persistent cache, only shortens re-runs).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "--prepare" ]; }; then
    echo "usage: bash scripts/smax_check.sh [--prepare] (got: $*)" >&2
    exit 2
fi
VENV="${SMAX_REFERENCE_VENV:-$HOME/.cache/war-envs/bench-venvs/jaxmarl}"
PROJECT="${WAR_ENVS_VENV:-.venv}"
if [ "${1:-}" != "--prepare" ] && [ ! -x "$PROJECT/bin/python" ]; then
    echo "[smax-check] the project's environment $PROJECT does not exist: run bash scripts/dev.sh test first (or set WAR_ENVS_VENV)" >&2
    exit 1
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
# benchmarks/env_throughput.py's marker: its PEER_REQUIREMENTS["jaxmarl"] as JSON
SPEC='[["jax==0.10.2", "jaxlib==0.10.2", "jaxmarl==0.2.0"]]'
MARKER="$VENV/.war-envs-bench-ok"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$MARKER" ] || [ "$(cat "$MARKER")" != "$SPEC" ]; then
    echo "[smax-check] installing jax 0.10.2, jaxlib 0.10.2, jaxmarl 0.2.0 into $VENV" >&2
    rm -rf "$VENV"  # partial or outdated install
    mkdir -p "$(dirname "$VENV")"
    "${PYTHON:-python3}" -m venv "$VENV"
    "$VENV/bin/pip" install -q "jax==0.10.2" "jaxlib==0.10.2" "jaxmarl==0.2.0"
    "$VENV/bin/python" -c "import jax, jaxmarl" 2>/dev/null
    printf '%s' "$SPEC" > "$MARKER"
fi
"$VENV/bin/python" -c "import jax, jaxmarl, numpy; from importlib.metadata import version; print(f'[smax-check] jax {jax.__version__}, jaxmarl {version(\"jaxmarl\")}, numpy {numpy.__version__}')" 2>/dev/null
echo "[smax-check] environment ready after ${SECONDS} s"
if [ "${1:-}" = "--prepare" ]; then
    exit 0
fi

export SMAX_REFERENCE_PYTHON="$VENV/bin/python"
export JAX_COMPILATION_CACHE_DIR="${JAX_COMPILATION_CACHE_DIR:-$(dirname "$VENV")/jaxmarl-xla-cache}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
# one test file per worker on every core where the project's environment has pytest-xdist ([dev])
workers=()
if "$PROJECT/bin/python" -c "import xdist" 2>/dev/null; then workers=(-n "${WAR_ENVS_TEST_WORKERS:-auto}" --dist loadfile); fi
"$PROJECT/bin/python" -m pytest -q -p no:cacheprovider "${workers[@]}" tests/test_smax_reference.py tests/test_jaxmarl_games_reference.py tests/test_overcooked_reference.py tests/test_hanabi_reference.py tests/test_facmac_reference.py
