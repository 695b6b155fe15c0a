#!/usr/bin/env bash
# The sm_90 cubins of the library's kernel files, built with the library's flags (build/gpu's, less
# -lineinfo, whose line table moves with every edit above a kernel), into DIR, with their SHA-256:
# for checking that a change to the device headers leaves the machine code as it was
# (scripts/gpu_cubins.sh before/ on one commit, after/ on the next, then diff the two sums).
# Usage: scripts/gpu_cubins.sh DIR [FILE.cu ...]   (default: every cuda/src/*.cu)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$1"
shift
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(cuda/src/*.cu)
mkdir -p "$out"
for f in "${files[@]}"; do
  nvcc -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++17 -DCOPROVE_FR_ASM=1 -DCOPROVE_HAVE_CUDA=1 \
    -Icuda/include -Iprover/field/include -Iruntime/include -Itests/cuda \
    -cubin "$f" -o "$out/$(basename "$f" .cu).cubin"
done
(cd "$out" && sha256sum -- *.cubin | tee SHA256SUMS)
