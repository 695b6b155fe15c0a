#!/usr/bin/env bash
# Two builds' GPU MSMs side by side on the GPU host: the new build's [msm] and [proof] tests first
# (a build whose MSMs are wrong is not timed), then bench_msm of the base and the new build in
# alternation, `ROUNDS` rounds (default 2), so that both see the same device, clocks and heat.
# BASE and NEW are folders holding test_cuda and bench_msm (scripts/gpu_build.sh's gpu-bin/, one
# per tree); the bench_msm arguments default to the sizes and copies bench/RESULTS.md records.
# Logs and JSON go to $OUT (or out/). Usage: scripts/gpu_compare_msm.sh BASE NEW [bench_msm args]
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_DIR NEW_DIR [bench_msm arguments]" >&2
  exit 2
fi
base=$1 new=$2
shift 2
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--gpu --g1 20,22,24,26 --g2 20,22,24 --reps 3 --precompute 0:20,0:22)
out=${OUT:-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
echo "=== tests of $new ($(date -u +%T))"
if ! timeout 300 "$new/test_cuda" "[msm],[proof]" --reporter compact >"$out/tests.log" 2>&1; then
  tail -n 30 "$out/tests.log"
  echo "!!! $new fails its [msm]/[proof] tests: not timed" >&2
  exit 1
fi
tail -n 2 "$out/tests.log"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for side in base new; do
    dir=$base
    [ "$side" = new ] && dir=$new
    echo "=== round $round, $side ($(date -u +%T))"
    timeout 240 "$dir/bench_msm" "${args[@]}" --json "$out/msm-$side-$round.json" >"$out/msm-$side-$round.log" 2>&1 ||
      echo "!!! bench_msm of $side exited $?"
    tail -n 25 "$out/msm-$side-$round.log"
  done
done
