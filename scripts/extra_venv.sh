# Sourced by the third-party checks (rllib_check.sh, benchmarl_check.sh): a virtual environment
# of its own for one war-envs extra whose library pins versions [dev] does not take.
#
#   extra_venv TAG VENV EXTRA [PACKAGE ...]
#
# creates VENV with $PYTHON (default python3) on first use and installs war-envs[EXTRA] plus the
# packages, once per pyproject.toml and package list (a stamp file in VENV); messages are
# prefixed [TAG].
extra_venv() {
    local tag="$1" venv="$2" extra="$3"
    shift 3
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    if [ ! -x "$venv/bin/python" ]; then
        echo "[$tag] creating $venv" >&2
        "${PYTHON:-python3}" -m venv "$venv"
    fi
    local stamp="$venv/.war-envs-$extra-$( (cat pyproject.toml; echo "$*") | sha1sum | cut -c1-12)"
    if [ ! -f "$stamp" ]; then
        echo "[$tag] installing war-envs[$extra] (torch 2.13.0, $*)" >&2
        # torch pinned: on this project's machines a CPU build of 2.13.0 lies on disk, an unpinned
        # torch would pull a multi-GB CUDA build; elsewhere fall back to what pip resolves.
        "$venv/bin/pip" install -q "torch==2.13.0" || "$venv/bin/pip" install -q torch
        "$venv/bin/pip" install -q "torch==2.13.0" -e ".[$extra]" "$@" \
            || "$venv/bin/pip" install -q -e ".[$extra]" "$@"
        touch "$stamp"
    fi
}
