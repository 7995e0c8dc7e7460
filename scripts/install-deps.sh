#!/usr/bin/env bash
# Installs what sumlab needs from Debian's packages, and only what is missing (idempotent:
# a second run installs nothing and takes a second). Nothing is vendored.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libmpfr-dev libgmp-dev          # exact reference
  libeigen3-dev                   # least-squares fits, peer sum
  libgtest-dev googletest         # tests
  libbenchmark-dev                # CPU benchmarks
  libcli11-dev                    # command line
  nlohmann-json3-dev              # JSON output
  libfmt-dev                      # formatting
  libtbb-dev libomp-dev           # CPU parallel peers (std::reduce(par), OpenMP)
  python3 python3-matplotlib      # report figures
  python3-venv python3-dev        # the test environment and the Python extension (scripts/python-env.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
