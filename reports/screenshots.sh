#!/usr/bin/env bash
# Screenshots of rendered reports at 1400 px wide (headless Chromium: Debian's `chromium` package),
# and the number of tables wider than the page in each, to check a report's layout by eye and by
# number. Nothing here runs the lab or changes a report.
# Usage: reports/screenshots.sh OUT_DIR [REPORT_HTML...]   (default: every report under reports/)
# Writes OUT_DIR/<report path with / as _>.png (the first 1400 x 2400 px; reduced to a 256-colour
# palette by pngquant when it is installed: the same text at a third of the bytes) and prints one
# line per report: "<path>: N tables wider than the page", counted over the whole page. Exit 1
# when any is.
set -euo pipefail
out=${1:?usage: reports/screenshots.sh OUT_DIR [REPORT_HTML...]}
shift
cd "$(dirname "$0")/.."
command -v chromium > /dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
mkdir -p "$out"
reports=("$@")
[ ${#reports[@]} -gt 0 ] || mapfile -t reports < <(find reports -name report.html | sort)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wide_total=0
for r in "${reports[@]}"; do
  name=$(echo "${r%.html}" | tr '/' '_')
  browse=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=3000)
  "${browse[@]}" --window-size=1400,2400 --screenshot="$out/$name.png" "file://$PWD/$r" > /dev/null 2>&1
  if command -v pngquant > /dev/null; then pngquant --quality 60-90 --force --ext .png "$out/$name.png"; fi
  # A copy that counts, once laid out, the tables whose right edge passes the body's.
  sed 's#</body>#<script>addEventListener("load",()=>{const b=document.body.getBoundingClientRect().right;let n=0;document.querySelectorAll("table").forEach(t=>{if(t.getBoundingClientRect().right>b+1)n++});const d=document.createElement("div");d.textContent="WIDE_TABLES="+n;document.body.appendChild(d)})</script></body>#' \
    "$r" > "$tmp/page.html"
  wide=$("${browse[@]}" --window-size=1400,1000 --dump-dom "file://$tmp/page.html" 2> /dev/null |
         grep -o 'WIDE_TABLES=[0-9]*' | tail -1 | cut -d= -f2)
  echo "$r: ${wide:-?} tables wider than the page"
  wide_total=$((wide_total + ${wide:-1}))
done
[ "$wide_total" -eq 0 ]
