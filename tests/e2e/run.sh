#!/usr/bin/env bash
# The jsongate mcp-proxy e2e matrix: install the pinned servers and clients (setup.sh), build
# jsongate (release), run matrix.py through the proxy. Exit code: the matrix's.
# Extra arguments go to matrix.py (e.g. --relay direct, --only ts, --case fault-).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

bash "$HERE/setup.sh"
cargo build --release --quiet
exec python3 "$HERE/matrix.py" "$@"
