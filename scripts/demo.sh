#!/usr/bin/env bash
# The main job: install, then run the embedded demo scenario (three TCP flows and a ping over a
# 20 Mbit/s bottleneck) and write its summary, time series and figures to ./celltcp-demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
celltcp demo -o celltcp-demo --overwrite
echo "figures: $(pwd)/celltcp-demo/figures"
