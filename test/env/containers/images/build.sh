#!/usr/bin/env bash
# Builds the brokers' images for the container backend (test/env/containers/) without a registry
# (none is reachable on the project's machines), from the files the process backend already uses,
# and tags them with the official images' names so that testcontainers starts the same names here
# as on a laptop that pulls them from Docker Hub:
#   kafka      apache/kafka:$KAFKA_VERSION       Debian's OpenJDK 17 + the Maven Central jars
#                                                 (test/env/kafka/pom.xml) in /opt/kafka/libs
#   rabbitmq   rabbitmq:$RABBITMQ_VERSION-management
#                                                 Debian's erlang and rabbitmq-server (its
#                                                 management plugin included), rabbitmq-server on PATH
#   elasticmq  softwaremill/elasticmq:$ELASTICMQ_VERSION
#                                                 Debian's OpenJDK 17 + the Maven Central jars
#                                                 (test/env/elasticmq/pom.xml); the JVM image, not
#                                                 -native: it is the jar that runs, and like the
#                                                 official ones it reads /opt/elasticmq.conf
# Each is FROM scratch: the programs, the shared libraries `ldd` names, and Debian's static
# busybox as /bin/sh and the few tools the start scripts call. The test environment uses only
# what the official images have too (java and the jars under /opt/kafka/libs, sh, rabbitmq-server
# on PATH, /opt/elasticmq.conf), so the same TypeScript starts either.
#
#   KAFKA_VERSION=.. KAFKA_LIBS=dir RABBITMQ_VERSION=.. ELASTICMQ_VERSION=.. ELASTICMQ_LIBS=dir \
#   PODMAN_ROOT=dir PODMAN_RUNROOT=dir test/env/containers/images/build.sh
#
# The images are built straight into podman's store (vfs, the same --root the environment's
# podman service uses), labelled with a key: the version, this script and the host files they
# hold (a JDK, glibc or Erlang update rebuilds them). An image whose label matches is not
# rebuilt. Progress on stderr.
set -euo pipefail

: "${KAFKA_VERSION:?}" "${KAFKA_LIBS:?}" "${RABBITMQ_VERSION:?}" "${ELASTICMQ_VERSION:?}" "${ELASTICMQ_LIBS:?}"
: "${PODMAN_ROOT:?}" "${PODMAN_RUNROOT:?}"
JDK="${QS_IMAGE_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}"
BUSYBOX=/bin/busybox
KEY_LABEL=dev.queuesplit.image-key

