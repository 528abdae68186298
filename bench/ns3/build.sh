#!/usr/bin/env bash
# Build an ns-3 reference program against Debian's ns-3 3.37 packages:
#   bench/ns3/build.sh [dumbbell|lte|x2|wifi|wifi-hidden|ccv]     (default dumbbell)
# compiles bench/ns3/NAME.cc into bench/ns3/build/NAME. Installs ns3 + libns3-dev
# if missing. Idempotent: rebuilds only when NAME.cc or this script is newer than
# the binary.
#
# Debian's pkg-config files for ns-3 3.37 reference libraries of -dev packages
# that are not installed, so we link the ns-3 libraries directly.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="${1:-dumbbell}"
src="$here/$name.cc"
out_dir="$here/build"
out="$out_dir/$name"
[ -f "$src" ] || { echo "bench/ns3/build.sh: error: no program $src (expected dumbbell, lte, x2, wifi, wifi-hidden or ccv)" >&2; exit 1; }

die() { echo "bench/ns3/build.sh: error: $*" >&2; exit 1; }

if ! dpkg -s libns3-dev >/dev/null 2>&1 || ! dpkg -s ns3 >/dev/null 2>&1; then
    echo "bench/ns3/build.sh: installing ns3 and libns3-dev (Debian packages)" >&2
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ns-3 3.37 (ns3, libns3-dev) manually"
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo; run: apt-get install -y ns3 libns3-dev"
        sudo_cmd=(sudo)
    fi
    # Another apt process may hold the lock for a while; retry for up to ~10 minutes.
    ok=0
    for attempt in $(seq 1 20); do
        if "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y ns3 libns3-dev >&2; then
            ok=1; break
        fi
        "${sudo_cmd[@]}" apt-get update >&2 || true
        if "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y ns3 libns3-dev >&2; then
            ok=1; break
        fi
        echo "bench/ns3/build.sh: apt-get failed (attempt $attempt; lock held?), retrying in 30 s" >&2
        sleep 30
    done
    [ "$ok" -eq 1 ] || die "could not install ns3 libns3-dev with apt-get"
fi

command -v g++ >/dev/null 2>&1 || die "g++ not found (apt-get install -y g++)"

# Locate headers: Debian 3.37 installs them flat under /usr/include/ns3/.
inc=""
for d in /usr/include /usr/include/ns3.37 /usr/local/include /usr/local/include/ns3.37; do
    if [ -f "$d/ns3/core-module.h" ]; then inc="$d"; break; fi
done
[ -n "$inc" ] || die "ns-3 headers (ns3/core-module.h) not found; is libns3-dev installed?"

# Locate the libraries: libns3-core.so (Debian) or libns3.37-core.so (upstream install).
case "$name" in
    # The LTE module pulls in its dependencies; list them all since we link directly.
    lte|x2) libs=(lte config-store spectrum antenna propagation buildings mobility stats virtual-net-device applications internet traffic-control point-to-point bridge network core) ;;
    # cc-variants-lte's counterpart: the LTE libraries and FlowMonitor.
    ccv) libs=(lte flow-monitor config-store spectrum antenna propagation buildings mobility stats virtual-net-device applications internet traffic-control point-to-point bridge network core) ;;
    wifi|wifi-hidden) libs=(wifi mobility propagation spectrum antenna energy applications internet traffic-control point-to-point network core) ;;
    *) libs=(applications internet traffic-control point-to-point network core) ;;
esac
libdir=""
prefix=""
for d in /usr/lib/x86_64-linux-gnu /usr/lib/"$(gcc -dumpmachine 2>/dev/null || echo none)" /usr/lib /usr/local/lib; do
    if [ -e "$d/libns3-core.so" ]; then libdir="$d"; prefix="ns3-"; break; fi
    if [ -e "$d/libns3.37-core.so" ]; then libdir="$d"; prefix="ns3.37-"; break; fi
done
[ -n "$libdir" ] || die "ns-3 libraries (libns3-core.so) not found; is libns3-dev installed?"

ldflags=(-L"$libdir")
for l in "${libs[@]}"; do
    [ -e "$libdir/lib${prefix}${l}.so" ] || die "missing $libdir/lib${prefix}${l}.so"
    ldflags+=("-l${prefix}${l}")
done

mkdir -p "$out_dir"
if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "${BASH_SOURCE[0]}" ]; then
    echo "bench/ns3/build.sh: $out is up to date" >&2
    exit 0
fi

echo "bench/ns3/build.sh: compiling $out" >&2
g++ -std=c++17 -O2 -I"$inc" "$src" -o "$out.tmp" "${ldflags[@]}" \
    -Wl,-rpath,"$libdir" || die "compilation of $src failed"
mv -f "$out.tmp" "$out"
echo "bench/ns3/build.sh: built $out" >&2
