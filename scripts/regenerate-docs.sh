#!/usr/bin/env bash
# Rewrites the generated sections of the documents from the commands that print them:
# README.md (`sumlab algorithms`) and docs/special-values.md (`sumlab specials`).
# tests/studies/generated_docs_test.cpp fails until this has run after a registry change.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${SUMLAB_BINARY:-build/release/sumlab}
regenerate() {  # file command
  python3 - "$1" "$2" "$binary" <<'PY'
import subprocess, sys
path, command, binary = sys.argv[1:]
text = open(path).read()
head = f"<!-- sumlab {command}: generated, do not edit -->\n"
tail = f"<!-- end of sumlab {command} -->"
a, b = text.index(head) + len(head), text.index(tail)
out = subprocess.run([binary, command], check=True, capture_output=True, text=True).stdout
open(path, "w").write(text[:a] + out + text[b:])
PY
}
regenerate README.md algorithms
regenerate docs/special-values.md specials
