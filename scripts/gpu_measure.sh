#!/usr/bin/env bash
# The full measurement on the GPU host, over gpu-bin/ (scripts/gpu_build.sh): every [gpu] test,
# then each benchmark whose figures bench/BASELINES.md and docs/history/ record, each under its own time limit so one
# hang does not cost the rest. Logs and JSON go to $OUT (or out/), tarred into results.tar.gz.
# Usage on the GPU host: gpu-bin/gpu_measure.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../out}
work=$(mktemp -d)
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
gpus=$(nvidia-smi -L | wc -l)
status=0
step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%T))"
  timeout "$limit" "$@" >"$work/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$work/$name.log"
  [ $rc -eq 0 ] || { echo "!!! $name exited $rc"; status=1; }
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$work/gpu.txt"
nproc | tee -a "$work/gpu.txt"
step test_cuda 180 "$here/test_cuda" "[gpu]" --reporter compact --durations yes
step bench_ntt 80 "$here/bench_ntt" --no-cpu --gpu-min 20 --json "$work/bench_ntt.json"
step bench_bridge 80 "$here/bench_bridge" --json "$work/bench_bridge.json"
step bench_evaluation 30 "$here/bench_evaluation" --min 20 --max 24 --json "$work/bench_evaluation.json"
step bench_field 30 "$here/bench_field" --min-log 20 --max-log 20 --reps 3 --json "$work/bench_field.json"
step bench_synthesis 40 "$here/bench_synthesis" --min-log 18 --max-log 20 --json "$work/bench_synthesis.json"
step bench_pinned_h2d 60 "$here/bench_pinned" --h2d-scaling --seconds 3 --writers 16 --json "$work/h2d_scaling.json"
# The measured depth against fixed depths in one call, synthesis replayed (the defaults' check:
# within 2 % of the best fixed depth, busy >= 97 %), then the policies at a fixed depth.
step depths_22_replay 150 "$here/bench_pipeline" --h200 --log-n 22 --devices 1 --synthesis replay-assignment --jobs 16 --depths measured,16,24 --rounds 4 --json "$work/depths_22_replay.json"
step depths_24_replay 200 "$here/bench_pipeline" --h200 --log-n 24 --devices 1 --synthesis replay-assignment --jobs 8 --depths measured,16,24 --rounds 3 --json "$work/depths_24_replay.json"
step pipeline_1gpu 200 "$here/bench_pipeline" --h200 --log-n 22 --devices 1 --depth 40 --jobs 12 --rounds 2 --json "$work/pipeline_1gpu.json"
step pipeline_1gpu_host_spmv 60 "$here/bench_pipeline" --h200 --log-n 22 --devices 1 --depth 40 --jobs 12 --spmv host --policies semaphore --json "$work/pipeline_1gpu_host_spmv.json"
step pipeline_24_1gpu 150 "$here/bench_pipeline" --h200 --log-n 24 --devices 1 --depth 32 --jobs 8 --policies semaphore,unbounded --json "$work/pipeline_24_1gpu.json"
if [ "$gpus" -ge 2 ]; then
  step pipeline_2gpu 200 "$here/bench_pipeline" --h200 --log-n 22 --devices 2 --depth 40 --jobs 16 --rounds 2 --json "$work/pipeline_2gpu.json"
  step pipeline_24_2gpu 200 "$here/bench_pipeline" --h200 --log-n 24 --devices 2 --depth 32 --jobs 10 --policies semaphore,unbounded --json "$work/pipeline_24_2gpu.json"
fi
step coprove_run 40 "$here/coprove" run
mkdir -p "$out"
tar -C "$work" -czf "$out/results.tar.gz" .
exit $status
