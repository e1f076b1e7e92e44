#!/usr/bin/env bash
# BenchMARL check: BenchMARL 1.5 pins torchrl<0.12 (newer torchrl is in [dev]), so it gets its
# own virtual environment. Builds it on first use (~2 min: war-envs[benchmarl] with torchrl
# 0.11, BenchMARL's hydra, av and torchvision), then runs (about 30 s)
#   1. tests/test_adapters_benchmarl.py: the task specs of Spread, PredatorPrey and Tag, and
#      BenchMARL's MAPPO on Spread (two iterations and an evaluation through its Experiment;
#      the policy moves, and the same seed gives the same policy), and BenchMARL's own VMAS
#      navigation task with its env factory swapped for war_train.adapters.torchrl.VmasEnv
#      (VMAS 1.5.2 in the environment too, for the comparison with torchrl's VmasEnv), and
#   2. the TorchRL adapter tests (what the BenchMARL tasks are built on; VmasEnv's layout under
#      torchrl 0.11 among them) and the action-mask front-end tests (TorchRL's action_mask key
#      among them) under torchrl 0.11.
#
#   bash scripts/benchmarl_check.sh
#   bash scripts/benchmarl_check.sh --prepare   # only build BenchMARL's venv (.ci/run, beside the tests)
#
# Environment: BENCHMARL_VENV (default ~/.cache/war-envs/benchmarl-venv), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "--prepare" ]; }; then
    echo "usage: bash scripts/benchmarl_check.sh [--prepare] (got: $*)" >&2
    exit 2
fi
VENV="${BENCHMARL_VENV:-$HOME/.cache/war-envs/benchmarl-venv}"
source scripts/extra_venv.sh
extra_venv benchmarl-check "$VENV" benchmarl pytest "vmas==1.5.2"
"$VENV/bin/python" -c "import benchmarl, tensordict, torch, torchrl; print(f'[benchmarl-check] benchmarl {benchmarl.__version__}, torchrl {torchrl.__version__}, tensordict {tensordict.__version__}, torch {torch.__version__}')"
echo "[benchmarl-check] environment ready after ${SECONDS} s"
if [ "${1:-}" = "--prepare" ]; then
    exit 0
fi

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export WARP_CACHE_PATH="${WARP_CACHE_PATH:-$HOME/.cache/war-envs/warp}"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_adapters_benchmarl.py \
    tests/test_adapters_torchrl.py tests/test_adapters_torchrl_env_object.py tests/test_adapters_torchrl_vmas.py \
    tests/test_frontends_masks.py
