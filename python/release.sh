#!/usr/bin/env bash
# Builds the Python package's release artefacts into target/python/dist: the sdist, then from
# that sdist (so that what users build from source is what was tested) one abi3 wheel per
# platform, cross-compiled with maturin's `--zig` linker (the `ziglang` package pins the C
# toolchain, so no manylinux container is needed):
#
#   manylinux2014 (glibc 2.17) and musllinux_1_2, each for x86_64 and aarch64.
#
# Usage: bash python/release.sh [TARGET...]   (default: all four Rust targets below)
# Needs python3 (with venv) and rustup; missing Rust targets are added with `rustup target add`.
# The release workflow (.github/workflows/release.yml) runs this script; CI builds the sdist
# and the x86_64 manylinux wheel through python/ci.sh and tests the installed wheel.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=$ROOT/target/python
DIST=$OUT/dist
VENV=$OUT/release-venv

TARGETS=("$@")
if [[ ${#TARGETS[@]} -eq 0 ]]; then
    TARGETS=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
             x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
fi

# Only the two packages the build needs, at the versions requirements.txt pins.
pin() { grep -i "^$1==" "$HERE/requirements.txt"; }
if [[ ! -x $VENV/bin/maturin ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$(pin maturin)" "$(pin ziglang)"
fi
export PATH=$VENV/bin:$PATH

rm -rf "$DIST" "$OUT/sdist"
mkdir -p "$DIST" "$OUT/sdist"
maturin sdist --manifest-path "$HERE/Cargo.toml" --out "$DIST"
sdist=$(ls "$DIST"/jsongate-*.tar.gz)
tar xzf "$sdist" -C "$OUT/sdist"
src=$(ls -d "$OUT"/sdist/jsongate-*)

installed=$(rustup target list --installed)
for target in "${TARGETS[@]}"; do
    case $target in
        *-linux-gnu) compat=manylinux2014 ;;
        *-linux-musl) compat=musllinux_1_2 ;;
        *) echo "unsupported target $target" >&2; exit 2 ;;
    esac
    grep -qx "$target" <<<"$installed" || rustup target add "$target"
    start=$SECONDS
    (cd "$src" && CARGO_TARGET_DIR=$OUT/release-cargo maturin build --release --zig \
        --target "$target" --compatibility "$compat" --out "$DIST")
    echo "release: $target ($compat) built in $((SECONDS - start)) s"
done
ls -l "$DIST"
