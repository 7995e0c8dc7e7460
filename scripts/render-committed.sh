#!/usr/bin/env bash
# Renders the report of every committed run again: data/<where>/<study>/ -> reports/<where>/<study>/,
# with --linked-figures (the pages show figures/*.svg rather than holding a second copy of each:
# the committed reports' bytes count against the device tool's 64 MiB) and --strict (a result
# outside its bound stops the script). Run after a change to the renderer or to a committed run.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${SUMLAB_BINARY:-build/release/sumlab}
find data -name provenance.json -printf '%h\n' | sort | while read -r run; do
  "$binary" report "$run" --out "reports/${run#data/}" --force --strict --linked-figures > /dev/null
  echo "reports/${run#data/}"
done
