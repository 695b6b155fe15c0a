#!/usr/bin/env bash
# Fuzzes the HTTP layer of `coprove serve` (raw socket bytes through the bounded request parser on
# Beast's basic_parser, chunked framing and trailers included, then the route and body parsers)
# with libFuzzer for a bounded time (default 30 s,
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
# Seed corpus: the first byte picks the body (0 mod 3), the route (1 mod 3) or the raw connection
# bytes (2 mod 3, the next byte picking the size of the pieces they arrive in).
printf '\x00{"circuit": "mimc", "log_constraints": 12, "partitions": 4, "seed": 7, "priority": "high"}' > "$out/corpus/body"
printf '\x00{"request_id": "a-1"}' > "$out/corpus/request_id"
printf '\x00{}' > "$out/corpus/empty"
printf '\x01GET\n/v1/jobs/12/result?wait=1.5' > "$out/corpus/result"
printf '\x01DELETE\n/v1/jobs/3' > "$out/corpus/cancel"
printf '\x02\x07POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"seed": 42}\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' > "$out/corpus/pipelined"
printf '\x02\x03POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"see\r\n7\r\nd": 42}\r\n0\r\nX-Trailer: yes\r\n\r\n' > "$out/corpus/chunked"
printf '\x02\x40GET /v1/jobs/1/result?wait=2 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n' > "$out/corpus/expect"
# A last chunk whose trailer's end arrives a byte at a time.
printf '\x02\x40POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' > "$out/corpus/last_chunk_bytewise"
printf '\x02\x10POST /v1/jobs HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n' > "$out/corpus/coding"
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iprover/service/include fuzz/request_parser_fuzz.cpp prover/service/src/request_parser.cpp \
  prover/service/src/bounded_request_parser.cpp -lboost_json -o "$out/request_parser_fuzz"
"$out/request_parser_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
  -artifact_prefix="$out/" "$out/corpus"
