#!/usr/bin/env bash
# `mpirun -np R radixmesh topk` (label mpi): every rank reads its columns of the input (a plain
# array: its slice), the ranks take the top-k together, and rank 0's outputs are byte for byte the
# single-process top-k's: a plain array and vocabulary-parallel rows, largest and smallest, sorted
# and not, 32- and 64-bit indices. Then a rank that fails while reading (RXM_CLI_FAIL_RANK/STEP):
# every rank exits with an error, none hangs, and no output remains.
# usage: mpi_topk.sh RADIXMESH MPIEXEC
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/mpi_cli_setup.sh" "$@"

"$rxm" generate --n 1000003 --type f32 --dist zipf --out scores.npy >/dev/null
"$rxm" generate --n 64000 --type f16 --dist normal --out logits.npy >/dev/null
for np in 3 4; do
  for flags in "-k 1000" "-k 7 --smallest --sorted" "-k 1000003 --index-type i32"; do
    # shellcheck disable=SC2086
    "$rxm" topk --in scores.npy $flags --backend cpu --out-values one_v.npy --out-indices one_i.npy >/dev/null
    # shellcheck disable=SC2086
    run_ranks $np topk --in scores.npy $flags --out-values many_v.npy --out-indices many_i.npy >/dev/null
    cmp one_v.npy many_v.npy
    cmp one_i.npy many_i.npy
  done
  "$rxm" topk --in logits.npy --rows 64 -k 50 --sorted --backend cpu --out-values one_v.npy --out-indices one_i.npy >/dev/null
  run_ranks $np topk --in logits.npy --rows 64 -k 50 --sorted --out-values many_v.npy --out-indices many_i.npy --json >/dev/null
  cmp one_v.npy many_v.npy
  cmp one_i.npy many_i.npy
done
echo "mpi topk: $np ranks match one process"

rm -f many_v.npy many_i.npy
for rank in 0 2; do
  set +e
  RXM_CLI_FAIL_RANK=$rank RXM_CLI_FAIL_STEP="reading" run_ranks 3 topk --in scores.npy -k 10 \
    --out-values many_v.npy --out-indices many_i.npy >out.txt 2>err.txt
  rc=$?
  set -e
  if [ $rc = 0 ] || [ $rc = 124 ]; then echo "FAIL: rank $rank failing while reading gave exit $rc"; cat err.txt; exit 1; fi
  grep -q "failed while reading\|injected while reading" err.txt || { echo "FAIL: no error naming the step"; cat err.txt; exit 1; }
  if ls -A | grep -q "many\|radixmesh-tmp"; then echo "FAIL: output left after rank $rank failed"; ls -la; exit 1; fi
done
set +e
run_ranks 3 topk --in scores.npy -k 1000004 --out-values many_v.npy --out-indices many_i.npy >out.txt 2>err.txt
rc=$?
set -e
[ $rc != 0 ] && [ $rc != 124 ] || { echo "FAIL: k > n gave exit $rc"; exit 1; }
grep -q "k = 1000004 is larger than n = 1000003" err.txt || { echo "FAIL: k > n not named"; cat err.txt; exit 1; }
if ls -A | grep -q "many"; then echo "FAIL: output left after k > n"; exit 1; fi
echo "mpi topk: a failing rank stops every rank, and nothing remains"
