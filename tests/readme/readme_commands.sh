#!/usr/bin/env bash
# ctest driver: runs every command that README.md's quick start and CLI tour and docs/cli.md's
# examples show, as written but with small sizes (--n 1e5 where they say 1e8), in a fresh
# temporary folder against the built CLI, and checks exit codes and that the outputs exist and
# are correctly sorted (check_sorted.py). scripts/demo runs with RXM_CLI set, so it uses the built
# CLI and neither installs nor builds; `scripts/test` (the whole CI) is not run from inside it.
#   readme_commands.sh RADIXMESH_CLI SOURCE_DIR
set -euo pipefail
cli=$1 source=$2
check=$source/tests/readme/check_sorted.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export RXM_RESULTS_DIR=$work/results  # benchmarks append JSON lines here, not to the source tree
failures=0

# step DESCRIPTION COMMAND...: runs it, reports it, counts a failure.
step() {
  local what=$1; shift
  if "$@" >"$work/out.txt" 2>&1; then
    echo "ok: $what"
  else
    echo "FAILED (exit $?): $what: $*"
    sed 's/^/    /' "$work/out.txt"
    failures=$((failures + 1))
  fi
}
radixmesh() { "$cli" "$@"; }
exists() { [ -s "$1" ] || { echo "missing or empty: $1"; return 1; }; }

# README quick start: scripts/demo with its default and with the documented options.
step "scripts/demo --n 1e5" env RXM_CLI="$cli" "$source/scripts/demo" --n 1e5 --reps 1 --warmup 0
step "scripts/demo --n 1e5 --type u64 --dist zipf" \
  env RXM_CLI="$cli" "$source/scripts/demo" --n 1e5 --type u64 --dist zipf --reps 1 --warmup 0
cp "$work/out.txt" demo.txt
step "scripts/demo ran u64 keys, not its default u32" grep -q "u64" demo.txt
step "scripts/demo --type=i32 --n=1e5" env RXM_CLI="$cli" "$source/scripts/demo" --type=i32 --n=1e5 --reps 1 --warmup 0

# README CLI tour.
step "radixmesh info" radixmesh info
step "radixmesh generate --dist zipf --type u32 --out keys.npy --seed 7" \
  radixmesh generate --dist zipf --n 1e5 --type u32 --out keys.npy --seed 7
step "keys.npy exists" exists keys.npy
step "radixmesh sort --in keys.npy --out sorted.npy" radixmesh sort --in keys.npy --out sorted.npy
step "sorted.npy is keys.npy sorted" python3 "$check" keys.npy sorted.npy u32
# The raw-file line needs f32 keys.bin and ids.bin: the input indices as u32 values.
step "generate keys.bin (f32, raw)" radixmesh generate --n 1e5 --type f32 --dist normal --out keys.bin
step "write ids.bin (0..n-1, u32)" python3 -c \
  "import array; array.array('I', range(100000)).tofile(open('ids.bin', 'wb'))"
step "radixmesh sort --in keys.bin --type f32 --order desc --values ids.bin --values-out ids_sorted.bin --out s.bin" \
  radixmesh sort --in keys.bin --type f32 --order desc --values ids.bin --values-out ids_sorted.bin --out s.bin
step "s.bin and ids_sorted.bin are keys.bin sorted descending, stable" \
  python3 "$check" keys.bin s.bin f32 --desc --values-out ids_sorted.bin
step "radixmesh bench sort --type u64 --dist uniform" radixmesh bench sort --n 1e5 --type u64 --dist uniform
step "bench sort appended its JSON lines" exists results/sort.jsonl
step "radixmesh shuffle --in keys.npy --out-prefix part --buckets hash:1024 --devices cpu:4" \
  radixmesh shuffle --in keys.npy --out-prefix part --buckets hash:1024 --devices cpu:4
for d in 0 1 2 3; do step "part.$d.npy and its offsets exist" exists part.$d.offsets.npy; done
step "radixmesh info --links" radixmesh info --links
for command in sort generate info bench multisplit topk shuffle; do
  step "radixmesh $command --help" radixmesh "$command" --help
done
step "radixmesh --help" radixmesh --help
step "radixmesh info --json" radixmesh info --json

# docs/cli.md's examples.
step "radixmesh generate --dist zipf --zipf-s 1.1 --type u32 --out keys.npy" \
  radixmesh generate --dist zipf --zipf-s 1.1 --n 100K --type u32 --out keys.npy
step "radixmesh sort --in keys.npy --out sorted.npy (docs)" radixmesh sort --in keys.npy --out sorted.npy
step "radixmesh sort --in keys.npy --out sorted.npy --devices cpu:4 --explain (docs)" \
  radixmesh sort --in keys.npy --out sorted.npy --devices cpu:4 --explain
step "sorted.npy is keys.npy sorted (cpu:4)" python3 "$check" keys.npy sorted.npy u32
step "sorted.npy is the new keys.npy sorted" python3 "$check" keys.npy sorted.npy u32
step "radixmesh multisplit --in keys.npy --out split.npy --buckets radix:24:8 --offsets-out offsets.npy" \
  radixmesh multisplit --in keys.npy --out split.npy --buckets radix:24:8 --offsets-out offsets.npy
step "split.npy exists" exists split.npy
step "offsets.npy exists" exists offsets.npy
step "generate scores.npy (f32)" radixmesh generate --n 1e5 --type f32 --out scores.npy
step "radixmesh topk --in scores.npy -k 1024 --out-values top.npy --out-indices where.npy" \
  radixmesh topk --in scores.npy -k 1024 --out-values top.npy --out-indices where.npy
step "top.npy exists" exists top.npy
step "where.npy exists" exists where.npy
step "radixmesh bench sort --type u32" radixmesh bench sort --n 100K --type u32
step "radixmesh bench topk -k 1024" radixmesh bench topk --n 2^17 -k 1024
step "radixmesh bench multisplit --buckets radix:24:8" radixmesh bench multisplit --n 2^17 --buckets radix:24:8

if ((failures)); then
  echo "$failures README/docs command(s) failed"
  exit 1
fi
