#!/usr/bin/env bash
# Installs what the test environment needs from Debian and checks the toolchains the machine
# must already have. Safe to run repeatedly; apt runs only when something is missing. `npm run
# env:up` (so `npm test` and `npm run demo`) runs it first: as root with apt-get it installs
# what is missing, otherwise it stops with the exact command to run.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# QS_DEBIAN_PACKAGES overrides the list (space-separated), for the installer's own unit test.
# unzip: the packaging test reads the built .vsix (test/unit/third-party-notices.test.ts).
# python3-pika: a second AMQP client (not amqplib) for the RabbitMQ header-type conformance test.
# python3-boto3: a second SQS client (not the AWS SDK for JavaScript) for the SQS suites.
# containerd, runc, the CNI plugins, iptables and buildah are the real test node's
# (test/env/k8s/node/README.md).
read -r -a packages <<<"${QS_DEBIAN_PACKAGES:-rabbitmq-server unzip python3-pika python3-boto3 containerd runc containernetworking-plugins iptables buildah}"
find_missing() {
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
}
find_missing
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "missing Debian packages: ${missing[*]}. Install them as root, then rerun:" >&2
    echo "  sudo bash $(cd "$(dirname "$0")" && pwd)/install-system-deps.sh" >&2
    exit 1
  fi
  # One apt run at a time: .ci/run starts this script in the background beside `npm ci`, and
  # env:up runs it again (as does the e2e installer for its own packages); a later run waits here.
  exec 9>/run/lock/queuesplit-apt.lock
  flock 9
  find_missing # what the run before this one installed
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  # The package must not start a system-wide node: the environment runs its own on loopback.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  if [ "$own_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
fi
for tool in node npm java javac mvn go openssl; do
  command -v "$tool" >/dev/null || {
    echo "missing required tool: $tool (README, Requirements, names the versions); install it, then rerun" >&2
    exit 1
  }
done
echo "toolchains: node $(node -v), $(go version | cut -d" " -f3), $(java -version 2>&1 | head -1), $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"
