#!/usr/bin/env bash
# Builds of the GPU MSM side by side on the GPU host: each folder named holds a bench_msm (from
# scripts/gpu_build.sh, or a build with other nvcc flags); they run in turn, ROUNDS times (default 2),
# over the same sizes, so that every difference is read against the spread of one build's own runs.
# Logs and JSON go to $OUT (or out/); the last lines are a table of the medians, ms.
# Usage on the GPU host: scripts/gpu_compare_msm.sh DIR... [-- bench_msm arguments]
# (default arguments: --gpu --g1 24,26 --g2 24 --reps 3 --precompute 0:20,0:22)
set -uo pipefail
dirs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do dirs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--gpu --g1 24,26 --g2 24 --reps 3 --precompute 0:20,0:22)
[ ${#dirs[@]} -gt 0 ] || { echo "usage: $0 DIR... [-- bench_msm arguments]" >&2; exit 2; }
out=${OUT:-out}
mkdir -p "$out"
rounds=${ROUNDS:-2}
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
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
