#!/usr/bin/env bash
# The commit a tree sent to a GPU machine was made from, and whether its tracked files differed
# from that commit. It is recorded here before the call because the copy's own .git, if it has one,
# may be another commit's (a copy of the working tree is not a checkout).
#   scripts/device-stamp.sh            (run here) writes "SHA clean" or "SHA dirty" to .debs/commit.txt,
#                                      and says how much of the device tool's 64 MiB the call would carry
#   source scripts/device-stamp.sh     (on the device) exports SUMLAB_GIT_COMMIT and SUMLAB_GIT_DIRTY,
#                                      which provenance.json records, and sets COMMIT, the logs' header
# Without a stamp the tree's own git answers.
STAMP=${SUMLAB_DEBS:-.debs}/commit.txt
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  state=clean
  # File modes are not content (the device copy may not keep them).
  [ -n "$(git -c core.fileMode=false status --porcelain --untracked-files=no | head -1)" ] && state=dirty
  mkdir -p "$(dirname "$STAMP")"
  echo "$(git rev-parse HEAD) $state" > "$STAMP"
  cat "$STAMP"
  # What the device tool copies (tracked files, untracked ones git does not ignore, and the carried
  # .debs and .cccl) must stay under its 64 MiB: a warning from 60 MiB, before a call is refused.
  tree=$( { git ls-files -z; git ls-files -z -o --exclude-standard; } | xargs -0 -r stat -c %s -- 2> /dev/null |
    awk '{s += $1} END {print s + 0}')
  carry=$(du -sb .debs .cccl 2> /dev/null | awk '{s += $1} END {print s + 0}')
  mib=$(( (tree + carry) / 1048576 ))
  if [ "$mib" -ge 60 ]; then echo "warning: the tree and .debs/.cccl come to $mib MiB; the device tool takes 64" >&2
  else echo "tree and .debs/.cccl: $mib MiB (the device tool takes 64)"; fi
  exit 0
fi
if [ -f "$STAMP" ]; then
  read -r SUMLAB_GIT_COMMIT stamp_state < "$STAMP" || true
  export SUMLAB_GIT_COMMIT
  case "${stamp_state:-}" in
    clean) export SUMLAB_GIT_DIRTY=0 COMMIT="$SUMLAB_GIT_COMMIT" ;;
    dirty) export SUMLAB_GIT_DIRTY=1 COMMIT="$SUMLAB_GIT_COMMIT + uncommitted changes" ;;
    *) COMMIT="$SUMLAB_GIT_COMMIT (whether the tree differed from it was not recorded)" ;;
  esac
else
  COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  [ -n "$(git -c core.fileMode=false status --porcelain --untracked-files=no 2>/dev/null | head -1)" ] &&
    COMMIT="$COMMIT + uncommitted changes"
fi
