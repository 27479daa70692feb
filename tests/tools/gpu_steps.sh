#!/usr/bin/env bash
# scripts/gpu-steps without a GPU: steps run in order under their own limits and the total, --from
# skips to a step, comments and blank lines are skipped, each log and the summary come back in
# logs.tgz, and a missing steps file or binaries folder fails with a fix.
#   tests/tools/gpu_steps.sh REPO WORKDIR
set -uo pipefail
repo=$1 work=$2
rm -rf "$work" && mkdir -p "$work/carry"
echo abc123 > "$work/carry/COMMIT"
fail() { echo "FAIL: $*"; exit 1; }
cat > "$work/t.steps" <<'STEPS'
# a comment, then a blank line

first 5 echo "one $B"; echo '[  PASSED  ] 3 tests.'
slow 1 sleep 5
failing 5 exit 3
env 5 echo "OUT=$OUT RESULTS=$RXM_RESULTS_DIR COMMIT=$RXM_COMMIT NVLS=$NCCL_NVLS_ENABLE"
STEPS
OUT=$work/out RXM_CARRY=$work/carry LIMIT=60 "$repo/scripts/gpu-steps" "$work/t.steps" > "$work/run.log" 2>&1 ||
  fail "gpu-steps exited $?: $(cat "$work/run.log")"
summary=$work/out/logs/summary.txt
grep -q '^first rc=0 .*\[  PASSED  \] 3 tests\.' "$summary" || fail "first: $(cat "$summary")"
grep -q '^slow rc=124 ' "$summary" || fail "slow was not cut at its limit: $(cat "$summary")"
grep -q '^failing rc=3 ' "$summary" || fail "failing: $(cat "$summary")"
[ "$(grep -c . "$summary")" = 4 ] || fail "comments or blank lines taken as steps: $(cat "$summary")"
grep -q "^one $work/carry\$" "$work/out/logs/first.log" || fail "\$B: $(cat "$work/out/logs/first.log")"
grep -q "^OUT=$work/out RESULTS=$work/out/logs/results COMMIT=abc123 NVLS=0\$" "$work/out/logs/env.log" ||
  fail "environment: $(cat "$work/out/logs/env.log")"
packed=$(tar tzf "$work/out/logs.tgz")
for f in first.log slow.log failing.log env.log summary.txt; do
  grep -qx "logs/$f" <<< "$packed" || fail "logs.tgz lacks logs/$f"
done
# --from, and the total limit: a step that would pass LIMIT is cut at what is left.
OUT=$work/from RXM_CARRY=$work/carry LIMIT=60 "$repo/scripts/gpu-steps" "$work/t.steps" --from failing > /dev/null 2>&1
[ "$(cut -d' ' -f1 "$work/from/logs/summary.txt" | tr '\n' ' ')" = "failing env " ] || fail "--from: $(cat "$work/from/logs/summary.txt")"
OUT=$work/nameless RXM_CARRY=$work/carry "$repo/scripts/gpu-steps" "$work/t.steps" --from nothing 2> "$work/nameless.err" > /dev/null
grep -q "no step named 'nothing'.*fix:" "$work/nameless.err" || fail "--from an unknown step: $(cat "$work/nameless.err")"
# Refusals name the problem and the fix.
"$repo/scripts/gpu-steps" "$work/missing.steps" 2> "$work/err1" > /dev/null && fail "a missing steps file was accepted"
grep -q "no steps file.*fix:" "$work/err1" || fail "missing steps file: $(cat "$work/err1")"
OUT=$work/none RXM_CARRY=$work/no-such-carry "$repo/scripts/gpu-steps" "$work/t.steps" 2> "$work/err2" > /dev/null &&
  fail "a missing binaries folder was accepted"
grep -q "no binaries at.*fix:" "$work/err2" || fail "missing binaries: $(cat "$work/err2")"
"$repo/scripts/gpu-steps" "$work/t.steps" --form first 2> "$work/err3" > /dev/null && fail "a misspelt option was accepted"
grep -q "unknown argument '--form'.*fix:" "$work/err3" || fail "misspelt option: $(cat "$work/err3")"
echo "gpu-steps: ok"
