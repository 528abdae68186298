#!/usr/bin/env bash
# Installs everything celltcp needs on a fresh Debian 12 machine: tshark (pcap checks), the Python
# package with its native core (built by maturin from the Rust workspace) and test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tshark >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null
  else
    echo "note: tshark not installed (needs root); the pcap check will be skipped" >&2
  fi
fi
python3 -m pip install --quiet --upgrade pip >/dev/null
python3 -m pip install --quiet -e ".[test]"
