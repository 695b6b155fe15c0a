#!/usr/bin/env bash
# Builds the executables for the GPU host (static Boost and C++ runtime, sm_90) and gathers them in
# gpu-bin/ (git-ignored), ready to be carried there. Usage: scripts/gpu_build.sh [target ...]
# (default: test_cuda, every benchmark and the coprove binary).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset gpu >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(test_cuda coprove $(ls bench/bench_*.cpp 2>/dev/null | xargs -n1 basename | sed 's/\.cpp$//'))
fi
cmake --build --preset gpu -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
mkdir -p gpu-bin
for t in "${targets[@]}"; do
  f=$(find build/gpu -maxdepth 3 -type f -name "$t" -perm -u+x | head -n1)
  [ -n "$f" ] && cp "$f" gpu-bin/
done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian gpu-bin/ 2>/dev/null || true
cp scripts/gpu_check.sh gpu-bin/
ls -la gpu-bin
