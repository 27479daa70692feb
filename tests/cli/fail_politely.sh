#!/usr/bin/env bash
# ctest driver: every tool given (the radixmesh CLI, the benchmark drivers) answers --help with its
# usage and exit code 0, and a bad argument, a missing GPU or a damaged input file with a nonzero
# exit code and exactly one line of printable text on stderr: never an uncaught exception
# ("terminate called ..."), never raw bytes from a file.
#   fail_politely.sh TOOL...
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

# polite EXPECTED_EXIT TOOL ARGS...: EXPECTED_EXIT is a number, "nonzero", or "any" (exit 0 is
# also fine, e.g. a GPU benchmark that finds a GPU); a nonzero exit must come with one printable
# stderr line.
polite() {
  local expected=$1; shift
  local status=0
  "$@" >stdout.txt 2>stderr.txt </dev/null || status=$?
  local what="$(basename "$1") ${*:2}"
  if [ "$expected" = nonzero ] && [ "$status" = 0 ]; then fail "$what: exit 0, expected an error"; return; fi
  if [[ $expected =~ ^[0-9]+$ ]] && [ "$status" != "$expected" ]; then
    fail "$what: exit $status, expected $expected"; sed 's/^/    /' stderr.txt; return
  fi
  if [ "$status" = 0 ]; then echo "ok: $what (exit 0)"; return; fi
  local lines
  lines=$(wc -l <stderr.txt)
  if [ "$lines" != 1 ] || [ "$(tail -c 1 stderr.txt | od -An -c | tr -d ' ')" != '\n' ]; then
    fail "$what: stderr is $lines lines, expected one"; sed 's/^/    /' stderr.txt; return
  fi
  if grep -q terminate stderr.txt; then fail "$what: uncaught exception: $(cat stderr.txt)"; return; fi
  if LC_ALL=C grep -q '[^[:print:]]' stderr.txt; then fail "$what: unprintable bytes on stderr"; od -c stderr.txt | head; return; fi
  echo "ok: $what (exit $status): $(cat stderr.txt)"
}

# help TOOL ARGS...: usage on stdout, exit 0, nothing on stderr.
help() {
  local status=0
  "$@" >stdout.txt 2>stderr.txt </dev/null || status=$?
  local what="$(basename "$1") ${*:2}"
  if [ "$status" != 0 ] || [ ! -s stdout.txt ] || [ -s stderr.txt ]; then
    fail "$what: exit $status, $(wc -c <stdout.txt) bytes of usage, stderr: $(head -c 300 stderr.txt)"
  else
    echo "ok: $what"
  fi
}

for tool in "$@"; do
  name=$(basename "$tool")
  help "$tool" --help
  help "$tool" -h
  polite nonzero "$tool" --no-such-flag
  case $name in
    radixmesh)
      for command in sort generate info bench multisplit topk "bench sort" "bench topk" "bench multisplit"; do
        # shellcheck disable=SC2086
        help "$tool" $command --help
      done
      polite 1 "$tool"
      polite 1 "$tool" sort --no-such-flag
      polite 1 "$tool" generate --n abc --type u32 --out k.npy
      polite 1 "$tool" generate --n 1e3 --type u32 --out k.npy --dist nope
      polite 4 "$tool" generate --n 1e3 --type u33 --out k.npy
      polite 2 "$tool" sort --in missing.npy --out s.npy
      "$tool" generate --n 1e3 --type u32 --out k.npy >/dev/null
      # No GPU in a CPU-only build (and none on CI machines): one line naming the problem.
      polite any "$tool" sort --in k.npy --out s.npy --backend cuda
      polite any "$tool" sort --in k.npy --out s.npy --devices 0
      polite any "$tool" bench sort --n 1e3 --backend cuda --no-results
      # A damaged .npy header with control bytes (ESC sequence, BEL, CR) and invalid UTF-8.
      printf "\x93NUMPY\x01\x00\x2e\x00{'descr': '<u4', \x1b[2J\x07\xff\xfe\r 'shape': (1,), }   \n" >bad.npy
      polite 2 "$tool" sort --in bad.npy --out s.npy
      if ! grep -qF '\x1B[2J\x07\xFF\xFE\r' stderr.txt; then fail "the damaged header is not quoted escaped: $(cat stderr.txt)"; fi
      ;;
    bench_sort)
      polite 2 "$tool" --n abc
      polite 2 "$tool" --type u33
      polite 2 "$tool" --reps
      polite any "$tool" --backend cuda --n 1000 --reps 1 --warmup 0 --no-results
      ;;
    bench_sort_cuda)
      polite 2 "$tool" --n abc
      polite 2 "$tool" --type u33
      ;;
    bench_topk)
      polite 2 "$tool" --only
      ;;
    bench_multisplit)
      polite 2 "$tool" --n abc
      polite 2 "$tool" --m 2,x
      polite 2 "$tool" --distribution nope
      ;;
  esac
done

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
