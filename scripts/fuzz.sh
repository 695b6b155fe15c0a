#!/usr/bin/env bash
# Fuzzes the HTTP request parser of `coprove serve` with libFuzzer for a bounded time (default 30 s,
# FUZZ_SECONDS to change it) under AddressSanitizer and UndefinedBehaviorSanitizer. Needs clang
# with libFuzzer; where there is none it says so and exits 0 (the randomized test in
# tests/service/request_parser_fuzz_test.cpp still runs in ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
cxx=${FUZZ_CXX:-$(command -v clang++ || true)}
if [[ -z "$cxx" ]]; then
  echo "fuzz.sh: clang++ not found: skipping the libFuzzer run" >&2
  exit 0
fi
out=build/fuzz
mkdir -p "$out/corpus"
# Seed corpus: the first byte picks the body (even) or the route (odd) input.
printf '\x00{"circuit": "mimc", "log_constraints": 12, "partitions": 4, "seed": 7}' > "$out/corpus/body"
printf '\x00{}' > "$out/corpus/empty"
printf '\x01GET\n/v1/jobs/12/result?wait=1.5' > "$out/corpus/result"
printf '\x01DELETE\n/v1/jobs/3' > "$out/corpus/cancel"
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iprover/service/include fuzz/request_parser_fuzz.cpp prover/service/src/request_parser.cpp \
  -lboost_json -o "$out/request_parser_fuzz"
"$out/request_parser_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -artifact_prefix="$out/" "$out/corpus"
