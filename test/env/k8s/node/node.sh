#!/usr/bin/env bash
# A real Kubernetes node for the test environment: the kubelet (built by ./build-kubelet.sh at
# the control plane's version), Debian's containerd + runc, and a CNI bridge, joined to the
# running control plane as its node: every pod of the suites, the demo and the e2e runs here.
# See ./README.md.
#
#   test/env/k8s/node/node.sh up     build/reuse the kubelet and images, start the node, wait Ready
#   test/env/k8s/node/node.sh down   drain it, stop everything it started, leave nothing behind
#   test/env/k8s/node/node.sh images rebuild the images from this checkout's dist/ (after `npm run
#                                    build`) and import them into the running node: a changed agent
#                                    is then what the next controller install or queue-agent runs
#
# Environment: QS_ENV_DIR (the environment's run dir, default <repo>/.env-run) must hold a
# running control plane (kubeconfig, k8s/pki). QS_REAL_NODE (default qs-node-1) names the node;
# QS_REAL_NODE_SUBNET (default 10.213.0.0/24) is its pod subnet (README: how it is chosen).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
# Resolved: the kernel lists mounts by real path, and `down` unmounts what is under $RUN.
ENV_DIR="$(realpath -m "${QS_ENV_DIR:-$REPO/.env-run}")"
NODE_NAME="${QS_REAL_NODE:-qs-node-1}"
SUBNET="${QS_REAL_NODE_SUBNET:-10.213.0.0/24}"
RUN="$ENV_DIR/real-node/$NODE_NAME"
KUBECONFIG_FILE="$ENV_DIR/kubeconfig"
SOCK="$RUN/containerd/containerd.sock"
BRIDGE="qsbr-${NODE_NAME: -6}"   # interface names are at most 15 characters
CHAIN="QS-${NODE_NAME^^}"
CGROUP_ROOT="/$NODE_NAME"
HOSTS_MARK="# queuesplit real node $NODE_NAME"
KUBELET_PORT=10260
KUBELET_HEALTHZ_PORT=10268
# The kubernetes Service's ClusterIP (the API server's --service-cluster-ip-range starts at
# 10.96.0.0/16, test/env/k8s/controlPlane.ts) and its certificate's SAN (test/env/k8s/pki.ts).
API_SERVICE_IP=10.96.0.1
API_PORT=6443

