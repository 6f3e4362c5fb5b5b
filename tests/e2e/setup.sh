#!/usr/bin/env bash
# Installs the pinned MCP servers and clients of the e2e matrix under target/e2e/:
#   target/e2e/node_modules   npm ci of tests/e2e/package-lock.json
#   target/e2e/venv           Python venv with tests/e2e/requirements.txt
#   target/e2e/rmcp-target    build of tests/e2e/rmcp-client (its own Cargo.lock, --locked)
# Each part is skipped when it was installed from the same lock/requirements/source files
# (a stamp under target/e2e records their hash). Needs node/npm, python3 (with venv), cargo.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$ROOT/target/e2e
mkdir -p "$OUT"

hash_of() {
    cat "$@" | sha256sum | cut -c1-64
}

up_to_date() { # NAME HASH
    [[ -f $OUT/.stamp-$1 && $(cat "$OUT/.stamp-$1") == "$2" ]]
}

stamp() { # NAME HASH
    printf '%s\n' "$2" >"$OUT/.stamp-$1"
}

# --- npm: servers everything/filesystem/memory and the TypeScript SDK -----------------------
npm_hash=$(hash_of "$HERE/package.json" "$HERE/package-lock.json")
if up_to_date npm "$npm_hash" && [[ -d $OUT/node_modules/@modelcontextprotocol/sdk ]]; then
    echo "setup: node_modules up to date"
else
    echo "setup: npm ci into target/e2e"
    rm -f "$OUT/.stamp-npm"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$OUT/"
    (cd "$OUT" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    stamp npm "$npm_hash"
fi

# --- Python: mcp (client SDK, low-level server) and mcp-server-time ---------------------------
py_hash=$(hash_of "$HERE/requirements.txt")
if up_to_date venv "$py_hash" && [[ -x $OUT/venv/bin/python ]]; then
    echo "setup: venv up to date"
else
    echo "setup: Python venv in target/e2e/venv"
    rm -f "$OUT/.stamp-venv"
    rm -rf "$OUT/venv"
    python3 -m venv "$OUT/venv"
    "$OUT/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$HERE/requirements.txt"
    stamp venv "$py_hash"
fi

# --- rmcp client ------------------------------------------------------------------------------
rmcp_hash=$(hash_of "$HERE/rmcp-client/Cargo.toml" "$HERE/rmcp-client/Cargo.lock" \
    "$HERE"/rmcp-client/src/*.rs)
rmcp_bin=$OUT/rmcp-target/release/rmcp-e2e-client
if up_to_date rmcp "$rmcp_hash" && [[ -x $rmcp_bin ]]; then
    echo "setup: rmcp client up to date"
else
    echo "setup: building the rmcp client"
    rm -f "$OUT/.stamp-rmcp"
    CARGO_TARGET_DIR=$OUT/rmcp-target cargo build --release --locked --quiet \
        --manifest-path "$HERE/rmcp-client/Cargo.toml"
    stamp rmcp "$rmcp_hash"
fi

echo "setup: done ($OUT)"
