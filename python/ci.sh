#!/usr/bin/env bash
# Builds and tests the Python package the way a user installs it: a virtualenv under
# target/python/venv with the pinned requirements (requirements.txt: maturin, pytest, the
# MCP SDK, FastMCP, the Agents SDK, the benchmark's peers), `pip install ./python` through
# the maturin build backend (the binding crate is its own cargo project, built into
# target/python/cargo), then pytest against the installed package and the benchmark's
# agreement check. Run from anywhere: `bash python/ci.sh`. Needs python3 (with venv) and a
# Rust toolchain; the suites the tests read are vendored in the repository (tests/data).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=$ROOT/target/python
VENV=$OUT/venv
mkdir -p "$OUT"

req_hash=$(sha256sum "$HERE/requirements.txt" | cut -c1-64)
if [[ -x $VENV/bin/python && -f $OUT/.stamp-venv && $(cat "$OUT/.stamp-venv") == "$req_hash" ]]; then
    echo "python: venv up to date"
else
    echo "python: creating target/python/venv with the pinned requirements"
    rm -rf "$VENV" "$OUT/.stamp-venv"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
    printf '%s\n' "$req_hash" >"$OUT/.stamp-venv"
fi
# The maturin build backend runs `maturin` from PATH: the venv's pinned one.
export PATH=$VENV/bin:$PATH
"$VENV/bin/python" --version
"$VENV/bin/maturin" --version

echo "python: cargo fmt --check and cargo clippy -D warnings on the binding crate"
cargo fmt --check --manifest-path "$HERE/Cargo.toml"
CARGO_TARGET_DIR=$OUT/cargo cargo clippy --locked --manifest-path "$HERE/Cargo.toml" --all-targets -- -D warnings

echo "python: pip install ./python (maturin backend, release build)"
# No build isolation: the build uses the pinned maturin of the venv instead of fetching one.
CARGO_TARGET_DIR=$OUT/cargo "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps "$HERE"
"$VENV/bin/python" -c 'import jsongate, sys; print("installed:", jsongate.__file__, jsongate.ENGINE_VERSION)'

echo "python: pytest"
# The tests import the installed package (pyproject: --import-mode=importlib), never the
# source folder (hence the pytest script, not `python -m pytest`, which would put the
# current folder on sys.path).
(cd "$HERE" && "$VENV/bin/pytest" -q)

echo "python: benchmark agreement check (bench/bench.py --check)"
"$VENV/bin/python" "$HERE/bench/bench.py" --check
