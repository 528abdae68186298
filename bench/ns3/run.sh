#!/usr/bin/env bash
# Build (if needed) and run the standard ns-3 dumbbell cases, printing one JSON
# line per run on stdout. Extra arguments are passed to every run.
#
#   bench/ns3/run.sh                 # 1, 10, 100 flows x 60 s, 3 repetitions each
#   REPS=1 CASES="1:60 100:10" bench/ns3/run.sh --cc=newreno
#
# CASES is a space-separated list of flows:duration pairs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build.sh"

reps="${REPS:-3}"
cases="${CASES:-1:60 10:60 100:60}"

for c in $cases; do
    flows="${c%%:*}"
    dur="${c##*:}"
    for _ in $(seq 1 "$reps"); do
        "$here/build/dumbbell" --flows="$flows" --duration="$dur" "$@"
    done
done
