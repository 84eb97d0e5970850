#!/usr/bin/env bash
# Sets everything up, then serves the IDE with live reload at the address in
# Leptos.toml (http://127.0.0.1:3000 by default).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
step "Starting the IDE (cargo leptos watch): open the URL it prints, which carries the access token"
exec cargo leptos watch "$@"
