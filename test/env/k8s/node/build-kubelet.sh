#!/usr/bin/env bash
# Builds the kubelet of the real test node from the Go module proxy, at the
# same Kubernetes version as the control plane (../build.sh), and caches it.
#
#   test/env/k8s/node/build-kubelet.sh   build (or reuse); the LAST line on
#                                        stdout is the kubelet binary's path
#
# Its own wrapper module (kubelet-mod/) and cache entry, so the control-plane
# binaries' cache key is not changed by it. Cache layout:
#   ${QUEUESPLIT_CACHE_DIR:-$HOME/.cache/queuesplit}/kubelet-<ver>-<hash>/bin/kubelet
# <hash> covers kubelet-mod (go.mod, go.sum, sources), the Go version and the
# build flags. Built into a temp dir renamed into place when complete, under a
# per-key flock, like ../build.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MOD_DIR="$HERE/kubelet-mod"
# One place for the version: the control plane's build script.
K8S_VERSION="$(sed -n 's/^K8S_VERSION=\(v[0-9.]*\).*/\1/p' "$HERE/../build.sh")"

export GOTOOLCHAIN=local
# Kubernetes' own release builds link the kubelet statically too.
export CGO_ENABLED=0

log() { printf '[kubelet-build] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
command -v go >/dev/null || die "go not found in PATH"
[[ $K8S_VERSION =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "could not read K8S_VERSION from ../build.sh"
K8S_MINOR="${BASH_REMATCH[1]}"

got="$(cd "$MOD_DIR" && go mod edit -json | tr -d ' \t\n' \
    | grep -o '{"Path":"k8s.io/kubernetes","Version":"[^"]*"' | sed 's/.*"Version":"\([^"]*\)"/\1/')"
[[ $got == "$K8S_VERSION" ]] \
    || die "kubelet-mod/go.mod requires k8s.io/kubernetes $got, the control plane is $K8S_VERSION (see the go.mod header)"

GO_VERSION="$(go env GOVERSION)"
BUILD_FLAGS=(-mod=readonly -trimpath -buildvcs=false)
LD_BASE="-s -w"
KEY_HASH="$(
    {
        printf '%s\n' "$GO_VERSION" "$(go env GOOS)/$(go env GOARCH)" "CGO_ENABLED=$CGO_ENABLED" \
            "${BUILD_FLAGS[*]}" "$LD_BASE" "K8S=$K8S_VERSION" "recipe=1"
        cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" "$MOD_DIR"/*.go
    } | sha256sum | cut -c1-12
)"
CACHE_ROOT="${QUEUESPLIT_CACHE_DIR:-$HOME/.cache/queuesplit}"
NAME="kubelet-$K8S_VERSION-$KEY_HASH"
FINAL="$CACHE_ROOT/$NAME"
BIN="$FINAL/bin/kubelet"

is_complete() { [[ -f $FINAL/.complete && -x $BIN ]]; }
if is_complete; then log "cached: $BIN"; echo "$BIN"; exit 0; fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.$NAME.lock"
flock 9
if is_complete; then log "cached: $BIN"; echo "$BIN"; exit 0; fi

rm -rf "$CACHE_ROOT/.tmp-$NAME".*
TMP="$(mktemp -d "$CACHE_ROOT/.tmp-$NAME.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
mkdir -p "$TMP/bin"
T0=$SECONDS

BUILD_DATE="$(cd "$MOD_DIR" && go list -mod=readonly -m -json k8s.io/kubernetes \
    | sed -n 's/^[[:space:]]*"Time": "\(.*\)",*$/\1/p')"
LDFLAGS="$LD_BASE"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$K8S_MINOR"
    LDFLAGS+=" -X $p.gitTreeState=clean -X $p.gitCommit= -X $p.buildDate=${BUILD_DATE:-1970-01-01T00:00:00Z}"
done
log "building $NAME with $GO_VERSION"
(cd "$MOD_DIR" && nice -n 10 go build "${BUILD_FLAGS[@]}" -ldflags "$LDFLAGS" \
    -o "$TMP/bin/kubelet" k8s.io/kubernetes/cmd/kubelet) >&2 || die "go build kubelet failed"
"$TMP/bin/kubelet" --version 2>/dev/null | grep -qF "Kubernetes $K8S_VERSION" \
    || die "kubelet --version does not report $K8S_VERSION"
echo "k8s.io/kubernetes $K8S_VERSION kubelet; $GO_VERSION; built in $((SECONDS - T0))s" >"$TMP/BUILDINFO"
touch "$TMP/.complete"
rm -rf "$FINAL"
mv -T "$TMP" "$FINAL"
trap - EXIT
log "done in $((SECONDS - T0))s: $BIN"
echo "$BIN"
