#!/usr/bin/env bash
# Instructions per call of each HTTP layer mode and of jsongate's scan and validate, counted
# with callgrind: the difference between 1 and N+1 calls of examples/calls.rs, divided by N.
#
#   bash instructions.sh [LEN] [N]     (from benches/compare; defaults 120 and 200)
#
# LEN is the docgen length parameter (120 gives the 327-byte document, 64000 the 64 KB one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
len=${1:-120}
n=${2:-200}
cargo build --release --quiet --example calls
bin=target/release/examples/calls
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$len" "$2" 2>&1 |
        awk '/refs:/ {gsub(",", "", $4); print $4}'
}
bytes=$("$bin" scan "$len" 1 | awk '{print $2}')
echo "document: $bytes bytes; instructions per call (1 vs $((n + 1)) calls)"
for mode in ${MODES:-pass hold holdlimits stream buffered scan scanreuse validate}; do
    one=$(count "$mode" 1)
    many=$(count "$mode" $((n + 1)))
    printf '%-11s %10d\n' "$mode" $(((many - one) / n))
done
