#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, import
# cycles, clippy for the server and the WASM client, the Rust tests, and the
# browser tests against a release build. One release build, linted as it
# compiles, serves the tests and the browser run: Rivet's crate is compiled
# once for each target.
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

# Clippy is the compiler of Rivet's own crate in the builds below (cargo
# runs RUSTC_WORKSPACE_WRAPPER for workspace members only, as `cargo clippy`
# does), so each target is linted and built in one pass instead of being
# compiled again just for the lints. CLIPPY_ARGS is how `cargo clippy` hands
# `-D warnings` to the driver.
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

step "Release build, linted: the WASM client, and the server with every test and bench"
# --split moves the #[lazy] code into chunks fetched on first use;
# --precompress writes the brotli and gzip copies the server sends.
# --all-targets builds the tests and benches in the same cargo run as the
# server, so the dependencies are resolved with the tests' features once and
# `cargo test` below compiles nothing: the server the browser tests start is
# the one the Rust tests start.
cargo leptos build --release --split --precompress --bin-cargo-args=--all-targets

step "First load: WASM and glue at most 400,000 bytes gzip"
./scripts/bundle-size.sh --max 400000

step "Rust tests"
cargo test --release --features ssr

step "Browser tests (Playwright on Debian's Chromium)"
npx playwright test --config end2end/playwright.config.ts
