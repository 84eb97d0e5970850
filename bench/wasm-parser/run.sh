#!/usr/bin/env bash
# Builds the protocol parser for WebAssembly, binds it for node and times it
# on the benchmark inputs (RIVET_BENCH_DIR, else ../shared/bench beside the
# repository, else /work/shared/bench). Needs the wasm32-unknown-unknown
# target, wasm-bindgen-cli 0.2.130 and node.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"

dir="${RIVET_BENCH_DIR:-}"
if [ -z "$dir" ]; then
  if [ -d "$root/../shared/bench" ]; then dir="$root/../shared/bench"; else dir=/work/shared/bench; fi
fi
target="${CARGO_TARGET_DIR:-$here/target}"

cargo build --release --target wasm32-unknown-unknown
wasm-bindgen --target nodejs --out-dir pkg \
  "$target/wasm32-unknown-unknown/release/rivet_wasm_parser_bench.wasm"
node --version
node bench.cjs "$dir"
