#!/usr/bin/env bash
# Instructions per call of one step of the long-poll path (bench/micro/longpoll-steps.ts):
# the whole process's instruction count under callgrind for N calls, less that of a run of none,
# divided by N. Repeatable on a loaded machine, unlike wall time.
# Usage: scripts/callgrind-step.sh <step> [N=20000]
set -euo pipefail
step=${1:?step: auth, params}
n=${2:-20000}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx esbuild bench/micro/longpoll-steps.ts --bundle --platform=node --format=esm --log-level=warning \
  --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
  --outfile="$out/steps.mjs"
total() {
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" node "$out/steps.mjs" "$step" "$1" 2>/dev/null
  sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out/cg"
}
none=$(total 0)
some=$(total "$n")
echo "$step: $(((some - none) / n)) instructions per call ($n calls: $some, none: $none)"
