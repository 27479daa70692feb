#!/usr/bin/env bash
# The layer rules of docs/architecture.md, checked on the sources: each folder includes only the
# layers below it. Prints every include that breaks a rule and fails if there is one.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
bad=0
# folder | include prefixes it must not use
rules=(
  "include/radixmesh|core/ cpu/ cuda/ io/ comm/ mesh/"
  "src/core|cpu/ cuda/ io/ comm/ mesh/"
  "src/io|cpu/ cuda/ comm/ mesh/"
  "src/cpu|cuda/"
  "src/cuda|cpu/"
  "src/comm|cpu/ mesh/"
  "src/mesh|cpu/ cuda/ io/"
)
for rule in "${rules[@]}"; do
  dir=${rule%%|*}
  [ -d "$dir" ] || continue
  for prefix in ${rule#*|}; do
    if hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"${prefix}" "$dir" 2>/dev/null); then
      echo "layer rule broken: $dir must not include \"$prefix...\":"
      echo "$hits"
      bad=1
    fi
  done
done
# src/core/mesh is pure planning: no CUDA, MPI or NCCL headers.
if [ -d src/core/mesh ] && hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](cuda|mpi|nccl)' src/core/mesh); then
  echo "layer rule broken: src/core/mesh must not include CUDA, MPI or NCCL headers:"
  echo "$hits"
  bad=1
fi
if ((bad)); then exit 1; fi
echo "layers: every include follows the rules"
