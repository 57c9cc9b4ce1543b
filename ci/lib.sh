# Shared by the ci/ scripts: timed stages and a summary of their times.
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STAGE_TIMES=()

# stage NAME COMMAND...: runs COMMAND, prints and records its wall time.
stage() {
    local name=$1
    shift
    echo "::group::== ${name}: $*"
    local start=$SECONDS
    "$@"
    local took=$((SECONDS - start))
    echo "::endgroup::"
    echo "== ${name}: ${took}s"
    STAGE_TIMES+=("$(printf '%-28s %5ss' "$name" "$took")")
}

print_stage_times() {
    echo "== stage times ($(basename "$0"))"
    printf '   %s\n' "${STAGE_TIMES[@]}"
}
trap 'print_stage_times' EXIT
