#!/usr/bin/env bash
# Builds the helm CLI from the Go module proxy (the only place this project may
# fetch it from: no release tarball is reachable), for the chart's tests
# (test/cluster/helm.test.ts), and caches it.
#
#   test/env/helm/build.sh     build (or reuse); the LAST line on stdout is the
#                              helm binary's path
#
# The wrapper module beside this script (go.mod, go.sum, tools.go) pins the
# version; to move to another one: edit the require line in go.mod, then
# `GOTOOLCHAIN=local go mod tidy` here. Cache layout:
#   ${QUEUESPLIT_CACHE_DIR:-$HOME/.cache/queuesplit}/helm-<ver>-<hash>/bin/helm
# <hash> covers the wrapper module, the Go version and the build flags. Built
# into a temp dir renamed into place when complete, under a per-key flock, like
# ../k8s/build.sh (so .ci/run can start it early and the test await the same key).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

export GOTOOLCHAIN=local   # never download a toolchain
# helm's own release builds are static too (its Makefile: CGO_ENABLED ?= 0).
export CGO_ENABLED=0

log() { printf '[helm-build] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
command -v go >/dev/null || die "go not found in PATH"

HELM_VERSION="$(cd "$HERE" && go mod edit -json | tr -d ' \t\n' \
    | grep -o '{"Path":"helm.sh/helm/v4","Version":"[^"]*"' | sed 's/.*"Version":"\([^"]*\)"/\1/')"
[[ $HELM_VERSION =~ ^v4\.[0-9]+\.[0-9]+$ ]] || die "go.mod does not require helm.sh/helm/v4 at a release"

GO_VERSION="$(go env GOVERSION)"
BUILD_FLAGS=(-mod=readonly -trimpath -buildvcs=false)
# As helm's Makefile stamps a release; the commit is not known from the module proxy.
LDFLAGS="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
LDFLAGS+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
KEY_HASH="$(
    {
        printf '%s\n' "$GO_VERSION" "$(go env GOOS)/$(go env GOARCH)" "CGO_ENABLED=$CGO_ENABLED" \
            "${BUILD_FLAGS[*]}" "$LDFLAGS" "recipe=1"
        cat "$HERE/go.mod" "$HERE/go.sum" "$HERE"/*.go
    } | sha256sum | cut -c1-12
)"
CACHE_ROOT="${QUEUESPLIT_CACHE_DIR:-$HOME/.cache/queuesplit}"
NAME="helm-$HELM_VERSION-$KEY_HASH"
FINAL="$CACHE_ROOT/$NAME"
BIN="$FINAL/bin/helm"

is_complete() { [[ -f $FINAL/.complete && -x $BIN ]]; }
if is_complete; then log "cached: $BIN"; echo "$BIN"; exit 0; fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.$NAME.lock"
log "acquiring lock $CACHE_ROOT/.$NAME.lock"
flock 9
if is_complete; then log "cached: $BIN"; echo "$BIN"; exit 0; fi   # built while we waited

rm -rf "$CACHE_ROOT/.tmp-$NAME".*   # leftovers of killed builds (we hold the lock)
TMP="$(mktemp -d "$CACHE_ROOT/.tmp-$NAME.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
chmod 755 "$TMP"
mkdir -p "$TMP/bin"
T0=$SECONDS

log "building $NAME with $GO_VERSION"
# nice: on 2 cores this runs beside package installs and test suites (.ci/run).
(cd "$HERE" && nice -n 10 go build "${BUILD_FLAGS[@]}" -ldflags "$LDFLAGS" \
    -o "$TMP/bin/helm" helm.sh/helm/v4/cmd/helm) >&2 || die "go build helm failed"
"$TMP/bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -qxF "$HELM_VERSION" \
    || die "helm version does not report $HELM_VERSION"
echo "helm.sh/helm/v4 $HELM_VERSION; $GO_VERSION; built in $((SECONDS - T0))s" >"$TMP/BUILDINFO"
touch "$TMP/.complete"
rm -rf "$FINAL"   # only an incomplete leftover can be here (we hold the lock)
mv -T "$TMP" "$FINAL"
trap - EXIT
log "done in $((SECONDS - T0))s: $BIN"
echo "$BIN"
