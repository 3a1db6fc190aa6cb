#!/usr/bin/env bash
# Runs one test suite (a folder under test/) with Node's built-in runner through tsx.
# Node 20's runner has no glob support, so the files are listed here.
set -euo pipefail
suite=${1:?usage: test/suite.sh <unit|smoke|...> [extra node --test flags]}
shift
cd "$(dirname "$0")/.."
mapfile -t files < <(find "test/$suite" -name '*.test.ts' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "test/$suite has no *.test.ts files: nothing would run, which is a failure" >&2
  exit 1
fi
# The timeout bounds each test file as well as each test: a hang fails by name instead of eating
# CI's budget. The cluster suite's kill -9 file runs several split lives, so it sets a longer one.
timeout_ms=${QS_TEST_TIMEOUT_MS:-600000}
# Each file's process appends its wall, wait and CPU times here (test/support/fileTiming.ts); the
# table after the run shows where the suite's time goes.
export QS_TIMING_FILE="test-results/timing/$suite.jsonl"
# QS_GROUP=parallel or serial runs one group only (npm test runs other work beside the serial
# group, test/run-all.sh); the serial run adds to the parallel run's timings.
group=${QS_GROUP:-all}
case "$group" in
  all | parallel | serial) ;;
  *) echo "QS_GROUP=$group: expected all, parallel or serial" >&2 && exit 2 ;;
esac
mkdir -p test-results/timing
[ "$group" = serial ] || rm -f "$QS_TIMING_FILE"
# A file that must have the environment to itself (it installs, upgrades, restarts, kills or
# uninstalls the controller, or changes cluster-wide objects) says so on a line of its own:
#   // test-group: serial (why)
# Those run one at a time after the others, which run side by side as the flags say
# (--test-concurrency); the declaration lives in the file, so no list can drift.
# A file that runs much longer than the others says so on a line of its own:
#   // test-order: first (why)
# and starts first, so that it does not begin last and hold the whole group up alone.
first=()
rest=()
for f in "${files[@]}"; do
  if grep -qE '^// test-order: first' "$f"; then first+=("$f"); else rest+=("$f"); fi
done
parallel=()
serial=()
for f in "${first[@]}" "${rest[@]}"; do
  if grep -qE '^// test-group: serial' "$f"; then serial+=("$f"); else parallel+=("$f"); fi
done
serial_flags=()
for flag in "$@"; do
  case "$flag" in --test-concurrency=*) ;; *) serial_flags+=("$flag") ;; esac
done
# TypeScript through tsx, except in the unit suite: its hundred-odd files are a process each, and
# most of their time was tsx's module hooks loading packages (test/support/typescript/register.mjs).
loader=(--import tsx)
[ "$suite" = unit ] && loader=(--import ./test/support/typescript/register.mjs)
run_files() {
  node "${loader[@]}" --import ./test/support/fileTiming.ts --import ./test/support/flushReports.ts --test --test-force-exit --test-timeout="$timeout_ms" \
    --test-reporter=spec "$@"
}
rc=0
if [ ${#parallel[@]} -gt 0 ] && [ "$group" != serial ]; then
  run_files "$@" "${parallel[@]}" || rc=$?
fi
if [ ${#serial[@]} -gt 0 ] && [ "$group" != parallel ]; then
  echo "=== $suite: ${#serial[@]} file(s) of the serial group, one at a time"
  run_files "${serial_flags[@]}" --test-concurrency=1 "${serial[@]}" || rc=$?
fi
npx --no-install tsx test/support/timingTable.ts "$QS_TIMING_FILE" "$suite" || true
exit "$rc"
