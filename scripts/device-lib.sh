# Shared by the device scripts (sourced, not run): time limits cut to a deadline, log lines, and
# steps whose logs start with a provenance header. The sourcing script sets SCRIPT (its name),
# T0=$SECONDS and DEADLINE (seconds from T0 by which everything must have finished).

limit() {  # limit WANTED RESERVE: WANTED seconds, or less so that RESERVE seconds remain
  local left=$(( DEADLINE - (SECONDS - T0) - $2 ))
  [ $left -lt 15 ] && left=15
  echo $(( $1 < left ? $1 : left ))
}
say() { echo "[$SCRIPT +$((SECONDS - T0))s] $*"; }

# COMMIT (the logs' header), SUMLAB_GIT_COMMIT and SUMLAB_GIT_DIRTY (provenance.json): from the
# stamp written before the call.
# shellcheck source=scripts/device-stamp.sh
source "$(dirname "${BASH_SOURCE[0]}")/device-stamp.sh"
GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
NVCC=$(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')
header() {  # header FILE COMMAND...: starts FILE with where and how it was made
  local file=$1; shift
  {
    echo "# sumlab $SCRIPT"
    echo "# commit:  $COMMIT"
    echo "# gpu:     ${GPU:-none} (name, driver, memory)"
    echo "# nvcc:    ${NVCC:-none}"
    echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# host:    $(uname -srm), $(nproc) cores"
    echo "# command: $*"
    echo
  } > "$file"
}
step() {  # step FILE LIMIT COMMAND...: runs COMMAND under a time limit, its output after FILE's header
  local file=$1 lim=$2; shift 2
  header "$file" "$@"
  say "$* (limit ${lim}s) -> $(basename "$file")"
  timeout --signal=INT --kill-after=10 "$lim" "$@" >> "$file" 2>&1
  local rc=$?
  echo "# exit status: $rc$([ $rc -eq 124 ] && echo ' (time limit reached)')" >> "$file"
  say "exit $rc"
  return $rc
}
