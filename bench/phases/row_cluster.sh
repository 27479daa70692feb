#!/usr/bin/env bash
# Builds the row-cluster top-k's phase timer into DIR (default build/phases), on this machine:
#   bench/phases/row_cluster.sh [DIR]     then, on a GPU machine: DIR/row_cluster_phases
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/phases}
mkdir -p "$out"
python3 "$root/bench/phases/row_cluster_marks.py" "$out/row_cluster_marked.cuh"
cp "$root/bench/phases/row_cluster_phases.cu" "$out/"
nvcc -I"$root/include" -I"$root/src" -I"$out" -O3 -arch=sm_90 --expt-relaxed-constexpr -std=c++20 \
  -o "$out/row_cluster_phases" "$out/row_cluster_phases.cu"
echo "$out/row_cluster_phases"
