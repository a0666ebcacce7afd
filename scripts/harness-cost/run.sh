#!/usr/bin/env bash
# What the harness costs per job: one scenario run with every node process profiled (the runner and each worker
# and scheduler child; a SIGKILLed child writes nothing), then the CPU per job by component.
#   scripts/harness-cost/run.sh poison-herd --seed 1 --rate 500
# Writes the profiles and the run under ${STAMPEDE_COST_OUT:-/tmp/stampede-harness-cost}.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${STAMPEDE_COST_OUT:-/tmp/stampede-harness-cost}"
rm -rf "$out" && mkdir -p "$out/profiles"
npm run build --silent
STAMPEDE_COST_DIR="$out/profiles" NODE_OPTIONS="--require $PWD/scripts/harness-cost/profile-preload.cjs" \
  node dist/bin/stampede.js scenario "$@" --out "$out/run" || echo "(scenario exit $?)"
npx tsx scripts/harness-cost/report.ts "$out/profiles" "$out/run"