log() { printf '[broker-images] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
for c in buildah sha256sum ldd unzip file; do
    command -v "$c" >/dev/null || die "$c not found (test/env/containers/install-deps.sh installs it)"
done
[[ -x $BUSYBOX ]] || die "$BUSYBOX missing: apt-get install -y busybox-static (test/env/containers/install-deps.sh)"
[[ -x $JDK/bin/java ]] || die "no JDK at $JDK (Debian's openjdk-17-jre-headless); set QS_IMAGE_JDK"
[[ -f $KAFKA_LIBS/kafka_2.13-$KAFKA_VERSION.jar ]] || die "Kafka jars missing in $KAFKA_LIBS (env:up fetches them)"
[[ -f $ELASTICMQ_LIBS/elasticmq-server_2.13-$ELASTICMQ_VERSION.jar ]] || die "ElasticMQ jars missing in $ELASTICMQ_LIBS"
debian_rabbit="$(dpkg-query -W -f='${Version}' rabbitmq-server 2>/dev/null | sed -E 's/^[0-9]+://; s/-[^-]*$//')"
[[ $debian_rabbit == "$RABBITMQ_VERSION" ]] \
    || die "Debian's rabbitmq-server is ${debian_rabbit:-not installed}, the image is pinned at $RABBITMQ_VERSION (test/env/containers/images.ts)"

bah() { buildah --storage-driver vfs --root "$PODMAN_ROOT" --runroot "$PODMAN_RUNROOT" "$@"; }
mkdir -p "$PODMAN_ROOT" "$PODMAN_RUNROOT"
CACHE_ROOT="$(dirname "$PODMAN_ROOT")"
exec 9>"$CACHE_ROOT/.broker-images.lock"
flock 9
WORK="$(mktemp -d "$CACHE_ROOT/.tmp-broker-images.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# libs_of FILE...: the shared libraries (and the loader) the ELF files need, as ldd resolves them.
libs_of() {
    for f in "$@"; do ldd "$f" 2>/dev/null || true; done \
        | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u
}
# add_libs ROOT FILE...: copies those libraries into ROOT at their paths.
add_libs() {
    local root="$1" l
    shift
    for l in $(libs_of "$@"); do
        mkdir -p "$root$(dirname "$l")"
        cp -L "$l" "$root$l"
    done
}
# base ROOT: busybox as sh and its applets, /etc basics, /tmp.
base() {
    local root="$1" a
    mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root"
    cp "$BUSYBOX" "$root/bin/busybox"
    for a in $("$BUSYBOX" --list); do [[ -e $root/bin/$a ]] || ln -s busybox "$root/bin/$a"; done
    mkdir -p "$root/usr/bin" && ln -sf /bin/env "$root/usr/bin/env"
    printf 'root:x:0:0:root:/root:/bin/sh\nappuser:x:1000:1000::/tmp:/bin/sh\n' >"$root/etc/passwd"
    printf 'root:x:0:\nappuser:x:1000:\n' >"$root/etc/group"
    printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"$root/etc/nsswitch.conf"
    chmod 1777 "$root/tmp"
}
# jre ROOT: the JDK's runtime parts (no jmods, headers, sources, desktop libraries) at
# /opt/java/openjdk, where the official Temurin-based images have theirs, dereferenced (Debian
# links its config into /etc).
JRE_SKIP='libawt_xawt.so|libjawt.so|libsplashscreen.so|libatk-wrapper.so|libjsound.so|libfontmanager.so|liblcms.so|libawt.so|src.zip|ct.sym'
jre() {
    local root="$1" dest="$1/opt/java/openjdk" f
    mkdir -p "$dest"
    for f in bin lib conf release; do cp -rL "$JDK/$f" "$dest/" 2>/dev/null || true; done
    find "$dest/lib" -maxdepth 1 -regextype egrep -regex ".*/($JRE_SKIP)" -delete
    rm -rf "$dest/lib/src.zip"
    add_libs "$root" "$dest/bin/java" "$dest"/lib/*.so "$dest/lib/server/libjvm.so"
}
jre_fingerprint() {
    sha256sum "$JDK/release" "$JDK/lib/modules" "$JDK/lib/server/libjvm.so" "$JDK/bin/java"
    for l in $(libs_of "$JDK/bin/java" "$JDK/lib/server/libjvm.so"); do sha256sum "$(readlink -f "$l")"; done
}
busybox_fingerprint() { sha256sum "$(readlink -f "$BUSYBOX")"; }

# build NAME IMAGE KEY ROOTFS_FN CONTAINERFILE_LINES...: builds unless IMAGE carries KEY.
build() {
    local name="$1" image="$2" key="$3" fill="$4" t=$SECONDS
    shift 4
    if [[ $(bah inspect --type image --format "{{index .OCIv1.Config.Labels \"$KEY_LABEL\"}}" "$image" 2>/dev/null) == "$key" ]]; then
        log "cached: $name ($image, key $key)"
        return
    fi
    log "building $name ($image)"
    local dir="$WORK/$name"
    mkdir -p "$dir/rootfs"
    base "$dir/rootfs"
    "$fill" "$dir/rootfs"
    { echo 'FROM scratch'; echo 'COPY rootfs/ /'; printf '%s\n' "$@"; echo "LABEL $KEY_LABEL=$key"; } >"$dir/Containerfile"
    bah bud --quiet --layers=false --pull=never -f "$dir/Containerfile" -t "$image" "$dir" >&2 \
        || die "buildah bud $name failed"
    rm -rf "$dir"
    built=$((built + 1))
    log "built $name in $((SECONDS - t))s"
}
built=0

script_hash="$(sha256sum "$0" | cut -c1-16)"
jre_key="$(jre_fingerprint | sha256sum | cut -c1-16)"
bb_key="$(busybox_fingerprint | cut -c1-16)"

# jar_natives ROOT JAR_DIR: the libraries that the Linux x86-64 native code inside the jars needs
# (zstd-jni, snappy-java, lz4-java extract theirs to /tmp and load it: zstd-jni's links
# libpthread.so.0, which the JVM alone does not bring).
jar_natives() {
    local root="$1" dir="$2" natives="$WORK/natives-$RANDOM" jar
    mkdir -p "$natives"
    for jar in "$dir"/*.jar; do
        unzip -qq -o "$jar" '*linux*amd64*.so' '*linux*x86_64*.so' '*Linux*amd64*.so' '*Linux*x86_64*.so' \
            -d "$natives/$(basename "$jar")" 2>/dev/null || true
    done
    mapfile -t sos < <(find "$natives" -name '*.so')
    [[ ${#sos[@]} -eq 0 ]] || add_libs "$root" "${sos[@]}"
    rm -rf "$natives"
}

# ---- kafka ----
fill_kafka() {
    jre "$1"
    mkdir -p "$1/opt/kafka/libs"
    cp "$KAFKA_LIBS"/*.jar "$1/opt/kafka/libs/"
    jar_natives "$1" "$KAFKA_LIBS"
}
key="$(
    { echo "kafka $KAFKA_VERSION $script_hash $jre_key $bb_key"; (cd "$KAFKA_LIBS" && ls | sort | xargs sha256sum); } \
        | sha256sum | cut -c1-16
)"
build kafka "docker.io/apache/kafka:$KAFKA_VERSION" "$key" fill_kafka \
    'ENV PATH=/opt/java/openjdk/bin:/opt/kafka/bin:/bin:/usr/bin JAVA_HOME=/opt/java/openjdk' \
    'WORKDIR /opt/kafka' 'USER 1000:1000' \
    "CMD [\"java\", \"-cp\", \"/opt/kafka/libs/*\", \"kafka.Kafka\", \"/opt/kafka/config/server.properties\"]"

# ---- elasticmq ----
fill_elasticmq() {
    jre "$1"
    mkdir -p "$1/opt/elasticmq/lib"
    cp "$ELASTICMQ_LIBS"/*.jar "$1/opt/elasticmq/lib/"
    jar_natives "$1" "$ELASTICMQ_LIBS"
}
key="$(
    { echo "elasticmq $ELASTICMQ_VERSION $script_hash $jre_key $bb_key"; (cd "$ELASTICMQ_LIBS" && ls | sort | xargs sha256sum); } \
        | sha256sum | cut -c1-16
)"
build elasticmq "docker.io/softwaremill/elasticmq:$ELASTICMQ_VERSION" "$key" fill_elasticmq \
    'ENV PATH=/opt/java/openjdk/bin:/bin:/usr/bin JAVA_HOME=/opt/java/openjdk' \
    'EXPOSE 9324 9325' \
    'ENTRYPOINT ["java", "-Xmx256m", "-Dconfig.file=/opt/elasticmq.conf", "-cp", "/opt/elasticmq/lib/*", "org.elasticmq.server.Main"]'

# ---- rabbitmq ----
ERLANG=/usr/lib/erlang
RABBIT=/usr/lib/rabbitmq
fill_rabbitmq() {
    local root="$1"
    mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/var/lib/rabbitmq" "$root/etc/rabbitmq" "$root/var/log/rabbitmq"
    cp -a "$ERLANG" "$root/usr/lib/"
    cp -a "$RABBIT" "$root/usr/lib/"
    ln -s ../lib/erlang/bin/erl "$root/usr/bin/erl"
    ln -s ../lib/erlang/bin/epmd "$root/usr/bin/epmd"
    # Every ELF file of Erlang's (the emulator, epmd, the crypto and other NIFs) with what it links.
    mapfile -t elves < <(find "$ERLANG" -type f -perm -u+x -o -type f -name '*.so' | xargs file -L | awk -F: '/ELF/ {print $1}')
    add_libs "$root" "${elves[@]}"
    echo '[rabbitmq_management].' >"$root/etc/rabbitmq/enabled_plugins"
    chmod 1777 "$root/var/lib/rabbitmq" "$root/var/log/rabbitmq"
}
key="$(
    {
        echo "rabbitmq $RABBITMQ_VERSION $script_hash $bb_key"
        dpkg-query -W -f='${Package} ${Version}\n' rabbitmq-server erlang-base erlang-crypto 2>/dev/null
        mapfile -t elves < <(find "$ERLANG" -type f -perm -u+x -o -type f -name '*.so' | xargs file -L | awk -F: '/ELF/ {print $1}')
        for l in $(libs_of "${elves[@]}"); do sha256sum "$(readlink -f "$l")"; done
    } | sha256sum | cut -c1-16
)"
build rabbitmq "docker.io/library/rabbitmq:$RABBITMQ_VERSION-management" "$key" fill_rabbitmq \
    'ENV PATH=/usr/lib/rabbitmq/bin:/usr/lib/erlang/bin:/bin:/usr/bin HOME=/var/lib/rabbitmq LANG=C.UTF-8' \
    'EXPOSE 4369 5671 5672 15671 15672 25672' \
    'CMD ["rabbitmq-server"]'
# A rebuilt image leaves its predecessor untagged, a full copy in vfs: drop those (this store is
# ours alone; images a container still uses are kept).
if [[ $built -gt 0 ]]; then bah rmi --prune >/dev/null 2>&1 || true; fi
log "images ready"
