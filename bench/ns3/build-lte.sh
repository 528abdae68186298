#!/usr/bin/env bash
# Build the ns-3 LTE reference scenario (bench/ns3/lte.cc) into bench/ns3/build/lte:
# the same build as bench/ns3/build.sh, for the LTE program.
exec "$(dirname "${BASH_SOURCE[0]}")/build.sh" lte "$@"
