#!/usr/bin/env bash
# ctest driver: install the build tree to a temporary prefix, then configure, build and run the
# consumer project against it. With nvcc's path and CUDA architectures (CUDA builds), the CUDA
# consumer is built and run too (it skips its run where no GPU is visible).
#   check.sh BUILD SOURCE WORK [NVCC CUDA_ARCHITECTURES]
set -euo pipefail
build=$1 source=$2 work=$3 nvcc=${4:-} cuda_arch=${5:-}
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cuda_args=()
[ -n "$nvcc" ] && cuda_args=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch")
cmake -S "$source" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" "${cuda_args[@]}" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
if [ -n "$nvcc" ]; then "$work/consumer/cuda_consumer"; fi
