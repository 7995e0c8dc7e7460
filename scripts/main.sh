#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the main job (a quick accuracy
# study over every CPU algorithm, plus the seeds' headline figures), render its report, and print
# where the HTML report is.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${SUMLAB_PRESET:-release}
scripts/build.sh "$preset" --target sumlab
run_dir=${1:-runs/quick-$(date -u +%Y%m%dT%H%M%SZ)}
"build/$preset/sumlab" study error-vs-n --quick --out "$run_dir"
"build/$preset/sumlab" report "$run_dir"
echo "sumlab: run folder $(cd "$run_dir" && pwd)"
