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
# Two launch shapes of one kernel on the same 16 inputs: two trees, two different sums.
for shape in "--grid 2 --block 32 --vector 1" "--grid 1 --block 64 --vector 4"; do
  "build/$preset/sumlab" explain --algorithm gpu_two_pass --n 16 --dist cancellation $shape \
    --csv "$run_dir/order_trace.csv" > /dev/null
done
"build/$preset/sumlab" report "$run_dir" > /dev/null
echo "sumlab: run folder $(cd "$run_dir" && pwd)"
echo "sumlab: HTML report $(cd "$run_dir" && pwd)/report/report.html"
