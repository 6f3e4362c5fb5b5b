#!/usr/bin/env bash
# Builds and tests the Python package the way a user installs it: a virtualenv under
# target/python/venv with the pinned requirements (requirements.txt: maturin, ziglang, pytest,
# the MCP SDK, FastMCP, the Agents SDK, the benchmark's peers), the sdist and from it the
# manylinux2014 x86_64 wheel (the binding crate is its own cargo project, built into
# target/python/cargo), installed into the venv, then pytest against the installed package
# and the benchmark's agreement check. Run from anywhere: `bash python/ci.sh`. Needs python3 (with venv) and a
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
# maturin runs zig through the `python` on PATH: the venv's, with the pinned ziglang.
export PATH=$VENV/bin:$PATH
"$VENV/bin/python" --version
"$VENV/bin/maturin" --version

echo "python: cargo fmt --check and cargo clippy -D warnings on the binding crate"
cargo fmt --check --manifest-path "$HERE/Cargo.toml"
CARGO_TARGET_DIR=$OUT/cargo cargo clippy --locked --manifest-path "$HERE/Cargo.toml" --all-targets -- -D warnings

echo "python: sdist, then the manylinux2014 x86_64 wheel built from it (maturin --zig)"
# What users get from PyPI: the source distribution, and the wheel built from that sdist
# (not from the checkout), linked against glibc 2.17 through zig so that it installs on any
# manylinux2014 system. release.sh builds the other platforms (aarch64, musllinux) the same way.
DIST=$OUT/dist
rm -rf "$DIST" "$OUT/sdist"
mkdir -p "$DIST" "$OUT/sdist"
"$VENV/bin/maturin" sdist --manifest-path "$HERE/Cargo.toml" --out "$DIST"
# -m: the files get the time of extraction, so cargo rebuilds what changed since the last
# build in the same target directory (the archive's fixed times would look older).
tar xzmf "$DIST"/jsongate-*.tar.gz -C "$OUT/sdist"
(cd "$OUT"/sdist/jsongate-* && CARGO_TARGET_DIR=$OUT/cargo "$VENV/bin/maturin" build --release --zig \
    --compatibility manylinux2014 --out "$DIST")
wheel=$(ls "$DIST"/jsongate-*-cp39-abi3-manylinux*_x86_64.whl)
echo "python: built $(basename "$wheel")"
# The licence files travel in the wheel's metadata, and its description is the package's
# own page (PYPI.md), not the crate's README that sits beside it in the sdist.
"$VENV/bin/python" - "$wheel" <<'PY'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
names = wheel.namelist()
missing = [f for f in ("LICENSE-MIT", "LICENSE-APACHE") if not any(n.endswith("/" + f) for n in names)]
assert not missing, f"wheel lacks {missing}: {names}"
meta = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
body = meta.split("\n\n", 1)[1]
assert body.startswith("# jsongate for Python"), body[:200]
assert "Project-URL: Repository" in meta, meta[:2000]
PY
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
"$VENV/bin/python" -c 'import jsongate, sys; print("installed:", jsongate.__file__, jsongate.ENGINE_VERSION)'

echo "python: pytest"
# The tests import the installed package (pyproject: --import-mode=importlib), never the
# source folder (hence the pytest script, not `python -m pytest`, which would put the
# current folder on sys.path).
(cd "$HERE" && "$VENV/bin/pytest" -q)

echo "python: benchmark agreement check (bench/bench.py --check)"
"$VENV/bin/python" "$HERE/bench/bench.py" --check
