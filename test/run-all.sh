#!/usr/bin/env bash
# `npm test`: builds, checks, brings up the real test environment and runs every suite.
# Prints one closing line "N passed, N failed" summed over all suites.
set -uo pipefail
cd "$(dirname "$0")/.."

# Which backend runs the brokers of the suites that need only them (smoke, conformance): processes
# (test/env/*.ts, from apt and Maven Central) or containers (test/env/containers/, README "The
# brokers in containers"): `npm test -- --containers` or QS_BROKERS=containers, and containers by
# default where apt-get is missing (a laptop). The sidecar, cluster and e2e suites always run on
# process brokers beside the control plane and the real node, which have no container backend yet
# (issue 34): with containers, the brokers are swapped after the conformance suite.
brokers=${QS_BROKERS:-}
for arg in "$@"; do
  case "$arg" in
    --containers) brokers=containers ;;
    --processes) brokers=processes ;;
    *)
      echo "npm test: unknown argument $arg; the arguments are --containers or --processes (the brokers of the smoke and conformance suites)" >&2
      exit 2
      ;;
  esac
done
if [ -z "$brokers" ]; then
  if command -v apt-get >/dev/null; then brokers=processes; else brokers=containers; fi
fi
case "$brokers" in
  processes | containers) ;;
  *) echo "npm test: QS_BROKERS=$brokers: expected processes or containers" >&2 && exit 2 ;;
esac

# Leave the environment as we found it: stop it at the end only if this run started it.
env_was_up=0
[ -f .env-run/test.env ] && env_was_up=1
if [ "$brokers" = containers ] && [ "$env_was_up" = 1 ]; then
  echo "npm test: the brokers as containers need the ports of the test environment that is up now (.env-run/test.env): stop it with \`npm run env:down\`, or run on it with QS_BROKERS=processes" >&2
  exit 2
fi
echo "npm test: the smoke and conformance suites' brokers run as $brokers"
results=$(mktemp)
# Each suite's whole output is kept; a failed suite's failure details are printed again after the
# summary, so the end of a CI log (often all a reader gets) says why, not only which.
logs=test-results/suite-logs
rm -rf "$logs" test-results/timing && mkdir -p "$logs"
status=0
step() {
  local name=$1
  shift
  echo
  echo "=== $name: $*"
  local start=$SECONDS out
  out="$logs/${name//[^a-z0-9]/-}.log"
  "$@" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  local pass fail
  pass=$(grep -E '^ℹ pass [0-9]+' "$out" | awk '{s+=$3} END {print s+0}')
  fail=$(grep -E '^ℹ fail [0-9]+' "$out" | awk '{s+=$3} END {print s+0}')
  echo "$name $pass $fail $rc $((SECONDS - start))" >>"$results"
  if [ "$rc" -ne 0 ]; then
    echo "=== $name FAILED (exit $rc)"
    status=1
  fi
  return "$rc"
}

cleanup() {
  if [ "$env_was_up" = 0 ] && [ "${QS_KEEP_ENV:-0}" != 1 ]; then npm run --silent env:down || true; fi
}
trap cleanup EXIT

step build npm run --silent build || exit 1
# The .vsix the Marketplace would get (vsce runs vscode:prepublish, the build, again: seconds). The
# unit suite checks what it ships (test/support/vsix.ts); the e2e suite installs it into the real
# VS Code (run alone, it packages first).
step package npm run --silent package || exit 1
# Steps that need nothing running and only the CPU run beside steps that mostly wait: typecheck
# beside the brokers' start and the smoke suite; the unit suite and lint beside the cluster suite's
# serial group (its files wait on the product's own timeouts, leases and rollouts: 43 % of the
# machine was busy there). Their output is printed whole when they end (not interleaved), their
# results counted as any step's.
beside() {
  "$@" >/dev/null 2>&1 &
  beside_pid=$!
}
ended_beside() {
  local rc=0
  wait "$beside_pid" || rc=$?
  local name
  for name in "$@"; do
    echo
    echo "=== $name (ran beside the steps above)"
    cat "$logs/$name.log"
  done
  [ "$rc" -eq 0 ] || { echo "=== $* FAILED"; status=1; }
}
unit_and_lint() {
  local rc=0
  step unit npm run --silent test:unit || rc=1
  step lint npm run --silent lint || rc=1
  return "$rc"
}
beside step typecheck npm run --silent typecheck
# The control plane's Go build is minutes of both cores on a fresh machine (a no-op when cached):
# it runs in the background at low priority (build.sh nices its compiles) while the suites that
# need only the brokers run; the full env:up then waits for it (a lock per cache key). helm (for
# the cluster suite's chart test, which waits for it) builds after it, for the same reason. Only
# on Linux: elsewhere the control plane cannot run (test/env/processBackend.ts says so at env:up).
if [ "$(uname -s)" = Linux ]; then
  {
    bash test/env/k8s/build.sh >/dev/null 2>"$logs/k8s-build.log"
    bash test/env/helm/build.sh >/dev/null 2>"$logs/helm-build.log"
  } &
