#!/usr/bin/env bash
# `mpirun -np R radixmesh sort` (label mpi): every rank reads its slice, the ranks sort together,
# and the output is byte for byte the single-process sort's, for .npy and raw files, keys only and
# with values, ascending and descending, in memory and out of core. Then a rank that fails at a step (reading, writing its
# slice, rank 0 publishing; RXM_CLI_FAIL_RANK/STEP inject it): every rank exits with an error, none
# hangs, and no output or temporary file remains.
# usage: mpi_sort.sh RADIXMESH MPIEXEC
set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/mpi_cli_setup.sh" "$@"

"$rxm" generate --n 1000003 --type f32 --dist zipf --out keys.npy >/dev/null
"$rxm" generate --n 1000003 --type u64 --out values.npy >/dev/null
"$rxm" generate --n 77777 --type i16 --dist few-distinct --out small.raw >/dev/null
for np in 3 4; do
  for order in asc desc; do
    "$rxm" sort --in keys.npy --out one.npy --values values.npy --values-out one_v.npy --order $order >/dev/null
    run_ranks $np sort --in keys.npy --out many.npy --values values.npy --values-out many_v.npy --order $order >/dev/null
    cmp one.npy many.npy
    cmp one_v.npy many_v.npy
    "$rxm" sort --in small.raw --type i16 --out one.raw --order $order >/dev/null
    run_ranks $np sort --in small.raw --type i16 --out many.raw --order $order --json >/dev/null
    cmp one.raw many.raw
  done
done
echo "mpi sort: $np ranks match one process"

# Out of core across the ranks (each rank's own sort, exact splitters, one exchange, a merge).
"$rxm" sort --in keys.npy --out one.npy --values values.npy --values-out one_v.npy >/dev/null
for np in 3 4; do
  run_ranks $np sort --in keys.npy --out many.npy --values values.npy --values-out many_v.npy --out-of-core always \
    --json >ooc.json
  cmp one.npy many.npy
  cmp one_v.npy many_v.npy
  grep -q '"splitters"' ooc.json || { echo "FAIL: no splitters step in the out-of-core JSON"; cat ooc.json; exit 1; }
done
rm -f many.npy
set +e
run_ranks 3 sort --in keys.npy --out many.npy --out-of-core always --host-memory 1K >out.txt 2>err.txt
rc=$?
set -e
if [ $rc = 0 ] || [ $rc = 124 ]; then echo "FAIL: --host-memory 1K gave exit $rc"; cat err.txt; exit 1; fi
grep -q "host_memory_limit" err.txt || { echo "FAIL: no error naming the host memory limit"; cat err.txt; exit 1; }
if ls -A | grep -q "many.npy\|radixmesh-tmp"; then echo "FAIL: output left after a refused sort"; ls -la; exit 1; fi
echo "mpi sort: out of core across ranks matches one process; too little host memory is refused"

rm -f many.npy many_v.npy many.raw
# Publishing is rank 0's alone (the others have finished by then): only rank 0 can fail there.
for case in "0 reading" "2 reading" "0 writing its slice" "2 writing its slice" "0 publishing"; do
  rank=${case%% *}
  step=${case#* }
  {
    set +e
    RXM_CLI_FAIL_RANK=$rank RXM_CLI_FAIL_STEP="$step" run_ranks 3 sort --in keys.npy --out many.npy \
      --values values.npy --values-out many_v.npy >out.txt 2>err.txt
    rc=$?
    set -e
    if [ $rc = 0 ] || [ $rc = 124 ]; then
      echo "FAIL: rank $rank failing at '$step' gave exit $rc"; cat err.txt; exit 1
    fi
    grep -q "failed while $step\|injected while $step" err.txt || { echo "FAIL: no error naming '$step'"; cat err.txt; exit 1; }
    if ls -A | grep -q "many\|radixmesh-tmp"; then echo "FAIL: output left after rank $rank failed at '$step'"; ls -la; cat err.txt; exit 1; fi
  }
done
echo "mpi sort: a rank failing at any step stops every rank, and nothing remains"
