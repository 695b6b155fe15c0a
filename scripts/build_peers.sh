#!/usr/bin/env bash
# Builds the peer that bench_msm measures against, blst, from a source tree you already have (this
# script downloads nothing), then prints the CMake option that links it into bench_msm. blst stays
# outside the repository: only its static library is linked, none of its code is copied here.
#
#   scripts/build_peers.sh /path/to/blst          # a checkout or archive of supranational/blst
#   cmake --preset release -DCOPROVE_BLST_DIR=/path/to/blst
#   cmake --build build/release -j1 --target bench_msm && build/release/bench/bench_msm --all
#
# blst's build.sh compiles its assembly for the host; its MULX/ADX code is chosen at run time from
# CPUID (the default build), as coprove's own Fq multiplication is, so both run the same kind of
# instructions on the same machine.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1/build.sh" ]; then
  echo "usage: $0 BLST_SOURCE_DIR   (a supranational/blst tree with build.sh)" >&2
  exit 1
fi
cd "$1"
./build.sh
test -f libblst.a && test -f bindings/blst.h
echo "build_peers: blst built in $(pwd) ($(git rev-parse --short HEAD 2>/dev/null || echo 'no git metadata'))"
echo "build_peers: configure with -DCOPROVE_BLST_DIR=$(pwd)"
