#!/usr/bin/env bash
# Installs what the e2e suites need to run the extension in a real VS Code, headless:
#   - code-server 4.100.3 from npm (a real VS Code 1.100.3 server; the last line on Node 20),
#     cached per user in $QS_CACHE_DIR (default ~/.cache/queuesplit), never in the repo;
#   - Debian's chromium (the client Playwright drives) and the packages the build needs.
# Idempotent: a working cached install is reused in about a second; concurrent runs take turns
# (a lock beside the cache entry). The build happens in a
# temporary directory beside the cache entry and is renamed into place only when it works, so
# an interrupted install never leaves a half-built cache behind. Prints the code-server path.
#
# Offline facts this relies on (see the team's VSCODE-TESTING.md): native modules build from
# source (argon2, kerberos, node-pty), which needs libkrb5-dev, root needs unsafe-perm, node-pty's
# postinstall runs `npx node-gyp`, node-gyp must use the local Node headers, and @vscode/ripgrep
# would download rg from GitHub unless its download cache is seeded with Debian's rg.
set -euo pipefail

version=4.100.3
cache_root=${QS_CACHE_DIR:-$HOME/.cache/queuesplit}
dest=$cache_root/code-server-$version
bin=$dest/node_modules/.bin/code-server
started=$SECONDS

say() { echo "[install-code-server] $*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

ensure_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "missing Debian packages ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The same lock as test/env/install-system-deps.sh: two apt-get runs would fight over dpkg's.
  (
    flock 8
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ) 8>/run/lock/queuesplit-apt.lock
}

works() { [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; }

# One install at a time: CI starts this script in the background early (.ci/run) and the e2e
# suite runs it again when it begins; the later run waits here, then finds the install cached.
mkdir -p "$cache_root"
exec 9>"$cache_root/.code-server-$version.lock"
flock 9

# chromium is needed by every run, cached or not; the build packages only for a build.
ensure_debian_packages chromium
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing after installing Debian's chromium package"

if works; then
  say "code-server $version cached at $dest ($((SECONDS - started))s)"
  echo "$bin"
  exit 0
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || die "code-server $version needs Node 20 (found $(node -v)); 4.103+ need Node 22"
[ -f /usr/include/node/node_version.h ] ||
  die "Node headers not found in /usr/include/node; node-gyp would try to download them (install Node from Debian/NodeSource packages)"
ensure_debian_packages libkrb5-dev ripgrep g++ make python3

mkdir -p "$cache_root"
work=$(mktemp -d "$cache_root/.code-server-$version.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR" "$work/pkg"

# The ripgrep release @vscode/ripgrep wants: its package version comes from the shrinkwrap that
# code-server ships for VS Code, the rg release tag and the asset name from its own scripts.
say "reading the ripgrep asset name @vscode/ripgrep expects"
(cd "$work" && npm pack --silent "code-server@$version" >/dev/null)
tar -xzf "$work/code-server-$version.tgz" -C "$work" package/lib/vscode/npm-shrinkwrap.json
rg_pkg_version=$(node -p 'require(process.argv[1]).packages["node_modules/@vscode/ripgrep"].version' \
  "$work/package/lib/vscode/npm-shrinkwrap.json")
(cd "$work" && npm pack --silent "@vscode/ripgrep@$rg_pkg_version" >/dev/null)
tar -xzf "$work/vscode-ripgrep-$rg_pkg_version.tgz" -C "$work" package/lib/postinstall.js package/lib/download.js
grep -q "\['ripgrep', opts.version, opts.target\].join('-') + extension" "$work/package/lib/download.js" ||
  die "@vscode/ripgrep $rg_pkg_version names its download differently; update this script"
rg_release=$(sed -n "s/^const VERSION = '\(.*\)';.*/\1/p" "$work/package/lib/postinstall.js")
[ -n "$rg_release" ] || die "no VERSION constant in @vscode/ripgrep $rg_pkg_version lib/postinstall.js"
asset=ripgrep-$rg_release-x86_64-unknown-linux-musl.tar.gz
[ "$(uname -m)" = x86_64 ] || die "this seeding is written for x86_64 (found $(uname -m))"
mkdir -p "$TMPDIR/vscode-ripgrep-cache-$rg_pkg_version"
tar -czf "$TMPDIR/vscode-ripgrep-cache-$rg_pkg_version/$asset" -C /usr/bin rg
say "seeded $asset (@vscode/ripgrep $rg_pkg_version) with Debian's rg $(/usr/bin/rg --version | head -1 | cut -d' ' -f2)"

say "npm install code-server@$version (native builds: about 70 s on 2 cores)"
echo '{ "name": "queuesplit-code-server", "private": true }' >"$work/pkg/package.json"
(
  cd "$work/pkg"
  npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
    npm install --no-audit --no-fund --omit=dev "code-server@$version" >"$work/npm-install.log" 2>&1
) || {
  tail -n 60 "$work/npm-install.log" >&2
  die "npm install code-server@$version failed (full log above, last 60 lines)"
}

"$work/pkg/node_modules/.bin/code-server" --version >/dev/null ||
  die "the fresh install does not run: $work/pkg/node_modules/.bin/code-server --version failed"

# Replace a broken cache entry, then rename the new one into place. If another run won the
# race, its install is as good as ours.
[ -e "$dest" ] && ! works && { say "replacing the broken install at $dest"; rm -rf "$dest"; }
mv -T "$work/pkg" "$dest" 2>/dev/null || works || die "could not move the install to $dest"
works || die "$bin --version fails after the install"
say "installed code-server $("$bin" --version | head -1) at $dest in $((SECONDS - started))s"
echo "$bin"
