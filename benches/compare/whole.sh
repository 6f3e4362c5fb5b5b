#!/usr/bin/env bash
# Whole-process validation of a large document: `jsongate check --schema` (limits on bytes
# and items lifted; the file streamed) against a process that reads the file, parses it into
# a serde_json::Value and validates it with jsonschema (examples/calls.rs, mode serdefile).
# The document is the generated log document (docgen::logs) of about SIZE bytes, against
# logs.schema.json; each command runs ROUNDS times, taking turns, and the fastest wall time
# of each counts.
#
#   bash whole.sh [SIZE] [ROUNDS]     (from benches/compare; defaults 100000000 and 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
size=${1:-100000000}
rounds=${2:-3}
(cd ../.. && cargo build --release --quiet --bin jsongate)
cargo build --release --quiet --example calls
gate=../../target/release/jsongate
calls=target/release/examples/calls
schema=../schemas/logs.schema.json
doc=$(mktemp)
trap 'rm -f "$doc"' EXIT
"$calls" logsdoc "$size" 1 >"$doc"
echo "document: $(wc -c <"$doc") bytes"
seconds() { # COMMAND... -> wall seconds (the command must succeed)
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}
best_gate=999999
best_serde=999999
for _ in $(seq "$rounds"); do
    g=$(seconds "$gate" check --max-bytes unlimited --max-items unlimited --schema "$schema" "$doc")
    s=$(seconds "$calls" serdefile "$schema" "$doc")
    best_gate=$(awk -v a="$best_gate" -v b="$g" 'BEGIN {print (b < a) ? b : a}')
    best_serde=$(awk -v a="$best_serde" -v b="$s" 'BEGIN {print (b < a) ? b : a}')
done
[[ $("$calls" serdefile "$schema" "$doc") == valid ]] || { echo "serdefile: not valid" >&2; exit 1; }
printf '%-28s %8ss\n' "jsongate check --schema" "$best_gate" "serde_json + jsonschema" "$best_serde"
awk -v g="$best_gate" -v s="$best_serde" 'BEGIN {printf "ratio: %.2fx\n", s / g}'
