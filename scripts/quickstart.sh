#!/usr/bin/env bash
# Sets up a fresh machine, builds coprove and runs its main job (`coprove run` with its defaults:
# the CUDA backend where a GPU is found, otherwise the CPU backend, which it says loudly).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target coprove
./build/release/coprove run "$@"
