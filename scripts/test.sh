#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, import
# cycles, clippy for the server and the WASM client, the Rust tests, and the
# browser tests. One build of the server in the `ci` profile (Cargo.toml),
# linted as it compiles, serves the tests and the browser run; the WASM
# client is built as shipped.
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

step "Builds: the WASM client as shipped, and the server with every test and bench"
# The client's build (cargo-leptos: the WASM, --split into the #[lazy]
# chunks, hashed names, --precompress for the brotli and gzip copies) runs
# mostly on one core, so it runs beside the server's; its log follows.
front_log="$ROOT/target/front-build.log"
mkdir -p "$ROOT/target"
cargo leptos build --release --split --precompress --frontend-only >"$front_log" 2>&1 &
front=$!

# The server's build is linted as it compiles: clippy's driver is the
# compiler of Rivet's own crate (cargo runs RUSTC_WORKSPACE_WRAPPER for
# workspace members only, as `cargo clippy` does; CLIPPY_ARGS is how it hands
# over `-D warnings`), so no target is compiled a second time just for the
# lints. Not for the WASM: the driver turns MIR optimisations off, and the
# shipped bundle must be measured as shipped. --all-targets builds the tests
# and benches in the same run, so `cargo test` below compiles nothing: the
# server the browser tests start is the one the Rust tests start.
profile=(--profile ci)
clippy_env=(
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
  CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
)
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

step "Rust tests, and beside them clippy for the WASM client"
# Six at a time (the test harness runs one per core by default): most of
# them wait on the processes they start, npm, Vite, a dev server, a second
# IDE. The integration tests took 175 s two at a time, 118 s six at a time,
# on 2 cores. Their output is shown as they run.
tests_log="$ROOT/target/rust-tests.log"
: >"$tests_log"
env "${clippy_env[@]}" RUST_TEST_THREADS="${RUST_TEST_THREADS:-6}" \
  cargo test "${profile[@]}" --no-default-features --features ssr >"$tests_log" 2>&1 &
tests_pid=$!
tail -f --pid="$tests_pid" "$tests_log" &
shown=$!

# clippy for the WASM client checks every dependency again for that target
# (clippy's metadata, not the bundle's build), mostly on one core, while
# the tests mostly wait: the two run side by side, the lints' log after
# the tests'. In the `ci` profile, so some of the proc macros and build
# scripts the server's build compiled serve it too: it compiles 56 crates
# besides checking the rest (86 in `dev`; 29 when the `ci` profile left
# the dependencies at opt-level 3). Run beside the browser tests instead,
# it slowed them as much as it saved (CI: 1m57 and 7.5 min against 3m31
# and 5.8 min). That build directory is cargo's to lock, which `cargo
# test` holds until its tests start running: the lints start then, or
# they would hold it first and the tests would wait.
wasm_log="$ROOT/target/clippy-wasm.log"
while kill -0 "$tests_pid" 2>/dev/null && ! grep -q '^ *Running ' "$tests_log"; do sleep 1; done
wasm_status=0
cargo clippy "${profile[@]}" --lib --target wasm32-unknown-unknown --no-default-features --features hydrate -- -D warnings >"$wasm_log" 2>&1 || wasm_status=$?
tests=0
wait "$tests_pid" || tests=$?
wait "$shown" || true
step "clippy (WASM client): its log"
cat "$wasm_log"
if [ "$tests" -ne 0 ] || [ "$wasm_status" -ne 0 ]; then exit 1; fi

step "Browser tests (Playwright on Debian's Chromium)"
RIVET_E2E_BIN="$ROOT/target/ci/rivet" npx playwright test --config end2end/playwright.config.ts
