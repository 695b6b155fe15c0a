#!/usr/bin/env bash
# Builds of the GPU MSM side by side on the GPU host. Each folder holds a bench_msm (scripts/
# gpu_build.sh's gpu-bin/, one per tree, or a build with other nvcc flags); the first is the base.
# Every other folder that holds a test_cuda runs its [msm] and [proof] tests first, and a build that
# fails them is not timed (bench_msm checks each configuration's first run against groth16::msm as
# well). Then the builds' bench_msm run in turn, ROUNDS rounds (default 2), so that all see the same
# device, clocks and heat, and every difference is read against the spread of one build's own
# runs. Logs and JSON go to $OUT (or out/); the last lines are a table of the medians, ms.
# Usage on the GPU host: scripts/gpu_compare_msm.sh DIR... [-- bench_msm arguments]
# (default arguments: the sizes and copies docs/history/msm.md records)
set -uo pipefail
dirs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do dirs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--gpu --g1 20,22,24,26 --g2 20,22,24 --reps 3 --precompute 0:20,0:22)
[ ${#dirs[@]} -gt 0 ] || { echo "usage: $0 DIR... [-- bench_msm arguments]" >&2; exit 2; }
out=${OUT:-out}
mkdir -p "$out"
rounds=${ROUNDS:-2}
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
timed=("${dirs[0]}")
for d in "${dirs[@]:1}"; do
  if [ -x "$d/test_cuda" ]; then
    echo "=== tests of $d ($(date -u +%T))"
    if ! timeout 300 "$d/test_cuda" "[msm],[proof]" --reporter compact >"$out/$(basename "$d").tests.log" 2>&1; then
      tail -n 30 "$out/$(basename "$d").tests.log"
      echo "!!! $d fails its [msm]/[proof] tests: not timed" >&2
      status=1
      continue
    fi
    tail -n 2 "$out/$(basename "$d").tests.log"
  fi
  timed+=("$d")
done
dirs=("${timed[@]}")
for round in $(seq 1 "$rounds"); do
  for d in "${dirs[@]}"; do
    name=$(basename "$d")
    echo "=== $name, round $round ($(date -u +%T))"
    if ! timeout 300 "$d/bench_msm" "${args[@]}" --json "$out/$name.$round.json" >"$out/$name.$round.log" 2>&1; then
      echo "!!! $name round $round failed"
      tail -n 20 "$out/$name.$round.log"
      status=1
    fi
  done
done
# One row a configuration, one column a build: total / place / buckets / windows, each the median
# of the rounds (the runs' own medians of --reps).
python3 - "$out" "${dirs[@]}" <<'EOF'
import json, os, statistics, sys
out, dirs = sys.argv[1], sys.argv[2:]
names = [os.path.basename(d) for d in dirs]
rows = {}
for name in names:
    for f in sorted(os.listdir(out)):
        if not (f.startswith(name + ".") and f.endswith(".json")):
            continue
        for r in json.load(open(os.path.join(out, f))):
            key = (r["group"], r["log_size"], r["scalars"], r["mode"], r["window_bits"], r["copies"])
            rows.setdefault(key, {}).setdefault(name, []).append(
                (r["ms"], r.get("place_ms", 0), r.get("buckets_ms", 0), r.get("windows_ms", 0)))
print("| config | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for key, by in sorted(rows.items()):
    cells = []
    for name in names:
        runs = by.get(name)
        if not runs:
            cells.append("-")
            continue
        med = [statistics.median(x[i] for x in runs) for i in range(4)]
        spread = max(x[0] for x in runs) - min(x[0] for x in runs)
        cells.append("%.2f / %.2f / %.2f / %.2f (+-%.2f)" % (med[0], med[1], med[2], med[3], spread))
    print("| %s 2^%d %s %s %d/%d | " % key + " | ".join(cells) + " |")
EOF
exit $status
