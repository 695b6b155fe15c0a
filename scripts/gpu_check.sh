#!/usr/bin/env bash
# Runs on the GPU host over gpu-bin/: every [gpu] test, then the benchmarks, writing logs and JSON
# to $OUT (or out/). Usage: gpu-bin/gpu_check.sh [tests|bench|all] [bench names...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
what=${1:-all}; shift || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  "$here/test_cuda" --reporter compact --durations yes 2>&1 | tee "$out/test_cuda.log" || status=1
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  benches=("$@")
  [ ${#benches[@]} -eq 0 ] && benches=($(cd "$here" && ls bench_* 2>/dev/null))
  for b in "${benches[@]}"; do
    echo "=== $b"
    "$here/$b" --json "$out/$b.json" 2>&1 | tee "$out/$b.log" || status=1
  done
fi
exit $status
