#!/usr/bin/env bash
# The SASS (the GPU's own instructions) of a build's CUDA objects, read without a GPU: to count
# what a kernel's loop costs an element, or to show that a change to device code that should
# change no instruction (a refactor, a host-side dispatch) left every kernel as it was.
#   scripts/sass.sh --kernel REGEX          the SASS of the kernels whose mangled names match
#   scripts/sass.sh --save DIR              every object's SASS into DIR, one file an object
#   scripts/sass.sh --compare DIR           the same into a temporary folder, compared with DIR:
#                                           exit 1 and the objects that differ, if any
# BUILD (default build/release) names the build folder. The anonymous namespaces' hashes in kernel
# names change from one compile to the next, so they are masked; nothing else is. cuobjdump and
# nvdisasm come from the toolkit where it has them, else from PyPI (nvidia-cuda-cuobjdump,
# nvidia-cuda-nvdisasm, pinned) into build/venv, as scripts/cccl.sh does for CCCL.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build/release}
version=13.5.37
tools() {
  if command -v cuobjdump > /dev/null && command -v nvdisasm > /dev/null; then return; fi
  local venv=build/venv bin
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  bin=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cu13/bin 2> /dev/null | head -1 || true)
  if [ -z "$bin" ] || [ ! -x "$bin/cuobjdump" ] || [ ! -x "$bin/nvdisasm" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      "nvidia-cuda-cuobjdump==$version" "nvidia-cuda-nvdisasm==$version"
    bin=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cu13/bin | head -1)
  fi
  chmod +x "$bin/cuobjdump" "$bin/nvdisasm"
  export PATH="$PWD/$bin:$PATH"
}
objects() { (cd "$build" && find . -name '*.cu.o' | sed 's|^\./||' | sort); }
dump() {  # object -> its SASS, blank lines and instruction addresses dropped, anonymous names masked
  cuobjdump -sass "$build/$1" | grep -v '^[[:space:]]*$' |
    sed -E 's@/\*[0-9a-f]+\*/@@; /Function :/s/[0-9]*_GLOBAL__N__[^ ]*/(anonymous)/'
}
save() {
  mkdir -p "$1"
  objects | while read -r o; do dump "$o" > "$1/$(echo "$o" | tr / _).sass"; done
}
[ -d "$build" ] || { echo "sass: no build folder $build (scripts/build.sh makes it)" >&2; exit 2; }
tools
case "${1:-}" in
  --kernel)
    [ -n "${2:-}" ] || { echo "sass: --kernel needs a regular expression" >&2; exit 2; }
    objects | while read -r o; do
      dump "$o" | awk -v re="$2" '/Function :/ { on = ($0 ~ re) } on'
    done ;;
  --save)
    [ -n "${2:-}" ] || { echo "sass: --save needs a folder" >&2; exit 2; }
    save "$2"
    echo "sass: $(ls "$2" | wc -l) objects in $2" ;;
  --compare)
    [ -d "${2:-}" ] || { echo "sass: --compare needs a folder that --save filled" >&2; exit 2; }
    now=$(mktemp -d)
    trap 'rm -rf "$now"' EXIT
    save "$now"
    differs=$({ ls "$2"; ls "$now"; } | sort -u | while read -r b; do
      cmp -s "$2/$b" "$now/$b" 2> /dev/null || echo "differs: $b"
    done)
    [ -z "$differs" ] || { echo "$differs"; exit 1; }
    echo "sass: every object's SASS is the same as in $2" ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
esac
