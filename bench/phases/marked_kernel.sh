#!/usr/bin/env bash
# Builds a top-k kernel's phase timer into DIR (default build/phases), on this machine: a copy of
# the kernel with %globaltimer marks (bench/phases/KERNEL_marks.py) and its driver
# (bench/phases/KERNEL_phases.cu), for KERNEL row_cluster, row_compact, row_smem or row_stream.
#   bench/phases/marked_kernel.sh KERNEL [DIR]     then, on a GPU machine: DIR/KERNEL_phases
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${1:?usage: marked_kernel.sh row_cluster|row_compact|row_smem|row_stream [DIR]}
out=${2:-$root/build/phases}
mkdir -p "$out"
python3 "$root/bench/phases/${kernel}_marks.py" "$out/${kernel}_marked.cuh"
cp "$root/bench/phases/${kernel}_phases.cu" "$out/"
nvcc -I"$root/include" -I"$root/src" -I"$out" -I"$root/bench/phases" -O3 -arch=sm_90 --expt-relaxed-constexpr -std=c++20 \
  -o "$out/${kernel}_phases" "$out/${kernel}_phases.cu"
echo "$out/${kernel}_phases"