log() { printf '[real-node] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $SUBNET =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/24$ ]] || die "QS_REAL_NODE_SUBNET must be a /24 like 10.213.0.0/24, got $SUBNET"
GATEWAY="${BASH_REMATCH[1]}.1"

pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# ---------------------------------------------------------------------------------------------
# network: a bridge with the gateway address, no masquerade, no default route in the pods (only
# the subnet and the API's ClusterIP), and DNAT of the host's loopback services onto the gateway.
# ---------------------------------------------------------------------------------------------
# Host services a pod may reach, "<port on the gateway> <port on 127.0.0.1>" (the broker ports
# are podNetwork.ts' gatewayPorts). Kafka's is a listener of its own that advertises the gateway
# (its main listener advertises 127.0.0.1:9092, which in a pod is the pod's own loopback).
broker_forwards() {
    echo "19094 19094"            # Kafka, listener POD (test/env/kafka.ts)
    echo "19095 19095"            # Kafka, listener POD_TLS (test/env/brokerTls.ts)
    echo "5672 5672"              # RabbitMQ AMQP
    echo "15672 15672"            # RabbitMQ management
    echo "5671 5671"              # RabbitMQ AMQP over TLS (test/env/brokerTls.ts)
    echo "15671 15671"            # RabbitMQ management over TLS
    echo "9324 9324"              # ElasticMQ, the SQS API (test/env/elasticmq.ts)
}
forwards() {
    echo "$API_PORT $API_PORT"    # the API server, also reached as $API_SERVICE_IP:443
    broker_forwards
}

net_up() {
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        local clash
        clash="$(ip route show to match "$GATEWAY" | grep -v '^default' | head -1 || true)"
        [[ -z $clash ]] || die "$SUBNET overlaps a route on this machine ($clash): set QS_REAL_NODE_SUBNET"
    fi
    ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
    ip addr show dev "$BRIDGE" | grep -q "inet $GATEWAY/" || ip addr add "$GATEWAY/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # DNAT to 127.0.0.1 needs route_localnet on the interface the packets arrive on; it is set
    # on this bridge only. ip_forward is left as it is (0 here): nothing is forwarded.
    sysctl -q -w "net.ipv4.conf.$BRIDGE.route_localnet=1"
    iptables -t nat -N "$CHAIN" 2>/dev/null || iptables -t nat -F "$CHAIN"
    iptables -t nat -A "$CHAIN" -p tcp -d "$API_SERVICE_IP" --dport 443 -j DNAT --to-destination "127.0.0.1:$API_PORT"
    local from to
    while read -r from to; do
        iptables -t nat -A "$CHAIN" -p tcp -d "$GATEWAY" --dport "$from" -j DNAT --to-destination "127.0.0.1:$to"
    done < <(forwards)
    iptables -t nat -C PREROUTING -i "$BRIDGE" -j "$CHAIN" 2>/dev/null \
        || iptables -t nat -A PREROUTING -i "$BRIDGE" -j "$CHAIN"
    # The host's own processes (a developer's env-mode consumer, the tests) use
    # the same broker addresses a workload's env names: the gateway's broker ports, DNATed to
    # loopback on the way out, so one env works wherever its pod runs.
    iptables -t nat -N "$CHAIN-OUT" 2>/dev/null || iptables -t nat -F "$CHAIN-OUT"
    while read -r from to; do
        iptables -t nat -A "$CHAIN-OUT" -p tcp -d "$GATEWAY" --dport "$from" -j DNAT --to-destination "127.0.0.1:$to"
    done < <(broker_forwards)
    iptables -t nat -C OUTPUT -d "$GATEWAY" -j "$CHAIN-OUT" 2>/dev/null \
        || iptables -t nat -A OUTPUT -d "$GATEWAY" -j "$CHAIN-OUT"
    # Pod traffic to anything else on the host is refused: only the forwards above (DNAT) and
    # replies to connections the host opened (the kubelet's probes) get in.
    iptables -N "$CHAIN-IN" 2>/dev/null || iptables -F "$CHAIN-IN"
    iptables -A "$CHAIN-IN" -m conntrack --ctstate ESTABLISHED,RELATED,DNAT -j ACCEPT
    iptables -A "$CHAIN-IN" -j REJECT
    iptables -C INPUT -i "$BRIDGE" -j "$CHAIN-IN" 2>/dev/null || iptables -I INPUT -i "$BRIDGE" -j "$CHAIN-IN"
    mkdir -p "$RUN/cni/net.d" "$RUN/cni/ipam"
    cat >"$RUN/cni/net.d/10-$NODE_NAME.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$NODE_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "$RUN/cni/ipam",
        "ranges": [[{ "subnet": "$SUBNET", "gateway": "$GATEWAY" }]],
        "routes": [{ "dst": "$API_SERVICE_IP/32", "gw": "$GATEWAY" }]
      }
    }
  ]
}
EOF
    # The node's InternalIP is the gateway (a kubelet refuses a loopback node IP), which is also
    # how its pods see the host (status.hostIP). The API server reaches a kubelet by its
    # Hostname address first (its default
    # --kubelet-preferred-address-types): the node's name must resolve, to loopback.
    grep -qF "$HOSTS_MARK" /etc/hosts || printf '127.0.0.1 %s %s\n' "$NODE_NAME" "$HOSTS_MARK" >>/etc/hosts
}

net_down() {
    if iptables -t nat -C PREROUTING -i "$BRIDGE" -j "$CHAIN" 2>/dev/null; then
        iptables -t nat -D PREROUTING -i "$BRIDGE" -j "$CHAIN"
    fi
    iptables -t nat -F "$CHAIN" 2>/dev/null || true
    iptables -t nat -X "$CHAIN" 2>/dev/null || true
    if iptables -t nat -C OUTPUT -d "$GATEWAY" -j "$CHAIN-OUT" 2>/dev/null; then
        iptables -t nat -D OUTPUT -d "$GATEWAY" -j "$CHAIN-OUT"
    fi
    iptables -t nat -F "$CHAIN-OUT" 2>/dev/null || true
    iptables -t nat -X "$CHAIN-OUT" 2>/dev/null || true
    if iptables -C INPUT -i "$BRIDGE" -j "$CHAIN-IN" 2>/dev/null; then
        iptables -D INPUT -i "$BRIDGE" -j "$CHAIN-IN"
    fi
    iptables -F "$CHAIN-IN" 2>/dev/null || true
    iptables -X "$CHAIN-IN" 2>/dev/null || true
    ip link del "$BRIDGE" 2>/dev/null || true
    if grep -qF "$HOSTS_MARK" /etc/hosts; then
        # /etc/hosts may be a bind mount: rewrite it in place rather than replace it.
        local kept
        kept="$(grep -vF "$HOSTS_MARK" /etc/hosts)"
        printf '%s\n' "$kept" >/etc/hosts
    fi
}

