#!/usr/bin/env bash
# The host test suites under AddressSanitizer and UndefinedBehaviorSanitizer, built in build/asan
# without CUDA and without the Python extension (a sanitized module would need the sanitizers'
# runtime preloaded into Python). Any report fails the test that made it: UBSan does not recover,
# and a CLI test's sumlab that ASan stops exits with a code no test expects. Not part of CI (about
# 15 minutes on 2 cores); extra arguments go to ctest (-R PATTERN).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
sanitize="-fsanitize=address,undefined"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSUMLAB_CUDA=OFF -DSUMLAB_PYTHON=OFF \
  -DSUMLAB_BENCH=OFF -DCMAKE_CXX_FLAGS="$sanitize -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize" -DCMAKE_SHARED_LINKER_FLAGS="$sanitize"
cmake --build build/asan -j"$(nproc)"
UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/asan -j"$(nproc)" --timeout 600 --output-on-failure "$@"
