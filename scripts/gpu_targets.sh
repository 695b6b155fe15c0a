#!/usr/bin/env bash
# The GPU prover's targets in one call on the GPU host (about six minutes on an H200), over gpu-bin/
# (scripts/gpu_build.sh bench_msm bench_pipeline): the MSMs at the targets' sizes (G1 2^24 and 2^26,
# G2 2^24, uniform and 0/1-heavy resident scalars, 20-bit windows over 13 copies, the plan's
# placement) and the 2^24 MiMC proof pipeline's steady window, then each figure against its target.
# 13 copies of a 2^26 key need an H200's memory: on an 80 GB card the 2^26 row says "not run" and
# the pipeline keeps one copy (its report says why). Logs and JSON go to $OUT (or out/), with
# BASELINES.rows.md: the rows of bench/BASELINES.md this run measured (commit from $COPROVE_COMMIT).
#
# Usage on the GPU host:  [COPROVE_COMMIT=HASH] gpu-bin/gpu_targets.sh
# Back in the tree, with the run's $OUT copied to OUT_DIR, rewrite bench/BASELINES.md's rows of the
# targets measured, for the run's card (every other row kept):
#   scripts/gpu_targets.sh --baselines OUT_DIR --commit HASH [--date YYYY-MM-DD] [--table PATH]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
msm_args=(--gpu --g1 24,26 --g2 24 --reps 3 --precompute 0:20)
pipeline_args=(--h200 --log-n 24 --proofs --jobs 6 --partitions 12 --slots 3 --policies semaphore --msm-copies auto)

# The run's JSON (targets_msm.json, targets_pipeline.json, targets_meta.json) as BASELINES.md rows.
# With --table PATH the rows replace those of the same target and card between the table's markers;
# with --rows PATH they are written alone. The commands are the run's (targets_meta.json), else this
# script's.
baselines() {
  MSM_ARGS="${msm_args[*]}" PIPELINE_ARGS="${pipeline_args[*]}" python3 - "$@" <<'EOF'
import argparse, datetime, json, os, re, sys

parser = argparse.ArgumentParser(prog="gpu_targets.sh --baselines")
parser.add_argument("--baselines", required=True, metavar="OUT_DIR")
parser.add_argument("--commit", required=True)
parser.add_argument("--date")
parser.add_argument("--table")
parser.add_argument("--rows")
args = parser.parse_args()

def load(name):
    path = os.path.join(args.baselines, name)
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return None
    except ValueError as e:
        sys.exit(f"gpu_targets.sh: {path}: {e}")

meta = load("targets_meta.json") or {}
msm = load("targets_msm.json") or []
pipeline = load("targets_pipeline.json")
if not msm and not pipeline:
    sys.exit(f"gpu_targets.sh: {args.baselines} holds neither targets_msm.json nor targets_pipeline.json")
date = args.date or meta.get("date")
if not date:
    sys.exit("gpu_targets.sh: no date: targets_meta.json has none, give --date YYYY-MM-DD")
datetime.date.fromisoformat(date)

def card_of(name):
    """'NVIDIA H100 80GB HBM3' -> 'H100', as BASELINES.md names cards."""
    found = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", (name or "").replace("NVIDIA", ""))
    return found.group(1) if found else (name or "").strip()

card = card_of(next((r.get("gpu") for r in msm if r.get("gpu")), None) or meta.get("gpu"))
if not card:
    sys.exit("gpu_targets.sh: no card: neither the MSM rows nor targets_meta.json name the GPU")
msm_command = "`bench_msm " + " ".join(meta.get("msm_args") or os.environ["MSM_ARGS"].split()) + "`"
pipeline_command = "`bench_pipeline " + " ".join(meta.get("pipeline_args") or os.environ["PIPELINE_ARGS"].split()) + "`"

def ms(group, log, scalars="uniform"):
    for r in msm:
        if (r["group"], r["log_size"], r["scalars"], r["mode"], r["window_bits"], r["copies"]) == \
                (group, log, scalars, "resident", 20, 13):
            return r["ms"]
    return None

def verdict(met):
    return "met" if met else "not met"

rows = []
def row(target, figure, command):
    rows.append((target, card, figure, args.commit, date, command))

g1_24, g1_26, g2_24, g1_24_sparse = ms("g1", 24), ms("g1", 26), ms("g2", 24), ms("g1", 24, "0/1-heavy")
if g1_24 is not None:
    row("G1 MSM 2^24, uniform, resident, 20-bit windows over 13 copies <= 100 ms",
        f"{g1_24:.2f} ms ({verdict(g1_24 <= 100)})", msm_command)
if g1_26 is not None:
    row("G1 MSM 2^26, uniform, resident, 20-bit windows over 13 copies <= 360 ms",
        f"{g1_26:.2f} ms ({verdict(g1_26 <= 360)})", msm_command)
if g1_24 and g2_24 is not None:
    ratio = g2_24 / g1_24
    row("G2 MSM 2^24 <= 3x G1 MSM 2^24", f"{ratio:.2f}x: {g2_24:.2f} / {g1_24:.2f} ms ({verdict(ratio <= 3)})",
        msm_command)
if g1_24_sparse is not None:
    row("G1 MSM 2^24, 0/1-heavy scalars, resident, 13 copies: beat sppark's 47.9 ms",
        f"{g1_24_sparse:.2f} ms ({verdict(g1_24_sparse < 47.9)})", msm_command)
if pipeline and pipeline.get("policies"):
    p = pipeline["policies"][0]
    steady_ms = p.get("steady_device_ms_per_partition") or 0
    busy = p.get("steady_gpu_busy_fraction") or 0
    if steady_ms > 0:
        row("device time of a 2^24 MiMC partition with its proof, steady <= 0.75 s",
            f"{steady_ms / 1e3:.3f} s ({verdict(steady_ms <= 750)})", pipeline_command)
    if p.get("steady_window_s", 0) > 0:
        row("GPU busy in the 2^24 proof pipeline's steady window >= 95 %",
            f"{100 * busy:.1f} % ({verdict(busy >= 0.95)})", pipeline_command)

for target, value in (("G1 MSM 2^24", g1_24), ("G1 MSM 2^26", g1_26), ("G2 MSM 2^24", g2_24),
                      ("G1 MSM 2^24 0/1-heavy", g1_24_sparse),
                      ("2^24 proof pipeline's steady window", any("pipeline" in r[0] for r in rows) or None)):
    if value is None:
        print(f"{target}: not measured (no such row in {args.baselines})", file=sys.stderr)

def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]

