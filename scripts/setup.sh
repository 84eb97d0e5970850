#!/usr/bin/env bash
# Installs what Rivet needs to build, run and test, skipping what is already
# there. Sourced by scripts/dev.sh and scripts/test.sh; run it alone to only set up.
#   RIVET_SETUP_BROWSER=1  also install Chromium's headless shell (the end-to-end
#                          tests); =full Debian's whole Chromium too (the
#                          browser benchmarks, scripts/bench-e2e.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_LEPTOS_VERSION=0.3.10
# Must equal the `wasm-bindgen` version pinned in Cargo.toml.
WASM_BINDGEN_VERSION=0.2.130

step() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }
skip() { printf '    %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "error: '$*' needs root and sudo is not available; run it as root and try again" >&2
    return 1
  fi
}

apt_packages=()
need_deb() { # command, package
  if command -v "$1" >/dev/null 2>&1; then skip "$2 is installed"; else apt_packages+=("$2"); fi
}

step "Checking system packages"
need_deb bwrap bubblewrap
need_deb slirp4netns slirp4netns
# scripts/test.sh checks import cycles with scripts/modcycles.py.
need_deb python3 python3
case "${RIVET_SETUP_BROWSER:-0}" in
  1) need_deb chromium-headless-shell chromium-headless-shell ;;
  full) need_deb chromium-headless-shell chromium-headless-shell; need_deb chromium chromium ;;
esac
# Each project's database: Rivet runs PostgreSQL from the machine's own
# installation (not on PATH in Debian's package). Debian's package would
# also make and start a cluster of its own; Rivet needs none of it.
if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  skip "postgresql is installed"
else
  apt_packages+=(postgresql)
  as_root mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | as_root tee /etc/postgresql-common/createcluster.d/rivet.conf >/dev/null
fi
if [ "${#apt_packages[@]}" -gt 0 ]; then
  step "Installing Debian packages: ${apt_packages[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}" >/dev/null
fi

step "Checking the wasm32-unknown-unknown target"
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  skip "installed"
else
  rustup target add wasm32-unknown-unknown
fi

step "Checking rustfmt and clippy"
for component in rustfmt clippy; do
  if rustup component list --installed | grep -q "^$component"; then
    skip "$component installed"
  else
    rustup component add "$component"
  fi
done

step "Checking cargo-leptos $CARGO_LEPTOS_VERSION"
if cargo leptos --version 2>/dev/null | grep -q "$CARGO_LEPTOS_VERSION"; then
  skip "installed"
else
  step "Installing cargo-leptos $CARGO_LEPTOS_VERSION (this takes 15 to 25 minutes on 2 cores)"
  cargo install cargo-leptos --version "$CARGO_LEPTOS_VERSION" --locked
fi

step "Checking wasm-bindgen-cli $WASM_BINDGEN_VERSION"
if wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  skip "installed"
else
  # Without --locked: the CLI's lockfile wants a crate version the index lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

step "Checking npm packages"
stamp="$ROOT/node_modules/.rivet-lock"
if [ -f "$stamp" ] && cmp -s "$ROOT/package-lock.json" "$stamp"; then
  skip "up to date"
else
  (cd "$ROOT" && npm ci --no-audit --no-fund)
  cp "$ROOT/package-lock.json" "$stamp"
fi

step "Copying Monaco and xterm.js into public/vendor"
vendor="$ROOT/public/vendor"
if [ -f "$vendor/.rivet-lock" ] && cmp -s "$ROOT/package-lock.json" "$vendor/.rivet-lock" && [ ! -e "$vendor/monaco/vs/language" ]; then
  skip "up to date"
else
  rm -rf "$vendor"
  mkdir -p "$vendor/monaco" "$vendor/xterm"
  cp -R "$ROOT/node_modules/monaco-editor/min/vs" "$vendor/monaco/vs"
  # Not reachable from vs/editor/editor.main, the one module Rivet loads
  # (src/app/scripts.rs): the AMD ids vs/language/* (the same workers are
  # under assets/) and the translations, asked for only when a locale is
  # configured. 10.3 of Monaco's 26 MB, which every build would otherwise
  # compress at brotli's highest level.
  rm -rf "$vendor/monaco/vs/language" "$vendor/monaco/vs/nls/lang"
  cp "$ROOT/node_modules/@xterm/xterm/lib/xterm.js" "$ROOT/node_modules/@xterm/xterm/css/xterm.css" "$vendor/xterm/"
  cp "$ROOT/node_modules/@xterm/addon-fit/lib/addon-fit.js" "$vendor/xterm/"
  cp "$ROOT/package-lock.json" "$vendor/.rivet-lock"
fi

# cargo-leptos optimises release WASM with the wasm-opt it finds on PATH: npm's
# binaryen, never Debian's (its version breaks the externref table).
# cargo-leptos puts node_modules/.bin first on PATH itself, so npm's command
# there is pointed at scripts/bin/wasm-opt, which runs binaryen in node with
# V8's baseline compiler only (the script says why).
ln -sfn "$ROOT/scripts/bin/wasm-opt" "$ROOT/node_modules/.bin/wasm-opt"
export PATH="$ROOT/node_modules/.bin:$PATH"
