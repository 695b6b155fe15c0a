#!/usr/bin/env bash
# The GPU prover's targets in one call on the GPU host (about six minutes on an H200), over gpu-bin/
# (scripts/gpu_build.sh bench_msm bench_pipeline): the MSMs at the targets' sizes (G1 2^24 and 2^26,
# G2 2^24, uniform resident scalars, 20-bit windows over 13 copies, the plan's placement) and the
# 2^24 MiMC proof pipeline's steady window, then each figure against its target. 13 copies of a 2^26
# key need an H200's memory: on an 80 GB card the 2^26 row says "not run" and the pipeline keeps one
# copy (its report says why). Logs and JSON go to $OUT (or out/).
# Usage on the GPU host: gpu-bin/gpu_targets.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/targets_gpu.txt"
echo "=== bench_msm ($(date -u +%T))"
timeout 240 "$here/bench_msm" --gpu --g1 24,26 --g2 24 --reps 3 --precompute 0:20 --json "$out/targets_msm.json" \
  >"$out/targets_msm.log" 2>&1 || status=1
grep -E 'resident window 20 copies 13|not run|disagrees' "$out/targets_msm.log"
echo "=== bench_pipeline ($(date -u +%T))"
timeout 330 "$here/bench_pipeline" --h200 --log-n 24 --proofs --jobs 6 --partitions 12 --slots 3 \
  --policies semaphore --msm-copies auto --json "$out/targets_pipeline.json" >"$out/targets_pipeline.log" 2>&1 ||
  status=1
tail -n 12 "$out/targets_pipeline.log"
echo "=== targets ($(date -u +%T))"
python3 - "$out/targets_msm.json" "$out/targets_pipeline.json" <<'EOF' || status=1
import json, sys

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{path}: {e}")
        return None

msm = load(sys.argv[1]) or []
def ms(group, log):
    rows = [r for r in msm if r["group"] == group and r["log_size"] == log and r["scalars"] == "uniform"
            and r["mode"] == "resident" and r["window_bits"] == 20 and r["copies"] == 13]
    return rows[0]["ms"] if rows else None

def line(what, value, target, unit="ms"):
    if value is None:
        print(f"{what}: not measured")
    else:
        print(f"{what}: {value:.2f} {unit} (target <= {target}) {'met' if value <= target else 'NOT met'}")

g1_24, g1_26, g2_24 = ms("g1", 24), ms("g1", 26), ms("g2", 24)
line("G1 2^24", g1_24, 100)
line("G1 2^26", g1_26, 360)
line("G2 2^24 / G1 2^24", g2_24 / g1_24 if g1_24 and g2_24 else None, 3, "x")
pipeline = load(sys.argv[2])
if pipeline:
    p = pipeline["policies"][0]
    print(f"pipeline: {p['verified']} of {p['partitions']} partitions verified, keys in {p['device_keys']['copies']} copies")
    steady = p.get("steady_device_ms_per_partition") or None
    line("2^24 MiMC partition, device time", steady / 1e3 if steady else None, 0.75, "s")
    busy = p.get("steady_gpu_busy_fraction")
    print(f"steady busy: {100 * busy:.1f} % (target >= 95 %)" if busy else "steady busy: no steady window")
EOF
exit $status