# ---------------------------------------------------------------------------------------------
# containerd: its own config, root, state and socket under $RUN; the CRI plugin with the
# cgroupfs driver (cgroups v1 here), overlayfs, and our CNI config and pause image.
# ---------------------------------------------------------------------------------------------
containerd_up() {
    mkdir -p "$RUN/containerd" "$RUN/logs"
    cat >"$RUN/containerd/config.toml" <<EOF
version = 2
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$RUN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # These machines grant root no CAP_SYS_RESOURCE, so no process may lower its OOM score:
  # without this, every sandbox (-998) and Guaranteed container (-997) fails to start with
  # runc's "can't get final child's PID from pipe: EOF". Scores are kept >= containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
    max_conf_num = 1
EOF
    if ! pid_alive "$RUN/containerd.pid"; then
        setsid containerd --config "$RUN/containerd/config.toml" >"$RUN/logs/containerd.log" 2>&1 </dev/null &
        echo $! >"$RUN/containerd.pid"
    fi
    local i
    for ((i = 0; i < 60; i++)); do
        ctr --address "$SOCK" version >/dev/null 2>&1 && return 0
        pid_alive "$RUN/containerd.pid" || die "containerd exited: $(tail -5 "$RUN/logs/containerd.log")"
        sleep 0.5
    done
    die "containerd did not answer on $SOCK within 30 s: $(tail -5 "$RUN/logs/containerd.log")"
}

