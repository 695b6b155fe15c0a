#!/usr/bin/env bash
# Runs on the GPU host from a folder gathered by scripts/gpu_build.sh with the circuit-shape fixtures
# beside it (shapes/, from tests/data/gpu/shapes): the circom circuit of 384 constraints, 513 wires
# and 256 public signals (shapes/many_public) through `coprove prove` on the CUDA backend
# (msm_copies auto) and on the host backend, both witnesses each, then every [gpu] test of
# test_cuda.
# With test_cuda_unfixed beside (a build without the fix of the proof MSMs' workspace for keys
# whose queries pick different window widths), its shape test runs first, expected to fail.
# Logs, reports and proofs go to $OUT (or out/), the proofs as one tar (snarkjs verifies them where
# node runs). Usage: gpu_shapes_check.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../out}
mkdir -p "$out"
export COPROVE_SHAPES_DATA="$here/shapes"
[ -n "${COPROVE_CIRCOM_DATA:-}" ] || export COPROVE_CIRCOM_DATA="$here/../tests/data/circom"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
status=0
if [ -x "$here/test_cuda_unfixed" ]; then
  "$here/test_cuda_unfixed" "[shapes]" --reporter compact >"$out/unfixed.log" 2>&1
  echo "test_cuda_unfixed [shapes]: exit $? (expected to fail)" | tee -a "$out/gpu.txt"
  tail -n 5 "$out/unfixed.log"
fi
proofs=$(mktemp -d)
for backend in cuda host; do
  mkdir -p "$proofs/$backend"
  start=$(date +%s.%N)
  "$here/coprove" prove --backend "$backend" --zkey "$here/shapes/many_public.zkey" \
    --witness "$here/shapes/many_public_1.wtns" --witness "$here/shapes/many_public_2.wtns" --out "$proofs/$backend" \
    --json "$proofs/$backend/report.json" --progress none --log-level warning >"$proofs/$backend/stdout.txt" 2>&1
  rc=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  echo "coprove prove --backend $backend many_public: exit $rc, $seconds s" | tee -a "$out/gpu.txt"
  tail -n 4 "$proofs/$backend/stdout.txt"
  [ $rc -eq 0 ] || status=1
done
tar -C "$proofs" -cf "$out/proofs.tar" .
"$here/test_cuda" "[gpu]" --reporter compact --durations yes >"$out/test_cuda.log" 2>&1 || status=1
grep -E "^(test cases|All tests)|failed|FAILED" "$out/test_cuda.log" | tail -n 20
grep -E "^(test cases|All tests)" "$out/test_cuda.log" | tee -a "$out/gpu.txt"
exit $status
