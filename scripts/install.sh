#!/usr/bin/env bash
# Installs everything celltcp needs on a fresh Debian 12 machine: tshark (pcap checks), chromium
# (report rendering check), the Python package with its native core (built by maturin from the
# Rust workspace) and test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

# tshark (pcap checks), chromium and chromedriver (the study reports' rendering check, the
# browser viewer's test) and the emulator's tools,
# from Debian.
missing=()
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# `celltcp view`'s test drives chromium through chromedriver (Selenium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# celltcp emu (docs/emulation.md): programs run in the emulated hosts, and the tools it calls
command -v iperf3 >/dev/null 2>&1 || missing+=(iperf3)
command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
command -v mptcpize >/dev/null 2>&1 || missing+=(mptcpd)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    # tshark's wireshark-common asks whether non-superusers may capture; answer it (no: celltcp
    # only reads capture files) so that the install never waits for a terminal
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "note: ${missing[*]} not installed (needs root); the checks that use them will be skipped" >&2
  fi
fi
python3 -m pip install --quiet --upgrade pip >/dev/null
python3 -m pip install --quiet -e ".[test]"