def text(r):
    return "| " + " | ".join(r) + " |"

if args.rows:
    with open(args.rows, "w") as f:
        f.write("".join(text(r) + "\n" for r in rows))
if args.table:
    begin, end = "<!-- baselines: rows below", "<!-- baselines: end of generated rows -->"
    with open(args.table) as f:
        lines = f.read().split("\n")
    first = next((i for i, l in enumerate(lines) if l.startswith(begin)), None)
    last = next((i for i, l in enumerate(lines) if l.startswith(end)), None)
    if first is None or last is None or last < first + 3:
        sys.exit(f"gpu_targets.sh: {args.table} has no table between the markers '{begin}' and '{end}'")
    header, old = lines[first + 1:first + 3], [cells(l) for l in lines[first + 3:last] if l.strip()]
    replaced = {(r[0], r[1]) for r in rows}
    kept = [r for r in old if (r[0], r[1]) not in replaced]
    order = {t: i for i, t in enumerate(dict.fromkeys([r[0] for r in old] + [r[0] for r in rows]))}
    merged = sorted(kept + [list(r) for r in rows], key=lambda r: (order[r[0]], r[1]))
    lines[first + 1:last] = header + [text(r) for r in merged]
    with open(args.table, "w") as f:
        f.write("\n".join(lines))
for r in rows:
    print(text(r))
EOF
}

if [ "${1:-}" = "--baselines" ]; then
  table_given=0
  for a in "$@"; do [ "$a" = "--table" ] || [ "$a" = "--rows" ] && table_given=1; done
  if [ $table_given = 0 ]; then
    baselines "$@" --table "$here/../bench/BASELINES.md"
  else
    baselines "$@"
  fi
  exit
fi

out=${OUT:-$here/../out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
status=0
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/targets_gpu.txt")
python3 -c 'import json, sys; json.dump({"date": sys.argv[1], "gpu": sys.argv[2].split(",")[0],
  "msm_args": sys.argv[3].split(" "), "pipeline_args": sys.argv[4].split(" ")}, open(sys.argv[5], "w"))' \
  "$(date -u +%F)" "$gpu" "${msm_args[*]}" "${pipeline_args[*]}" "$out/targets_meta.json"
echo "=== bench_msm ($(date -u +%T))"
timeout 240 "$here/bench_msm" "${msm_args[@]}" --json "$out/targets_msm.json" >"$out/targets_msm.log" 2>&1 || status=1
grep -E 'resident window 20 copies 13|not run|disagrees' "$out/targets_msm.log"
echo "=== bench_pipeline ($(date -u +%T))"
timeout 330 "$here/bench_pipeline" "${pipeline_args[@]}" --json "$out/targets_pipeline.json" \
  >"$out/targets_pipeline.log" 2>&1 || status=1
tail -n 12 "$out/targets_pipeline.log"
echo "=== targets ($(date -u +%T))"
python3 - "$out/targets_pipeline.json" <<'EOF' || status=1
import json, sys
try:
    with open(sys.argv[1]) as f:
        pipeline = json.load(f)
except (OSError, ValueError) as e:
    sys.exit(f"{sys.argv[1]}: {e}")
p = pipeline["policies"][0]
print(f"pipeline: {p['verified']} of {p['partitions']} partitions verified, keys in {p['device_keys']['copies']} copies")
EOF
baselines --baselines "$out" --commit "${COPROVE_COMMIT:-unknown}" --rows "$out/BASELINES.rows.md" || status=1
exit $status
