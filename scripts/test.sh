#!/usr/bin/env bash
# Builds coprove and runs its tests: the release build (CUDA code compiles where nvcc is found; the
# [gpu] tests run only on a GPU host) through ctest, then the runtime core and the engine under
# ThreadSanitizer, then the field layer (Fr, Fq, curves, pairing) under AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target test_runtime test_engine
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --preset tsan -j "$jobs"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs" --target test_field
ctest --preset asan -j "$jobs" -L '^field$'
