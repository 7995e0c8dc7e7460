#!/usr/bin/env bash
# device-check: the whole GPU check of issue 3 in one script, for a lent H200 (or any CUDA machine).
#   1. what the machine has (GPU, driver, nvcc, cmake, the dev packages sumlab needs) -> setup.log
#   2. configure + build with the `cuda` preset (sm_90 SASS + compute_90 PTX)          -> setup.log
#   3. sumlab verify, the full sweep (GPU bits vs the CPU order model)                  -> verify.log,
#      verify_cases.csv.gz (every case), verify_cases_atomic.csv (the atomic distribution)
#   4. ctest -L gpu                                                                      -> ctest_gpu.log
#   5. compute-sanitizer memcheck and racecheck over `sumlab verify --quick` (every kernel launched;
#      racecheck expected clean), then racecheck over `sumlab verify --racy` (the deliberately racy
#      tree: hazards expected)                                                          -> memcheck.log,
#      racecheck.log
# Every log starts with a provenance header (commit, GPU + driver, nvcc, date, command line).
# Each step has a time limit so that the script always finishes (about 9 minutes in all) and
# leaves what it got in $OUT.
#
# Environment:
#   OUT                 where logs go (default ./out/device-check)
#   SUMLAB_DEPS_PREFIX  a folder holding (or to receive) the dev packages that the machine lacks:
#                       added to CMAKE_PREFIX_PATH, CPATH, LIBRARY_PATH, LD_LIBRARY_PATH,
#                       PKG_CONFIG_PATH and PATH
#   SUMLAB_DEBS         a folder of .deb files (Debian's -dev packages) to unpack into
#                       SUMLAB_DEPS_PREFIX (default prefix /tmp/sumlab-deps) when something is
#                       missing; nothing is installed system-wide (no network there)
#   SUMLAB_FORCE_DEBS   non-empty: unpack SUMLAB_DEBS even when nothing is missing (one consistent set)
#   SUMLAB_JOBS         build parallelism (default: all cores)
#   SUMLAB_VERIFY_ARGS  extra arguments for the full verify (e.g. "--sizes 0,1,31,33,1000")
#   SUMLAB_SETUP_ONLY   non-empty: stop after the build (for scripts that run their own steps)
set -uo pipefail

OUT=${OUT:-$PWD/out/device-check}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
T0=$SECONDS
JOBS=${SUMLAB_JOBS:-$(nproc)}
DEADLINE=${SUMLAB_DEADLINE:-525}  # seconds from the start; every step's limit is cut to fit
# limit WANTED RESERVE: WANTED seconds, or less so that RESERVE seconds remain for later steps.
limit() {
  local left=$(( DEADLINE - (SECONDS - T0) - $2 ))
  [ $left -lt 20 ] && left=20
  echo $(( $1 < left ? $1 : left ))
}
say() { echo "[device-check +$((SECONDS - T0))s] $*"; }

# COMMIT, SUMLAB_GIT_COMMIT, SUMLAB_GIT_DIRTY: the stamp written before the call.
source scripts/device-stamp.sh
GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
NVCC=$(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')

# header FILE COMMAND...: a provenance header at the top of FILE.
header() {
  local file=$1; shift
  {
    echo "# sumlab device-check"
    echo "# commit:  $COMMIT"
    echo "# gpu:     ${GPU:-none} (name, driver, memory)"
    echo "# nvcc:    ${NVCC:-none}"
    echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# host:    $(uname -srm), $(nproc) cores"
    echo "# command: $*"
    echo
  } > "$file"
}
# step FILE LIMIT COMMAND...: run with a time limit, append output and the exit status to FILE.
step() {
  local file=$1 limit=$2; shift 2
  header "$file" "$@"
  say "$* (limit ${limit}s) -> $(basename "$file")"
  timeout --signal=INT --kill-after=10 "$limit" "$@" >> "$file" 2>&1
  local rc=$?
  echo "# exit status: $rc$([ $rc -eq 124 ] && echo ' (time limit reached)')" >> "$file"
  say "exit $rc"
  return $rc
}

SETUP=$OUT/setup.log
header "$SETUP" "$0 $*"
{
  echo "## machine"
  nvidia-smi 2>&1 | head -15
  echo "cmake: $(cmake --version 2>/dev/null | head -1)"
  echo "ninja: $(ninja --version 2>/dev/null)"
  echo "g++:   $(g++ --version 2>/dev/null | head -1)"
  echo "compute-sanitizer: $(compute-sanitizer --version 2>/dev/null | tail -1)"
  echo "os: $(. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME")"
} >> "$SETUP" 2>&1

