#!/usr/bin/env bash
# Node.js 24 + uWebSockets.js 20.57 against Node.js 20 + uWebSockets.js 20.30, same Debian 13
# root (scripts/trixie.sh), same addon: cheap reads, eth_call and transfers, each server
# pinned to --server-core and the load on the other core (npm run bench -- --url), the two
# runtimes alternating for ROUNDS rounds. Needs root and a built tree (npm install).
#
#   sudo benches/runtimes.sh [ROUNDS] [extra npm run bench flags]
#
# Results: one JSON per run in .bench/runtimes/, and the tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
cargo build --release -p loadgen >/dev/null 2>&1
node scripts/ensure-node.mjs 20 >/dev/null
node scripts/ensure-node.mjs 24 >/dev/null
mkdir -p .bench/runtimes
exec scripts/trixie.sh 24 bash -c '
set -euo pipefail
rounds=$1; shift
node20=$(node scripts/ensure-node.mjs 20)
node24=$(node scripts/ensure-node.mjs 24)
run() { # LABEL NODE UWS_ALIAS ROUND [bench flags]
  local label=$1 node=$2 alias=$3 round=$4
  shift 4
  local port=$((18600 + RANDOM % 300))
  PRECONF_NODE_UWS=$alias taskset -c 0 "$node" bin/preconf-node.cjs --ephemeral --quiet --port "$port" >".bench/runtimes/$label-$round.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
  grep -o "Node.js v[0-9.]*, uWebSockets.js [^)]*" ".bench/runtimes/$label-$round.log"
  node --import tsx benches/run.ts --url "http://127.0.0.1:$port" --pid "$pid" --no-build \
    --only reads,tx --load-cores 1 --out ".bench/runtimes/$label-$round.json" "$@"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
for r in $(seq "$rounds"); do
  # Alternate which runtime goes first, so a drift of the machine falls on both.
  if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
  for which in $order; do
    if [ "$which" = old ]; then run node20-uws20.30 "$node20" uWebSockets.js-20.30 "$r" "$@";
    else run node24-uws20.57 "$node24" uWebSockets.js "$r" "$@"; fi
  done
done
node --import tsx benches/runtimes-summary.ts .bench/runtimes
' runtimes "$rounds" "$@"
