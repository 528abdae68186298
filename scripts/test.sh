#!/usr/bin/env bash
# Installs and runs every test: Rust unit and integration tests (including the validation checks
# against closed forms), then the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo test --workspace --release --exclude celltcp-py
# .[test] installs ray: its tests must run, not skip
CELLTCP_REQUIRE_RAY=1 python3 -m pytest -q python/tests
