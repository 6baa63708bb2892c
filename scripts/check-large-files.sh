#!/usr/bin/env bash
# `make lint`: fail when a file git tracks is larger than 1 MiB (MAX_BYTES).
# Build outputs and data dumps do not belong in the repository: every clone
# pays for them forever (a 132 MB loadgen binary once did). Sizes are those of
# the staged blobs, what a commit would record.
set -euo pipefail
max=${MAX_BYTES:-1048576}
cd "$(git rev-parse --show-toplevel)"
# ls-files -s: "<mode> <object> <stage>\t<path>"; submodules (160000) have no blob.
big=$(git ls-files -s |
  awk -F'\t' '{ split($1, f, " "); if (f[1] != "160000") print f[2], $2 }' |
  git cat-file --batch-check='%(objectsize) %(rest)' |
  awk -v max="$max" '$1 > max')
if [ -n "$big" ]; then
  echo "tracked files over $max bytes (remove them: git rm --cached <path>, and ignore them):" >&2
  echo "$big" | awk '{ printf "  %s (%.1f MiB)\n", substr($0, index($0, " ") + 1), $1 / 1048576 }' >&2
  exit 1
fi
