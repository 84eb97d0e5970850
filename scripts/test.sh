#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, import
# cycles, clippy for the server and the WASM client, the Rust tests, and the
# browser tests against a release build. One release profile serves the tests
# and the browser run.
set -euo pipefail
export RIVET_SETUP_BROWSER=1
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
# Leptos reads LEPTOS_OUTPUT_NAME at compile time to name the WASM file the
# page loads. cargo-leptos sets it; the Rust tests must see the same value, or
# they rebuild target/release/rivet expecting `rivet_bg.wasm`, which the
# browser tests' server would then ask for in vain.
export LEPTOS_OUTPUT_NAME=rivet

step "cargo fmt --check"
cargo fmt --check

step "Import cycles"
# None among the top-level modules of src/server (but its composition
# roots, state.rs and http.rs), src/runtime and src/app (ARCHITECTURE.md).
# The checker prints each cycle it finds and exits 1; all three run, so one
# failure shows every cycle.
cycles=0
python3 scripts/modcycles.py --dir src/server --root state --root http || cycles=1
python3 scripts/modcycles.py --dir src/runtime || cycles=1
python3 scripts/modcycles.py --dir src/app || cycles=1
if [ "$cycles" -ne 0 ]; then
  echo "error: import cycles among top-level modules (see above)" >&2
  exit 1
fi

step "clippy (server)"
cargo clippy --features ssr --all-targets -- -D warnings

step "clippy (WASM client)"
cargo clippy --lib --target wasm32-unknown-unknown --features hydrate -- -D warnings

step "Release build (server and WASM)"
# --split moves the #[lazy] code into chunks fetched on first use;
# --precompress writes the brotli and gzip copies the server sends.
cargo leptos build --release --split --precompress

step "First load: WASM and glue at most 400,000 bytes gzip"
./scripts/bundle-size.sh --max 400000

step "Rust tests"
cargo test --release --features ssr

step "Browser tests (Playwright on Debian's Chromium)"
npx playwright test --config end2end/playwright.config.ts
