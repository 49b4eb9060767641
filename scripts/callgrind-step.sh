#!/usr/bin/env bash
# Instructions per call of one step of the long-poll path (bench/micro/longpoll-steps.ts):
# the whole process's instruction count under callgrind for N calls, less that of a run of none,
# divided by N. Repeatable on a loaded machine, unlike wall time.
# Usage: scripts/callgrind-step.sh <step> [N=20000]
set -euo pipefail
step=${1:?step: one of bench/micro/longpoll-steps.ts}
n=${2:-20000}
cd "$(dirname "$0")/.."
# Inside the project, so the bundle finds the native uWebSockets.js it leaves out.
mkdir -p node_modules/.cache
out=$(mktemp -d node_modules/.cache/callgrind-step.XXXXXX)
trap 'rm -rf "$out"' EXIT
npx esbuild bench/micro/longpoll-steps.ts --bundle --platform=node --format=esm --log-level=warning --external:uWebSockets.js \
  --banner:js="import { createRequire as bannerRequire } from 'node:module'; const require = bannerRequire(import.meta.url);" \
  --outfile="$out/steps.mjs"
total() {
  # stderr holds the access lines the `observe` step writes; shown only if the run fails.
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" node "$out/steps.mjs" "$step" "$1" 2>"$out/stderr" || {
    tail -20 "$out/stderr" >&2
    exit 1
  }
  sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out/cg"
}
none=$(total 0)
some=$(total "$n")
echo "$step: $(((some - none) / n)) instructions per call ($n calls: $some, none: $none)"