# The name the CRI looks an image up by: a pod's `queuesplit/agent:0.1.0` is
# `docker.io/queuesplit/agent:0.1.0` to it (a first part without a dot or colon is no registry).
normalized() {
    local image="$1" first="${1%%/*}"
    if [[ $image != */* ]]; then
        echo "docker.io/library/$image"
    elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
        echo "docker.io/$image"
    else
        echo "$image"
    fi
}

images_import() {
    local dir="$1" archive image ref
    local tags tag
    while read -r archive image tags; do
        [[ $image == localhost/queuesplit/node-base:* ]] && continue   # a build input only
        # The archive names the image as built (buildah push oci-archive:FILE:NAME); --digests
        # also names it by digest, so a pod may pin it (image@sha256:...).
        ctr --address "$SOCK" -n k8s.io images import --digests "$dir/$archive" >/dev/null \
            || die "ctr images import $archive failed"
        for tag in "$image" $tags; do
            ref="$(normalized "$tag")"
            if [[ $ref != "$image" ]]; then
                ctr --address "$SOCK" -n k8s.io images tag --force "$image" "$ref" >/dev/null \
                    || die "ctr images tag $image $ref failed"
            fi
            # Labelled pinned for the CRI: the kubelet's image GC then never removes it.
            ctr --address "$SOCK" -n k8s.io images label "$ref" io.cri-containerd.pinned=pinned >/dev/null \
                || die "ctr images label $ref failed"
        done
    done <"$dir/IMAGES"
}

# ---------------------------------------------------------------------------------------------
# kubelet
# ---------------------------------------------------------------------------------------------
kubelet_up() {
    local kubelet="$1"
    mkdir -p "$RUN/kubelet/root" "$RUN/kubelet/pki" "$RUN/kubelet/pod-logs" "$RUN/logs"
    # No DNS service in the test cluster, and no name server a pod could reach.
    printf '# the real test node has no cluster DNS\n' >"$RUN/kubelet/resolv.conf"
    cat >"$RUN/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
# Loopback only, on a test machine: the API server (no kubelet client certificate is set up
# by test/env/k8s/controlPlane.ts) reaches logs, exec and port-forward anonymously.
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failSwapOn: false
resolvConf: $RUN/kubelet/resolv.conf
podLogsDir: $RUN/kubelet/pod-logs
maxPods: 30
serializeImagePulls: false
# The disk is shared with other work: evict only when it is nearly full, and never collect
# the imported images (nothing can be pulled back).
evictionHard:
  memory.available: 200Mi
  nodefs.available: 2%
  imagefs.available: 2%
  nodefs.inodesFree: 2%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# No rotation within a test run: the log keeper links each file once.
containerLogMaxSize: 500Mi
# The crash suites SIGKILL one queue-agent many times in a row; the default back-off (10 s
# doubling to 5 min) would keep it down for minutes and time their steps out. Restarts wait
# at most a second here (an alpha gate of 1.32+, on this test node only).
featureGates:
  KubeletCrashLoopBackOffMax: true
crashLoopBackOff:
  maxContainerRestartPeriod: 1s
EOF
    mkdir -p "/sys/fs/cgroup/systemd$CGROUP_ROOT"
    local c
    for c in /sys/fs/cgroup/*/; do mkdir -p "$c${CGROUP_ROOT#/}" 2>/dev/null || true; done
    if ! pid_alive "$RUN/kubelet.pid"; then
        setsid "$kubelet" \
            --config="$RUN/kubelet/config.yaml" \
            --kubeconfig="$KUBECONFIG_FILE" \
            --root-dir="$RUN/kubelet/root" \
            --cert-dir="$RUN/kubelet/pki" \
            --hostname-override="$NODE_NAME" \
            --node-ip="$GATEWAY" \
            --node-labels="queuesplit.dev/real-node=true" \
            --v=1 >"$RUN/logs/kubelet.log" 2>&1 </dev/null &
        echo $! >"$RUN/kubelet.pid"
    fi
}

# The kubelet deletes a pod's logs with the pod, and the suites read queue-agent logs after the
# agent is gone (restarts counted, the leak scan). A keeper hard-links each new log file into
# $RUN/kept-logs (same inode: it keeps growing while the container writes), until `down`.
log_keeper_up() {
    pid_alive "$RUN/log-keeper.pid" && return 0
    mkdir -p "$RUN/kept-logs"
    setsid bash -c '
        src="$1" dst="$2"
        while :; do
            while IFS= read -r f; do
                rel="${f#"$src"/}"
                [[ -e $dst/$rel ]] || { mkdir -p "$dst/${rel%/*}" && ln "$f" "$dst/$rel"; } 2>/dev/null
            done < <(find "$src" -name "*.log" -type f 2>/dev/null)
            sleep 0.5
        done' log-keeper "$RUN/kubelet/pod-logs" "$RUN/kept-logs" >/dev/null 2>&1 </dev/null &
    echo $! >"$RUN/log-keeper.pid"
}

wait_ready() {
    local i status
    for ((i = 0; i < 120; i++)); do
        pid_alive "$RUN/kubelet.pid" || die "kubelet exited: $(tail -20 "$RUN/logs/kubelet.log")"
        status="$(KUBECONFIG="$KUBECONFIG_FILE" node --import tsx "$HERE/nodeReady.ts" "$NODE_NAME" 2>/dev/null || true)"
        [[ $status == True ]] && return 0
        sleep 1
    done
    die "node $NODE_NAME not Ready within 120 s (last: ${status:-no status}); see $RUN/logs/kubelet.log"
}

# Pods' network namespaces are mounted on files under /run/netns (the CRI's netns directory). It
# is made a shared mount point before the first pod, as `ip netns add` does on its first use on a
# machine: done later, that bind hides the mounts made before it beneath itself, and the CRI can
# never remove them ("unlinkat /var/run/netns/cni-…: device or resource busy"), so every pod that
# ran before stays Terminating. `down` undoes the bind once nothing is mounted under it.
netns_dir_up() {
    mkdir -p /run/netns
    if ! mountpoint -q /run/netns; then
        mount --rbind /run/netns /run/netns
        touch "$RUN/netns-bind"
    fi
    mount --make-shared /run/netns
}

netns_dir_down() {
    [[ -f $RUN/netns-bind ]] || return 0
    if awk '$5 ~ "^/run/netns/" {found = 1} END {exit !found}' /proc/self/mountinfo; then
        log "/run/netns keeps its bind mount: network namespaces are still mounted under it"
    else
        umount /run/netns 2>/dev/null || true
    fi
}

# ---------------------------------------------------------------------------------------------
# down: pods first (so the kubelet runs CNI DEL for each), then the kubelet, then containerd
# and the shims it left, then mounts, cgroups, the network and the run dir.
# ---------------------------------------------------------------------------------------------
stop_pid() { # pidfile seconds
    local f="$1" s="$2" pid i
    [[ -f $f ]] || return 0
    pid="$(cat "$f")"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < s * 10; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

down() {
    if pid_alive "$RUN/kubelet.pid"; then
        node --import tsx "$HERE/drain.ts" "$NODE_NAME" "$KUBECONFIG_FILE" || log "drain incomplete: tearing down anyway"
    fi
    stop_pid "$RUN/kubelet.pid" 10
    stop_pid "$RUN/log-keeper.pid" 2
    if [[ -f $KUBECONFIG_FILE ]]; then
        node --import tsx "$HERE/drain.ts" "$NODE_NAME" "$KUBECONFIG_FILE" --delete-node \
            || log "could not delete Node $NODE_NAME (is the API server down?)"
    fi
    if pid_alive "$RUN/containerd.pid"; then
        # Whatever the drain did not end (a kill mid-test): stop the tasks through containerd.
        local id
        for id in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
            ctr --address "$SOCK" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
        done
    fi
    stop_pid "$RUN/containerd.pid" 10
    # A shim outlives containerd: end each one by the pid it recorded under our state dir.
    local f
    if [[ -d $RUN/containerd/state ]]; then
        while IFS= read -r f; do
            kill -KILL "$(cat "$f")" 2>/dev/null || true
        done < <(find "$RUN/containerd/state" -name shim.pid 2>/dev/null)
    fi
    # Network namespaces of sandboxes the drain did not tear down: the CRI keeps them under
    # /var/run/netns with a cni- prefix; only those named in our state are ours.
    if [[ -d $RUN/containerd/root ]]; then
        local ns
        for ns in $(grep -rhoa '/var/run/netns/cni-[0-9a-f-]*' "$RUN/containerd/root/io.containerd.grpc.v1.cri" 2>/dev/null | sort -u); do
            umount "$ns" 2>/dev/null || true
            rm -f "$ns"
        done
    fi
    netns_dir_down
    # Mounts under the run dir (container rootfs, projected volumes, shm), deepest first.
    local m
    for m in $(awk -v p="$RUN/" 'index($2, p) == 1 {print $2}' /proc/self/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    # cgroups the kubelet made under our cgroupRoot, deepest first.
    local c
    for c in /sys/fs/cgroup/*/"${CGROUP_ROOT#/}"; do
        [[ -d $c ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
    # The kubelet links every container log into /var/log/containers; drop ours.
    if [[ -d /var/log/containers ]]; then
        find /var/log/containers -maxdepth 1 -type l -lname "$RUN/*" -delete 2>/dev/null || true
    fi
    net_down
    # Directories containerd 1.6 (shim sockets, fifos), go-cni (its result cache) and the
    # kubelet make at fixed paths: removed when empty, so another user of them is untouched.
    local d
    for d in /run/containerd/fifo /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/s \
        /run/containerd /var/lib/cni/results /var/lib/cni /var/log/pods /var/log/containers; do
        rmdir "$d" 2>/dev/null || true
    done
    rm -rf "$RUN"
    rmdir "$ENV_DIR/real-node" 2>/dev/null || true
    log "down: $NODE_NAME stopped, nothing left under $RUN"
}

up() {
    local t0=$SECONDS t kubelet images
    for c in containerd runc ctr iptables ip buildah; do
        command -v "$c" >/dev/null || die "$c not found: run test/env/install-system-deps.sh"
    done
    [[ -f $KUBECONFIG_FILE ]] || die "no control plane: $KUBECONFIG_FILE missing (npm run env:up)"
    [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] \
        || die "CNI plugins missing in /usr/lib/cni: run test/env/install-system-deps.sh"
    t=$SECONDS; kubelet="$("$HERE/build-kubelet.sh" | tail -1)"; log "kubelet ready in $((SECONDS - t))s"
    t=$SECONDS; images="$("$HERE/images/build.sh" | tail -1)"; log "images ready in $((SECONDS - t))s"
    PAUSE_IMAGE="$(awk '$1 == "pause.tar" {print $2}' "$images/IMAGES")"
    mkdir -p "$RUN"
    t=$SECONDS; net_up; netns_dir_up; containerd_up; images_import "$images"; log "containerd ready in $((SECONDS - t))s"
    t=$SECONDS; kubelet_up "$kubelet"; log_keeper_up; wait_ready; log "kubelet Ready in $((SECONDS - t))s"
    log "up: $NODE_NAME Ready in $((SECONDS - t0))s"
}

# For a developer who changed the agent while the environment runs (the suites build before
# env:up, so CI never needs it): pods started after this run the new image.
images() {
    [[ -S $SOCK ]] || die "the node is not running: npm run env:up"
    local dir
    dir="$("$HERE/images/build.sh" | tail -1)"
    images_import "$dir"
    log "images imported from $dir"
}

case "${1:-}" in
    up) up ;;
    images) images ;;
    down) down ;;
    *) die "usage: $0 up|down|images" ;;
esac
