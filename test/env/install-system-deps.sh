#!/usr/bin/env bash
# Installs what the test environment needs from Debian and checks the toolchains the machine
# must already have. Safe to run repeatedly; apt runs only when something is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(rabbitmq-server)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
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
for tool in node npm java mvn go openssl; do
  command -v "$tool" >/dev/null || { echo "missing required tool: $tool" >&2; exit 1; }
done
echo "toolchains: node $(node -v), $(go version | cut -d" " -f3), $(java -version 2>&1 | head -1), $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"
