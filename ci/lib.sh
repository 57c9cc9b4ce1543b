# Shared by the ci/ scripts: timed stages and a summary of their times.
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STAGE_TIMES=()

# stage NAME COMMAND...: runs COMMAND, prints and records its wall time
# and status, and returns COMMAND's exit status.
stage() {
    local name=$1
    shift
    echo "::group::== ${name}: $*"
    local start=$SECONDS rc=0
    "$@" || rc=$?
    local took=$((SECONDS - start))
    echo "::endgroup::"
    local status=ok
    ((rc == 0)) || status="FAILED (exit $rc)"
    echo "== ${name}: ${took}s ${status}"
    STAGE_TIMES+=("$(printf '%-44s %5ss  %s' "$name" "$took" "$status")")
    return "$rc"
}

# logged LOG COMMAND...: runs COMMAND, showing its output and keeping a
# copy in LOG (for ci/primitives.py ran); returns COMMAND's exit status.
logged() {
    local log=$1
    shift
    mkdir -p "$(dirname "$log")"
    "$@" 2>&1 | tee "$log"
}

print_stage_times() {
    echo "== stage times ($(basename "$0"))"
    printf '   %s\n' "${STAGE_TIMES[@]}"
}
trap 'print_stage_times' EXIT
