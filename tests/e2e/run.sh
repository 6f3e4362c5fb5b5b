#!/usr/bin/env bash
# The jsongate mcp-proxy e2e matrix: install the pinned servers and clients (setup.sh), build
# jsongate (release), run matrix.py through the proxy on stdio, then the fault cases again
# over Streamable HTTP (matrix.py --transport http), then http_e2e.py (Streamable HTTP with
# the SDKs' own servers), then secure_e2e.py (TLS, tokens and Redis AUTH on every hop).
# Exit code: non-zero if either failed.
# Extra arguments go to matrix.py (e.g. --relay direct, --only ts, --case fault-).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

bash "$HERE/setup.sh"
cargo build --release --quiet
rc=0
python3 "$HERE/matrix.py" "$@" || rc=$?
python3 "$HERE/matrix.py" --transport http || rc=$?
# MCP over Streamable HTTP: the Python SDK's server and client through mcp-proxy --upstream.
"$ROOT/target/e2e/venv/bin/python" "$HERE/http_e2e.py" || rc=$?
# Every hop protected: the SDK clients over https with bearer tokens, an https SDK server with
# its own credential, Redis over TLS with AUTH.
"$ROOT/target/e2e/venv/bin/python" "$HERE/secure_e2e.py" || rc=$?
exit "$rc"
