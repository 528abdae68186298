#!/usr/bin/env bash
# Installs and runs every test: Rust unit and integration tests (including the validation checks
# against closed forms), then the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# tshark is installed by install.sh: the pcap tests must run, not skip
export CELLTCP_REQUIRE_TSHARK=1
# the `ci` profile (Cargo.toml): release optimisation without LTO, so the ~60 test binaries link fast
cargo test --workspace --profile ci --exclude celltcp-py
# .[test] installs ray: its tests must run, not skip; as root the emulator's tests must run too
# (CELLTCP_REQUIRE_EMU: a machine where namespaces cannot be created fails rather than skips)
if [ "$(id -u)" = 0 ]; then export CELLTCP_REQUIRE_EMU=1; fi
CELLTCP_REQUIRE_RAY=1 python3 -m pytest -q python/tests