fi
broker_args=(--brokers)
[ "$brokers" = containers ] && broker_args+=(--containers)
step env:brokers npm run --silent env:up -- "${broker_args[@]}" || {
  echo "the brokers did not come up; suites that need them cannot run"
  unit_and_lint
  exit 1
}
step smoke npm run --silent test:smoke
ended_beside typecheck
# Three conformance files at a time (test:conformance): they wait on the brokers far more than they
# compute, every name they use is unique, and none restarts the shared brokers.
step conformance npm run --silent test:conformance
if [ "$brokers" = containers ]; then
  step env:containers-down npm run --silent env:down || { echo "the brokers' containers did not stop"; exit 1; }
fi
step env:up npm run --silent env:up || {
  echo "the test environment did not come up; suites that need it cannot run"
  [ "$brokers" = containers ] &&
    echo "(the sidecar, cluster and e2e suites need the control plane and the real node, which run only on Linux as root with apt: README \"The brokers in containers\")"
  unit_and_lint
  exit 1
}
# The sidecar suite plays the controller's part itself, so it runs before the cluster suite
# installs the real controller.
step sidecar npm run --silent test:sidecar
# What the cluster suite asked of the API server, and the server's CPU for it (the suite is limited
# by the machine, not by its waits): printed after it, kept in test-results/timing/.
api=test-results/timing/api-requests
npx --no-install tsx test/support/apiRequests.ts snapshot "$api-before.json" || true
step cluster env QS_GROUP=parallel npm run --silent test:cluster
beside unit_and_lint
step cluster:serial env QS_GROUP=serial npm run --silent test:cluster
ended_beside unit lint
npx --no-install tsx test/support/apiRequests.ts snapshot "$api-after.json" &&
  npx --no-install tsx test/support/apiRequests.ts diff "$api-before.json" "$api-after.json" --top 25 |
  tee test-results/timing/cluster-api-requests.txt || true
# The e2e suite packages the extension when run alone; here the package step above did (the
# checkout has not changed since).
step e2e env QS_E2E_PACKAGED=1 npm run --silent test:e2e

echo
echo "=== summary (suite passed failed exit seconds)"
column -t "$results"
read -r passed failed < <(awk '{p+=$2; f+=$3} END {print p+0, f+0}' "$results")
# Where the time went, across suites: the slowest files (each suite's log has its whole table).
find test-results/timing -name '*.jsonl' ! -name all.jsonl -exec cat {} + >test-results/timing/all.jsonl 2>/dev/null || true
npx --no-install tsx test/support/timingTable.ts test-results/timing/all.jsonl "all suites, slowest files" --top 25 || true
# No suite retries a failed test (README "How the suites run"): a failure here is a failure.
echo "retries: none (a test that fails once fails the run)"
# The failures come last, after the timing tables: the end of a CI log is often all a reader gets,
# so it must say which tests failed and why, not only how many.
for log in "$logs"/*.log; do
  # Node's spec reporter repeats every failure with its error under "failing tests:".
  if grep -q '^✖ failing tests:' "$log"; then
    echo
    echo "=== failures in $(basename "$log" .log) (whole output: $log)"
    sed -n '/^✖ failing tests:/,$p' "$log" | head -n 80
  fi
done
for log in "$logs"/*.log; do
  grep -q '^✖ failing tests:' "$log" || continue
  sed -n '/^✖ failing tests:/,$p' "$log" | grep -E '^\s*✖ ' | grep -v 'failing tests:' | sed "s|^ *|failed ($(basename "$log" .log)): |"
done
# The e2e suite's workbench tests report through mocha: its numbered failures and phase verdicts.
[ -f "$logs/e2e.log" ] && grep -E '^(FAIL |e2e FAILED|\[host [0-9]+\] +[0-9]+\) )' "$logs/e2e.log" | sed 's|^|failed (e2e): |' | head -n 20
echo "$passed passed, $failed failed"
exit "$status"
