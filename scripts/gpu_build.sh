#!/usr/bin/env bash
# Builds the executables for the GPU host (static Boost and C++ runtime, sm_90) and gathers them in
# gpu-bin/ (git-ignored), ready to be carried there. Usage: scripts/gpu_build.sh [target ...]
# (default: test_cuda, every benchmark and the coprove binary). GPU_BUILD_DIR (default build/gpu) and
# GPU_BIN (default gpu-bin) choose other folders, so that separate builds do not collide; GPU_PACK=1
# also writes them, stripped, into one archive, $GPU_BIN/bins.tar.xz.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${GPU_BUILD_DIR:-build/gpu}
bin_dir=${GPU_BIN:-gpu-bin}
cmake --preset gpu -B "$build_dir" >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(test_cuda coprove $(ls bench/bench_*.cpp 2>/dev/null | xargs -n1 basename | sed 's/\.cpp$//'))
fi
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
mkdir -p "$bin_dir"
for t in "${targets[@]}"; do
  f=$(find "$build_dir" -maxdepth 3 -type f -name "$t" -perm -u+x | head -n1)
  [ -n "$f" ] && cp "$f" "$bin_dir"/
done
cp scripts/gpu_check.sh scripts/gpu_measure.sh scripts/gpu_targets.sh "$bin_dir"/
if [ "${GPU_PACK:-0}" = 1 ]; then
  # One archive for a size-limited transfer: stripped, and xz -9's 64 MiB window finds the device
  # code the executables share (four of them, about 15 MB each, pack into about 10 MB).
  pack=$(mktemp -d)
  for t in "${targets[@]}"; do [ -f "$bin_dir/$t" ] && strip -o "$pack/$t" "$bin_dir/$t"; done
  cp scripts/gpu_check.sh scripts/gpu_measure.sh scripts/gpu_targets.sh "$pack"/
  tar -C "$pack" -cf - . | xz -T1 -9 >"$bin_dir/bins.tar.xz"
  rm -rf "$pack"
fi
ls -la "$bin_dir"
