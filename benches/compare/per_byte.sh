#!/usr/bin/env bash
# Instructions per byte of jsongate's validate and scan (the table in docs/reference/benchmarks.md), counted with
# callgrind: the difference between 1 and N+1 calls of examples/calls.rs on the same
# document, divided by N and by the document's size.
#
#   bash per_byte.sh          (from benches/compare)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
cargo build --release --quiet --example calls
bin=target/release/examples/calls
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
        awk '/refs:/ {gsub(",", "", $4); print $4}'
}
per_byte() { # MODE ARG N -> instructions per byte
    local bytes one many
    bytes=$("$bin" "$1" "$2" 1 | awk '{print $NF}')
    one=$(count "$1" "$2" 1)
    many=$(count "$1" "$2" $(($3 + 1)))
    awk -v d=$((many - one)) -v n="$3" -v b="$bytes" 'BEGIN {printf "%.1f", d / n / b}'
}
printf '%-14s %10s %10s\n' document validate scan
for doc in envelope:200 gw330:200 gw4k:50 gw64k:4 search:2 citm:2 logs:2; do
    name=${doc%%:*}
    n=${doc##*:}
    case $name in
    gw330) v=$(per_byte validate 120 "$n"); s=$(per_byte scanreuse 120 "$n") ;;
    gw4k) v=$(per_byte validate 4000 "$n"); s=$(per_byte scanreuse 4000 "$n") ;;
    gw64k) v=$(per_byte validate 64000 "$n"); s=$(per_byte scanreuse 64000 "$n") ;;
    *) v=$(per_byte bench "$name/validate" "$n"); s=$(per_byte bench "$name/scan" "$n") ;;
    esac
    printf '%-14s %10s %10s\n' "$name" "$v" "$s"
done
