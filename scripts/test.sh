#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, import
# cycles, clippy for the server and the WASM client, the Rust tests, and the
# browser tests. One build of the server in the `ci` profile (Cargo.toml)
# serves the tests and the browser run; the WASM client is built as shipped
# but for the compiler of its own crate, clippy's driver (below).
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

step "Builds: the WASM client and the server with every test and bench, each linted as it compiles"
# Both builds are linted as they compile: clippy's driver is the compiler of
# Rivet's own crate (cargo runs RUSTC_WORKSPACE_WRAPPER for workspace members
# only, as `cargo clippy` does; CLIPPY_ARGS is how it hands over
# `-D warnings`), so no target is compiled a second time just for the lints.
# A separate `cargo clippy` for the WASM target checked every dependency
# again for that target: 3m35 beside the Rust tests in CI, which were done
# at 1m56.
#
# The driver turns MIR optimisations off, which LLVM's make up for in the
# client: built so, the bundle measured below differs from the one
# `cargo leptos build --release` writes by a few hundred bytes per module
# (the main module 1,059,573 bytes against 1,055,772, 275,072 brotli against
# 274,677; the first load 388,289 bytes gzip against 389,349).
clippy_env=(
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
)
# The client's build (cargo-leptos: the WASM, --split into the #[lazy]
# chunks, hashed names, --precompress for the brotli and gzip copies) runs
# mostly on one core, so it runs beside the server's; its log follows.
front_log="$ROOT/target/front-build.log"
mkdir -p "$ROOT/target"
env "${clippy_env[@]}" cargo leptos build --release --split --precompress --frontend-only >"$front_log" 2>&1 &
front=$!

# --all-targets builds the server's tests and benches in the same run, so
# `cargo test` below compiles nothing: the server the browser tests start is
# the one the Rust tests start.
profile=(--profile ci)
server=0
env "${clippy_env[@]}" cargo build "${profile[@]}" --no-default-features --features ssr --all-targets || server=$?
front_status=0
wait "$front" || front_status=$?
cat "$front_log"
if [ "$server" -ne 0 ] || [ "$front_status" -ne 0 ]; then exit 1; fi
# The server finds the bundle's hashed names beside its binary.
cp target/release/hash.txt target/ci/hash.txt

step "First load: WASM and glue at most 400,000 bytes gzip"
./scripts/bundle-size.sh --max 400000

step "Rust tests"
# Six at a time (the test harness runs one per core by default): most of
# them wait on the processes they start, npm, Vite, a dev server, a second
# IDE. The integration tests took 175 s two at a time, 118 s six at a time,
# on 2 cores. The same environment as the build, so nothing is rebuilt.
env "${clippy_env[@]}" RUST_TEST_THREADS="${RUST_TEST_THREADS:-6}" \
  cargo test "${profile[@]}" --no-default-features --features ssr

step "Browser tests (Playwright on Chromium's headless shell)"
RIVET_E2E_BIN="$ROOT/target/ci/rivet" npx playwright test --config end2end/playwright.config.ts