# --- 1. dependencies -------------------------------------------------------------------------
missing=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ]; }
for h in mpfr.h gmp.h eigen3/Eigen/Core CLI/CLI.hpp nlohmann/json.hpp fmt/format.h gtest/gtest.h; do
  have_header "$h" || missing+=("$h")
done
command -v pkg-config >/dev/null || missing+=(pkg-config)
echo "## missing on this machine: ${missing[*]:-nothing}" >> "$SETUP"
say "missing: ${missing[*]:-nothing}"

PREFIX=${SUMLAB_DEPS_PREFIX:-}
if [ -n "${SUMLAB_DEBS:-}" ] && { [ ${#missing[@]} -gt 0 ] || [ -n "${SUMLAB_FORCE_DEBS:-}" ]; }; then
  PREFIX=${PREFIX:-/tmp/sumlab-deps}
  mkdir -p "$PREFIX"
  for f in "$SUMLAB_DEBS"/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$PREFIX"
    else  # ar + tar: a .deb is an ar archive holding data.tar.*
      tmp=$(mktemp -d); (cd "$tmp" && ar x "$f" && tar -xf data.tar.* -C "$PREFIX"); rm -rf "$tmp"
    fi
  done
  # .pc files name /usr: point them at the prefix.
  for pc in "$PREFIX"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc "$PREFIX"/usr/share/pkgconfig/*.pc; do
    [ -f "$pc" ] && sed -i "s#=/usr#=$PREFIX/usr#g" "$pc"
  done
  echo "## unpacked $(ls "$SUMLAB_DEBS"/*.deb | wc -l) .deb files from $SUMLAB_DEBS into $PREFIX" >> "$SETUP"
fi
CMAKE_EXTRA=()
if [ -n "$PREFIX" ]; then
  U=$PREFIX/usr
  export CMAKE_PREFIX_PATH="$U${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$U/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$U/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$U/lib/x86_64-linux-gnu/pkgconfig:$U/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  command -v pkg-config >/dev/null || export PATH="$U/bin:$PATH"
  CMAKE_EXTRA+=("-DCMAKE_PREFIX_PATH=$U")
  echo "## using prefix $PREFIX (CMAKE_PREFIX_PATH, CPATH, LIBRARY_PATH, LD_LIBRARY_PATH, PKG_CONFIG_PATH)" >> "$SETUP"
fi

# --- 2. build ---------------------------------------------------------------------------------
{ echo; echo "## configure"; } >> "$SETUP"
say "configure"
timeout "$(limit 120 380)" cmake --preset cuda -DSUMLAB_BENCH=OFF "${CMAKE_EXTRA[@]}" >> "$SETUP" 2>&1
rc=$?
echo "# configure exit status: $rc" >> "$SETUP"
if [ $rc -ne 0 ]; then say "configure failed: see setup.log"; tail -30 "$SETUP"; exit 1; fi
# Only what this check runs (the CLI and the gpu-labelled tests): the rest of the tree is CI's.
{ echo; echo "## build sumlab and the gpu tests (-j$JOBS, keep going)"; } >> "$SETUP"
say "build"
timeout "$(limit 300 330)" cmake --build --preset cuda -j"$JOBS" --target sumlab gpu_sum_test rows_test gpu_segmented_test gpu_scan_test bench_test -- -k 0 >> "$SETUP" 2>&1
rc=$?
echo "# build exit status: $rc" >> "$SETUP"
say "build exit $rc"
BIN=build/cuda/sumlab
if [ ! -x "$BIN" ]; then say "no sumlab binary: see setup.log"; grep -E "error|FAILED" "$SETUP" | head -30; exit 1; fi
if [ -n "${SUMLAB_SETUP_ONLY:-}" ]; then say "set-up only: stopping after the build"; exit 0; fi

# --- 3. the full verify -----------------------------------------------------------------------
CSV=$OUT/verify_cases.csv
# shellcheck disable=SC2086
VLIMIT=$(limit 280 170)
step "$OUT/verify.log" "$VLIMIT" "$BIN" verify --csv "$CSV" --time-limit $((VLIMIT - 45)) ${SUMLAB_VERIFY_ARGS:-}
VERIFY_RC=$?
[ -f "$CSV" ] && gzip -f "$CSV"
[ -f "$OUT/verify_cases_atomic.csv" ] || true

# --- 4. gpu tests -----------------------------------------------------------------------------
step "$OUT/ctest_gpu.log" "$(limit 90 120)" ctest --test-dir build/cuda -L gpu --output-on-failure -j4
CTEST_RC=$?

# --- 5. sanitizers ----------------------------------------------------------------------------
# Every kernel (library peers included) launched on small inputs and 8+3 shapes; the racy tree is
# not part of --quick.
QUICK=("$BIN" verify --quick --shapes 8 --dists uniform,random_bits --atomic-n 2^16 --atomic-runs 2
       --atomic-samples 10)
step "$OUT/memcheck.log" "$(limit 120 90)" compute-sanitizer --tool memcheck --error-exitcode 99 "${QUICK[@]}"
MEMCHECK_RC=$?
step "$OUT/racecheck.log" "$(limit 120 30)" compute-sanitizer --tool racecheck --error-exitcode 99 "${QUICK[@]}"
RACECHECK_RC=$?
{
  echo
  echo "############ the deliberately racy tree: hazards EXPECTED below ############"
  echo "# command: compute-sanitizer --tool racecheck --error-exitcode 99 $BIN verify --racy"
  timeout "$(limit 60 0)" compute-sanitizer --tool racecheck --error-exitcode 99 "$BIN" verify --racy > "$OUT/.racy" 2>&1
  rc=$?
  head -120 "$OUT/.racy"
  [ "$(wc -l < "$OUT/.racy")" -gt 160 ] && { echo "... ($(wc -l < "$OUT/.racy") lines; the last 40:)"; tail -40 "$OUT/.racy"; }
  echo "# exit status: $rc (99 = racecheck reported hazards, as it should here)"
  rm -f "$OUT/.racy"
} >> "$OUT/racecheck.log"

say "done: verify $VERIFY_RC, ctest $CTEST_RC, memcheck $MEMCHECK_RC, racecheck $RACECHECK_RC"
echo
echo "===== verify summary ====="
sed -n '/^kernel  /,/^gpu_atomic is bit-checked/p' "$OUT/verify.log" | head -24
grep -E "^MISMATCH|^ERROR|TIME LIMIT" "$OUT/verify.log" | head -8
grep -E "^shape|distinct|gpu_two_pass, same" "$OUT/verify.log" | head -16
tail -3 "$OUT/verify.log"
echo "===== ctest ====="; grep -E "tests passed|tests failed|Failed|Skipped" "$OUT/ctest_gpu.log" | head -10
echo "===== memcheck ====="; grep -E "ERROR SUMMARY|exit status" "$OUT/memcheck.log" | tail -3
echo "===== racecheck ====="; grep -E "RACECHECK SUMMARY|hazard|exit status" "$OUT/racecheck.log" | head -12
ls -la "$OUT"
