#!/usr/bin/env bash
# Fuzzes every file reader and the HTTP layer of `coprove serve` with libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer: builds the targets of fuzz/ (the fuzz preset:
# clang, build/fuzz) and runs each for FUZZ_SECONDS (default 30) on its corpus, fuzz/corpus/TARGET
# (read only; what a run finds goes to build/fuzz/corpus/TARGET). Every run has a largest input
# sized for its format, -malloc_limit_mb and -rss_limit_mb so that an allocation out of proportion
# to the input fails it, and -timeout for a hang. Any crash, limit hit or timeout fails the script,
# naming the target and the input libFuzzer saved.
#
#   scripts/fuzz.sh [TARGET ...]     fuzz the named targets (default: all)
#   scripts/fuzz.sh --merge [TARGET ...]
#                                    fold what build/fuzz/corpus found into fuzz/corpus (-merge=1:
#                                    only inputs that add coverage), for committing
#
# FUZZ_SECONDS: seconds per target; FUZZ_JOBS: targets run at once (default: the cores);
# JOBS: build jobs (default: the cores). Without clang++ it says so and exits 0, unless
# FUZZ_REQUIRED=1 (CI), when that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
jobs=${JOBS:-$(nproc)}
fuzz_jobs=${FUZZ_JOBS:-$(nproc)}
build=build/fuzz

# target  largest input (bytes)  malloc limit (MB)  rss limit (MB)  seconds per input
limits="
request_parser_fuzz 4096   64  1024 10
zkey_fuzz           16384  64  1024 10
wtns_fuzz           4096   64  1024 10
r1cs_fuzz           4096   64  1024 10
params_fuzz         16384  64  1024 10
vk_fuzz             4096   64  1024 10
vk_json_fuzz        8192   64  1024 10
proof_json_fuzz     4096   64  1024 10
public_json_fuzz    2048   64  1024 10
pce_fuzz            65536  64  1024 10
key_json_fuzz       2048   256 1024 10
report_fuzz         16384  256 1024 10
"
all_targets=$(awk 'NF {print $1}' <<<"$limits")

merge=0
if [[ "${1:-}" == "--merge" ]]; then
  merge=1
  shift
fi
targets=${*:-$all_targets}
for t in $targets; do
  grep -qw "^$t" <<<"$limits" || { echo "fuzz.sh: no fuzz target '$t' (targets: $(echo $all_targets))" >&2; exit 2; }
done

if ! command -v clang++ >/dev/null 2>&1; then
  if [[ "${FUZZ_REQUIRED:-0}" == 1 ]]; then
    echo "fuzz.sh: clang++ not found, and FUZZ_REQUIRED=1" >&2
    exit 1
  fi
  echo "fuzz.sh: clang++ not found: skipping the libFuzzer runs" >&2
  exit 0
fi

started=$SECONDS
cmake --preset fuzz >/dev/null
# shellcheck disable=SC2086
cmake --build --preset fuzz -j "$jobs" --target $targets
echo "fuzz.sh: built $(wc -w <<<"$targets") targets in $((SECONDS - started)) s"

if [[ $merge == 1 ]]; then
  # The regress-* inputs fail until their readers are fixed: what they leave goes to artifacts/.
  mkdir -p "$build/artifacts"
  for t in $targets; do
    mkdir -p "fuzz/corpus/$t" "$build/corpus/$t"
    read -r _ max_len malloc_mb rss_mb timeout_s < <(grep -w "^$t" <<<"$limits")
    "$build/fuzz/$t" -merge=1 -max_len="$max_len" -malloc_limit_mb="$malloc_mb" -rss_limit_mb="$rss_mb" \
      -timeout="$timeout_s" -artifact_prefix="$build/artifacts/merge-$t-" "fuzz/corpus/$t" "$build/corpus/$t" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
  done
  du -sh fuzz/corpus
  exit 0
fi

mkdir -p "$build/logs" "$build/artifacts"
# One run: its log in build/fuzz/logs/TARGET.log; a failure leaves the input as
# build/fuzz/artifacts/TARGET-crash-..., -oom-..., -timeout-... or -leak-....
fuzz_one() {
  local t=$1 max_len=$2 malloc_mb=$3 rss_mb=$4 timeout_s=$5
  mkdir -p "$build/corpus/$t"
  if "$build/fuzz/$t" -max_total_time="$seconds" -max_len="$max_len" -malloc_limit_mb="$malloc_mb" \
      -rss_limit_mb="$rss_mb" -timeout="$timeout_s" -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "fuzz/corpus/$t" >"$build/logs/$t.log" 2>&1; then
    echo "fuzz.sh: $t: ok, $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$build/logs/$t.log" | grep -oE '[0-9]+$') inputs in ${seconds} s"
  else
    echo "fuzz.sh: $t: FAILED ($build/logs/$t.log)"
    grep -E "^==[0-9]+==ERROR|FAILED:|SUMMARY:|out-of-memory|malloc\(|Test unit written to" "$build/logs/$t.log" | head -8 | sed 's/^/  /'
    return 1
  fi
}
export -f fuzz_one
export build seconds

started=$SECONDS
status=0
for t in $targets; do grep -w "^$t" <<<"$limits"; done |
  xargs -P "$fuzz_jobs" -L 1 bash -c 'fuzz_one "$@"' _ || status=1
echo "fuzz.sh: fuzzed $(wc -w <<<"$targets") targets, $seconds s each, in $((SECONDS - started)) s"
if [[ $status != 0 ]]; then
  echo "fuzz.sh: FAILED: a target crashed, hit a limit or timed out; its input is under $build/artifacts:" >&2
  ls -1 "$build/artifacts" >&2 || true
fi
exit $status
