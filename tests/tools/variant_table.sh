#!/usr/bin/env bash
# scripts/variant_table.py on a small file of JSON lines: ours and each other implementation of the
# same run and shape, with the ratio; --match and --where filter; bad input fails with a fix.
#   tests/tools/variant_table.sh PYTHON REPO WORKDIR
set -uo pipefail
py=$1 repo=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
line() {  # command rows type implementation median ours path
  printf '{"command":"%s","parameters":{"rows":%s,"n":32000,"k":256,"type":"%s","path":"%s"},"implementation":"%s","median_ms":%s,"ours":%s}\n' \
    "$1" "$2" "$3" "$7" "$4" "$5" "$6"
}
{
  line run1 4096 bf16 "ours sorted" 0.432 true row-smem
  line run1 4096 bf16 "radixmesh sorted, row_smem = 0 (row-stream)" 0.345 false row-smem
  line run1 4096 bf16 "radixmesh unsorted" 0.415 false row-smem
  line run1 4096 f32 "ours sorted" 0.462 true row-stream
  line run1 4096 f32 "radixmesh sorted, row_smem = 1 (row-smem)" 0.366 false row-stream
  echo
  line run2 4096 bf16 "ours sorted" 0.500 true row-smem
} > "$work/r.jsonl"
out=$("$py" "$repo/scripts/variant_table.py" "$work/r.jsonl") || fail "exit $?"
[ "$(grep -c 'ours ' <<< "$out")" = 3 ] || fail "one line a run and shape expected: $out"
grep -q '^rows=4096 n=32000 type=bf16 k=256: ours 0.432 ms (row-smem)$' <<< "$out" || fail "ours: $out"
grep -q '0.345 ms   0.80x  radixmesh sorted, row_smem = 0 (row-stream)' <<< "$out" || fail "ratio: $out"
out=$("$py" "$repo/scripts/variant_table.py" "$work/r.jsonl" --match row_ --where type=f32) || fail "exit $?"
[ "$(grep -c 'ours ' <<< "$out")" = 1 ] && grep -q '0.79x  radixmesh sorted, row_smem = 1' <<< "$out" || fail "--where/--match: $out"
grep -q unsorted <<< "$("$py" "$repo/scripts/variant_table.py" "$work/r.jsonl" --match row_)" && fail "--match kept another"
err=$("$py" "$repo/scripts/variant_table.py" "$work/r.jsonl" --where type 2>&1) && fail "--where without = accepted"
grep -q "fix:" <<< "$err" || fail "--where: $err"
echo 'not json' > "$work/bad.jsonl"
err=$("$py" "$repo/scripts/variant_table.py" "$work/bad.jsonl" 2>&1) && fail "a bad line was accepted"
grep -q "bad.jsonl:1 is not JSON.*fix:" <<< "$err" || fail "bad line: $err"
echo "variant_table: ok"
