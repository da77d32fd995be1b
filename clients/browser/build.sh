#!/usr/bin/env bash
# Builds the phishbloom browser extension: crates/wasm compiled to WebAssembly with Debian's
# toolchain (as .ci/wasm-core does: rustc-web, rust-web-src, lld-22), then the unpacked
# Manifest V3 extension assembled in clients/browser/dist/ (load it with "Load unpacked", or
# chromium --load-extension=clients/browser/dist).
#
#   bash clients/browser/build.sh                     # dist/config.json: no lists, 300 s
#   PHISHBLOOM_CONFIG=my.json bash clients/browser/build.sh   # ship that config.json instead
#
# The release build drops debug info and uses one codegen unit with LTO and panic=abort (a
# smaller .wasm); these settings go through CARGO_PROFILE_RELEASE_* so the workspace's own
# release profile is unchanged.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

locked=(--locked)
[ "${PHISHBLOOM_UNLOCKED:-}" = 1 ] && locked=()
CARGO_PROFILE_RELEASE_DEBUG=false \
CARGO_PROFILE_RELEASE_STRIP=true \
CARGO_PROFILE_RELEASE_LTO=true \
CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
CARGO_PROFILE_RELEASE_PANIC=abort \
RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build "${locked[@]}" --release \
    --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort --target-dir target/wasm \
    -p phishbloom-wasm

dist="$here/dist"
rm -rf "$dist"
mkdir -p "$dist"
cp "$root/target/wasm/wasm32-unknown-unknown/release/phishbloom_wasm.wasm" "$dist/phishbloom.wasm"
cp "$here"/src/* "$dist/"
if [ -n "${PHISHBLOOM_CONFIG:-}" ]; then
    cp "$PHISHBLOOM_CONFIG" "$dist/config.json"
else
    printf '{"lists": [], "update_seconds": 300}\n' > "$dist/config.json"
fi
echo "built $dist ($(wc -c < "$dist/phishbloom.wasm") bytes of wasm)"
