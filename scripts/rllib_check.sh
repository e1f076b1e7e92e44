#!/usr/bin/env bash
# RLlib check: RLlib pins gymnasium==1.2.2 (newer gymnasium is in [dev]), so it gets its own
# virtual environment. Builds it on first use (~3 min: ray is ~70 MB, torch and ray ~2 GB in
# the venv), then runs (about 2 min)
#   1. two PPO iterations on Spread-v0 (scripts/rllib_ppo.py), and
#   2. in one pytest run: tests/test_adapters_rllib.py (PPO on every scenario, the creator's
#      conventions) and the Gymnasium/PettingZoo front-end tests under RLlib's gymnasium 1.2.2.
#
#   bash scripts/rllib_check.sh            # both (what .ci/run runs)
#   bash scripts/rllib_check.sh --quick    # only step 1
#   bash scripts/rllib_check.sh --prepare  # only build RLlib's venv (.ci/run, beside the tests)
#
# Environment: RLLIB_VENV (default ~/.cache/war-envs/rllib-venv), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "--quick" ] && [ "$1" != "--prepare" ]; }; then
    echo "usage: bash scripts/rllib_check.sh [--quick | --prepare] (got: $*)" >&2
    exit 2
fi
VENV="${RLLIB_VENV:-$HOME/.cache/war-envs/rllib-venv}"
source scripts/extra_venv.sh
extra_venv rllib-check "$VENV" rllib pytest hypothesis "mpe2==1.1.1"
"$VENV/bin/python" -c "import gymnasium, ray, torch; print(f'[rllib-check] ray {ray.__version__}, gymnasium {gymnasium.__version__}, torch {torch.__version__}')"
echo "[rllib-check] environment ready after ${SECONDS} s"
if [ "${1:-}" = "--prepare" ]; then
    exit 0
fi

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
"$VENV/bin/python" scripts/rllib_ppo.py --scenario Spread-v0 --iterations 2
if [ "${1:-}" = "--quick" ]; then
    exit 0
fi
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_adapters_rllib.py \
    tests/test_gymnasium.py tests/test_pettingzoo.py tests/test_adapters_agents_as_envs.py \
    tests/test_tag_frontends.py tests/test_frontends_masks.py
