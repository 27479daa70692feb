#!/usr/bin/env bash
# ctest driver: a `radixmesh generate` stopped by SIGTERM, SIGINT, SIGHUP or SIGKILL while it writes
# its output leaves the folder as it was: no output, no temporary file (hidden ones included).
# While it writes, the output has no name at all (an unnamed O_TMPFILE file, visible only as the
# process's open descriptor "<folder>/#<inode> (deleted)").
#   interrupted_write.sh RADIXMESH_CLI WORK_DIR [N]
set -uo pipefail
cli=$1 work_root=$2 n=${3:-1e8}
mkdir -p "$work_root"
work=$(cd "$(mktemp -d -p "$work_root" interrupted_write.XXXXXX)" && pwd -P)  # as /proc shows it
trap 'rm -rf "$work"' EXIT
set -m  # background jobs keep SIGINT's default action (a non-interactive shell would ignore it for them)
failures=0

# writing PID DIR: whether PID has a file open in DIR (its output, being written).
writing() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    [[ $(readlink "$fd" 2>/dev/null) == "$2"/* ]] && return 0
  done
  return 1
}

for signal in TERM INT HUP KILL; do
  dir=$work/$signal
  mkdir "$dir"
  "$cli" generate --n "$n" --type u64 --out "$dir/keys.npy" 2>"$work/stderr.txt" &
  pid=$!
  started=$SECONDS
  until writing "$pid" "$dir" || ! kill -0 "$pid" 2>/dev/null || ((SECONDS - started > 60)); do sleep 0.01; done
  seen_writing=no
  writing "$pid" "$dir" && seen_writing=yes
  names_while_writing=$(ls -A "$dir")
  kill -s "$signal" "$pid" 2>/dev/null
  status=0
  wait "$pid" || status=$?
  expected=$((128 + $(kill -l "$signal")))
  left=$(ls -A "$dir")
  if [ "$seen_writing" != yes ]; then
    echo "FAILED: SIG$signal: never saw the output being written (exit status $status)"
    cat "$work/stderr.txt"
    failures=$((failures + 1))
  elif [ "$status" != "$expected" ]; then
    echo "FAILED: SIG$signal: exit status $status, expected $expected (killed while writing)"
    cat "$work/stderr.txt"
    failures=$((failures + 1))
  elif [ -n "$names_while_writing" ]; then
    echo "FAILED: SIG$signal: while writing, the folder held: $names_while_writing"
    failures=$((failures + 1))
  elif [ -n "$left" ]; then
    echo "FAILED: SIG$signal: the folder still holds: $left"
    failures=$((failures + 1))
  else
    echo "ok: SIG$signal while writing left nothing"
  fi
done

if ((failures)); then exit 1; fi
